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
import stat
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
        if not rel or b"\0" in rel:
            return None
        try:
            st = os.lstat(os.path.join(os.fsencode(self.root), rel))
        except (OSError, ValueError):
            return None  # not there: git read nothing of it from the work tree
        if not stat.S_ISREG(st.st_mode) or st.st_nlink <= 1:
            return None
        if self._census.all_names_inside(st):
            return None
        return refusal(repr(strip_control(os.fsdecode(rel))))


# -- which calls read the work tree -----------------------------------------------------------


def _options(args: Sequence[str]) -> list[str]:
    """The arguments before `--` (paths come after it)."""
    return list(args[1 : args.index("--")] if "--" in args else args[1:])


def diff_reads_worktree(args: Sequence[str]) -> bool:
    """A diff with fewer than two revisions that is not of the index (`--cached`). Revisions
    are counted after `--end-of-options` (a range counts two); without that marker the call
    is taken to read the work tree."""
    options = _options(args)
    if "--cached" in options or "--staged" in options:
        return False
    if "--end-of-options" not in options:
        return True
    revisions = options[options.index("--end-of-options") + 1 :]
    return sum(2 if ".." in r else 1 for r in revisions) < 2


def blame_path(args: Sequence[str]) -> str | None:
    """The file a blame of the work tree reads (blame without a revision), else None. A blame
    whose file is not the one argument after `--` is refused: its file could not be told."""
    if "--" not in args or args.index("--") != len(args) - 2:
        raise GitCommandError("git blame takes its file as the one argument after --")
    options = _options(args)
    if any(not a.startswith("-") for a in options):
        return None  # a revision: blame reads its objects, not the work tree
    return args[-1]


# git grep options whose output is exactly `path NUL lineno NUL text LF` records (with -n -z).
_GREP_REQUIRED: Final = frozenset({"-n", "-z", "-I"})
_GREP_ALLOWED: Final = _GREP_REQUIRED | {"-w", "-F", "-i", "--no-color", "--no-textconv",
                                         "--full-name", "--cached"}  # fmt: skip


def grep_reads_worktree(args: Sequence[str]) -> bool:
    """A grep without `--cached` and without a revision; checks that its output is records
    this module can read (a work-tree grep with other options is refused)."""
    options = _options(args)
    plain: list[str] = []
    i = 0
    while i < len(options):
        arg = options[i]
        if arg == "-e":
            i += 2
            continue
        if not arg.startswith("-"):
            plain.append(arg)
        i += 1
    if "--cached" in options or plain:
        return False
    flags = {a for j, a in enumerate(options) if a.startswith("-") and options[j - 1 : j] != ["-e"]}
    unknown = flags - _GREP_ALLOWED - {"-e"}
    if unknown or not flags >= _GREP_REQUIRED:
        raise GitCommandError(
            f"git grep of the work tree takes {' '.join(sorted(_GREP_REQUIRED))} and "
            f"{', '.join(sorted(_GREP_ALLOWED - _GREP_REQUIRED))} only; not {sorted(unknown)}"
        )
    return True


# -- the filters ------------------------------------------------------------------------------

_GREP_RECORD: Final = re.compile(rb"([^\0]*)\0([0-9]+)\0([^\n]*)(?:\n|\Z)")


def filter_grep(data: bytes, refused: Refuser) -> bytes:
    """`grep -n -z` output without the records of withheld files. A path may hold a newline
    (with -z git does not quote it), so records are read by their NULs, never by lines;
    anything that is not a record ends the output (nothing unreadable is passed on)."""
    out: list[bytes] = []
    pos = 0
    while pos < len(data):
        match = _GREP_RECORD.match(data, pos)
        if match is None or match.end() == pos:
            break
        if refused(match.group(1)) is None:
            out.append(data[pos : match.end()])
        pos = match.end()
    return b"".join(out)


class DiffFilter:
    """git diff output → the same output with each withheld section's content replaced by one
    WITHHELD_MARK line. Fed in chunks as git writes them (take, then flush at the end).

    Between section starts the bytes are passed on (or dropped) as they come, found by one
    search for "\\ndiff " at C speed, so a long line is never held (git/section_cap.py bounds
    what the stream holds of a huge section; this filter holds only up to five bytes of it,
    the start of a "\\ndiff " cut by a chunk's end). A section's header is held as whole lines
    until its first content line decides it; a header longer than HEADER_LIMIT (no genuine one
    is) is decided where it stands, from the names seen so far.
    """

    HEADER_LIMIT: Final = 256 * 1024

    def __init__(self, refused: Refuser, emit: Emit) -> None:
        self._refused = refused
        self._emit = emit
        self._buf = bytearray()
        self._at_line_start = True  # whether _buf[0] starts a line
        self._header: list[bytes] | None = None  # a section's lines while undecided
        self._header_size = 0
        self._dropping = False

    def take(self, chunk: bytes) -> None:
        self._buf += chunk
        self._run(final=False)

    def flush(self) -> None:
        self._run(final=True)
        if self._header is not None:
            self._emit(b"".join(self._header))  # a section without content
            self._header = None

    def _run(self, *, final: bool) -> None:
        out: list[bytes] = []
        buf = self._buf
        while buf:
            if self._header is None:
                if not self._between(buf, out, final):
                    break
            elif not self._header_line(buf, out, final):
                break
        if out:
            self._emit(b"".join(out))

    def _between(self, buf: bytearray, out: list[bytes], final: bool) -> bool:
        """Pass on (or drop) up to the next section start; False when there is none yet."""
        if self._at_line_start and buf.startswith(b"diff "):
            start = 0
        else:
            found = buf.find(b"\ndiff ")
            start = found + 1 if found != -1 else -1
        if start == -1:
            keep = 0 if final else _maybe_section_start(buf, self._at_line_start)
            cut = len(buf) - keep
            if cut:
                if not self._dropping:
                    out.append(bytes(buf[:cut]))
                self._at_line_start = buf[cut - 1] == 0x0A
                del buf[:cut]
            return False
        if start and not self._dropping:
            out.append(bytes(buf[:start]))
        del buf[:start]
        self._at_line_start = True
        self._header, self._header_size, self._dropping = [], 0, False
        return True

    def _header_line(self, buf: bytearray, out: list[bytes], final: bool) -> bool:
        """Take one whole header line; False when the rest of one is still to come."""
        assert self._header is not None
        end = buf.find(b"\n")
        if end == -1 and not final and self._header_size + len(buf) <= self.HEADER_LIMIT:
            return False
        end = len(buf) if end == -1 else end + 1
        line = bytes(buf[:end])
        del buf[:end]
        self._at_line_start = line.endswith(b"\n")
        if line.startswith(b"diff ") and self._header:
            out += self._header  # the previous section ended without content
            self._header, self._header_size = [], 0
        if line.startswith(_CONTENT_START) or self._header_size > self.HEADER_LIMIT:
            header, self._header = self._header, None
            reason = self._decide(header)
            if reason is None:
                out += [*header, line]
            else:
                # The marker goes right after the `diff` line, where git/section_cap.py puts
                # its own: the parser reads it as part of the header.
                mark = _MARK + reason.encode("utf-8", "replace") + b"\n"
                out += [*header[:1], mark, *header[1:]]
                self._dropping = True
            return True
        self._header.append(line)
        self._header_size += len(line)
        return True

    def _decide(self, header: list[bytes]) -> str | None:
        for name in header_names(header):
            reason = self._refused(name)
            if reason is not None:
                return reason
        return None


def _maybe_section_start(buf: bytearray, at_line_start: bool) -> int:
    """How many bytes at the end of buf may begin a section start ("\\ndiff ", or "diff "
    right at a line start) that the next chunk completes."""
    tail = bytes(buf[-6:])
    for k in range(min(len(tail), 5), 0, -1):
        if b"\ndiff "[:k] == tail[-k:]:
            return k
    if at_line_start and len(buf) < 5 and b"diff ".startswith(bytes(buf)):
        return len(buf)
    return 0


def header_names(header: list[bytes]) -> list[bytes]:
    """Every name a section's header lines give, prefixes off ("a/", "b/"); from the `diff
    --git` line too, every way it can be split, when no other line names the file."""
    names: list[bytes] = []
    for line in header:
        text = line.rstrip(b"\n").rstrip(b"\r")
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
        names = _git_line_names(header[0].rstrip(b"\n")[len(b"diff --git ") :])
    return names


def _git_line_names(rest: bytes) -> list[bytes]:
    if rest.startswith(b'"'):
        first, tail = _unquote_prefix(rest)
        tail = tail.lstrip(b" ")
        second = _unquote(tail) if tail.startswith(b'"') else tail
        return [n[2:] for n in (first, second) if n[1:2] == b"/"]
    # Unquoted "a/X b/Y": ambiguous when a name holds " b/"; every split is a candidate.
    names = [rest[2:]]
    at = rest.find(b" b/")
    while at != -1:
        names += [rest[2:at], rest[at + 3 :]]
        at = rest.find(b" b/", at + 1)
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
    path: str | None = None  # blame's file
    _filter: DiffFilter | None = None
    _streamed: Emit | None = None

    def refusal(self) -> ProcessResult | None:
        """A failed result in place of the call (blame of a withheld file), or None."""
        if self.kind != "blame" or self.path is None:
            return None
        reason = self.tree.refused(os.fsencode(self.path))
        if reason is None:
            return None
        return ProcessResult(128, b"", b"fatal: " + reason.encode("utf-8", "replace"))

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
    sub = args[0] if args else ""
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
