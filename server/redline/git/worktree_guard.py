"""What git reads from the work tree by itself passes the hard-link rule (hardlinks.py).

Redline's own reads of work-tree files refuse a hard link whose other names are outside the
repository. But git reads the work tree on its own: `git diff` of uncommitted changes, `git
blame` without a revision, `git grep` without one. A tracked file replaced by a hard link to
`~/.ssh/id_rsa` is read there like any file, and its content was in the output — so in the
model's request, the record and the report (the report even said the file was skipped). The
runner (runner.run_git, the one place git starts from) hands such calls to a guard from
`guard_for`, which keeps the rule whatever the caller:

- a diff that reads the work tree: a section whose file (either name) is such a link keeps
  its header, with one line more after its `diff` line, WITHHELD_MARK and the refusal, and
  loses its hunks; decided at the section's first hunk line, before any of its content passes
  (so it works on the stream). diff/parse.py makes that line the section's error: the file is
  skipped with that reason, and the report and the model agree;
- a grep of the work tree (`-n -z` records): the lines of such a file are dropped;
- blame of the work tree: refused before git runs, as a failed call.

Which calls read the work tree is decided from the argv Redline's code built (revisions
after `--end-of-options`, paths after `--`); when unsure, a call is treated as reading it.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from redline.errors import GitCommandError
from redline.git.hardlinks import WITHHELD_MARK, LinkCensus, refusal
from redline.git.process import ProcessResult, strip_control

Emit = Callable[[bytes], None]
# Whether a work-tree path (bytes, relative to the root, "/"-separated) is withheld: the
# refusal to show in its place, or None.
Refuser = Callable[[bytes], "str | None"]

_MARK: Final = WITHHELD_MARK.encode()
# DiffFilter's modes: passing output on, dropping a withheld section's content, holding a
# section's header until it is decided.
_PASS: Final = "pass"
_DROP: Final = "drop"
_HEADER: Final = "header"
_CONTENT_START: Final = (b"@@", b"GIT binary patch")
_NAME_LINES: Final = (b"--- ", b"+++ ", b"rename from ", b"rename to ", b"copy from ", b"copy to ")


class WorkTree:
    """Answers "is this work-tree file withheld?" for one call; one census walk at most."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._census = LinkCensus(root)
        self._answers: dict[bytes, str | None] = {}

    def refused(self, rel: bytes) -> str | None:
        if rel not in self._answers:
            self._answers[rel] = self._refused(rel)
        return self._answers[rel]

    def _refused(self, rel: bytes) -> str | None:
        try:
            st = os.lstat(os.path.join(os.fsencode(self.root), rel))
        except (OSError, ValueError):  # not there (git read nothing of it), or a NUL in it
            return None
        if self._census.all_names_inside(st):  # also: not a regular file, or one name only
            return None
        return refusal(repr(strip_control(os.fsdecode(rel))))


# -- which calls read the work tree -----------------------------------------------------------


def _options(args: Sequence[str]) -> list[str]:
    """The arguments before `--` (paths come after it)."""
    return list(args[1 : args.index("--")] if "--" in args else args[1:])


def diff_reads_worktree(args: Sequence[str]) -> bool:
    """A diff with fewer than two revisions (a range is two) that is not of the index
    (`--cached`). Revisions are those after `--end-of-options`; without that marker they
    cannot be told from option values, and the call is taken to read the work tree."""
    options = _options(args)
    if "--cached" in options or "--staged" in options:
        return False
    if "--end-of-options" not in options:
        return True
    revisions = options[options.index("--end-of-options") + 1 :]
    return len(revisions) < 2 and not any(".." in r for r in revisions)


_BLAME_FORM: Final = "git blame takes its file as the one argument after --"


def blame_path(args: Sequence[str]) -> str | None:
    """The file a blame of the work tree reads (blame without a revision), else None. A blame
    whose file is not the one argument after `--` is refused: its file could not be told."""
    if "--" not in args or args.index("--") != len(args) - 2:
        raise GitCommandError(_BLAME_FORM)
    if any(not a.startswith("-") for a in _options(args)):
        return None  # a revision: blame reads its objects, not the work tree
    return args[-1]


# git grep options whose output is exactly `path NUL lineno NUL text LF` records.
_GREP_REQUIRED: Final = frozenset({"-n", "-z", "-I"})
_GREP_ALLOWED: Final = _GREP_REQUIRED | {"-w", "-F", "-E", "-i", "--no-color", "--no-textconv",
                                         "--full-name", "--cached"}  # fmt: skip
_GREP_FORM: Final = (
    "git grep of the work tree takes its patterns with -e, "
    + " ".join(sorted(_GREP_REQUIRED))
    + " and only "
    + " ".join(sorted(_GREP_ALLOWED - _GREP_REQUIRED))
    + " besides: its output must be records Redline can read"
)


def grep_reads_worktree(args: Sequence[str]) -> bool:
    """A grep without `--cached` and without a revision. Its patterns must come with -e (a
    pattern without it could not be told from a revision), and a work-tree grep must write
    records this module can read; anything else is refused."""
    flags: set[str] = set()
    has_pattern = has_revision = False
    options = _options(args)
    i = 0
    while i < len(options):
        arg = options[i]
        if arg == "-e":
            has_pattern = True
            i += 2
            continue
        if arg.startswith("-"):
            flags.add(arg)
        else:
            has_revision = True
        i += 1
    if not has_pattern:
        raise GitCommandError(_GREP_FORM)
    if "--cached" in flags or has_revision:
        return False
    if flags - _GREP_ALLOWED or not flags >= _GREP_REQUIRED:
        raise GitCommandError(_GREP_FORM)
    return True


# -- the filters ------------------------------------------------------------------------------

_GREP_RECORD: Final = re.compile(rb"([^\0]*)\0([0-9]+)\0([^\n]*)(?:\n|\Z)")


def filter_grep(data: bytes, refused: Refuser) -> bytes:
    """`grep -n -z` output without the records of withheld files. A path may hold a newline
    (with -z git does not quote it), so records are read by their NULs, never by lines;
    anything that is not a record ends the output (nothing unreadable is passed on)."""
    out: list[bytes] = []
    pos = 0
    # A record has two NULs, so a match is never empty and pos always moves on.
    while (match := _GREP_RECORD.match(data, pos)) is not None:
        if refused(match.group(1)) is None:
            out.append(match.group(0))
        pos = match.end()
    return b"".join(out)


class DiffFilter:
    """git diff output → the same output with each withheld section's content replaced by one
    WITHHELD_MARK line. Fed in chunks as git writes them (take, then flush at the end).

    Between section starts the bytes are passed on (or dropped) as they come, found by one
    search for "\\ndiff " at C speed, so a long line is never held (git/section_cap.py bounds
    what the stream holds of a huge section; this filter holds at most the four bytes after a
    chunk's last newline that may begin "diff "). A section's header is held as whole lines
    until its first content line decides it; a header longer than HEADER_LIMIT (no genuine one
    is) is decided where it stands, from the names seen so far.
    """

    HEADER_LIMIT = 256 * 1024
    _header: list[bytes]  # a section's lines while undecided (in _HEADER mode)

    def __init__(self, refused: Refuser, emit: Emit) -> None:
        self._refused = refused
        self._emit = emit
        self._buf = bytearray()
        self._at_line_start = True  # whether _buf[0] starts a line
        self._mode = _PASS

    def take(self, chunk: bytes) -> None:
        self._buf += chunk
        self._run(final=False)

    def flush(self) -> None:
        self._run(final=True)
        if self._mode == _HEADER:
            self._emit(b"".join(self._header))  # a section without content

    def _run(self, *, final: bool) -> None:
        out: list[bytes] = []
        while self._buf:
            step = self._header_line if self._mode == _HEADER else self._between
            if not step(out, final=final):
                break
        if out:
            self._emit(b"".join(out))

    def _between(self, out: list[bytes], *, final: bool) -> bool:
        """Pass on (or drop) up to the next section start; False when there is none yet."""
        buf = self._buf
        if self._at_line_start and buf.startswith(b"diff "):
            start = 0
        else:
            found = buf.find(b"\ndiff ")
            start = found + 1 if found != -1 else -1
        if start == -1:
            keep = 0 if final else _maybe_section_start(buf, self._at_line_start)
            cut = len(buf) - keep
            if cut:
                if self._mode != _DROP:
                    out.append(bytes(buf[:cut]))
                self._at_line_start = buf[cut - 1] == ord("\n")
                del buf[:cut]
            return False
        if start and self._mode != _DROP:
            out.append(bytes(buf[:start]))
        del buf[:start]
        self._mode, self._header = _HEADER, []
        return True

    def _header_line(self, out: list[bytes], *, final: bool) -> bool:
        """Take one whole header line; False when the rest of one is still to come."""
        buf = self._buf
        end = buf.find(b"\n")
        if end == -1 and not final and self._held() + len(buf) <= self.HEADER_LIMIT:
            return False
        end = len(buf) if end == -1 else end + 1
        line = bytes(buf[:end])
        del buf[:end]
        self._at_line_start = line.endswith(b"\n")
        if line.startswith(b"diff ") and self._header:
            out += self._header  # the previous section ended without content
            self._header = []
        if line.startswith(_CONTENT_START) or self._held() + len(line) > self.HEADER_LIMIT:
            header = self._header
            reason = self._decide(header)
            if reason is None:
                out += [*header, line]
                self._mode = _PASS
            else:
                # The marker goes right after the `diff` line, where git/section_cap.py puts
                # its own: the parser reads it as part of the header.
                mark = _MARK + reason.encode() + b"\n"
                out += [*header[:1], mark, *header[1:]]
                self._mode = _DROP
            return True
        self._header.append(line)
        return True

    def _held(self) -> int:
        return sum(map(len, self._header))

    def _decide(self, header: list[bytes]) -> str | None:
        for name in header_names(header):
            reason = self._refused(name)
            if reason is not None:
                return reason
        return None


def _maybe_section_start(buf: bytearray, at_line_start: bool) -> int:
    """How many bytes at the end of buf may begin a section start that the next chunk
    completes: the bytes after the last newline (or all of buf, when it starts a line), if
    they are fewer than "diff " and begin it."""
    last = buf.rfind(b"\n")
    if last == -1 and not at_line_start:
        return 0
    tail = bytes(buf[last + 1 :])
    return len(tail) if len(tail) < len(b"diff ") and b"diff ".startswith(tail) else 0


def header_names(header: list[bytes]) -> list[bytes]:
    """Every name a section's header lines give, prefixes off ("a/", "b/"); from the `diff
    --git` line too, every way it can be split, when no other line names the file."""
    names: list[bytes] = []
    for line in header:
        text = line.removesuffix(b"\n")
        for start in _NAME_LINES:
            if text.startswith(start):
                name = _unquote(text[len(start) :].removesuffix(b"\t"))
                if start in (b"--- ", b"+++ "):
                    if name == b"/dev/null":
                        break
                    if name[1:2] == b"/":
                        names.append(name[2:])  # the prefix git was told to use
                names.append(name)
                break
    if not names and header and header[0].startswith(b"diff --git "):
        names = _git_line_names(header[0].removesuffix(b"\n").removeprefix(b"diff --git "))
    return names


def _git_line_names(rest: bytes) -> list[bytes]:
    if rest.startswith(b'"'):
        first, tail = _unquote_prefix(rest)
        both = [first]
        if tail.startswith(b" "):
            both.append(_unquote(tail[1:]))
        return [n[2:] for n in both if n[1:2] == b"/"]
    # Unquoted "a/X b/Y": ambiguous when a name holds " b/"; every split is a candidate.
    names = [rest[2:]]
    sep = b" b/"
    at = rest.find(sep)
    while at != -1:
        names += [rest[2:at], rest[at + len(sep) :]]
        at = rest.find(sep, at + len(sep))
    return names


_ESCAPES: Final = {
    ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("n"): 10, ord("r"): 13, ord("t"): 9,
    ord("v"): 11, ord('"'): 34, ord("\\"): 92,
}  # fmt: skip


def _unquote(text: bytes) -> bytes:
    return _unquote_prefix(text)[0] if text.startswith(b'"') else text


def _unquote_prefix(text: bytes) -> tuple[bytes, bytes]:
    """One C-quoted name at the start of text (git's quote_c_style): (name, the rest)."""
    out = bytearray()
    i, n = 1, len(text)
    while i < n:
        ch = text[i]
        if ch == ord('"'):
            return bytes(out), text[i + 1 :]
        if ch == ord("\\") and i + 1 < n:
            octal = text[i + 1 : i + 4]
            if len(octal) == 3 and all(48 <= c <= 55 for c in octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
                continue
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        out.append(ch)
        i += 1
    return bytes(out), b""


# -- what the runner uses ---------------------------------------------------------------------


@dataclasses.dataclass
class Guard:
    """One git call's guard: refuse it before it runs, or filter what it writes."""

    tree: WorkTree
    kind: str  # "diff", "grep" or "blame"
    path: str | None = None  # blame's file (the one guard kind that names one)
    _filter: DiffFilter | None = None
    _streamed: Emit | None = None

    def refusal(self) -> ProcessResult | None:
        """A failed result in place of the call (blame of a withheld file), or None."""
        if self.path is None:  # only blame's guard names a file
            return None
        reason = self.tree.refused(os.fsencode(self.path))
        if reason is None:
            return None
        return ProcessResult(128, b"", b"fatal: " + reason.encode())

    def stream(self, emit: Emit) -> Emit:
        """The on_stdout to give git instead of emit (a diff's chunks pass the filter)."""
        if self.kind != "diff":
            return emit
        self._filter = DiffFilter(self.tree.refused, emit)
        return self._filter.take

    def finish(self, result: ProcessResult) -> ProcessResult:
        if self._filter is not None:  # streamed: the rest of the output, filtered
            self._filter.flush()
            return result
        if self.kind == "diff":
            parts: list[bytes] = []
            whole = DiffFilter(self.tree.refused, parts.append)
            whole.take(result.stdout)
            whole.flush()
            return dataclasses.replace(result, stdout=b"".join(parts))
        if self.kind == "grep":
            return dataclasses.replace(result, stdout=filter_grep(result.stdout, self.tree.refused))
        return result


def guard_for(args: Sequence[str], worktree: Path) -> Guard | None:
    """The guard a git call needs when it reads the work tree (see the module docstring)."""
    if not args:
        return None
    sub = args[0]
    if sub == "diff" and diff_reads_worktree(args):
        return Guard(WorkTree(worktree), "diff")
    if sub == "grep" and grep_reads_worktree(args):
        return Guard(WorkTree(worktree), "grep")
    if sub == "blame":
        path = blame_path(args)
        if path is not None:
            return Guard(WorkTree(worktree), "blame", path)
    return None


__all__ = [
    "DiffFilter",
    "Guard",
    "WorkTree",
    "blame_path",
    "diff_reads_worktree",
    "filter_grep",
    "grep_reads_worktree",
    "guard_for",
    "header_names",
]
