"""Properties of the functions that make output inert, over generated text (hypothesis), judged
by a CommonMark parser (markdown-it, tests/markdown_oracle.py) where Markdown is involved:

- `fenced`: whatever the code, the block reads back as exactly that code, and nothing in it
  closes the fence early or leaves it open.
- `inline_code`: the span reads back as the text (whitespace folded), whatever backticks it holds.
- `neutralise_references`: no live mention or reference survives; without the joiners the text
  is what it was.
- `escape_controls`: no control character survives; text without one is unchanged; each one is
  shown as `\\uXXXX`; on JSON it is lossless.
- `sanitize_markdown` / `sanitize_inline`: for text built from the pieces attacks are made of,
  nothing in the result acts, and a paragraph written after it is still a paragraph.
"""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markdown_oracle import MD, live_constructs, raw_controls, suggestion_fences
from redline.report.controls import escape_controls
from redline.report.markup import fenced, inline_code, suggestion_fence
from redline.report.references import JOINER, live_reference, neutralise_references
from redline.report.sanitize import sanitize_inline, sanitize_markdown

AFTER = "Redline's own paragraph"

# The pieces attacks are made of: fences of both kinds and lengths, code spans, HTML, images,
# links, autolinks, entities, mentions and references, quick actions, containers.
PIECES = [
    "```", "````", "~~~", "`", "``", "```suggestion", "~~~suggestion", "``` suggestion:-0+1",
    "```py`x", "\n", "\n\n", " ", "   ", "    ", "\t", "- ", "* ", "1. ", "> ", "# ", "|", "---",
    "<img src=x>", "<img src=x onerror=alert(1)", "<!--", "-->", "<script>", "</div>", "<div>",
    "<pre>", "<?php", "<![CDATA[", "<x-y>", "[a](", "](command:x)", "](https://e.example/@u)",
    "![i](https://t.example/p.png)", "[r]: command:x", ")", "]", "[", "<https://x.example/#1>",
    "<mailto:a@b.example>", "<command:x>", "@alice", "@org/team", "#1", "!2", "~bug", "%v1",
    "$3", "&4", "&#64;", "&#x40;", "&commat;", "&amp;", "GH-5", "gh-6", "[vulnerability:7]",
    "/merge", "suggestion", "\\", "\\`", "\\@", "*", "_", "text", "x", "owner/repo#8", "\r\n",
]  # fmt: skip
markdownish = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=30).map(
    "".join
)
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _normalised(text: str) -> str:
    """What a CommonMark parser reads for `text`: line endings as LF, NUL as U+FFFD."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")


def joined(*pieces: str, chars: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[str]:
    """Text made of `pieces` and single characters (by default any)."""
    return st.lists(
        st.one_of(st.sampled_from(pieces), chars if chars is not None else st.characters())
    ).map("".join)


code_text = joined("`", "~", "\n", " ", "\t", "```", "~~~")


@FAST
@given(code=code_text, language=st.sampled_from(["", "python", "c++", "suggestion", "a b", "x`y"]))
def test_a_fence_reads_back_as_exactly_its_code(code: str, language: str) -> None:
    tokens = MD.parse(f"before\n\n{fenced(code, language)}\n\n{AFTER}\n")
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 1
    # The code and the newline the fence writes after it, as a parser reads them (a lone CR
    # at the end of the code and that newline are one line ending).
    assert fences[0].content == _normalised(code + "\n")
    # A suggestion, a space or a backtick in the info string is dropped, not passed on.
    assert fences[0].info == (language if language in ("python", "c++") else "")
    # Closed where it ends: what follows is a paragraph again.
    assert tokens[-2].type == "inline" and tokens[-2].content == AFTER


@FAST
@given(code=code_text.filter(lambda c: _normalised(c) == c))
def test_a_suggestion_fence_reads_back_as_its_code(code: str) -> None:
    [block] = suggestion_fences(f"{suggestion_fence(code, 'suggestion')}\n\n{AFTER}\n")
    assert block.content == (code + "\n" if code else "")


@FAST
@given(text=joined("`", "``", " ", "\n"))
def test_a_code_span_reads_back_as_its_text(text: str) -> None:
    folded = " ".join(text.split())
    if not folded:
        return
    tokens = MD.parseInline(inline_code(text))[0].children or []
    assert [t.type for t in tokens] == ["code_inline"]
    assert tokens[0].content == _normalised(folded)


@FAST
@given(text=markdownish)
def test_no_reference_survives_the_neutraliser(text: str) -> None:
    text = text.replace(JOINER, "")
    out = neutralise_references(text)
    assert live_reference(out) is None
    assert out.replace(JOINER, "") == text  # the reader's text is unchanged
    assert neutralise_references(out) == out


CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
any_text = joined(
    "\u202e", "\u2066", "\r\n", "\r", "\udc9b",
    chars=st.one_of(st.characters(), st.characters(min_codepoint=0, max_codepoint=0x9F)),
)  # fmt: skip


@FAST
@given(text=any_text)
def test_no_control_character_survives_and_each_is_shown(text: str) -> None:
    out = escape_controls(text)
    assert CONTROL.search(out) is None
    assert raw_controls(out) == []
    normalised = text.replace("\r\n", "\n")
    for char in set(CONTROL.findall(normalised)):
        assert f"\\u{ord(char):04x}" in out
    if CONTROL.search(normalised) is None:
        assert out == normalised
    if "\\" not in text:  # reversible when the text held no backslash of its own
        back = re.sub(r"\\u([0-9a-f]{4})", lambda m: chr(int(m.group(1), 16)), out)
        assert back == normalised
    assert escape_controls(out) == out


@FAST
@given(data=st.recursive(any_text | st.integers(), lambda inner: st.lists(inner, max_size=3)))
def test_escaping_json_text_loses_nothing(data: object) -> None:
    text = json.dumps({"value": data}, ensure_ascii=False, indent=2)
    assert json.loads(escape_controls(text)) == {"value": data}


@FAST
@given(text=markdownish)
def test_sanitized_markdown_is_inert_and_closed(text: str) -> None:
    shown = sanitize_markdown(text)
    document = f"{shown}\n\n{AFTER}\n"
    assert live_constructs(document, allow_marker=False) == []
    assert suggestion_fences(document) == []
    tokens = MD.parse(document)
    assert tokens[-2].content == AFTER and tokens[-3].level == 0


@FAST
@given(text=markdownish)
def test_a_sanitized_line_is_inert(text: str) -> None:
    shown = sanitize_inline(text)
    assert "\n" not in shown
    # As a table cell or after a heading's location: in the middle of a line.
    assert live_constructs(f"### `a.py:1` — {shown}", allow_marker=False) == []


def test_a_lone_carriage_return_starts_no_quick_action() -> None:
    # Found by test_sanitized_markdown_is_inert_and_closed: CommonMark (and so the forge) ends a
    # line at a lone CR, so "\r/" put a quick action line in the posted comment.
    for text in ("\r/", "note\r/label ~bug", "a\r\n/close"):
        document = f"{sanitize_markdown(text)}\n\n{AFTER}\n"
        assert live_constructs(document, allow_marker=False) == [], text
