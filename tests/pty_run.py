"""Run the installed `redline` with stdout and/or stderr on a pseudo-terminal, as a person at a
terminal would, and collect what each stream received."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from dataclasses import dataclass
from pathlib import Path

REDLINE = Path(sys.executable).with_name("redline")
COLUMNS = 100

# SGR sequences that set a colour (foreground, background, 256-colour or true colour), as
# opposed to bold, italic or underline, which NO_COLOR allows.
_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\]8;[^\x1b]*\x1b\\")


def colour_codes(text: str) -> list[str]:
    found = []
    for params in _SGR.findall(text):
        for p in params.split(";"):
            if p and (30 <= int(p) <= 49 or 90 <= int(p) <= 107):
                found.append(params)
                break
    return found


def plain(text: str) -> str:
    """`text` without escape sequences and with the pty's CRLF as LF."""
    return _ANSI.sub("", text).replace("\r\n", "\n")


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


def _terminal() -> tuple[int, int]:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, COLUMNS, 0, 0))
    return leader, follower


def run_redline(
    args: list[str],
    home: Path,
    *,
    stdout_tty: bool,
    stderr_tty: bool,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Run:
    """`redline ARGS` with a private HOME and cache; each stream on its own pty or a pipe."""
    config = home / "user-config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.touch()
    full_env = {
        "PATH": f"{REDLINE.parent}:/usr/bin:/bin",
        "HOME": str(home),
        "REDLINE_CONFIG": str(config),
        "REDLINE_CACHE_DIR": str(home / "cache"),
        "TERM": "xterm-256color",
        **(env or {}),
    }
    readers: dict[str, int] = {}
    ends: dict[str, int] = {}
    for name, tty in (("stdout", stdout_tty), ("stderr", stderr_tty)):
        leader, follower = _terminal() if tty else os.pipe()
        readers[name], ends[name] = leader, follower
    try:
        proc = subprocess.Popen(
            [str(REDLINE), *args],
            stdin=subprocess.DEVNULL,
            stdout=ends["stdout"],
            stderr=ends["stderr"],
            env=full_env,
        )
    finally:
        for fd in ends.values():
            os.close(fd)
    received = {name: b"" for name in readers}
    open_fds = {fd: name for name, fd in readers.items()}
    while open_fds:
        ready, _, _ = select.select(list(open_fds), [], [], timeout)
        if not ready:
            proc.kill()
            raise TimeoutError(f"redline {args} wrote nothing for {timeout} s")
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # a pty reports EIO once the process closed it
                data = b""
            if data:
                received[open_fds[fd]] += data
            else:
                del open_fds[fd]
                os.close(fd)
    code = proc.wait(timeout=timeout)
    return Run(code, received["stdout"].decode(), received["stderr"].decode())


_TOKEN = re.compile(
    r"\x1b\[(\d*)([A-Za-z])|\x1b\[\?[0-9;]*[A-Za-z]|\x1b\]8;[^\x1b]*\x1b\\|(.)", re.S
)


def screen(text: str) -> list[str]:
    """The lines a terminal shows after `text`: enough of one for progress lines (carriage
    return, newline, erase line, cursor up; other sequences ignored)."""
    lines: list[list[str]] = [[]]
    row = col = 0
    for match in _TOKEN.finditer(text):
        count, command, char = match.groups()
        if command == "K":
            lines[row] = [] if count == "2" else lines[row][:col]
        elif command == "A":
            row = max(0, row - int(count or 1))
        elif char == "\r":
            col = 0
        elif char == "\n":
            row += 1
            col = 0
            if row == len(lines):
                lines.append([])
        elif char is not None:
            line = lines[row]
            line.extend(" " * (col - len(line)))
            line[col : col + 1] = [char]
            col += 1
    return ["".join(line).rstrip() for line in lines]
