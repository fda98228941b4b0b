"""Place a model's finding on the lines it talks about, by the code it quotes.

Models get line numbers wrong (they count inside the diff, use the old side, or drift), so a
finding is placed by locating its `existing_code` in the new version of the file; the model's
line number only breaks ties between equal matches. A finding whose code cannot be found is
UNANCHORED with no line: it is never put on a guessed line.

Matching (`review/matchers.py`), in order, stopping at the first level that finds anything:

1. **verbatim** — the quoted lines equal consecutive file lines (trailing whitespace and line
   endings ignored: CRLF and an editor's trailing-space trimming are not content).
2. **whitespace** — the same, comparing non-blank lines with runs of whitespace collapsed, so
   re-indentation, blank-line differences and internal spacing do not matter. At this level the
   first quoted line may also be the tail of a file line and the last one the head of a file
   line (models often quote `subprocess.run(cmd, shell=True)` out of `r = subprocess.run(...)`);
   such a fragment must have at least `MIN_FRAGMENT` non-space characters.
3. **fuzzy** — `difflib.SequenceMatcher` ratio ≥ `FUZZY_THRESHOLD` (0.8) between the quoted
   non-blank lines and a window of as many non-blank file lines (whitespace collapsed). Only
   windows that share a line or a distinctive identifier with the quote are scored, at most
   `MAX_FUZZY_WINDOWS` of them, so the cost is bounded on any file.

Before matching, a gutter the model may have copied from its prompt is recognised
(`review/quotes.py`): Redline's own `  219 +| code`, other line numbers, diff markers.

Anchor states:

- **EXACT** — the code is in the file, identical up to whitespace (levels 1–2), and where the
  model said it is: within `HINT_TOLERANCE` (3) lines of its line number, or it gave none.
- **RELOCATED** — identical up to whitespace but more than 3 lines from the model's line. The
  finding is placed where the code actually is.
- **APPROXIMATE** — found only by the fuzzy level: the quote is *not* in the file. At review
  time (the file is the one the model read) that is a near-miss — typically one identifier
  renamed, a hallucination — so the finding keeps the model's quote (never the file's text
  presented as if quoted), points at the likeliest lines labelled "approximate", its confidence
  is multiplied by `APPROXIMATE_CONFIDENCE`, and its improved code is never an applicable fix
  (`FixState.NOT_IN_FILE`). benchmarks/anchoring.py measures this policy against the old one
  (the file's text swapped in, the fix offered) and against leaving such findings unanchored.
- **UNANCHORED** — not found; `start_line`/`end_line` are None.

`Anchor.score` is the similarity of the match: 1.0 for levels 1–2 (identical up to whitespace),
the ratio for fuzzy matches (always < 1), 0.0 when unanchored; `Anchor.method` names the level.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from redline.model import AnchorState, Finding, FixState, finding_id
from redline.review.fix_check import fix_state
from redline.review.matchers import (
    FUZZY_THRESHOLD as FUZZY_THRESHOLD,
)
from redline.review.matchers import (
    MAX_FUZZY_LINES as MAX_FUZZY_LINES,
)
from redline.review.matchers import (
    MAX_FUZZY_WINDOWS as MAX_FUZZY_WINDOWS,
)
from redline.review.matchers import (
    MIN_FRAGMENT as MIN_FRAGMENT,
)
from redline.review.matchers import distance, fuzzy, prepare, verbatim, whitespace
from redline.review.quotes import indent, model_quote, norm, quote_lines
from redline.review.quotes import split_lines as split_lines

if TYPE_CHECKING:
    # Only annotated: importing the schemas (hence the context package and the agent's tools)
    # here would make the language server's event loop, which imports this module lazily while
    # a review thread may be importing the model stages, take those modules' import locks in
    # the opposite order (a deadlock Python breaks by failing one of the imports).
    from redline.review.schemas import ModelFinding

HINT_TOLERANCE = 3
# A finding placed only approximately keeps this share of the model's confidence: its quote is
# not in the file, so either the model misread the code or it points at the wrong lines.
APPROXIMATE_CONFIDENCE = 0.5


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


def _state(start: int, end: int, hint: int | None) -> AnchorState:
    within = distance(start, end, hint) <= HINT_TOLERANCE
    return AnchorState.EXACT if within else AnchorState.RELOCATED


def locate(
    existing_code: str,
    text: str,
    hint_line: int | None = None,
    changed: Collection[int] | None = None,
) -> Anchor:
    """Find `existing_code` in `text` (see the module docstring for levels and states).

    `hint_line` is the model's 1-based line number; it only chooses between equal matches and
    decides EXACT vs RELOCATED. `changed` are the change's new-side lines in this file (what
    the model was asked to review): between equal matches the one on them wins unless the
    model's line points at another, and a fuzzy near-miss on them beats one elsewhere.
    Returned lines are 1-based and inclusive.
    """
    variants = quote_lines(existing_code)
    if not variants or not text:
        return UNANCHORED
    f = prepare(text)
    for quote in variants:
        found = verbatim(f, quote, hint_line, changed)
        if found is not None:
            start, end = found
            indents = indent(f.lines[start]), indent(quote[0])
            return Anchor(
                start + 1,
                end + 1,
                _state(start, end, hint_line),
                1.0,
                "verbatim",
                file_indent=indents[0],
                quote_indent=indents[1],
            )
    for quote in variants:
        ws = whitespace(f, quote, hint_line, changed)
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
        fz = fuzzy(f, quote, hint_line, changed)
        if fz is not None and (best is None or fz[2] > best[2]):
            best = fz
    if best is None:
        return UNANCHORED
    start, end, ratio = best
    # Rounded for display, but kept below 1.0: a score of 1.0 means "identical up to whitespace".
    score = min(round(ratio, 4), 0.9999)
    return Anchor(start + 1, end + 1, AnchorState.APPROXIMATE, score, "fuzzy")


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
    if anchor.prefix or anchor.suffix:
        # Fragment: re-indent the continuation lines only; the first goes after the prefix.
        rest = _reindent(lines[1:], anchor.quote_indent, anchor.file_indent)
        joined = "\n".join(([lines[0]] if lines else [""]) + rest)
        prefix, suffix = anchor.prefix, anchor.suffix
        # Some models quote a fragment but answer with the whole line; splicing that would
        # repeat the surrounding text ("r = r = ...").
        if prefix.strip() and norm(joined).startswith(norm(prefix)):
            prefix, joined = indent(prefix), joined.lstrip()
        if suffix.strip() and norm(joined).endswith(norm(suffix)):
            suffix = ""
        return prefix + joined + suffix
    return "\n".join(_reindent(lines, anchor.quote_indent, anchor.file_indent))


def anchor_finding(
    mf: ModelFinding,
    new_text: str | None,
    *,
    source: str,
    changed: Collection[int] | None = None,
) -> Finding:
    """A `Finding` for a model's report, placed by its quoted code in `new_text`.

    `new_text` is the new version of `mf.file` (None when it is unavailable, e.g. deleted).
    When the quote is in the file (EXACT, RELOCATED), `existing_code` becomes the file's actual
    text at the anchored lines so a quick fix replaces exactly what is there, `improved_code` is
    adjusted to match (re-indented, or spliced into the line for a fragment quote), and the fix
    is checked to parse (`fix_check.fix_state`). The id is computed from that file text, so it
    does not depend on how the model happened to quote the code this time.

    When it is not (APPROXIMATE, UNANCHORED), the model's own quote is kept (without a copied
    gutter), the improved code is kept as text only (`FixState.NOT_IN_FILE`), and the id is
    computed from the model's quote: the file's text is not what the model talked about.
    """
    anchor = locate(mf.existing_code, new_text or "", mf.line, changed)
    improved = mf.improved_code
    confidence = mf.confidence
    line, end_line = anchor.start_line, anchor.end_line
    fix = FixState.NOT_IN_FILE
    if anchor.state in (AnchorState.EXACT, AnchorState.RELOCATED) and new_text is not None:
        assert line is not None and end_line is not None
        existing = "\n".join(prepare(new_text).lines[line - 1 : end_line])
        if improved is not None:
            improved = _fit_improved(improved, anchor)
            fix = fix_state(mf.file, new_text, line, end_line, improved)
    else:
        existing = model_quote(mf.existing_code)
        if anchor.state is AnchorState.APPROXIMATE:
            confidence = round(confidence * APPROXIMATE_CONFIDENCE, 3)
        else:
            line = end_line = None
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
        confidence=confidence,
        sources=[source],
        anchor=anchor.state,
        fix=fix,
    )
