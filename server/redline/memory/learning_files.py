"""The two learnings files on disk: `.redline/learnings.md` in the work tree (the team's,
committed) and the user's private one in Redline's user data directory (one per repository).
The format is memory/learnings.py's; this module only reads and writes bytes, with the same
rules as dismissed.toml for the file inside the repository (no link followed at any level,
atomic replace) and private modes for the user's own."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import platformdirs

from redline.files import atomic_write, private_dir
from redline.memory.learnings import (
    COMMITTED_FILE,
    MAX_FILE_BYTES,
    Learning,
    LearningError,
    Source,
    parse,
    render,
)
from redline.nofollow import NoFollowError, read_file, replace_file


@dataclass
class LearningFile:
    """One file's learnings as read, with where they came from (for lists and notes)."""

    source: Source
    label: str  # ".redline/learnings.md at the base 1a2b3c4", or the private file's path
    learnings: list[Learning] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def parse_bytes(data: bytes | None, source: Source, label: str) -> LearningFile:
    """A file's bytes (None: absent) as a LearningFile; never raises: an unreadable file is a
    problem, and lends no learning."""
    out = LearningFile(source, label)
    if data is None:
        return out
    if len(data) > MAX_FILE_BYTES:
        out.problems.append(f"over {MAX_FILE_BYTES:,} bytes: not read")
        return out
    parsed = parse(data.decode("utf-8", errors="replace"))
    out.learnings, out.problems = parsed.learnings, parsed.problems
    return out


def private_path(repo_root: Path) -> Path:
    """The user's private learnings for this repository: in Redline's user data directory,
    keyed by the repository's real path (another clone has its own)."""
    root = Path(os.path.realpath(repo_root))
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", root.name)[:40] or "repository"
    base = platformdirs.user_data_path("redline", appauthor=False, roaming=False)
    return base / "learnings" / f"{name}-{key}.md"


def read_private(repo_root: Path) -> LearningFile:
    path = private_path(repo_root)
    try:
        data = path.read_bytes() if path.is_file() else None
    except OSError as exc:
        return LearningFile("private", str(path), problems=[f"cannot read: {exc.strerror}"])
    return parse_bytes(data, "private", str(path))


def read_committed(repo_root: Path) -> LearningFile:
    """The work tree's `.redline/learnings.md`, read without following a link (nofollow.py:
    `.redline` is the repository author's path). What `redline learn` edits."""
    try:
        data = read_file(repo_root, _PARTS, MAX_FILE_BYTES + 1)
    except NoFollowError as exc:
        raise LearningError(f"refusing to read {COMMITTED_FILE}: {exc.message}") from None
    except OSError as exc:
        raise LearningError(f"cannot read {COMMITTED_FILE}: {exc.strerror or exc}") from None
    return parse_bytes(data, "committed", COMMITTED_FILE)


def add_learning(
    repo_root: Path, learning: Learning, source: Source, *, exist_ok: bool = False
) -> Path | None:
    """Append `learning` to one file (rewritten canonically) and return the file; when either
    file has it already, refused — or with `exist_ok` nothing is written (None)."""
    committed, private = read_committed(repo_root), read_private(repo_root)
    for f in (committed, private):
        if any(k.id == learning.id for k in f.learnings):
            if exist_ok:
                return None
            raise LearningError(f"already learned as {learning.id} in {f.label}")
    target = committed if source == "committed" else private
    return write_learnings(repo_root, source, [*target.learnings, learning])


def write_learnings(repo_root: Path, source: Source, learnings: Sequence[Learning]) -> Path:
    """Rewrite one file canonically (atomic). The committed file is written like
    dismissed.toml (a regular file inside the tree, no link followed, 0644: shared through
    git); the private one 0600 in a 0700 directory."""
    text = render(learnings).encode("utf-8")
    if source == "private":
        path = private_path(repo_root)
        private_dir(path.parent)
        atomic_write(path, text)
        return path
    try:
        replace_file(repo_root, _PARTS, text, mode=0o644)
    except NoFollowError as exc:
        raise LearningError(f"refusing to write {COMMITTED_FILE}: {exc.message}") from None
    except OSError as exc:
        raise LearningError(f"cannot write {COMMITTED_FILE}: {exc.strerror or exc}") from None
    return repo_root / COMMITTED_FILE


_PARTS: Final = tuple(COMMITTED_FILE.split("/"))
