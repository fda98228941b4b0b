"""The background memory builder: `redline memory worker` in a subprocess at the lowest priority.

The language server never builds memory in its own process (tree-sitter, the embedding model
and the store would hold the GIL and the CPU while the user waits for a hover): memory_refresh.py
starts this module's worker once per repository (when its first refresh is due) and sends it
one JSON line per refresh, awaiting the answer on the event loop (asyncio's subprocess
support: no thread, no blocking call). The worker keeps the embedding model loaded, so a
one-file refresh costs the refresh alone, not ~2 s of start-up (benchmarks/memory_lsp.py). A
worker that died is replaced at the next refresh.

What the child is:
- the same interpreter running `redline.entry.main` (the installed CLI), through `-P -c`: with
  `-m` or a plain `-c`, Python would put the working directory — the repository under review —
  first on sys.path, and a `redline/` or `numpy.py` there would be imported: code of the
  repository run by indexing it. `-P` (Python 3.11) leaves sys.path alone;
- started in the repository's work tree with the server's own environment (nothing the
  repository wrote configures it), stdin the request channel, stdout the answers (a line
  each, bounded), stderr captured and bounded (its end is the reason when it dies);
- at the lowest priority before it imports anything heavy: nice 19, and on Linux the idle I/O
  class (`ioprio_set`, what `ionice -c 3` does) and a death signal, so a server killed outright
  does not leave it running;
- in a session of its own (a process group), so killing it also kills the git processes it
  started. `kill_running` (the server's `shutdown` and `exit`, the setting turned off, and the
  end of `main`) kills every one left; closing its stdin would also end it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_CAPTURE = 16 * 1024  # bytes kept of the worker's stderr (the end: its error)
MAX_ANSWER = 1 << 20  # bytes of one answer line (a summary line: far less)

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


def worker_args(root: Path) -> list[str]:
    """`redline memory worker` for the repository at `root`: the refreshes' long-lived builder
    (memory/worker.py), asked one JSON line per refresh."""
    return ["memory", "worker", "--repo", str(root)]


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


_running: set[int] = set()  # process group ids of workers still running


def kill_running() -> None:
    """Kill every worker still running and what it started (the server is leaving, or the
    setting was turned off)."""
    for pgid in list(_running):
        _running.discard(pgid)
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


class MemoryWorker:
    """One repository's `redline memory worker`, started once and asked per refresh: the
    interpreter, the CLI's imports and the embedding model are paid for once, not per save.
    One request at a time (the refresher runs one refresh at a time)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._stderr = bytearray()
        self.served = 0  # requests answered
        self._drain = asyncio.ensure_future(_drain(proc.stderr, self._stderr))

    @classmethod
    async def start(cls, argv: Sequence[str], cwd: Path) -> MemoryWorker:
        """Start the worker (OSError when the interpreter cannot be started)."""
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=MAX_ANSWER,
        )
        _running.add(proc.pid)
        return cls(proc)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and self.proc.pid in _running

    async def request(self, paths: Sequence[str] | None) -> BuildRun:
        """One refresh (None: the whole tree), to its end. Cancelling the awaiting task kills
        the worker's whole process group (its answer would come to no one; the next refresh
        starts another worker)."""
        begin = time.monotonic()
        line = json.dumps({"paths": None if paths is None else list(paths)}) + "\n"
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        raw = b""
        try:
            stdin.write(line.encode())
            await stdin.drain()
            raw = await stdout.readline()
        except (ConnectionError, ValueError):  # gone, or an answer over MAX_ANSWER
            pass
        except BaseException:
            self.kill()
            raise
        answer = _answer(raw)
        if answer is None:  # it died (or answered garbage): its exit and stderr say why
            self.kill()
            code = await self.proc.wait()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._drain), 5)
            return BuildRun(
                pid=self.pid,
                code=code if code > 0 else None if code < 0 else 1,
                seconds=time.monotonic() - begin,
                stdout="",
                stderr=self._stderr.decode("utf-8", "replace"),
            )
        ok = answer.get("ok") is True
        self.served += 1
        return BuildRun(
            pid=self.pid,
            code=0 if ok else 1,
            seconds=time.monotonic() - begin,
            stdout=str(answer.get("summary", "")),
            stderr="" if ok else str(answer.get("error", "")),
        )

    def kill(self) -> None:
        """Kill the worker and what it started (its process group)."""
        _running.discard(self.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)


def _answer(raw: bytes) -> dict[str, object] | None:
    if not raw.endswith(b"\n"):
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
