"""Place a model's finding on the lines it talks about, by the code it quotes.

Models get line numbers wrong (they count inside the diff, use the old side, or drift), so a
finding is placed by locating its `existing_code` in the new version of the file; the model's
line number only breaks ties between equal matches. A finding whose code cannot be found is
UNANCHORED with no line: it is never put on a guessed line.

Matching, in order, stopping at the first level that finds anything:

1. **verbatim** — the quoted lines equal consecutive file lines (trailing whitespace and line
   endings ignored: CRLF and an editor's trailing-space trimming are not content).
2. **whitespace** — the same, comparing non-blank lines with runs of whitespace collapsed, so
   re-indentation, blank-line differences and internal spacing do not matter. At this level the
   first quoted line may also be the tail of a file line and the last one the head of a file
   line (models often quote `subprocess.run(cmd, shell=True)` out of `r = subprocess.run(...)`);
   such a fragment must have at least `MIN_FRAGMENT` non-space characters.
3. **fuzzy** — `difflib.SequenceMatcher` ratio ≥ `FUZZY_THRESHOLD` (0.8) between the quoted
   non-blank lines and a window of as many non-blank file lines (whitespace collapsed). That is
   roughly "one short token changed per line or two": enough to survive a small edit made
   after the review, not enough to match merely similar code. Only windows that share a line or
   a distinctive identifier with the quote are scored, at most `MAX_FUZZY_WINDOWS` of them,
   so the cost is bounded on any file.

Before matching, a gutter the model may have copied from its prompt is recognised: line
numbers (`12| x`, `12: x`, `12 +x`), diff markers (`+x`, ` x`; removed `-` lines and `@@`
headers are dropped). The quote is first tried as written, so code that merely looks like a
gutter (a YAML list, `-x`) still matches itself.

Anchor states:

- **EXACT** — the code is in the file, identical up to whitespace (levels 1–2), and where the
  model said it is: within `HINT_TOLERANCE` (3) lines of its line number, or it gave none.
- **RELOCATED** — identical up to whitespace but more than 3 lines from the model's line, or
  found only by the fuzzy level. The finding is placed where the code actually is.
- **UNANCHORED** — not found; `start_line`/`end_line` are None.

`Anchor.score` is the similarity of the match: 1.0 for levels 1–2 (identical up to whitespace),
the ratio for fuzzy matches (always < 1), 0.0 when unanchored; `Anchor.method` names the level.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal

from redline.model import AnchorState, Finding, finding_id
from redline.review.schemas import ModelFinding

HINT_TOLERANCE = 3
FUZZY_THRESHOLD = 0.8
MIN_FRAGMENT = 5
MAX_FUZZY_WINDOWS = 400
# Quotes longer than this are not fuzzy-matched: SequenceMatcher is quadratic in the worst case
# and a model that quotes 200 lines is not pointing at a place anyway.
MAX_FUZZY_LINES = 200
# A line that occurs this often (`}`, `return None`, `else:`) says nothing about where a quote
# belongs, so it does not propose fuzzy candidate windows.
_COMMON_LINE = 25

# Same line breaks as ruff, Python's tokenizer and LSP: str.splitlines() also breaks on \x0c,
# U+2028, ... and would shift line numbers.
_NEWLINE = re.compile(r"\r\n|\r|\n")
_WS = re.compile(r"\s+")
_IDENT = re.compile(r"[A-Za-z_]\w{3,}")
# "12| x", "12 | x", "12: x", "L12: x", and PR-Agent's "__new hunk__" style "12 +x" / "12  x".
_NUMBER_GUTTER = re.compile(r"^[ \t]*L?\d+(?:[ \t]*[|:][ \t]?|[ \t](?=[+\- ]))")
_HUNK_HEADER = re.compile(r"^@@ .* @@")

Method = Literal["verbatim", "whitespace", "fuzzy", "none"]


@dataclass(frozen=True)
class Anchor:
    start_line: int | None  # 1-based, inclusive; None when unanchored
    end_line: int | None
    state: AnchorState
    score: float
    method: Method = "none"
    # For a whitespace-level fragment match: the text on the first/last anchored line outside
    # the quoted fragment. anchor_finding splices the model's improved code between them so a
    # quick fix for a fragment does not replace the whole line with the fragment.
    prefix: str = ""
    suffix: str = ""
    # Indentation of the first whole-line match in the file and in the quote, so improved code
    # written against a re-indented quote can be shifted to the file's indentation.
    file_indent: str = ""
    quote_indent: str = ""


UNANCHORED = Anchor(None, None, AnchorState.UNANCHORED, 0.0)


def split_lines(text: str) -> list[str]:
    """Lines of `text` without their line breaks; a trailing break does not open a line."""
    lines = _NEWLINE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _norm(line: str) -> str:
    return _WS.sub(" ", line).strip()


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


class _File:
    """A file's lines with the indexes the matchers need, built lazily and cached per text."""

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text)
        self.stripped = [line.rstrip() for line in self.lines]

    @cached_property
    def content(self) -> list[int]:
        """0-based indexes of the non-blank lines."""
        return [i for i, line in enumerate(self.stripped) if line]

    @cached_property
    def normalized(self) -> list[str]:
        """Whitespace-collapsed text of each non-blank line, parallel to `content`."""
        return [_norm(self.lines[i]) for i in self.content]

    @cached_property
    def norm_positions(self) -> dict[str, list[int]]:
        index: dict[str, list[int]] = {}
        for pos, norm in enumerate(self.normalized):
            index.setdefault(norm, []).append(pos)
        return index


@lru_cache(maxsize=8)
def _prepare(text: str) -> _File:
    # A review anchors many findings against the same file text; str caches its hash, so the
    # lookup is cheap and the split and indexes are built once per file.
    return _File(text)


def _gutter_stripped(lines: list[str]) -> list[str] | None:
    """The quote without a copied line-number gutter or diff markers, or None if it has none."""
    body = [line for line in lines if line.strip()]
    if not body:
        return None
    changed = False
    if all(_NUMBER_GUTTER.match(line) for line in body):
        lines = [_NUMBER_GUTTER.sub("", line, count=1) if line.strip() else line for line in lines]
        changed = True
    lines = [line for line in lines if not _HUNK_HEADER.match(line)]
    body = [line for line in lines if line.strip()]
    if (
        body
        and all(line[:1] in "+- " for line in body)
        and any(line[:1] in "+-" for line in body)
        and not any(line.startswith(("+++", "---")) for line in body)
    ):
        lines = [line[1:] for line in lines if not line.startswith("-")]
        changed = True
    return lines if changed else None


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def quote_lines(existing_code: str) -> list[list[str]]:
    """The ways to read a quote: as written, then without a copied gutter (if it has one)."""
    raw = split_lines(existing_code)
    variants = [_trim_blank(raw)]
    stripped = _gutter_stripped(raw)
    if stripped is not None:
        variants.append(_trim_blank(stripped))
    return [v for v in variants if v]


def _distance(start: int, end: int, hint: int | None) -> int:
    """0-based range vs 1-based hint: 0 when the hint falls inside the range."""
    if hint is None:
        return 0
    h = hint - 1
    if h < start:
        return start - h
    if h > end:
        return h - end
    return 0


def _pick(ranges: Iterable[tuple[int, int]], hint: int | None) -> tuple[int, int] | None:
    """The range closest to the hint, then the one starting nearest it (a model's line number
    is the first line of what it quotes), then the earliest."""
    h = hint - 1 if hint is not None else 0
    best: tuple[int, int] | None = None
    best_key: tuple[int, int, int] | None = None
    for start, end in ranges:
        key = (_distance(start, end, hint), abs(start - h), start)
        if best_key is None or key < best_key:
            best, best_key = (start, end), key
    return best


def _verbatim(f: _File, quote: list[str], hint: int | None) -> tuple[int, int] | None:
    want = [line.rstrip() for line in quote]
    k = len(want)
    if k > len(f.stripped):
        return None
    first = want[0]
    lines = f.stripped
    hits = (
        (i, i + k - 1) for i, line in enumerate(lines) if line == first and lines[i : i + k] == want
    )
    return _pick(hits, hint)


@dataclass(frozen=True)
class _WsMatch:
    start: int  # 0-based file lines, inclusive
    end: int
    prefix: str = ""
    suffix: str = ""
    file_indent: str = ""
    quote_indent: str = ""


def _loose(fragment: str) -> str:
    """A regex for `fragment` that accepts any run of whitespace where it has one."""
    return r"\s+".join(re.escape(part) for part in fragment.split())


def _whitespace(f: _File, quote: list[str], hint: int | None) -> _WsMatch | None:
    body = [line for line in quote if line.strip()]
    want = [_norm(line) for line in body]
    k = len(want)
    if k > len(f.content):
        return None
    matches: list[_WsMatch] = []
    for pos in f.norm_positions.get(want[0], []):
        if f.normalized[pos : pos + k] == want:
            start, end = f.content[pos], f.content[pos + k - 1]
            matches.append(_WsMatch(start, end, "", "", _indent(f.lines[start]), _indent(body[0])))
    if not matches:
        matches = _fragments(f, body, want)
    if not matches:
        return None
    best = _pick(((m.start, m.end) for m in matches), hint)
    return next(m for m in matches if (m.start, m.end) == best)


def _fragments(f: _File, body: list[str], want: list[str]) -> list[_WsMatch]:
    """Matches where the first quoted line is a line's tail and the last one a line's head."""
    k = len(want)
    first, last = want[0], want[-1]
    if len(first.replace(" ", "")) < MIN_FRAGMENT or len(last.replace(" ", "")) < MIN_FRAGMENT:
        return []
    matches: list[_WsMatch] = []
    norms = f.normalized
    if k == 1:
        pattern = re.compile(_loose(first))
        for pos, norm in enumerate(norms):
            if first in norm:
                i = f.content[pos]
                m = pattern.search(f.lines[i])
                if m is not None:
                    matches.append(_WsMatch(i, i, f.lines[i][: m.start()], f.lines[i][m.end() :]))
        return matches
    head = re.compile(_loose(first) + r"\s*$")
    tail = re.compile(r"^\s*" + _loose(last))
    middle = want[1:-1]
    for pos in range(len(norms) - k + 1):
        if not norms[pos].endswith(first) or not norms[pos + k - 1].startswith(last):
            continue
        if norms[pos + 1 : pos + k - 1] != middle:
            continue
        i, j = f.content[pos], f.content[pos + k - 1]
        mh, mt = head.search(f.lines[i]), tail.match(f.lines[j])
        if mh is None or mt is None:
            continue
        # Indentation is compared on the second quoted line: the first one is only a tail.
        second = f.content[pos + 1]
        matches.append(
            _WsMatch(
                i,
                j,
                f.lines[i][: mh.start()],
                f.lines[j][mt.end() :],
                _indent(f.lines[second]),
                _indent(body[1]),
            )
        )
    return matches


def _fuzzy(f: _File, quote: list[str], hint: int | None) -> tuple[int, int, float] | None:
    body = [line for line in quote if line.strip()]
    want = [_norm(line) for line in body]
    k = len(want)
    n = len(f.normalized)
    if k > n or k > MAX_FUZZY_LINES:
        return None
    starts = _candidate_starts(f, want)
    if not starts:
        return None
    if len(starts) > MAX_FUZZY_WINDOWS:
        # Keep the windows nearest the model's line: if the cap bites, those are the likeliest.
        h = hint - 1 if hint is not None else 0
        ordered = sorted(starts, key=lambda s: (abs(f.content[s] - h), s))
        starts = set(ordered[:MAX_FUZZY_WINDOWS])
    target = "\n".join(want)
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)  # seq2 is the one SequenceMatcher indexes; reuse it across windows
    scored: list[tuple[float, int, int]] = []
    for s in sorted(starts):
        matcher.set_seq1("\n".join(f.normalized[s : s + k]))
        if matcher.real_quick_ratio() < FUZZY_THRESHOLD or matcher.quick_ratio() < FUZZY_THRESHOLD:
            continue
        ratio = matcher.ratio()
        if ratio >= FUZZY_THRESHOLD:
            scored.append((ratio, f.content[s], f.content[s + k - 1]))
    if not scored:
        return None
    top = max(r for r, _, _ in scored)
    # Equal ratios are equally good text matches; only then does the model's line decide.
    best = _pick(((a, b) for r, a, b in scored if r >= top - 1e-9), hint)
    if best is None:
        return None
    return best[0], best[1], top


def _candidate_starts(f: _File, want: list[str]) -> set[int]:
    """Window starts (indexes into the non-blank lines) worth scoring.

    A window is a candidate when one of the quote's lines occurs in it unchanged at the same
    offset, or when it contains one of the quote's most distinctive identifiers (the longest
    ones; that is what survives an edit to a single-line quote).
    """
    k, n = len(want), len(f.normalized)
    starts: set[int] = set()
    for j, line in enumerate(want):
        positions = f.norm_positions.get(line, [])
        if len(positions) > _COMMON_LINE:
            continue
        for pos in positions:
            if 0 <= pos - j <= n - k:
                starts.add(pos - j)
    if starts:
        return starts
    idents = sorted(set(_IDENT.findall(" ".join(want))), key=lambda s: (-len(s), s))[:3]
    for ident in idents:
        hits = [pos for pos, norm in enumerate(f.normalized) if ident in norm]
        if len(hits) * k > MAX_FUZZY_WINDOWS * 4:
            continue  # a word on every other line is not distinctive
        for pos in hits:
            starts.update(range(max(0, pos - k + 1), min(pos, n - k) + 1))
    return starts


def _state(start: int, end: int, hint: int | None) -> AnchorState:
    within = _distance(start, end, hint) <= HINT_TOLERANCE
    return AnchorState.EXACT if within else AnchorState.RELOCATED


def locate(existing_code: str, text: str, hint_line: int | None = None) -> Anchor:
    """Find `existing_code` in `text` (see the module docstring for levels and states).

    `hint_line` is the model's 1-based line number; it only chooses between equal matches and
    decides EXACT vs RELOCATED. Returned lines are 1-based and inclusive.
    """
    variants = quote_lines(existing_code)
    if not variants or not text:
        return UNANCHORED
    f = _prepare(text)
    for quote in variants:
        found = _verbatim(f, quote, hint_line)
        if found is not None:
            start, end = found
            indent = _indent(f.lines[start]), _indent(quote[0])
            return Anchor(
                start + 1,
                end + 1,
                _state(start, end, hint_line),
                1.0,
                "verbatim",
                file_indent=indent[0],
                quote_indent=indent[1],
            )
    for quote in variants:
        ws = _whitespace(f, quote, hint_line)
        if ws is not None:
            return Anchor(
                ws.start + 1,
                ws.end + 1,
                _state(ws.start, ws.end, hint_line),
                1.0,
                "whitespace",
                prefix=ws.prefix,
                suffix=ws.suffix,
                file_indent=ws.file_indent,
                quote_indent=ws.quote_indent,
            )
    best: tuple[int, int, float] | None = None
    for quote in variants:
        fz = _fuzzy(f, quote, hint_line)
        if fz is not None and (best is None or fz[2] > best[2]):
            best = fz
    if best is None:
        return UNANCHORED
    start, end, ratio = best
    # Rounded for display, but kept below 1.0: a score of 1.0 means "identical up to whitespace".
    score = min(round(ratio, 4), 0.9999)
    return Anchor(start + 1, end + 1, AnchorState.RELOCATED, score, "fuzzy")


def _reindent(lines: Sequence[str], quote_indent: str, file_indent: str) -> list[str]:
    """Shift `lines` from the quote's indentation to the file's (only when one extends the
    other: mixed tabs and spaces are left alone rather than guessed)."""
    if quote_indent == file_indent:
        return list(lines)
    if file_indent.startswith(quote_indent):
        extra = file_indent[len(quote_indent) :]
        return [extra + line if line.strip() else line for line in lines]
    if quote_indent.startswith(file_indent):
        cut = quote_indent[len(file_indent) :]
        if all(line.startswith(cut) or not line.strip() for line in lines):
            return [line[len(cut) :] if line.strip() else line for line in lines]
    return list(lines)


def _fit_improved(improved: str, anchor: Anchor) -> str:
    """The model's improved code, made a faithful replacement of the anchored lines."""
    lines = split_lines(improved)
    if anchor.method == "fuzzy":
        # The quote differs from the file by more than whitespace; its replacement cannot be
        # adjusted reliably, and the verifier/editor decide whether to offer it.
        return improved
    if anchor.prefix or anchor.suffix:
        # Fragment: re-indent the continuation lines only; the first goes after the prefix.
        rest = _reindent(lines[1:], anchor.quote_indent, anchor.file_indent)
        joined = "\n".join(([lines[0]] if lines else [""]) + rest)
        prefix, suffix = anchor.prefix, anchor.suffix
        # Some models quote a fragment but answer with the whole line; splicing that would
        # repeat the surrounding text ("r = r = ...").
        if prefix.strip() and _norm(joined).startswith(_norm(prefix)):
            prefix, joined = _indent(prefix), joined.lstrip()
        if suffix.strip() and _norm(joined).endswith(_norm(suffix)):
            suffix = ""
        return prefix + joined + suffix
    return "\n".join(_reindent(lines, anchor.quote_indent, anchor.file_indent))


def anchor_finding(mf: ModelFinding, new_text: str | None, *, source: str) -> Finding:
    """A `Finding` for a model's report, placed by its quoted code in `new_text`.

    `new_text` is the new version of `mf.file` (None when it is unavailable, e.g. deleted).
    When anchored, `existing_code` becomes the file's actual text at the anchored lines so a
    quick fix replaces exactly what is there, and `improved_code` is adjusted to match
    (re-indented, or spliced into the line for a fragment quote). The id is computed from that
    file text, so it does not depend on how the model happened to quote the code this time.
    """
    anchor = locate(mf.existing_code, new_text or "", mf.line)
    improved = mf.improved_code
    if anchor.start_line is None or anchor.end_line is None or new_text is None:
        variants = quote_lines(mf.existing_code)
        existing = "\n".join(variants[-1]) if variants else mf.existing_code
        line = end_line = None
    else:
        lines = _prepare(new_text).lines
        existing = "\n".join(lines[anchor.start_line - 1 : anchor.end_line])
        line, end_line = anchor.start_line, anchor.end_line
        if improved is not None:
            improved = _fit_improved(improved, anchor)
    return Finding(
        id=finding_id(mf.file, existing, mf.category.value),
        file=mf.file,
        line=line,
        end_line=end_line,
        severity=mf.severity,
        category=mf.category,
        title=mf.title,
        comment=mf.comment,
        existing_code=existing,
        improved_code=improved,
        confidence=mf.confidence,
        sources=[source],
        anchor=anchor.state,
    )
