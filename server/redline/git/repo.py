"""Repository queries shared by the scopes: revisions, branches, diffs and file versions.

Everything goes through GitRunner. Revisions typed by a user (or a model) are checked against a
strict pattern (git/names.py) before git sees them, and are resolved to full object ids; later
commands only ever receive those ids.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from redline.errors import FileTooLargeError, RepositoryError
from redline.git.difftext import DIFF_OPTIONS
from redline.git.names import check_rel_path, is_oid, is_valid_revision, short, validate_revision
from redline.git.process import decode, split_nul, strip_control
from redline.git.runner import EMPTY_TREE, GitRunner
from redline.git.section_cap import section_cap
from redline.git.stream import DiffConsumer, DiffStream, ReadAhead
from redline.git.unreadable import WorktreeChanges, withheld_section, worktree_changes
from redline.git.worktree import read_worktree_file
from redline.model import DiffStats

DEFAULT_MAX_FILE_BYTES: Final = 4 * 1024 * 1024
_BRANCH_LIST_MAX: Final = 20


@dataclass(frozen=True)
class Resolved:
    """What a scope function computed; scopes.py turns it into a ScopeDiff."""

    label: str
    diff_text: str
    old_rev: str | None
    new_rev: str | None
    stats: DiffStats
    notes: list[str] = field(default_factory=list)


def where_label(branch: str | None, head: str | None) -> str:
    """Repo.where from the current branch (None: detached) and HEAD's id."""
    if head is None:
        return f"{branch or 'HEAD'} (no commits yet)"
    return branch if branch else f"detached HEAD at {short(head)}"


class Repo:
    """A working tree and the runner used to query it."""

    def __init__(
        self,
        root: Path,
        runner: GitRunner,
        *,
        consumer: DiffConsumer | None = None,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        self.root = root
        self.runner = runner
        self._empty_tree: str | None = None
        # With a consumer, diff() streams its text into it; when the new side is a commit the
        # files it asks for are read meanwhile (read_ahead, for the ScopeDiff to pick up).
        self.consumer = consumer
        self.max_file_bytes = max_file_bytes
        self.read_ahead: ReadAhead | None = None

    def empty_tree(self) -> str:
        """The empty tree's id in this repository's hash (SHA-1 or SHA-256); nothing is written."""
        if self._empty_tree is None:
            oid = decode(
                self.git("hash-object", "-t", "tree", "--no-filters", "--stdin", input=b"")
            ).strip()
            self._empty_tree = oid if is_oid(oid) else EMPTY_TREE
        return self._empty_tree

    def git(self, *args: str, index_file: Path | None = None, input: bytes | None = None) -> bytes:
        return self.runner.git(self.root, *args, index_file=index_file, input=input)

    # -- revisions ------------------------------------------------------------------------

    def try_commit(self, rev: str) -> str | None:
        """Full id of the commit rev names, or None. rev must already be validated."""
        result = self.runner.run_git(
            self.root, "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}"
        )
        oid = decode(result.stdout).strip()
        return oid if result.returncode == 0 and is_oid(oid) else None

    def commit(self, rev: str, *, what: str = "revision") -> str:
        oid = self.try_commit(validate_revision(rev))
        if oid is None:
            raise RepositoryError(
                f"unknown {what} '{rev}'", hint="check the name with `git log --oneline`"
            )
        return oid

    def head(self) -> str | None:
        """HEAD's commit id, or None on an unborn branch (no commits yet)."""
        return self.try_commit("HEAD")

    def current_branch(self) -> str | None:
        """Short name of the checked-out branch; None when HEAD is detached."""
        result = self.runner.run_git(self.root, "symbolic-ref", "-q", "--short", "HEAD")
        name = decode(result.stdout).strip()
        return strip_control(name) if result.returncode == 0 and name else None

    def where(self, head: str | None) -> str:
        """'main', 'main (no commits yet)' or 'detached HEAD at 1a2b3c4', for labels."""
        return where_label(self.current_branch(), head)

    def branches(self) -> list[str]:
        out = self.git("for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes")
        names = [strip_control(n) for n in decode(out).splitlines() if n.strip()]
        return [n for n in names if not n.endswith("/HEAD")]

    def branch_hint(self) -> str:
        names = self.branches()
        if not names:
            return "the repository has no branches yet"
        shown = ", ".join(names[:_BRANCH_LIST_MAX])
        more = (
            f" (and {len(names) - _BRANCH_LIST_MAX} more)" if len(names) > _BRANCH_LIST_MAX else ""
        )
        return f"available branches: {shown}{more}"

    def default_base(self) -> tuple[str, str]:
        """(name, commit id) of the default base: origin/HEAD's target, else main, else master."""
        result = self.runner.run_git(self.root, "symbolic-ref", "-q", "refs/remotes/origin/HEAD")
        target = decode(result.stdout).strip()
        candidates: list[str] = []
        if result.returncode == 0 and target.startswith("refs/remotes/"):
            candidates.append(target[len("refs/remotes/") :])
        candidates += ["main", "master"]
        for name in candidates:
            if not is_valid_revision(name):
                continue
            oid = self.try_commit(name)
            if oid is not None:
                return strip_control(name), oid
        raise RepositoryError(
            "cannot find a base branch (no origin/HEAD, main or master)",
            hint=f"name the base explicitly; {self.branch_hint()}",
        )

    def base(self, name: str | None) -> tuple[str, str]:
        if name is None:
            return self.default_base()
        validate_revision(name)
        oid = self.try_commit(name)
        if oid is None:
            raise RepositoryError(f"base branch '{name}' does not exist", hint=self.branch_hint())
        return name, oid

    def merge_base(self, a: str, b: str) -> str | None:
        result = self.runner.run_git(self.root, "merge-base", "--end-of-options", a, b)
        oid = decode(result.stdout).strip()
        return oid if result.returncode == 0 and is_oid(oid) else None

    def count_commits(self, old: str, new: str) -> int:
        out = self.git("rev-list", "--count", "--end-of-options", f"{old}..{new}")
        text = decode(out).strip()
        return int(text) if text.isdigit() else 0

    def commit_info(self, oid: str) -> tuple[list[str], str]:
        """(parent ids, subject) read from the raw commit object (no formatting machinery)."""
        raw = self.git("cat-file", "commit", oid)
        header, _, message = raw.partition(b"\n\n")
        parents = [
            decode(line[len(b"parent ") :]).strip()
            for line in header.split(b"\n")
            if line.startswith(b"parent ")
        ]
        subject = ""
        for line in decode(message).split("\n"):
            if line.strip():
                subject = line.strip()
                break
        subject = strip_control(subject)
        if len(subject) > 72:
            subject = subject[:71] + "…"
        return [p for p in parents if is_oid(p)], subject

    # -- diffs ------------------------------------------------------------------------------

    def diff(
        self,
        *revs: str,
        cached: bool = False,
        index_file: Path | None = None,
        paths: Sequence[str] | None = None,
        withheld: Mapping[str, str] | None = None,
    ) -> tuple[str, DiffStats]:
        """Unified diff text and its totals for `git diff [--cached] revs…`.

        The totals are counted from the text (they equal `--numstat`'s): a second `git diff
        --numstat` would cost as much as the diff itself. A file's section over
        section_cap(max_file_bytes) is cut to its header and a marker (git/section_cap.py);
        its changed lines still count.
        """
        mode = ("--cached",) if cached else ()
        tail = ("--end-of-options", *revs, "--", *(paths or ()))
        argv = ("diff", *DIFF_OPTIONS, *mode, *tail)
        # Two revisions: the new side is a commit (one: the work tree; --cached: the index).
        new_commit = revs[1] if len(revs) == 2 and not cached else None
        if new_commit is not None and self.consumer is not None:
            self.read_ahead = ReadAhead(self, new_commit, self.max_file_bytes)
        # Always streamed: a file's section over the cap is cut while git writes it, so it is
        # never held whole, with or without a consumer.
        stream = DiffStream(self.consumer, self.read_ahead, section_cap(self.max_file_bytes))
        try:
            if paths is None or paths:  # an empty list: no path left to diff
                self.runner.git(self.root, *argv, index_file=index_file, on_stdout=stream.take)
            for path, reason in (withheld or {}).items():
                # A section that is a header and a reason only (git/unreadable.py).
                stream.take(withheld_section(path, reason))
            stream.flush()
        finally:
            if self.read_ahead is not None:
                self.read_ahead.close()
        return stream.text(), stream.stats()

    def worktree_changes(self, rev: str, index_file: Path | None = None) -> WorktreeChanges:
        """The paths `git diff rev` would show against the work tree, listed without reading any
        file, and those of them Redline cannot read (git/unreadable.py)."""
        raw = self.git(
            "diff", "--raw", "-z", "--no-renames", "--no-color", "--ignore-submodules=dirty",
            "--end-of-options", rev, "--", index_file=index_file,
        )  # fmt: skip
        return worktree_changes(self.root, raw)

    @contextmanager
    def private_index(self) -> Iterator[Path]:
        """A throwaway copy of the index, so marking untracked files never touches the real one."""
        git_path = decode(self.git("rev-parse", "--git-path", "index")).rstrip("\n")
        real = Path(git_path) if os.path.isabs(git_path) else self.root / git_path
        with tempfile.TemporaryDirectory(prefix="redline-index-") as tmp:
            copy = Path(tmp) / "index"
            try:
                st = os.lstat(real)
            except FileNotFoundError:
                st = None
            if st is not None:
                if not stat.S_ISREG(st.st_mode):
                    raise RepositoryError(f"the git index {real} is not a regular file")
                if st.st_size > self.runner.max_output:
                    raise RepositoryError(f"the git index {real} is too large ({st.st_size} bytes)")
                shutil.copyfile(real, copy, follow_symlinks=False)
                # Keep the index's own timestamp: git trusts an entry's cached stat data only
                # when the file is older than the index ("racy git"). A fresh mtime on the copy
                # would make a same-size edit made in the same second as the last `git add`
                # look unchanged, and the review would silently miss it.
                os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))
            yield copy

    def untracked_files(self) -> list[str]:
        out = self.git("ls-files", "--others", "--exclude-standard", "-z")
        paths: list[str] = []
        for raw in split_nul(out):
            name = os.fsdecode(raw)
            # A trailing slash is a nested repository, which is not part of this one's changes.
            if name.endswith("/"):
                continue
            check_rel_path(name)
            paths.append(name)
        return paths

    # -- file versions ----------------------------------------------------------------------

    def read_blob(self, rev: str, path: str, max_bytes: int) -> bytes | None:
        """Contents of path in commit rev (symlinks: the link text, as git stores it)."""
        check_rel_path(path)
        out = self.git("ls-tree", "-z", "--full-tree", "--end-of-options", rev, "--", path)
        want = os.fsencode(path)
        for record in split_nul(out):
            meta, _, name = record.partition(b"\t")
            fields = meta.split()
            if name == want and len(fields) == 3 and fields[1] == b"blob":
                return self._cat_blob(decode(fields[2]), path, max_bytes)
        return None

    def read_blobs(self, rev: str, paths: list[str], max_bytes: int) -> dict[str, bytes | None]:
        """Contents of many paths in commit rev with two git processes, not two per file.

        Only the paths read are in the result: one absent from rev, not a file or over max_bytes
        is left out, so the caller falls back to read_blob, which returns None or raises its
        FileTooLargeError with the path in it.
        """
        for path in paths:
            check_rel_path(path)
        wanted = {os.fsencode(p): p for p in paths}
        oids: dict[str, str] = {}
        for start in range(0, len(paths), 500):  # bounded argv
            chunk = paths[start : start + 500]
            out = self.git(
                "ls-tree", "-z", "-l", "--full-tree", "--end-of-options", rev, "--", *chunk
            )
            for record in split_nul(out):
                meta, _, name = record.partition(b"\t")
                fields = meta.split()
                match = wanted.get(name)
                if match is None or len(fields) != 4 or fields[1] != b"blob":
                    continue
                size = int(fields[3]) if fields[3].isdigit() else max_bytes + 1
                if size <= max_bytes and is_oid(decode(fields[2])):
                    oids[match] = decode(fields[2])
        if not oids:
            # Nothing to read in one go: every path is absent, not a file or oversized, and
            # read_blob tells which (returning {p: None} here would hide an oversized file).
            return {}
        result: dict[str, bytes | None] = {p: None for p in paths}
        order = list(oids.items())
        out = self.git("cat-file", "--batch", input="".join(f"{o}\n" for _, o in order).encode())
        pos = 0
        for path, oid in order:
            header_end = out.index(b"\n", pos)
            header = out[pos:header_end].split()
            if len(header) != 3 or decode(header[0]) != oid:
                raise RepositoryError(f"unexpected cat-file output for {strip_control(path)!r}")
            size = int(header[2])
            result[path] = out[header_end + 1 : header_end + 1 + size]
            pos = header_end + 1 + size + 1  # content is followed by a newline
        for path in paths:
            if path not in oids and result[path] is None:
                result.pop(path)  # absent or oversized: decided by read_blob, one by one
        return result

    def read_index(self, path: str, max_bytes: int) -> bytes | None:
        """Contents of path as staged in the index (stage 0 only; conflicts read as absent)."""
        check_rel_path(path)
        out = self.git("ls-files", "-s", "-z", "--full-name", "--", path)
        want = os.fsencode(path)
        for record in split_nul(out):
            meta, _, name = record.partition(b"\t")
            fields = meta.split()
            if name == want and len(fields) == 3 and fields[2] == b"0":
                if fields[0] == b"160000":  # submodule commit, not a file
                    return None
                return self._cat_blob(decode(fields[1]), path, max_bytes)
        return None

    def _cat_blob(self, oid: str, path: str, max_bytes: int) -> bytes:
        if not is_oid(oid):
            raise RepositoryError(f"unexpected object id for {strip_control(path)!r}")
        size_text = decode(self.git("cat-file", "-s", oid)).strip()
        size = int(size_text) if size_text.isdigit() else 0
        if size > max_bytes:
            raise FileTooLargeError(
                f"{strip_control(path)} is {size} bytes, over the {max_bytes}-byte read limit"
            )
        return self.git("cat-file", "blob", oid)

    def read_worktree(self, path: str, max_bytes: int) -> bytes | None:
        """Contents of path in the working tree (see worktree.read_worktree_file)."""
        return read_worktree_file(self.root, path, max_bytes)


__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "Repo",
    "Resolved",
    "where_label",
]
