"""Repository queries shared by the scopes: revisions, branches, diffs and file versions.

Everything goes through GitRunner. Revisions typed by a user (or a model) are checked against a
strict pattern before git sees them, and are resolved to full object ids; later commands only
ever receive those ids.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

from redline.errors import RedlineError, RepositoryError, UsageError
from redline.git.hardlinks import all_names_inside
from redline.git.hardlinks import refusal as hardlink_refusal
from redline.git.process import decode, split_nul, strip_control
from redline.git.runner import EMPTY_TREE, GitRunner
from redline.model import DiffStats

DEFAULT_MAX_FILE_BYTES: Final = 4 * 1024 * 1024

# Options for every diff Redline reviews. Prefixes are explicit so user config (noprefix,
# mnemonicPrefix) cannot change the format the unitizer parses; submodules are compared by
# commit only ("dirty" ignored) because inspecting their work trees would start a child git
# in a repository whose config we have not vetted.
DIFF_OPTIONS: Final[tuple[str, ...]] = (
    "--no-color",
    "--no-relative",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "-M",
    "-U3",
    "--submodule=short",
    "--ignore-submodules=dirty",
)

# A revision as a person types it: names, ids, ~N, ^N, @{...}. No whitespace, no ':' (blob and
# message-search syntax), no leading '-', no '..' (ranges are split before this check).
_REV_RE: Final = re.compile(r"[A-Za-z0-9_@][A-Za-z0-9._/@{}^~+-]{0,254}")
_OID_RE: Final = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_BRANCH_LIST_MAX: Final = 20


class FileTooLargeError(RepositoryError):
    """A file version is larger than the configured read limit."""


class DiffConsumer(Protocol):
    """Takes a diff while git is still writing it (see Repo.diff)."""

    def feed(self, text: str) -> list[tuple[str, str]]:
        """Take the next complete file sections of the diff, in order. Return the files whose
        new version the consumer will read, as (path, new blob id from the `index` line), so
        they can be read while the diff goes on."""
        ...

    def digest(self) -> None:
        """Do whatever work on the sections fed so far need not come before their reads are
        requested: called right after each feed's reads are, so git reads while it runs."""
        ...


@dataclass(frozen=True)
class Resolved:
    """What a scope function computed; scopes.py turns it into a ScopeDiff."""

    label: str
    diff_text: str
    old_rev: str | None
    new_rev: str | None
    stats: DiffStats
    notes: list[str] = field(default_factory=list)


def validate_revision(text: str) -> str:
    if not _REV_RE.fullmatch(text) or ".." in text:
        raise UsageError(
            f"invalid revision {strip_control(text)[:80]!r}",
            hint="use a branch, tag or commit id (e.g. main, v1.2, 1a2b3c4, HEAD~2)",
        )
    return text


def is_oid(text: str) -> bool:
    return bool(_OID_RE.fullmatch(text))


def short(oid: str) -> str:
    return oid[:7]


def where_label(branch: str | None, head: str | None) -> str:
    """Repo.where from the current branch (None: detached) and HEAD's id."""
    if head is None:
        return f"{branch or 'HEAD'} (no commits yet)"
    return branch if branch else f"detached HEAD at {short(head)}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def stats_suffix(stats: DiffStats, diff_text: str) -> str:
    if not diff_text:
        return " — no changes"
    return f" — {plural(stats.files, 'file')}, +{stats.added} −{stats.removed}"


def parse_numstat(data: bytes) -> DiffStats:
    """Totals from `git diff --numstat -z` (binary files count as files with 0 lines)."""
    records = split_nul(data)
    files = added = removed = 0
    i = 0
    while i < len(records):
        fields = records[i].split(b"\t", 2)
        i += 1
        if len(fields) != 3:
            continue
        if fields[2] == b"":  # rename/copy: the two names follow as separate records
            i += 2
        files += 1
        if fields[0].isdigit():
            added += int(fields[0])
        if fields[1].isdigit():
            removed += int(fields[1])
    return DiffStats(files=files, added=added, removed=removed)


def stats_from_diff(text: str) -> DiffStats:
    """Totals counted from unified diff text: files, '+' and '-' lines inside hunks.

    For git's own output this equals `git diff --numstat` (tests/test_scopes.py proves it on
    binary files, renames, submodules, CRLF and non-UTF-8 content), so Redline asks git for the
    patch only instead of computing the diff twice.

    Counted per file section rather than per line, which keeps it at C speed on large diffs:
    a section starts at a line beginning with "diff --git " (no body line can: body lines start
    with ' ', '+', '-' or '\\', and git C-quotes names containing a newline). Inside a section,
    every line after its first "@@" line that starts with '+' or '-' is a changed line; the
    "--- "/"+++ " name lines come before the first "@@", so they are not counted.
    """
    files, added, removed = _diff_counts(text)
    return DiffStats(files=files, added=added, removed=removed)


def _diff_counts(text: str) -> tuple[int, int, int]:
    """(files, added, removed) of stats_from_diff.

    Additive over pieces of a diff cut just before a "diff --git " line: each piece's sections
    are the whole text's (the newline a piece ends with cannot start a "\\n+"/"\\n-"/"\\n@@"),
    so a streamed diff is counted piece by piece as it arrives (see _DiffStream).
    """
    # The leading "\n" lets the text's first line be found like every other line.
    sections = ("\n" + text).split("\ndiff --git ")
    added = removed = 0
    for section in sections:
        first_hunk = section.find("\n@@")
        if first_hunk != -1:
            added += section.count("\n+", first_hunk)
            removed += section.count("\n-", first_hunk)
    return len(sections) - 1, added, removed


def check_rel_path(path: str) -> list[str]:
    """Components of a repository-relative path; refuses anything that could leave the repo."""
    if not path or "\0" in path or path.startswith("/") or "\\" in path:
        raise RepositoryError(f"invalid repository path {strip_control(path)[:200]!r}")
    parts = path.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise RepositoryError(f"invalid repository path {strip_control(path)[:200]!r}")
    return parts


def _is_git_dir_name(part: str) -> bool:
    # .git in any spelling the file systems treat as the same name (case, trailing dots/spaces,
    # 8.3 short name), and with zero-width characters removed.
    cleaned = strip_control(part).rstrip(". ").casefold()
    return cleaned in (".git", "git~1")


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
            if not _REV_RE.fullmatch(name) or ".." in name:
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
        self, *revs: str, cached: bool = False, index_file: Path | None = None
    ) -> tuple[str, DiffStats]:
        """Unified diff text and its totals for `git diff [--cached] revs…`.

        The totals are counted from the text (they equal `--numstat`'s): a second `git diff
        --numstat` would cost as much as the diff itself.
        """
        mode = ("--cached",) if cached else ()
        tail = ("--end-of-options", *revs, "--")
        argv = ("diff", *DIFF_OPTIONS, *mode, *tail)
        if self.consumer is None:
            text = decode(self.git(*argv, index_file=index_file))
            return text, stats_from_diff(text)
        # Two revisions: the new side is a commit (one: the work tree; --cached: the index).
        new_commit = revs[1] if len(revs) == 2 and not cached else None
        if new_commit is not None:
            self.read_ahead = ReadAhead(self, new_commit, self.max_file_bytes)
        stream = _DiffStream(self.consumer, self.read_ahead)
        try:
            self.runner.git(self.root, *argv, index_file=index_file, on_stdout=stream.take)
            stream.flush()
        finally:
            if self.read_ahead is not None:
                self.read_ahead.close()
        return stream.text(), stream.stats()

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
        """Contents of path in the working tree, refusing anything that leaves the repository.

        Intermediate symlinks are refused; a symlink as the final component reads as its link
        text, exactly as git stores and diffs it, so it is never followed.
        """
        parts = check_rel_path(path)
        if any(_is_git_dir_name(p) for p in parts):
            raise RepositoryError(f"refusing to read inside .git: {strip_control(path)!r}")
        current = self.root
        for part in parts[:-1]:
            current = current / part
            try:
                st = os.lstat(current)
            except (FileNotFoundError, NotADirectoryError):
                return None
            if stat.S_ISLNK(st.st_mode):
                raise RepositoryError(
                    f"refusing to read {strip_control(path)!r}: {part!r} is a symbolic link"
                )
            if not stat.S_ISDIR(st.st_mode):
                return None
        target = current / parts[-1]
        try:
            st = os.lstat(target)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(st.st_mode):
            return os.fsencode(os.readlink(target))
        if stat.S_ISDIR(st.st_mode):
            return None  # a submodule or a directory, not a file version
        if not stat.S_ISREG(st.st_mode):
            raise RepositoryError(f"refusing to read {strip_control(path)!r}: not a regular file")
        if st.st_size > max_bytes:
            raise FileTooLargeError(
                f"{strip_control(path)} is {st.st_size} bytes, over the {max_bytes}-byte read limit"
            )
        # O_NOFOLLOW/O_NONBLOCK: the file may have been swapped for a symlink or FIFO since lstat.
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(target, flags)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise RepositoryError(f"cannot read {strip_control(path)!r}: {exc.strerror}") from exc
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise RepositoryError(
                    f"refusing to read {strip_control(path)!r}: not a regular file"
                )
            if not all_names_inside(self.root, st):
                raise RepositoryError(hardlink_refusal(repr(strip_control(path))))
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise FileTooLargeError(
                f"{strip_control(path)} is over the {max_bytes}-byte read limit"
            )
        return data


class _DiffStream:
    """Cuts git's diff output into runs of complete file sections for a DiffConsumer.

    A cut is made only before a line starting with "diff ": in git's output no other line can
    (hunk body lines start with ' ', '+', '-' or '\\'; names with a newline are C-quoted), and
    every section starts with one. So each run parses exactly as it does inside the whole text,
    and since a cut follows a newline byte it never splits a UTF-8 sequence: decoding the runs
    one by one gives the same text as decoding the whole output.
    """

    def __init__(self, consumer: DiffConsumer, read_ahead: ReadAhead | None) -> None:
        self._consumer = consumer
        self._read_ahead = read_ahead
        self._pending = bytearray()
        self._texts: list[str] = []
        # stats_from_diff's counts, summed run by run (None once a run does not start with
        # "diff --git ", which the sum does not cover; then the whole text is counted).
        self._counts: list[int] | None = [0, 0, 0]

    def take(self, chunk: bytes) -> None:
        self._pending += chunk
        cut = self._pending.rfind(b"\ndiff ")
        if cut != -1:
            self._send(bytes(self._pending[: cut + 1]))
            del self._pending[: cut + 1]

    def flush(self) -> None:
        if self._pending:
            self._send(bytes(self._pending))
            self._pending.clear()

    def _send(self, data: bytes) -> None:
        text = decode(data)
        self._texts.append(text)
        wanted = self._consumer.feed(text)
        if wanted and self._read_ahead is not None:
            self._read_ahead.want(wanted)
        self._consumer.digest()
        # Counted now, while git is still writing, rather than all at once after it is done.
        if self._counts is not None:
            if len(self._texts) > 1 and not text.startswith("diff --git "):
                self._counts = None
            else:
                self._counts = [
                    a + b for a, b in zip(self._counts, _diff_counts(text), strict=True)
                ]

    def text(self) -> str:
        return "".join(self._texts)

    def stats(self) -> DiffStats:
        """stats_from_diff(self.text())."""
        if self._counts is None:
            return stats_from_diff(self.text())
        files, added, removed = self._counts
        return DiffStats(files=files, added=added, removed=removed)


class ReadAhead:
    """Reads new-side file versions while the diff that names them is still being written
    and parsed: one `git cat-file --batch` for the whole diff, fed through a pipe.

    Each file comes with its new blob's id as the diff's `index` line abbreviates it, so no
    tree lookups are needed. The consumer's thread writes the ids into the pipe as sections
    are parsed; a background thread runs cat-file (through the hardened runner: timeout and
    output cap as always) and splits its output. git does the reading in its own process, so
    it overlaps with the parsing in Python.

    Only an optimisation: anything it did not read (an id git cannot resolve or that names
    something else, an oversized blob, a failed cat-file) is simply missing from results(),
    and ScopeDiff.prefetch_new reads it the ordinary way, with the ordinary errors.
    """

    def __init__(self, repo: Repo, rev: str, max_bytes: int) -> None:
        self.rev = rev
        self._repo = repo
        self._requested: list[tuple[str, str]] = []  # in the order written to cat-file
        self._stream = _CatFileStream(max_bytes)
        read_end, write_end = os.pipe()
        self._input: int | None = write_end
        # Not a daemon: Repo.diff always closes the input, so cat-file and the thread end.
        self._thread = threading.Thread(
            target=self._run, args=(read_end,), name="redline-read-ahead"
        )
        self._thread.start()

    def _run(self, read_end: int) -> None:
        try:
            # --buffer: cat-file writes in large blocks instead of flushing every object.
            self._repo.runner.run_git(
                self._repo.root,
                "cat-file",
                "--batch",
                "--buffer",
                stdin_fd=read_end,
                on_stdout=self._stream.take,
            )
        except RedlineError:
            pass  # timed out, over the output cap, ...: what is missing is read later
        finally:
            # Once cat-file is gone, writes to the pipe fail instead of blocking.
            os.close(read_end)

    def want(self, files: list[tuple[str, str]]) -> None:
        """(path, new blob id or an abbreviation of it) of files to read, in diff order."""
        files = [(p, oid) for p, oid in files if _ABBREV_RE.fullmatch(oid)]
        if not files or self._input is None:
            return
        data = "".join(f"{oid}\n" for _, oid in files).encode("ascii")
        try:
            while data:
                data = data[os.write(self._input, data) :]
        except OSError:  # cat-file is gone: stop asking
            self.close()
            return
        self._requested += files

    def close(self) -> None:
        """No more files: cat-file answers what it was asked and exits."""
        if self._input is not None:
            os.close(self._input)
            self._input = None

    def results(self) -> dict[str, bytes]:
        """path → content of every version read; waits for cat-file to finish."""
        self.close()
        self._thread.join()
        contents: dict[str, bytes] = {}
        # One record per request line, in order (a request cut short by a failed write gets
        # an answer that does not match its id, and is left out).
        for (path, oid), (header, content) in zip(
            self._requested, self._stream.records, strict=False
        ):
            fields = header.split()
            if (
                content is not None
                and len(fields) == 3
                and fields[1] == b"blob"
                and is_oid(decode(fields[0]))
                and decode(fields[0]).startswith(oid)
            ):
                contents.setdefault(path, content)
        return contents


_ABBREV_RE: Final = re.compile(r"[0-9a-f]{4,64}")


class _CatFileStream:
    """Splits `cat-file --batch` output into (header, content) records as it arrives.

    The content of an object over max_bytes is dropped while it streams past, never held; it
    and "<name> missing"/"ambiguous" lines give a None content.
    """

    def __init__(self, max_bytes: int) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []
        self._max_bytes = max_bytes
        self._buf = bytearray()
        self._header: bytes | None = None  # of the record whose content is arriving
        self._need = 0  # its bytes still to come, with the newline that ends it
        self._keep = True
        self._parts: list[bytes] = []

    def take(self, chunk: bytes) -> None:
        buf = self._buf
        buf += chunk
        pos = 0
        while True:
            if self._header is None:
                end = buf.find(b"\n", pos)
                if end == -1:
                    break
                header = bytes(buf[pos:end])
                pos = end + 1
                fields = header.split()
                if len(fields) != 3 or not fields[2].isdigit():
                    self.records.append((header, None))
                    continue
                size = int(fields[2])
                self._header, self._need, self._parts = header, size + 1, []
                self._keep = size <= self._max_bytes
            part = min(self._need, len(buf) - pos)
            if self._keep:
                self._parts.append(bytes(buf[pos : pos + part]))
            pos += part
            self._need -= part
            if self._need:
                break
            content = b"".join(self._parts)[:-1] if self._keep else None
            self.records.append((self._header, content))
            self._header = None
        del buf[:pos]


__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DIFF_OPTIONS",
    "EMPTY_TREE",
    "DiffConsumer",
    "FileTooLargeError",
    "ReadAhead",
    "Repo",
    "Resolved",
    "check_rel_path",
    "parse_numstat",
    "stats_from_diff",
    "validate_revision",
]
