"""Shared types for the analyzers and the one place that starts analyzer processes.

Analyzers run on the attacker's code, so the process boundary is kept tight: argv built in code,
a clean environment built from an allowlist (no API keys, no `PYTHONPATH`), the scratch directory
as working directory, a timeout that kills the whole process group, and an output cap.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from redline.model import AnalyzerRun, Finding, Severity, SkippedFile
from redline.progress import Cancelled, CancelToken

# Analyzer output larger than this is not parsed: a report that big is either a runaway tool
# or a hostile one, and parsing it would stall the review.
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
# How often a running tool's wait looks at the cancel token (seconds).
_CANCEL_POLL = 0.05


@dataclass
class AnalyzerOutcome:
    findings: list[Finding]
    runs: list[AnalyzerRun]
    # Files that could not be handed to the analyzers (unsafe paths); the caller adds them to
    # the review's coverage so nobody thinks they were checked.
    skipped: list[SkippedFile] = field(default_factory=list)
    # Each analyzer's name → the files it was given (whether it then ran: see `runs`), so a
    # file none of them looked at is not reported as reviewed (review/unanalyzed.py).
    given: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Edit:
    """One text replacement, 1-based rows and columns, end exclusive (ruff and SARIF agree).

    `end_col=None` means "to the end of `end_row`, line break excluded" (SARIF regions without
    an end column).
    """

    start_row: int
    start_col: int
    end_row: int
    end_col: int | None
    content: str


@dataclass(frozen=True)
class RawResult:
    """One analyzer result before it becomes a Finding: what the tool said, in its own terms."""

    tool: str  # "ruff", "bandit", or a custom analyzer's name
    rule: str  # the tool's own rule id: F401, B602, ...
    file: str  # repo-relative, forward slashes
    line: int  # 1-based
    end_line: int
    message: str
    url: str | None = None
    severity: Severity | None = None  # what the tool itself says, when it says anything
    confidence: float | None = None
    security: bool = False  # the tool tags the rule as a security rule
    edits: tuple[Edit, ...] = ()
    fix_unsafe: bool = False
    fix_message: str | None = None


@dataclass(frozen=True)
class ToolReport:
    """What one analyzer process produced, already parsed."""

    results: list[RawResult]
    notes: list[str] = field(default_factory=list)
    # Files the tool ran on but could not read or parse ("ruff could not read x.py: ..."): the
    # run is then "partial", never "ok", since none of those files was checked.
    unread: list[str] = field(default_factory=list)


class AnalyzerFailed(Exception):
    """The analyzer ran but its run is unusable (crash, timeout, unparseable output)."""


class AnalyzerMissing(Exception):
    """The analyzer's executable is not there."""


@dataclass(frozen=True)
class ProcessResult:
    returncode: int
    stdout: bytes
    stderr: bytes


def clean_env(scratch: Path, home: Path | None = None) -> dict[str, str]:
    """A minimal child environment: nothing from ours except what a tool needs to start.

    `PYTHONSAFEPATH` keeps a Python tool from importing modules out of the scratch directory
    (which holds the reviewed files, so a `bandit.py` there must never be imported). `home`
    (else the scratch directory) is HOME and every XDG base directory: a tool that looks for a
    user-level configuration (hadolint's `~/.config/hadolint.yaml`) finds one only there — a
    directory of Redline's that holds no reviewed file.
    """
    venv_bin = str(Path(sys.executable).parent)
    xdg = {}
    if home is not None:
        xdg = {
            name: str(home / sub)
            for name, sub in (
                ("XDG_CONFIG_HOME", ".config"),
                ("XDG_CACHE_HOME", ".cache"),
                ("XDG_DATA_HOME", ".local/share"),
                ("XDG_STATE_HOME", ".local/state"),
            )
        }
    return {
        **xdg,
        "PATH": os.pathsep.join([venv_bin, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home or scratch),
        "LC_ALL": "C.UTF-8",
        "LANG": "C.UTF-8",
        "PYTHONUTF8": "1",
        "PYTHONSAFEPATH": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NO_COLOR": "1",
    }


def run_process(
    argv: Sequence[str],
    cwd: Path,
    timeout: float,
    cancel: CancelToken | None = None,
    home: Path | None = None,
) -> ProcessResult:
    """Run argv (no shell) and return its output; raise AnalyzerMissing / AnalyzerFailed, or
    `Cancelled` once `cancel` is set (the tool and what it spawned killed within ~50 ms)."""
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=clean_env(cwd, home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Own process group, so a timeout can kill whatever the tool spawned too.
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise AnalyzerMissing(f"{argv[0]} not found") from exc
    except PermissionError as exc:
        raise AnalyzerMissing(f"{argv[0]} is not executable") from exc
    except OSError as exc:
        raise AnalyzerFailed(f"could not start {argv[0]}: {exc.strerror or exc}") from exc
    with _running_lock:
        _running.add(proc.pid)
    try:
        stdout, stderr = _wait(proc, timeout, cancel)
    finally:
        with _running_lock:
            _running.discard(proc.pid)
    if len(stdout) > MAX_OUTPUT_BYTES:
        raise AnalyzerFailed(f"output larger than {MAX_OUTPUT_BYTES // (1024 * 1024)} MiB")
    return ProcessResult(proc.returncode, stdout, stderr)


# Process groups of the tools running now: a process that must leave at once (the language
# server on `exit`) kills them first, instead of leaving them orphaned.
_running: set[int] = set()
_running_lock = threading.Lock()


def kill_running() -> None:
    """Kill every analyzer process group still running (and what it spawned)."""
    with _running_lock:
        pids = list(_running)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _wait(
    proc: subprocess.Popen[bytes], timeout: float, cancel: CancelToken | None
) -> tuple[bytes, bytes]:
    # communicate() in short slices, so a cancel (the user's, or the server shutting down) is
    # seen at once; retrying communicate after TimeoutExpired loses no output.
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            return proc.communicate(timeout=max(0.0, min(left, _CANCEL_POLL)))
        except subprocess.TimeoutExpired as exc:
            if cancel is not None and cancel.cancelled:
                _kill_group(proc)
                raise Cancelled(cancel.reason or "cancelled") from None
            if time.monotonic() >= deadline:
                _kill_group(proc)
                raise AnalyzerFailed(f"timed out after {timeout:g} s") from exc


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have exited meanwhile
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def stderr_tail(stderr: bytes, limit: int = 300) -> str:
    """The last bit of a tool's stderr, printable, for an AnalyzerRun message."""
    text = stderr.decode("utf-8", errors="replace").strip()
    text = "".join(ch if ch.isprintable() or ch == " " else " " for ch in text)
    text = " ".join(text.split())
    return text if len(text) <= limit else "…" + text[-limit:]


def relative_path(reported: str, scratch: Path) -> str:
    """Map a path as a tool printed it (absolute, or './x', or '././x') to a repo path.

    Paths outside the scratch directory come back absolute; they match no reviewed file and
    their results are dropped.
    """
    path = Path(reported)
    if path.is_absolute():
        for base in (scratch, scratch.resolve()):  # a tool may print the resolved path
            if path.is_relative_to(base):
                path = path.relative_to(base)
                break
    return os.path.normpath(path).replace(os.sep, "/")
