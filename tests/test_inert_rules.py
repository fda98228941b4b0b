"""Each rule that makes output inert, stated by the test that would fail without it: the
sanitizer's (report/sanitize.py), the parser check behind it (report/commonmark_check.py), the
reference neutraliser (report/references.py), the control-character escape
(report/controls.py), the fence helper (report/markup.py) and the guards on every forge write
(publish/guards.py). Named after the rule, so a mutant that survives names what is untested."""

from __future__ import annotations

import pytest

from redline.enums import Category, Severity
from redline.model import Finding, Review
from redline.publish.bodies import summary_body
from redline.publish.common import PostError
from redline.publish.guards import InertBodies, WriteCap
from redline.publish.placement import InlineComment, Placement
from redline.publish.transport import ApiCall, ApiResponse
from redline.report.commonmark_check import block_problem, inline_problem
from redline.report.controls import escape_controls
from redline.report.markup import dollars, fenced, suggestion_fence
from redline.report.references import JOINER, live_reference, neutralise_references
from redline.report.sanitize import sanitize_inline, sanitize_markdown

J = JOINER

# -- sanitize.py ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "link",
    [
        "[a](http://x.example/p)",
        "[a](https://x.example/p)",
        "[mail](mailto:someone@x.example)",
        "<http://x.example/p>",
    ],
)
def test_rule_links_to_http_https_and_mailto_are_kept(link: str) -> None:
    assert sanitize_markdown(f"see {link} now") == f"see {link} now"


def test_rule_an_html_comment_is_removed_whole_even_unclosed() -> None:
    assert sanitize_markdown("x <!-- a > b --> y") == "x  y"
    assert sanitize_markdown("x <!-- never closed\nmore") == "x "


def test_rule_declarations_and_processing_instructions_are_removed() -> None:
    assert sanitize_markdown("a <!DOCTYPE html> b <?php echo 1 ?> c") == "a  b  c"


def test_rule_a_fence_left_open_is_closed_where_the_text_ends() -> None:
    assert sanitize_markdown("See:\n```python\nx = 1\n") == "See:\n```python\nx = 1\n```"
    assert sanitize_markdown("x\n~~~~\ny") == "x\n~~~~\ny\n~~~~"  # its own marker and length
    assert sanitize_markdown("```") == "```\n```"


def test_rule_a_fence_closes_only_with_its_own_character_and_length() -> None:
    # ``` inside a ```` fence and ~~~ inside a ``` fence are content: the HTML stays code.
    assert sanitize_markdown("````\n```\n<b>x</b>\n````") == "````\n```\n<b>x</b>\n````"
    assert sanitize_markdown("```\n~~~\n<b>x</b>\n```\n<b>y</b>") == "```\n~~~\n<b>x</b>\n```\ny"
    # A closing line carries nothing but the marker.
    assert sanitize_markdown("```\n``` x\n<b>y</b>") == "```\n``` x\n<b>y</b>\n```"


def test_rule_a_backtick_fence_with_a_backtick_in_its_info_is_prose() -> None:
    # CommonMark: not a fence. Read as code it would have let the <img> through unsanitized.
    assert sanitize_markdown("```py`x\n<img src=x>") == "```py`x\n"
    assert sanitize_markdown("~~~py`x\n<img src=x>\n~~~") == "~~~py`x\n<img src=x>\n~~~"


@pytest.mark.parametrize(
    "opening", ["```suggestion", "~~~suggestion", "``` suggestion", "```Suggestion:-0+2"]
)
def test_rule_a_suggestion_info_string_is_dropped(opening: str) -> None:
    marker = opening[:3]
    assert sanitize_markdown(f"{opening}\nrm -rf /\n{marker}") == f"{marker}\nrm -rf /\n{marker}"


def test_rule_other_info_strings_are_kept() -> None:
    assert sanitize_markdown("```python\nx\n```") == "```python\nx\n```"


def test_rule_a_line_starting_with_a_slash_is_escaped() -> None:
    assert sanitize_markdown("ok\n/merge\n  /approve") == "ok\n\\/merge\n  \\/approve"
    assert sanitize_markdown("a /merge b") == "a /merge b"  # only at the start of a line
    assert sanitize_markdown("\\/merge") == "\\/merge"  # escaped once


def test_rule_references_in_prose_get_a_joiner() -> None:
    assert sanitize_markdown("cc @alice, see #2") == f"cc @{J}alice, see #{J}2"
    assert sanitize_inline("Ping @org/team") == f"Ping @{J}org/team"


def test_rule_code_spans_and_fences_keep_their_text() -> None:
    assert sanitize_markdown("`@alice #2` and\n```\n@bob\n```") == "`@alice #2` and\n```\n@bob\n```"


def test_rule_a_kept_links_target_keeps_its_url() -> None:
    shown = sanitize_markdown("[@bob](https://x.example/@bob) <https://x.example/#1>")
    assert shown == f"[@{J}bob](https://x.example/@bob) <https://x.example/#1>"


def test_rule_an_escaped_backtick_opens_no_code_span() -> None:
    # "\`" is a literal backtick: what follows is prose, and its HTML goes.
    assert sanitize_markdown("\\`<img src=x>`") == "\\``"
    # An escaped backslash before it does not escape the backtick.
    assert sanitize_markdown("\\\\`<img src=x>`") == "\\\\`<img src=x>`"


def test_rule_a_code_span_does_not_cross_a_blank_line() -> None:
    assert sanitize_markdown("a `x\n\n<b>y</b>`") == "a `x\n\ny`"
    assert sanitize_markdown("a `x\n<b>y</b>`") == "a `x\n<b>y</b>`"  # one paragraph: a span


def test_rule_text_the_parser_still_finds_live_is_shown_as_code() -> None:
    # A fence in a list item closed at column 0 opens a new fence the line rules miss.
    text = "- a\n  ```\n  x\n```\n<img src=x>"
    assert sanitize_markdown(text) == fenced(text)


def test_rule_a_line_the_parser_still_finds_live_is_a_code_span() -> None:
    # Nested brackets: the image pattern misses it, the parser sees an image.
    text = "![a [b] c](https://t.example/p.png)"
    assert inline_problem(text) is not None
    assert sanitize_inline(text) == "`" + text + "`"


def test_rule_a_line_folds_whitespace() -> None:
    assert sanitize_inline("a\n\n  b\tc") == "a b c"
    assert sanitize_inline("``` x\n<b>y</b>") == "``` x y"


# -- commonmark_check.py -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("```\nx", "a block is left open"),
        ("<pre>\n\nx", "a block is left open"),
        ("x\n/merge", "a paragraph line starts with '/'"),
        ("```suggestion\nx\n```", "a suggestion block"),
        ("~~~ SUGGESTION:-1+0\nx\n~~~", "a suggestion block"),
        ("a <b>x</b>", "raw HTML"),
        ("<div>\nx\n</div>", "raw HTML"),
        ("![p](https://t.example/p.png)", "an image"),
        ("[r](command:x)", "a link to 'command:x'"),
        ("cc @alice", "a live reference"),
        ("see owner/repo#1", "a live reference"),
    ],
)
def test_rule_the_parser_check_finds(text: str, problem: str) -> None:
    found = block_problem(text)
    assert found is not None and found.startswith(problem), found


@pytest.mark.parametrize(
    "text",
    [
        "plain text, `@alice` in code",
        "```\n@alice /merge <b>\n```",
        "[docs](https://x.example/@a) <mailto:a@b.example>",
        "a line\n  /indented is not a quick action",
        f"cc @{J}alice",
        "- list\n\n> quote",
    ],
)
def test_rule_the_parser_check_passes_inert_text(text: str) -> None:
    assert block_problem(text) is None


def test_rule_the_inline_check_reads_one_line() -> None:
    assert inline_problem("a <img src=x> b") is not None
    assert inline_problem("``` fence-looking but inline ```") is None


# -- references.py -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("@alice", f"@{J}alice"),
        ("@all", f"@{J}all"),
        ("#12", f"#{J}12"),
        ("owner/repo#12", f"owner/repo#{J}12"),
        ("!12", f"!{J}12"),
        ("~bug", f"~{J}bug"),
        ('~"big bug"', f'~{J}"big bug"'),
        ("%v1.0", f"%{J}v1.0"),
        ("$12", f"${J}12"),
        ("&12", f"&{J}12"),
        ("&#64;", f"&#{J}64;"),
        ("&commat;", f"&{J}commat;"),
        ("GH-12", f"GH-{J}12"),
        ("gh-12", f"gh-{J}12"),
        ("[vulnerability:1]", f"[{J}vulnerability:1]"),
        ("_@_", f"_@{J}_"),
        ("a/#12", f"a/#{J}12"),
        ("/&#x40;", f"/&#{J}x40;"),
        ('#"x"', f'#{J}"x"'),
        ("#_x", f"#{J}_x"),
        ("#x", f"#{J}x"),
    ],
)
def test_rule_each_reference_sigil_gets_a_joiner(text: str, shown: str) -> None:
    assert neutralise_references(text) == shown
    assert live_reference(shown) is None


@pytest.mark.parametrize(
    "text",
    [
        "a @ b",
        "# heading",
        "50% off",
        "$ 5",
        "a & b",
        "GH-x",
        "[x]",
        # A URL's anchor after a `/` (zizmor's rule pages): the link must keep working.
        "https://docs.zizmor.sh/audits/#template-injection",
        "/#_x",
    ],
)
def test_rule_a_sigil_before_nothing_nameable_is_left(text: str) -> None:
    assert neutralise_references(text) == text


# -- controls.py ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b[2Jb", "a\\u001b[2Jb"),  # C0: ESC
        ("\x00\x07\x08\x0b\x0c\x1f", "\\u0000\\u0007\\u0008\\u000b\\u000c\\u001f"),
        ("a\x7fb", "a\\u007fb"),  # DEL
        ("\x80\x9b\x9f", "\\u0080\\u009b\\u009f"),  # C1, U+009B is CSI
        ("\u202a\u202e\u2066\u2069", "\\u202a\\u202e\\u2066\\u2069"),  # bidi
        ("\udc9b", "\\udc9b"),  # a lone surrogate (an undecodable byte)
        ("a\rb", "a\\u000db"),  # a lone CR would overwrite its line
        ("a\r\nb", "a\nb"),  # CRLF reads as LF
        ("a\tb\nc", "a\tb\nc"),  # tab and newline stay
        ("\u2065\u2070\u202f\u00a0é", "\u2065\u2070\u202f\u00a0é"),  # neighbours stay
    ],
)
def test_rule_control_characters_are_spelled_out(text: str, shown: str) -> None:
    assert escape_controls(text) == shown


# -- markup.py -----------------------------------------------------------------------------


def test_rule_a_fence_outlasts_the_longest_backtick_run() -> None:
    assert fenced("a ``` b ```` c") == "`````\na ``` b ```` c\n`````"
    assert fenced("x") == "```\nx\n```"


def test_rule_a_fence_info_is_a_plain_word_and_never_a_suggestion() -> None:
    assert fenced("x", "python") == "```python\nx\n```"
    for bad in ("suggestion", "Suggestion:-0+1", "py thon", "a`b", "x{.y}"):
        assert fenced("x", bad) == "```\nx\n```", bad


def test_rule_only_suggestion_fence_makes_a_suggestion() -> None:
    assert suggestion_fence("y", "suggestion:-1+0") == "```suggestion:-1+0\ny\n```"
    assert suggestion_fence("", "suggestion") == "```suggestion\n```"  # deletes the lines
    assert suggestion_fence("a ``` b", "suggestion") == "````suggestion\na ``` b\n````"
    with pytest.raises(ValueError):
        suggestion_fence("x", "python")


def test_rule_a_dollar_amount_is_no_snippet_reference() -> None:
    assert dollars(0.0123, 4) == f"${J}0.0123"


# -- publish/guards.py ---------------------------------------------------------------------


class Recorder:
    def __init__(self, status: int = 201) -> None:
        self.calls: list[ApiCall] = []
        self.status = status

    def send(self, call: ApiCall) -> ApiResponse:
        self.calls.append(call)
        return ApiResponse(self.status, {})


def test_rule_every_body_sent_is_spelled_out_and_nothing_else_changes() -> None:
    sink = Recorder()
    body = {
        "body": "a\x1b]52;c;x\x07",
        "path": "f\x1b.py",
        "comments": [{"body": "\x9b2J", "line": 3}],
    }
    InertBodies(sink).send(ApiCall("POST", "repos/o/r/pulls/1/reviews", body))
    [call] = sink.calls
    assert call.body == {
        "body": "a\\u001b]52;c;x\\u0007",
        "path": "f\x1b.py",  # data the forge matches, not text it shows
        "comments": [{"body": "\\u009b2J", "line": 3}],
    }
    InertBodies(sink).send(ApiCall("GET", "user"))
    assert sink.calls[-1].body is None


def test_rule_a_body_given_as_a_list_of_texts_is_spelled_out_item_by_item() -> None:
    # A list takes its key from where it stands: texts under `body` are shown, so escaped;
    # the same texts under another key are data, and go as they are.
    sink = Recorder()
    body = {"body": ["\x1b[2J", "ok", ["\x07"]], "labels": ["\x1b[2J"]}
    InertBodies(sink).send(ApiCall("POST", "repos/o/r/issues/1/comments", body))
    [call] = sink.calls
    assert call.body == {"body": ["\\u001b[2J", "ok", ["\\u0007"]], "labels": ["\x1b[2J"]}


def test_rule_the_write_cap_counts_writes_and_refuses_past_it() -> None:
    sink = Recorder()
    cap = WriteCap(sink, 2)
    cap.send(ApiCall("GET", "user"))  # reads are not writes
    cap.send(ApiCall("POST", "a", {"body": "x"}))
    assert cap.left == 1
    cap.send(ApiCall("PATCH", "b", {"body": "y"}))
    with pytest.raises(PostError, match="write cap of 2 reached"):
        cap.send(ApiCall("PUT", "c", {"body": "z"}))
    assert [c.method for c in sink.calls] == ["GET", "POST", "PATCH"]


def _finding(n: int) -> Finding:
    return Finding(
        id=f"RL-{n:012x}", file="a.py", line=n, severity=Severity.LOW,
        category=Category.QUALITY, title=f"Problem {n}", comment="c", existing_code="x",
        confidence=0.8, sources=["ruff:F401"],
    )  # fmt: skip


def test_rule_capped_findings_go_to_the_summary_which_says_so() -> None:
    findings = [_finding(n) for n in range(1, 6)]
    placement = Placement(
        inline=[InlineComment(f, "a.py", f.line or 1, f.line or 1, False) for f in findings]
    )
    placement.cap_at(placement.inline[2:], 7)
    assert [c.finding.id for c in placement.inline] == [f.id for f in findings[:2]]
    assert placement.capped == findings[2:] and placement.cap == 7
    review = Review(task_id="t", scope="pr", scope_label="PR", repo="/r", findings=findings)
    body = summary_body(review, "review", placement)
    head = body.split("### Findings")[0]
    assert "3 findings not posted inline: write cap of 7 reached" in head
    assert "### Not posted inline" in body
    assert body.count("| inline |") == 2 and body.count("| below |") == 3
