"""Where Redline keeps its own files, and how it writes them: privately and atomically.

Task records and cached answers contain the code under review, so directories are 0700 and
files 0600, and they are never placed inside a repository's `.git` (git tooling, hooks and
`git clean` own that directory, and a review must not leave traces in the repository).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import platformdirs

from redline.errors import ConfigError

CACHE_ENV = "REDLINE_CACHE_DIR"
# Files Redline itself writes inside the reviewed repository (repo-relative, "/"-separated):
# a review leaves them out, since reviewing them would review Redline's own bookkeeping.
# `.redline/rules.md` is not among them: the team writes it, and it is reviewed like any text.
DISMISSED_FILE = ".redline/dismissed.toml"
REDLINE_STATE_FILES = frozenset({DISMISSED_FILE})
DIR_MODE = 0o700
FILE_MODE = 0o600


def cache_root() -> Path:
    """Redline's cache directory: `$REDLINE_CACHE_DIR`, else the platform's user cache dir."""
    override = os.environ.get(CACHE_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return platformdirs.user_cache_path("redline")


def private_dir(path: Path) -> Path:
    """Create `path` (0700) if needed and return it; refuse a location inside a `.git`."""
    resolved = path.expanduser().resolve()
    if ".git" in resolved.parts:
        raise ConfigError(
            f"refusing to store Redline data inside a git directory: {resolved}",
            hint=f"point {CACHE_ENV} somewhere outside the repository's .git",
        )
    # Create missing ancestors one by one: mkdir(parents=True) would give them the default
    # (umask) mode, leaving e.g. `<cache>/answers` world-readable. Existing ones stay as they
    # are (the user's ~/.cache is not ours to chmod).
    missing: list[Path] = []
    current = resolved
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):  # a concurrent process was first
            directory.mkdir(mode=DIR_MODE)
        # mkdir's mode is filtered by the umask.
        with contextlib.suppress(OSError):
            os.chmod(directory, DIR_MODE)
    if not missing:
        # The directory itself is ours even if an older run created it with a looser mode.
        with contextlib.suppress(OSError):
            os.chmod(resolved, DIR_MODE)
    return resolved


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new file.

    The bytes go to a temporary file in the same directory (same filesystem, so the rename is
    atomic), are fsynced, then renamed over the target; the directory is fsynced so the rename
    itself survives a power loss. On any error the temporary file is removed and the old file
    is left untouched.
    """
    # mkstemp creates the file 0600, so the code in it is never readable by others, not even
    # for the moment before the rename.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # Not possible on Windows (directories cannot be opened); the rename is still atomic there.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
