"""Which files of the work tree memory indexes, and how their bytes are read.

The work tree is the attacker's. The list of files comes from git's index (`ls-files -s`,
through the hardened runner: the repository's config configures nothing, its hooks never run);
only regular files are taken (no symlink, no submodule), never `.git` in any spelling, never a
secret file (tools/names.is_secret_path: refused, not redacted), never what the user's
`review.exclude` globs leave out, never a lockfile or vendored tree, and only files a grammar
can parse. Their bytes are read from the work tree (what the user is editing, not the index)
by opening the root once and every component below it relative to its parent with O_NOFOLLOW
(redline/nofollow.py), so a symlink planted anywhere on the way is refused rather than
followed; the file opened must be a regular file whose every hard-link name is inside the tree
(git/hardlinks.py), and no bigger than the cap. What the content then says (binary, minified,
generated, vendored) skips it too.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redline.diff.content import (
    HEAD_LINES,
    MINIFIED_MEAN_LINE,
    binary_content,
    bundled,
    minified,
    vendored_header,
)
from redline.diff.file_kind import kind_of
from redline.diff.functions import has_grammar
from redline.diff.rules import excluded_path
from redline.diff.tags import generated_header
from redline.errors import RedlineError
from redline.git.hardlinks import LinkCensus
from redline.git.process import decode, split_nul, strip_control
from redline.git.runner import GitRunner
from redline.nofollow import NoFollowError, open_dir
from redline.tools.names import is_git_name, is_secret_path

_REGULAR_MODES: Final = (b"100644", b"100755")
_HEAD_BYTES: Final = 4096
_LISTING_MAX: Final = 512 * 1024 * 1024


def blob_id(data: bytes) -> str:
    """git's blob id (SHA-1) of these bytes: what `git hash-object` would say, without git."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


@dataclass(frozen=True)
class Listing:
    """The tracked files worth indexing, and the tracked ones left out with why."""

    paths: list[str]
    left_out: dict[str, str]


def tracked_files(
    root: Path, runner: GitRunner, excludes: Sequence[str], only: Sequence[str] | None = None
) -> Listing:
    """The work tree's tracked regular files memory may index (see the module docstring);
    with `only`, just those paths (a refresh on save: git lists a few entries, not the
    whole index)."""
    if only is None:
        out = runner.git(root, "ls-files", "-s", "-z", max_output=_LISTING_MAX)
    else:
        # After `--`, and with the runner's --literal-pathspecs: a path is a path, never an
        # option or a glob.
        plain = [p for p in only if p]
        out = b"".join(
            runner.git(root, "ls-files", "-s", "-z", "--", *plain[i : i + 500])
            for i in range(0, len(plain), 500)
        )
    seen: set[str] = set()
    paths: list[str] = []
    left_out: dict[str, str] = {}
    for record in split_nul(out):
        meta, _, raw = record.partition(b"\t")
        fields = meta.split()
        path = os.fsdecode(raw)
        if len(fields) != 3 or path in seen:
            continue  # a conflicted file appears once per stage
        seen.add(path)
        if fields[0] not in _REGULAR_MODES:
            continue  # a symlink or a submodule: no code of this tree's to index
        reason = path_refusal(path, excludes)
        if reason is None:
            paths.append(path)
        elif reason:
            left_out[path] = reason
    return Listing(paths, left_out)


def path_refusal(path: str, excludes: Sequence[str]) -> str | None:
    """Why a tracked path is not indexed (None: it is; "" for a file no grammar parses, too
    common to list), judged on its name alone."""
    parts = path.split("/")
    if not path or "\0" in path or any(p in ("", ".", "..") for p in parts):
        return "not a plain repository path"
    if any(is_git_name(p) for p in parts):
        return "inside .git"
    if is_secret_path(parts):
        return "a secret file (never read)"
    glob = excluded_path(path, list(excludes))
    if glob is not None:
        return f"excluded by configuration: {glob}"
    kind = kind_of(path)
    if kind.unread:
        return kind.skip_reason or "lockfile or vendored"
    if kind.syntax is None or not has_grammar(path):
        return ""
    return None


class TooLargeError(RedlineError):
    """A file over the per-file cap: not read."""


class TreeReader:
    """Reads tracked files' bytes from the work tree at root without following any link."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._links = LinkCensus(root)

    def read(self, path: str) -> bytes | None:
        """The file's bytes; None when it is gone from the work tree. Raises RedlineError with
        the reason for anything refused (a link on the way, not a regular file, a hard link
        with a name outside the tree, over the size cap)."""
        parts = path.split("/")
        shown = repr(strip_control(path)[:200])
        try:
            with open_dir(self.root, parts[:-1]) as dir_fd:
                st = os.lstat(parts[-1], dir_fd=dir_fd)
                if not stat.S_ISREG(st.st_mode):
                    raise RedlineError(f"{shown} is not a regular file in the work tree")
                if st.st_size > self.max_bytes:
                    raise TooLargeError(f"{shown} is {st.st_size:,} bytes, over {self.max_bytes:,}")
                flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
                fd = os.open(parts[-1], flags, dir_fd=dir_fd)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except NoFollowError as exc:
            raise RedlineError(f"{shown}: a directory on the way {exc.what}") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise RedlineError(f"{shown} became a symbolic link") from None
            raise RedlineError(f"cannot read {shown}: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())  # what was opened, in case it was swapped since
            if not stat.S_ISREG(st.st_mode):
                raise RedlineError(f"{shown} is not a regular file in the work tree")
            if not self._links.all_names_inside(st):
                raise RedlineError(f"{shown} is a hard link to a file with a name outside the tree")
            data = fh.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:
            raise TooLargeError(f"{shown} is over {self.max_bytes:,} bytes")
        return data


def content_refusal(path: str, data: bytes) -> str | None:
    """Why a file's content is not indexed (binary, minified, generated, vendored), or None."""
    if binary_content(data):
        return "binary or not UTF-8"
    head = decode(data[:_HEAD_BYTES]).split("\n", HEAD_LINES)[:HEAD_LINES]
    if generated_header(iter(head)):
        return "generated"
    if vendored_header(path, head):
        return "vendored"
    if bundled(head):
        return "minified"
    # Minified text has few newlines: the mean line length says so without splitting.
    if len(data) / (data.count(b"\n") + 1) >= MINIFIED_MEAN_LINE and minified(
        decode(data).split("\n")
    ):
        return "minified"
    return None


__all__ = [
    "Listing",
    "TooLargeError",
    "TreeReader",
    "blob_id",
    "content_refusal",
    "path_refusal",
    "tracked_files",
]
