"""A git unified diff → one `FileDiff` per file section.

Why not unidiff's PatchSet: it costs about 4× the time git takes to produce the diff (0.57 s
against git's 0.15 s for 1,000 files / 50,000 changed lines), leaves git's C-quoted names
quoted, and raises on the first odd section, losing the rest. This parser reads git's format
directly, in one linear pass over the lines:

- sections start at `diff --git`, `diff --cc`/`--combined` (merges), a bare `--- `/`+++ ` pair
  (non-git unified diffs) or a `Submodule <path> a..b` line (`--submodule=log`); anything between
  sections (`git show`/`git log -p` commit headers) is ignored;
- hunk bodies are read by the counts in the `@@` line, never by guessing from the text, so a
  removed line that reads "-- x" or "diff --git" cannot be mistaken for a header;
- lines are split on "\\n" only: "\\r", form feeds and U+2028 are content, not line ends;
- a section that still fails comes back with `error` set, and the other sections are unaffected.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SUBMODULE_LOG = re.compile(r"Submodule (.+) ([0-9a-f]{4,}\.\.\.?[0-9a-f]{4,})(?: \(.*\))?:?$")
_GITLINK_MODE = " 160000"
# A line that cannot belong to a hunk body, by its tag (see line_tags: empty lines are " ").
_NOT_BODY_TAG = re.compile(r"[^ +\-\\]")
# bytes.translate table: '+' → 1, anything else → 0 (see _added_lines).
_ADDED_SELECTOR = bytes(1 if byte == ord("+") else 0 for byte in range(256))
_FIRST_CHAR = operator.itemgetter(slice(0, 1))
_C_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    '"': '"',
    "\\": "\\",
}


@dataclass(slots=True)
class Hunk:
    header: str  # the "@@ ... @@" line
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[str] = field(default_factory=list)  # body lines as in the diff, prefix included
    # The first character of each body line (" " for an empty line): lets callers find the
    # '+'/'-' lines with string operations instead of a Python loop over every line.
    tags: str = ""
    added: list[int] = field(default_factory=list)  # new-side numbers of '+' lines
    removed: int = 0  # number of '-' lines
    _anchors: list[int] | None = None

    @property
    def changed(self) -> int:
        return len(self.added) + self.removed

    @property
    def new_range(self) -> tuple[int, int]:
        """New-side (start, end); a hunk with no new lines is pinned to the line above it."""
        if self.new_count > 0:
            return (self.new_start, self.new_start + self.new_count - 1)
        line = max(self.new_start, 1)
        return (line, line)

    @property
    def anchors(self) -> list[int]:
        """New-side lines that locate the change, for finding the functions it touches.

        Every added line, plus, for a run of removals not replaced by additions, the line just
        above the gap (what is left around the removed code). Computed on first use: only
        files whose functions are looked up need it.
        """
        if self._anchors is None:
            self._anchors = self.added if not self.removed else _anchors(self)
        return self._anchors


def _anchors(hunk: Hunk) -> list[int]:
    out: list[int] = []
    new_line = hunk.new_start
    removal_open = False
    for line in hunk.lines:
        tag = line[:1]
        if tag == "+":
            out.append(new_line)
            new_line += 1
            removal_open = False
        elif tag == "-":
            removal_open = True
        elif tag != "\\":
            if removal_open:
                out.append(max(new_line - 1, 1))
                removal_open = False
            new_line += 1
    if removal_open:
        out.append(max(new_line - 1, 1))
    return out


@dataclass(slots=True)
class FileDiff:
    old_path: str | None = None  # None when the old side is /dev/null
    new_path: str | None = None  # None when the new side is /dev/null
    header: list[str] = field(default_factory=list)  # raw header lines, "diff --git" to "+++"
    hunks: list[Hunk] = field(default_factory=list)
    is_new: bool = False
    is_deleted: bool = False
    is_copy: bool = False
    binary: bool = False
    submodule: bool = False
    combined: bool = False  # a merge's combined diff (`diff --cc`), not split into hunks
    error: str | None = None

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or "<unknown>"

    @property
    def new_blob(self) -> str | None:
        """The new side's blob id as the `index` line gives it (abbreviated), if it names one."""
        for line in self.header:
            if line.startswith("index "):
                ids = line[len("index ") :].split(" ", 1)[0].rstrip("\r")
                new = ids.partition("..")[2]
                return new if new.strip("0") else None  # all zeros: no new side
        return None


def unquote_path(text: str) -> tuple[str, str]:
    """Read one C-quoted git path from the start of `text`: (path, the rest after it).

    Git quotes names with '"', backslash, control characters (and, unless core.quotePath is
    false, non-ASCII bytes as octal). Octal escapes are bytes of a UTF-8 name, so they are
    collected as bytes and decoded together.
    """
    assert text.startswith('"')
    out = bytearray()
    i, n = 1, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            return out.decode("utf-8", errors="replace"), text[i + 1 :]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            octal = text[i + 1 : i + 4]
            if len(octal) == 3 and all(c in "01234567" for c in octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
                continue
            out += _C_ESCAPES.get(nxt, nxt).encode("utf-8", errors="replace")
            i += 2
            continue
        out += ch.encode("utf-8", errors="replace")
        i += 1
    return out.decode("utf-8", errors="replace"), ""  # unterminated: take what is there


def _split_pair(text: str) -> tuple[str, str] | None:
    """The two names of a `diff --git` header, prefixes still on. None when ambiguous."""
    if text.startswith('"'):
        first, rest = unquote_path(text)
        rest = rest.lstrip(" ")
        second = unquote_path(rest)[0] if rest.startswith('"') else rest
        return first, second
    if text.endswith('"'):
        pos = text.rfind(' "')
        while pos > 0:
            second, rest = unquote_path(text[pos + 1 :])
            if rest == "":
                return text[:pos], second
            pos = text.rfind(' "', 0, pos)
        return None
    # Unquoted names may contain spaces. Without a rename both sides name the same file, so the
    # header is symmetric around its middle space (after the 2-char prefixes, if any).
    mid = len(text) // 2
    if len(text) % 2 == 1 and text[mid] == " ":
        first, second = text[:mid], text[mid + 1 :]
        if first == second or first[2:] == second[2:]:
            return first, second
    pos = text.find(" b/")
    return (text[:pos], text[pos + 1 :]) if pos > 0 else None


def _strip_prefix(path: str | None, prefix: str) -> str | None:
    if path is None or path == "/dev/null":
        return None
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path


def _prefixes(pair: tuple[str, str] | None) -> tuple[str, str]:
    """Which prefixes this diff uses: a/ b/, mnemonic (c/ w/ i/ o/ ...), or none."""
    if pair is None:
        return ("a/", "b/")
    old, new = pair
    if old.startswith("a/") and new.startswith("b/"):
        return ("a/", "b/")
    if (
        len(old) > 2
        and len(new) > 2
        and old[1] == "/"
        and new[1] == "/"
        and old[0] != new[0]
        and old[0] in "ciow12"
        and new[0] in "ciow12"
    ):
        return (old[:2], new[:2])
    return ("", "")


def _marker_path(value: str) -> str:
    """The name on a `--- `/`+++ ` line: quoted, or cut at the tab git/diff may append."""
    if value.startswith('"'):
        return unquote_path(value)[0]
    return value.split("\t", 1)[0]


def _plain_path(value: str) -> str:
    """A name on a `rename from`/`copy to` line: no prefix, maybe quoted."""
    return unquote_path(value)[0] if value.startswith('"') else value


def _is_section_start(lines: list[str], i: int) -> bool:
    line = lines[i]
    if line.startswith("diff "):
        return True
    if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
        return True
    return line.startswith("Submodule ") and _SUBMODULE_LOG.match(line.rstrip("\r")) is not None


def parse_git_diff(text: str) -> list[FileDiff]:
    """Every file section of `text`, in order. Never raises."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    # Every line's tag, computed once: hunk bodies are then found and counted with string
    # operations on slices of it (see _read_hunk).
    tags = line_tags(lines)
    files: list[FileDiff] = []
    i, n = 0, len(lines)
    while i < n:
        if not _is_section_start(lines, i):
            i += 1  # commit headers, messages, stray text between sections
            continue
        start = i
        fd = FileDiff()
        try:
            i = max(_parse_section(lines, tags, i, fd), start + 1)  # always make progress
        except Exception as exc:  # one bad section must not lose the others
            fd.error = f"unparseable diff section: {type(exc).__name__}: {exc}"
            i = start + 1
            git_style = lines[start].startswith("diff ")
            while i < n and not (
                lines[i].startswith("diff ") if git_style else _is_section_start(lines, i)
            ):
                i += 1
        files.append(fd)
    return files


def _parse_section(lines: list[str], tags: str, i: int, fd: FileDiff) -> int:
    """Fill `fd` from the section starting at lines[i]; return the index after it. `tags` is
    line_tags(lines)."""
    first = lines[i].rstrip("\r")
    if first.startswith("Submodule "):
        return _parse_submodule_log(lines, i, fd)
    if first.startswith("diff --cc ") or first.startswith("diff --combined "):
        return _parse_combined(lines, i, fd)
    pair: tuple[str, str] | None = None
    if first.startswith("diff "):  # "diff --git a/x b/x" (anything else: no names to take)
        fd.header.append(lines[i])
        if first.startswith("diff --git "):
            pair = _split_pair(first[len("diff --git ") :])
        i += 1
    old_prefix, new_prefix = _prefixes(pair)
    if pair is not None:
        fd.old_path = _strip_prefix(pair[0], old_prefix)
        fd.new_path = _strip_prefix(pair[1], new_prefix)
    i = _parse_extended_header(lines, i, fd, old_prefix, new_prefix)
    if fd.is_new:
        fd.old_path = None
    if fd.is_deleted:
        fd.new_path = None
    return _parse_hunks(lines, tags, i, fd)


def _parse_extended_header(
    lines: list[str], i: int, fd: FileDiff, old_prefix: str, new_prefix: str
) -> int:
    n = len(lines)
    while i < n:
        raw = lines[i]
        line = raw.rstrip("\r")
        if line.startswith("@@"):
            return i
        if line.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ "):
            fd.header += [raw, lines[i + 1]]
            old = _marker_path(line[4:])
            new = _marker_path(lines[i + 1].rstrip("\r")[4:])
            if old == "/dev/null":
                fd.is_new, fd.old_path = True, None
            else:
                fd.old_path = _strip_prefix(old, old_prefix)
            if new == "/dev/null":
                fd.is_deleted, fd.new_path = True, None
            else:
                fd.new_path = _strip_prefix(new, new_prefix)
            return i + 2
        if line.startswith("GIT binary patch"):
            fd.binary = True
            fd.header.append(raw)
            i += 1
            while i < n and not lines[i].startswith("diff "):
                i += 1  # base85 payload: nothing to review in it
            return i
        if not _header_line(line, fd):
            return i  # not part of a header: let the caller resynchronise
        fd.header.append(raw)
        i += 1
    return i


def _header_line(line: str, fd: FileDiff) -> bool:
    """Apply one extended header line to `fd`; False when it is not a header line."""
    if line.startswith("new file mode "):
        fd.is_new = True
        fd.submodule |= line.endswith(_GITLINK_MODE)
    elif line.startswith("deleted file mode "):
        fd.is_deleted = True
        fd.submodule |= line.endswith(_GITLINK_MODE)
    elif line.startswith("index "):
        fd.submodule |= line.endswith(_GITLINK_MODE)
    elif line.startswith("rename from ") or line.startswith("copy from "):
        fd.old_path = _plain_path(line.split(" ", 2)[2])
        fd.is_copy = line.startswith("copy")
    elif line.startswith("rename to ") or line.startswith("copy to "):
        fd.new_path = _plain_path(line.split(" ", 2)[2])
    elif line.startswith("Binary files ") and line.endswith(" differ"):
        fd.binary = True
        fd.is_new |= line.startswith("Binary files /dev/null and ")
        fd.is_deleted |= line.endswith(" and /dev/null differ")
    elif not line.startswith(
        ("old mode ", "new mode ", "similarity index ", "dissimilarity index ")
    ):
        return False
    return True


def _parse_hunks(lines: list[str], tags: str, i: int, fd: FileDiff) -> int:
    n = len(lines)
    while i < n:
        line = lines[i]
        if line.startswith("@@"):
            m = _HUNK.match(line)
            if m is None:
                raise ValueError(f"bad hunk header {line[:80]!r}")
            i = _read_hunk(lines, tags, i, m, fd)
        elif _is_section_start(lines, i):
            return i
        else:
            i += 1  # text after the last hunk (e.g. the next commit header in `git log -p`)
    return i


def _read_hunk(lines: list[str], all_tags: str, i: int, m: re.Match[str], fd: FileDiff) -> int:
    old_text, old_count_text, new_text, new_count_text = m.groups()
    old_start, new_start = int(old_text), int(new_text)
    old_count = int(old_count_text) if old_count_text else 1
    new_count = int(new_count_text) if new_count_text else 1
    header = lines[i]
    i += 1
    # Fast path (the hot loop of the whole package): a body has at least max(old, new) lines,
    # so start there and extend over lines that can be body lines, found in the tags of all
    # lines by one regex search; then check the counts. A body that does not add up is re-read
    # line by line by its counts. Each count is taken once, at C speed, and reused below.
    n = len(lines)
    end = min(i + max(old_count, new_count), n)
    stop = _NOT_BODY_TAG.search(all_tags, end)
    end = stop.start() if stop is not None else n
    tags = all_tags[i:end]
    plus, minus, marks = tags.count("+"), tags.count("-"), tags.count("\\")
    context = len(tags) - plus - minus - marks
    if context + minus != old_count or context + plus != new_count:
        end = _body_end_by_counts(lines, i, old_count, new_count)
        tags = all_tags[i:end].replace("\r", " ")
        plus, minus = tags.count("+"), tags.count("-")
    added = _added_lines(tags, new_start) if plus else []
    fd.hunks.append(
        Hunk(header, old_start, old_count, new_start, new_count, lines[i:end], tags, added, minus)
    )
    return end


def line_tags(lines: list[str], start: int = 0, end: int | None = None) -> str:
    """The first character of each of lines[start:end], " " for an empty line (a context line
    whose single space an editor stripped)."""
    selected = lines[start:end]
    # A C-level map over the lines; an empty line yields "" there, which shortens the result,
    # and only then (editor-mangled diffs) is the slower per-line loop needed.
    tags = "".join(map(_FIRST_CHAR, selected))
    if len(tags) == len(selected):
        return tags
    return "".join([line[:1] or " " for line in selected])


def _added_lines(tags: str, new_start: int) -> list[int]:
    """New-side numbers of the '+' lines.

    All at C level, with no Python step per line or per run: the tags become bytes, one
    translate drops the '-'/'\\' lines (they take no new-side number) and turns each
    remaining line into a 1 ('+') or 0 selector for the line numbers. Tags are ASCII in any
    diff git writes; anything else takes the per-character filter.
    """
    if tags.isascii():
        selectors: Iterable[object] = tags.encode("ascii").translate(_ADDED_SELECTOR, b"-\\")
    else:
        selectors = map("+".__eq__, tags.replace("-", "").replace("\\", ""))
    return list(itertools.compress(itertools.count(new_start), selectors))


def _body_end_by_counts(lines: list[str], i: int, old_left: int, new_left: int) -> int:
    """End of a hunk body found by its line counts (truncated, odd or hand-edited diffs)."""
    j, n = i, len(lines)
    while j < n and (old_left > 0 or new_left > 0):
        tag = lines[j][:1]
        if tag == "+" and new_left > 0:
            new_left -= 1
        elif tag == "-" and old_left > 0:
            old_left -= 1
        elif (tag in ("", " ") or lines[j] == "\r") and old_left > 0 and new_left > 0:
            # "" is a context line whose single space was stripped by an editor or mailer.
            old_left -= 1
            new_left -= 1
        elif tag != "\\":
            break  # truncated or malformed: keep what was read
        j += 1
    while j < n and lines[j][:1] == "\\":  # "\ No newline at end of file"
        j += 1
    return j


def _parse_combined(lines: list[str], i: int, fd: FileDiff) -> int:
    # Merge diffs have one column per parent; reviewing them needs a parent, so they are
    # reported (and skipped) as a whole rather than half-understood.
    first = lines[i].rstrip("\r")
    name = first.split(" ", 2)[2]
    fd.old_path = fd.new_path = _plain_path(name)
    fd.combined = True
    fd.header.append(lines[i])
    i += 1
    while i < len(lines) and not lines[i].startswith("diff "):
        i += 1
    return i


def _parse_submodule_log(lines: list[str], i: int, fd: FileDiff) -> int:
    m = _SUBMODULE_LOG.match(lines[i].rstrip("\r"))
    assert m is not None
    fd.old_path = fd.new_path = m.group(1)
    fd.submodule = True
    fd.header.append(lines[i])
    i += 1
    while i < len(lines) and lines[i].startswith("  "):  # the "  > commit subject" lines
        fd.header.append(lines[i])
        i += 1
    return i
