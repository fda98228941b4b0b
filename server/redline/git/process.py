"""Running one process safely: a timeout, an output cap, incremental reads, its own process
group; and the helpers that make git's output (attacker text) safe to show and parse.

The runner (runner.py, applying hardening.py) decides *what* runs with which environment; this
module only runs it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redline.errors import GitCommandError

_STDERR_KEEP: Final = 64 * 1024
# Pipe capacity asked for the child's stdout, and the most read at once. Large diffs and
# `cat-file --batch` are megabytes: with the default 64 KiB pipe the reader wakes up for every
# 64 KiB, and when it runs in a thread next to busy Python code each wake-up can wait up to the
# interpreter's switch interval (5 ms) for the GIL while git blocks on the full pipe.
_PIPE_SIZE: Final = 1024 * 1024
_ERROR_TEXT_MAX: Final = 2000

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_ALL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def strip_control(text: str, *, keep_newlines: bool = False) -> str:
    """Remove control and bidi/zero-width characters from attacker-controlled text.

    With keep_newlines, newlines and tabs survive (multi-line stderr); otherwise they become
    spaces so a name cannot forge extra lines in a label.
    """
    if keep_newlines:
        return _CONTROL.sub("", text)
    return _CONTROL_ALL.sub(lambda m: " " if m.group() in "\n\t\r" else "", text)


def decode(data: bytes) -> str:
    """Decode git output as UTF-8, never failing on attacker bytes."""
    return data.decode("utf-8", errors="replace")


def decode_lines(data: bytes) -> list[str]:
    return [line for line in decode(data).splitlines() if line]


def split_nul(data: bytes) -> list[bytes]:
    """Split `-z` output into its records (the trailing NUL does not make an empty record)."""
    parts = data.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def _short_error(stderr: bytes) -> str:
    text = strip_control(decode(stderr), keep_newlines=True).strip()
    if len(text) > _ERROR_TEXT_MAX:
        text = text[:_ERROR_TEXT_MAX] + " …(truncated)"
    return text


@dataclass(frozen=True)
class ProcessResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def error_text(self) -> str:
        """stderr with control characters stripped and truncated, safe to show."""
        return _short_error(self.stderr)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _grow_pipe(fd: int) -> None:
    """Ask for a _PIPE_SIZE pipe buffer (Linux only; elsewhere, or when refused, the default
    buffer stays and only the reads are larger)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    # Refused over /proc/sys/fs/pipe-max-size or the user's pipe quota: keep the default.
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, set_size, _PIPE_SIZE)


def run_process(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    max_output: int,
    input: bytes | None,
    what: str,
    on_stdout: Callable[[bytes], None] | None = None,
    stdin_fd: int | None = None,
) -> ProcessResult:
    """Run argv, reading stdout incrementally so an oversized output is cut off, not buffered.

    With on_stdout, each stdout chunk goes to it instead of into the result (the cap counts
    every byte all the same). It runs inside the read loop, so the time it takes counts
    against the timeout, and an exception from it kills the process and propagates.
    With stdin_fd, the child reads its stdin from that descriptor (not closed here).
    """
    if input is not None and stdin_fd is not None:
        raise ValueError("give input or stdin_fd, not both")
    stdin: int = subprocess.DEVNULL
    if stdin_fd is not None:
        stdin = stdin_fd
    elif input is not None:
        stdin = subprocess.PIPE
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            close_fds=True,
            # Own process group, so a timeout also kills whatever the child started.
            start_new_session=True,
        )
    except OSError as exc:
        raise GitCommandError(f"cannot run {what}: {exc.strerror or exc}") from exc

    deadline = time.monotonic() + timeout
    out = bytearray()
    out_total = 0
    err = bytearray()
    assert proc.stdout is not None and proc.stderr is not None
    _grow_pipe(proc.stdout.fileno())
    sel = selectors.DefaultSelector()
    try:
        sel.register(proc.stdout, selectors.EVENT_READ, "out")
        sel.register(proc.stderr, selectors.EVENT_READ, "err")
        pending = memoryview(input) if input is not None else None
        if proc.stdin is not None:
            if pending:
                os.set_blocking(proc.stdin.fileno(), False)
                sel.register(proc.stdin, selectors.EVENT_WRITE, "in")
            else:
                proc.stdin.close()
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _kill(proc)
                raise GitCommandError(f"{what} timed out after {timeout:g} s")
            for key, _ in sel.select(remaining):
                if key.data == "in":
                    assert pending is not None and proc.stdin is not None
                    try:
                        written = os.write(proc.stdin.fileno(), pending[:65536])
                    except BrokenPipeError:
                        written = len(pending)
                    pending = pending[written:]
                    if not pending:
                        sel.unregister(proc.stdin)
                        proc.stdin.close()
                    continue
                chunk = os.read(key.fd, _PIPE_SIZE if key.data == "out" else 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                if key.data == "out":
                    out_total += len(chunk)
                    if out_total > max_output:
                        _kill(proc)
                        raise GitCommandError(f"{what}: output exceeds {max_output} bytes")
                    if on_stdout is None:
                        out += chunk
                    else:
                        on_stdout(chunk)
                elif len(err) < _STDERR_KEEP:
                    err += chunk[: _STDERR_KEEP - len(err)]
        try:
            returncode = proc.wait(max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            _kill(proc)
            raise GitCommandError(f"{what} timed out after {timeout:g} s") from None
    finally:
        sel.close()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        if proc.returncode is None:
            _kill(proc)
    return ProcessResult(returncode, bytes(out), bytes(err))
