"""write_file: the model saves a review report, and only into Redline's report directory.

Never the repository, never anything a later step would execute or trust (`.git/**`,
`.vscode/**`, `.github/workflows/**`, `.envrc`, editor or agent settings). The name is a plain
relative path of simple components with a report extension; the write walks from a descriptor
of the report directory with O_NOFOLLOW at every step and lands through an atomic rename in
that directory, so a symlink planted anywhere on the way is refused or replaced, never
followed.

Per run (one ToolContext) it writes at most `limits.max_write_files` distinct reports and
`limits.max_write_total_bytes` bytes in all (rewrites count their bytes again): a model that
calls it hundreds of times gets a ToolError stating the cap, before any redaction or disk work.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Final

from redline.agent.toolkit import ToolError
from redline.tools.names import is_git_name, normalize_component, shown
from redline.tools.sandbox import ToolContext

ALLOWED_EXTENSIONS: Final = frozenset({".md", ".json", ".sarif", ".txt"})
_COMPONENT: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_MAX_DEPTH: Final = 3
# Refused with a specific message (they would already fail the component pattern): names a
# model might be tricked into, so the refusal says why.
_SENSITIVE: Final = frozenset(
    {
        ".git",
        ".github",
        ".vscode",
        ".idea",
        ".envrc",
        ".env",
        ".claude",
        ".cursor",
        ".devcontainer",
        ".husky",
        ".config",
    }
)


def check_report_name(path: str) -> list[str]:
    """Components of a valid report path, or ToolError saying what is wrong."""
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path must be a report file name such as 'review.md'")
    text = path.replace("\\", "/")
    if text.startswith("/") or re.match(r"[A-Za-z]:", text):
        raise ToolError(
            f"refusing {shown(path)}: write_file takes a report file name relative to the "
            "report directory (e.g. 'review.md'), not an absolute path"
        )
    parts = text.split("/")
    for part in parts:
        norm = normalize_component(part)
        if part in ("", ".", "..") or norm in ("", "..") or is_git_name(part):
            raise ToolError(f"refusing {shown(path)}: use a plain relative name without '..'")
        if norm in _SENSITIVE:
            raise ToolError(
                f"refusing {shown(path)}: write_file writes review reports only, never "
                "repository, editor, CI or agent settings"
            )
        if not _COMPONENT.fullmatch(part):
            raise ToolError(
                f"refusing {shown(path)}: each name must be letters, digits, '.', '_' or '-' "
                "and must not start with '.'"
            )
    if len(parts) > _MAX_DEPTH:
        raise ToolError(f"refusing {shown(path)}: at most {_MAX_DEPTH} levels of directories")
    ext = os.path.splitext(parts[-1])[1].lower()
    if ext not in ALLOWED_EXTENSIONS:
        allowed = ", ".join(sorted(ALLOWED_EXTENSIONS))
        raise ToolError(f"refusing {shown(path)}: reports must end in one of {allowed}")
    return parts


def write_file(ctx: ToolContext, path: str, content: str) -> str:
    parts = check_report_name(path)
    if not isinstance(content, str):
        raise ToolError("content must be a string")
    key = "/".join(parts)
    ledger = ctx.writes
    # Sizes are checked first as the model sent the content (encoding is cheap, redaction is
    # not): a write that is refused anyway costs no redaction and no disk work. Redaction can
    # make a text longer ("[REDACTED]"), so the result is checked again and that is charged.
    raw = len(content.encode("utf-8", errors="surrogatepass"))
    _check_size(ctx, raw)
    with ledger.lock:
        _check_caps(ctx, path, key, raw)
    data = ctx.redact(content).encode("utf-8")
    _check_size(ctx, len(data))
    with ledger.lock:
        new = _check_caps(ctx, path, key, len(data))
        ledger.bytes_written += len(data)
        ledger.paths.add(key)
    try:
        target = _write(ctx, parts, data)
    except BaseException:
        with ledger.lock:
            ledger.bytes_written -= len(data)
            if new:
                ledger.paths.discard(key)
        raise
    return f"wrote {len(data):,} bytes to {target}"


def _check_size(ctx: ToolContext, size: int) -> None:
    if size > ctx.limits.max_write_bytes:
        raise ToolError(
            f"content is {size:,} bytes, over the {ctx.limits.max_write_bytes:,}-byte limit"
        )


def _check_caps(ctx: ToolContext, path: str, key: str, size: int) -> bool:
    """Whether `key` would be a new report of this run; ToolError when a per-run cap refuses
    it. Call with the ledger's lock held."""
    limits, ledger = ctx.limits, ctx.writes
    new = key not in ledger.paths
    if new and len(ledger.paths) >= limits.max_write_files:
        cap = f"limit of {limits.max_write_files} files per run"
        ledger.refused[cap] += 1
        raise ToolError(
            f"write_file: {cap} reached; {shown(path)} was not written. The "
            f"{len(ledger.paths)} reports already written in this run are kept: add to one of "
            "them instead, or stop writing reports."
        )
    if ledger.bytes_written + size > limits.max_write_total_bytes:
        cap = f"limit of {limits.max_write_total_bytes:,} bytes written per run"
        ledger.refused[cap] += 1
        raise ToolError(
            f"write_file: {cap} reached ({ledger.bytes_written:,} bytes written so far; this "
            f"report is {size:,} bytes); {shown(path)} was not written. Write less, or stop "
            "writing reports."
        )
    return new


def _open_report_root(ctx: ToolContext) -> int:
    root = ctx.reports
    real = Path(os.path.realpath(root))
    if real.is_relative_to(ctx.root):
        raise ToolError("the report directory resolves inside the repository; not writing")
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(root, flags)
    except OSError as exc:
        raise ToolError(f"cannot open the report directory: {exc.strerror}") from None


def _write(ctx: ToolContext, parts: list[str], data: bytes) -> Path:
    dir_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fds = [_open_report_root(ctx)]
    try:
        for part in parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o700, dir_fd=fds[-1])
            try:
                fds.append(os.open(part, dir_flags, dir_fd=fds[-1]))
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise ToolError(
                        f"refusing to write: {part!r} in the report directory is not a "
                        "plain directory (symlink?)"
                    ) from None
                raise
        name = parts[-1]
        parent = fds[-1]
        try:
            existing = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise ToolError(f"refusing to write: {name!r} is a directory")
        # A fresh file (O_EXCL: never an existing file or link) renamed over the target: rename
        # replaces a planted symlink itself instead of writing through it.
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(tmp, flags, 0o600, dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)
            raise
    except ToolError:
        raise
    except OSError as exc:
        raise ToolError(f"cannot write the report: {exc.strerror}") from None
    finally:
        for d in fds:
            os.close(d)
    return ctx.reports.joinpath(*parts)
