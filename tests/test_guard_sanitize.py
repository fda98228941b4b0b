"""The rules of report/sanitize.py, one test per rule: model Markdown loses images, raw HTML and
links to anything but http(s)/mailto, while code spans and fenced code stay byte for byte.
Written so that inverting a rule fails a test here
(`make mutation MODULES=server/redline/report/sanitize.py`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.report.sanitize import sanitize_inline, sanitize_markdown

# -- fenced code is left as it is -----------------------------------------------------------


@pytest.mark.parametrize("fence", ["```", "~~~", "````", "   ```", "```python"])
def test_fenced_code_is_kept_byte_for_byte(fence: str) -> None:
    closer = fence.strip().rstrip("python")
    text = f"{fence}\n<img src=x> [a](command:x)\n{closer}\n"
    assert sanitize_markdown(text) == text


def test_prose_after_a_closed_fence_is_sanitized_again() -> None:
    text = "```\n<b>kept</b>\n```\nafter <img src=x> [a](command:x)\n"
    assert sanitize_markdown(text) == "```\n<b>kept</b>\n```\nafter  a\n"


def test_prose_before_a_fence_is_sanitized() -> None:
    assert sanitize_markdown("<img src=x>\n```\n<b>\n```\n") == "\n```\n<b>\n```\n"


def test_lines_of_prose_before_a_fence_stay_as_they_were_joined() -> None:
    text = "one <i>a</i>\ntwo\n\nthree\n```\ncode\n```\n"
    assert sanitize_markdown(text) == "one a\ntwo\n\nthree\n```\ncode\n```\n"


def test_a_fence_is_closed_only_by_the_same_character() -> None:
    text = "```\ncode\n~~~\n<b>still code</b>\n```\n<b>prose</b>"
    assert sanitize_markdown(text) == "```\ncode\n~~~\n<b>still code</b>\n```\nprose"


def test_a_fence_is_closed_only_by_a_run_at_least_as_long() -> None:
    text = "````\n```\n<b>still code</b>\n````\n<b>prose</b>"
    assert sanitize_markdown(text) == "````\n```\n<b>still code</b>\n````\nprose"
    longer = "```\nx\n`````\n<b>prose</b>"
    assert sanitize_markdown(longer) == "```\nx\n`````\nprose"


def test_a_fence_line_with_text_after_the_run_does_not_close_it() -> None:
    text = "```\n``` not a close\n<b>code</b>\n```\n<b>prose</b>"
    assert sanitize_markdown(text) == "```\n``` not a close\n<b>code</b>\n```\nprose"


def test_a_fence_indented_four_spaces_is_no_fence() -> None:
    assert sanitize_markdown("    ```\n<b>x</b>") == "    ```\nx"


def test_an_unclosed_fence_keeps_the_rest_as_code_and_is_closed() -> None:
    """The rest after an unclosed fence stays code, and the fence is closed where the text ends,
    so whatever Redline writes after it is not swallowed (or read as the model's)."""
    text = "intro <i>x</i>\n```\n<b>code</b>\n[a](command:x)"
    assert sanitize_markdown(text) == "intro x\n```\n<b>code</b>\n[a](command:x)\n```"


# -- code spans are left as they are --------------------------------------------------------


@pytest.mark.parametrize(
    "span", ["`<b>x</b>`", "``a ` <img src=y> b``", "`[a](command:x)`", "`![i](x)`"]
)
def test_code_spans_are_kept_and_the_prose_around_them_is_cleaned(span: str) -> None:
    text = f"<i>a</i> {span} <i>b</i>"
    assert sanitize_markdown(text) == f"a {span} b"


def test_text_between_two_code_spans_is_cleaned() -> None:
    assert sanitize_markdown("`x` <img src=1> `y`") == "`x`  `y`"


# -- html ----------------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["b", "IMG", "Script", "details", "svg", "a", "iframe"])
def test_tags_of_html_elements_are_removed_in_any_case(tag: str) -> None:
    assert sanitize_markdown(f"x<{tag} a=1>y</{tag}>z") == "xyz"


def test_an_unknown_tag_is_kept_as_escaped_text() -> None:
    assert sanitize_markdown("a <foo bar> b") == "a \\<foo bar> b"


def test_html_comments_and_declarations_are_removed() -> None:
    assert sanitize_markdown("a<!-- hide -->b<!DOCTYPE html>c<?php x ?>d") == "abcd"
    assert sanitize_markdown("a<!-- never closed\nb") == "a"


# -- images and links -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("![alt](https://x.example/p.png)", "alt"),
        ("![alt][ref]", "alt"),
        ("![](data:image/png;base64,AAAA)", ""),
    ],
)
def test_images_become_their_alt_text(text: str, expected: str) -> None:
    assert sanitize_markdown(text) == expected


@pytest.mark.parametrize(
    "link",
    [
        "[a](https://x.example)",
        "[a](http://x.example)",
        "[a](mailto:me@x.example)",
        "[a](HTTPS://X.EXAMPLE)",
        "[a]( https://x.example 'title')",
    ],
)
def test_links_to_http_https_and_mailto_are_kept(link: str) -> None:
    assert sanitize_markdown(link) == link


@pytest.mark.parametrize(
    "target",
    ["command:x", "file:///etc/passwd", "javascript:alert", "vscode://x", "./local", ""],
)
def test_other_links_keep_their_text_and_lose_their_target(target: str) -> None:
    assert sanitize_markdown(f"see [the docs]({target}) now") == "see the docs now"


def test_autolinks_are_kept_only_for_safe_schemes() -> None:
    assert sanitize_markdown("<https://x.example>") == "<https://x.example>"
    assert sanitize_markdown("<mailto:me@x.example>") == "<mailto:me@x.example>"
    assert sanitize_markdown("<command:evil>") == "command:evil"


def test_reference_definitions_are_kept_only_for_safe_targets() -> None:
    text = "[ok]: https://x.example\n[bad]: command:evil\n[ok] [bad]"
    assert sanitize_markdown(text) == "[ok]: https://x.example\n\n[ok] [bad]"


# -- what could still open a tag ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a <b", "a \\<b"),
        ("a </x", "a \\</x"),
        ("a <!x", "a \\<!\u200dx"),  # and `!x` is no GitLab merge-request reference
        ("a <?x", "a \\<?x"),
        ("a < b", "a < b"),
        ("a <1", "a <1"),
        ("a \\<b", "a \\<b"),
        ("a \\\\<b", "a \\\\\\<b"),
        ("<https://x.example y", "<https://x.example y"),
    ],
)
def test_a_less_than_that_could_open_a_tag_is_escaped_once(text: str, expected: str) -> None:
    assert sanitize_markdown(text) == expected


# -- empty text and one-line fields ---------------------------------------------------------


def test_empty_text_is_returned_as_is() -> None:
    assert sanitize_markdown("") == ""
    assert sanitize_inline("") == ""


def test_one_line_fields_fold_line_breaks_and_runs_of_spaces() -> None:
    assert sanitize_inline("a\n<b>b</b>\t\n  c") == "a b c"


# -- properties ----------------------------------------------------------------------------

_PROSE = st.text(alphabet="ab <>/![]()`~:\n-\\", max_size=60)


@given(_PROSE)
def test_sanitizing_is_idempotent(text: str) -> None:
    once = sanitize_markdown(text)
    assert sanitize_markdown(once) == once


@given(st.text(alphabet="abc xyz.,;\n", max_size=80))
def test_text_without_markup_is_unchanged(text: str) -> None:
    assert sanitize_markdown(text) == text
