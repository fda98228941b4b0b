"""`asyncio.run` for the CLI's model stages, except that Ctrl+C leaves at once (issue 24).

litellm runs the synchronous part of a call (its first call imports the OpenAI SDK: seconds on
a loaded machine) in the loop's default executor. On Ctrl+C `asyncio.run` cancels the task and
then joins that executor's thread, so the user waited 3–10 s for a call nobody wanted, and the
coroutine the thread finally returned was dropped with `RuntimeWarning: coroutine
'OpenAIChatCompletion.acompletion' was never awaited`. Here an interrupt cancels the tasks
(their `finally` blocks run: the task record says "cancelled"), lets the executor go without
waiting for it, and re-raises KeyboardInterrupt; the CLI then says "interrupted" and ends the
process without joining the abandoned thread (`cli/main.py`, `_before_exit`).

A process started with SIGINT *ignored* (a background job, `cmd &`, of a non-interactive shell)
keeps ignoring it, as Python and Unix programs do: `asyncio.Runner` installs its handler only
over Python's default one. Deliberate: the shell ignores it there so that a Ctrl+C meant for
the foreground leaves background jobs running (tests/test_interrupt.py starts the CLI with
SIGINT at its default for that reason).
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
_SETTLE_S = 0.5  # the most the cancelled tasks get to finish their cleanup


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`coro` to completion on a new event loop, as `asyncio.run` (see the module docstring)."""
    runner = asyncio.Runner()
    interrupted = False
    try:
        return runner.run(coro)
    except KeyboardInterrupt:
        interrupted = True
        _abandon(runner.get_loop())
        raise
    finally:
        if not interrupted:
            runner.close()


def _abandon(loop: asyncio.AbstractEventLoop) -> None:
    # The executor's work item may still hand back a coroutine that no task awaits any more:
    # dropping it is intended now, not a bug worth a warning.
    warnings.filterwarnings(
        "ignore", message=r"coroutine .* was never awaited", category=RuntimeWarning
    )
    if loop.is_closed():
        return
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.wait(tasks, timeout=_SETTLE_S))
    # BaseEventLoop.close shuts the default executor down without waiting for its threads.
    loop.close()
