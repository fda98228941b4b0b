"""One background memory build: `redline memory build` in a subprocess at the lowest priority.

The language server never builds memory in its own process (tree-sitter, the embedding model
and the store would hold the GIL and the CPU while the user waits for a hover): memory_refresh.py
starts this module's subprocess, one at a time, and awaits it on the event loop (asyncio's
subprocess support: no thread, no blocking call).

What the child is:
- the same interpreter running `redline.entry.main` (the installed CLI), through `-P -c`: with
  `-m` or a plain `-c`, Python would put the working directory — the repository under review —
  first on sys.path, and a `redline/` or `numpy.py` there would be imported: code of the
  repository run by indexing it. `-P` (Python 3.11) leaves sys.path alone;
- started in the repository's work tree with the server's own environment (nothing the
  repository wrote configures it), stdin closed, stdout and stderr captured and bounded;
- at the lowest priority before it imports anything heavy: nice 19, and on Linux the idle I/O
  class (`ioprio_set`, what `ionice -c 3` does) and a death signal, so a server killed outright
  does not leave it running;
- in a session of its own (a process group), so killing it also kills the git processes it
  started. `kill_running` (the server's `exit`, and the end of `main`) kills every one left.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_CAPTURE = 16 * 1024  # bytes kept of each of the child's streams (the end: its error)

# Linux's ioprio_set syscall number by machine (the generic table's 30 on the newer ports).
_IOPRIO_SET = {"x86_64": 251, "i386": 289, "i686": 289, "aarch64": 30, "arm64": 30, "riscv64": 30}

# Run by the child before anything else: die with its parent, lower its I/O and CPU priority,
# then run the CLI with `sys.argv[1:]` as its arguments. {parent} is the server's pid (an int).
_BOOTSTRAP = """\
import os, sys
if sys.platform == "linux":
    try:
        import ctypes, platform
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        number = {ioprio}.get(platform.machine())
        if number is not None:
            libc.syscall(number, 1, 0, 3 << 13)  # IOPRIO_WHO_PROCESS, self, IOPRIO_CLASS_IDLE
    except Exception:
        pass
    if os.getppid() != {parent}:  # the server died before the death signal was set
        os._exit(1)
try:
    os.setpriority(os.PRIO_PROCESS, 0, 19)  # last: a nice child is the sign the rest is done
except (AttributeError, OSError):
    pass
sys.argv[0] = "redline"
from {entry} import main
sys.exit(main())
"""


def bootstrap_argv(cli_args: Sequence[str], entry: str = "redline.entry") -> list[str]:
    """The child's argv: this interpreter running the CLI with `cli_args`, at low priority.
    (`entry`, the module whose `main` runs, is the console script's; tests give their own.)"""
    if not entry.replace(".", "").replace("_", "").isalnum():
        raise ValueError(f"not a module name: {entry!r}")
    code = _BOOTSTRAP.format(ioprio=repr(_IOPRIO_SET), parent=os.getpid(), entry=entry)
    return [sys.executable, "-P", "-c", code, *cli_args]


def build_args(root: Path, paths: Sequence[str] | None) -> list[str]:
    """`redline memory build` of the whole tree (None) or of these repository paths, quiet
    (no progress lines: nobody reads them; the summary and an error still come)."""
    args = ["memory", "build", "--quiet", "--repo", str(root)]
    if paths is None:
        return args
    return [*args, "--", *paths]  # `--`: a file named `-x.py` is no option


@dataclass(frozen=True)
class BuildRun:
    """How one build ended."""

    pid: int
    code: int | None  # None: killed by a signal
    seconds: float
    stdout: str  # the end of each stream (MAX_CAPTURE bytes), decoded
    stderr: str

    @property
    def ok(self) -> bool:
        return self.code == 0

    def reason(self) -> str:
        """One line saying why it failed: the last line it wrote to stderr, else its exit."""
        for line in reversed(self.stderr.splitlines()):
            text = line.strip()
            if text:
                return text[:300]
        if self.code is None or self.code < 0:
            return "it was stopped by a signal"
        return f"it exited with code {self.code}"


_running: set[int] = set()  # process group ids of builds still running


def kill_running() -> None:
    """Kill every build still running and what it started (the server is leaving)."""
    for pgid in list(_running):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def running_pids() -> list[int]:
    return sorted(_running)


async def _drain(stream: asyncio.StreamReader | None, keep: bytearray) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        keep += chunk
        if len(keep) > MAX_CAPTURE:
            del keep[: len(keep) - MAX_CAPTURE]


async def run_build(
    argv: Sequence[str], cwd: Path, started: asyncio.Future[int] | None = None
) -> BuildRun:
    """Run one build to its end and say how it went. Cancelling the awaiting task kills the
    build's whole process group before the cancellation goes on."""
    begin = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    _running.add(proc.pid)
    if started is not None and not started.done():
        started.set_result(proc.pid)
    out, err = bytearray(), bytearray()
    try:
        await asyncio.gather(_drain(proc.stdout, out), _drain(proc.stderr, err))
        code = await proc.wait()
    except BaseException:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        raise
    finally:
        _running.discard(proc.pid)
        # What it started (a git process) may outlive it in its group: not for long.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    return BuildRun(
        pid=proc.pid,
        code=code if code >= 0 else None,
        seconds=time.monotonic() - begin,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
    )
