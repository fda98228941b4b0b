"""The rules of report/markup.py that test_inert_rules.py leaves unstated: the exact shape of a
code span, a table cell, a blockquote and a dollar amount, and the refusal of a suggestion
fence — one test per rule, in-process, asserting exact outputs, so that a mutant of any of them
fails here (`make mutation MODULES=server/redline/report/markup.py`)."""

from __future__ import annotations

import pytest

from redline.report.markup import dollars, inline_code, quoted, suggestion_fence, table_cell
from redline.report.references import JOINER


def test_a_code_span_is_one_backtick_more_than_the_longest_run_inside() -> None:
    assert inline_code("x") == "`x`"
    assert inline_code("a`b") == "``a`b``"
    assert inline_code("a ``` b") == "````a ``` b````"


def test_a_code_span_is_padded_only_when_the_text_starts_or_ends_with_a_backtick() -> None:
    assert inline_code("x y") == "`x y`"
    assert inline_code("`x") == "`` `x ``"
    assert inline_code("x`") == "`` x` ``"


def test_a_code_span_folds_whitespace_into_single_spaces() -> None:
    assert inline_code(" a\n\tb  c ") == "`a b c`"


def test_a_table_cell_is_one_line_and_a_bar_cannot_end_it() -> None:
    assert table_cell("a |\n  b|c") == "a \\| b\\|c"
    assert table_cell("plain") == "plain"


def test_a_quote_marks_every_line_and_keeps_blank_ones_inside_it() -> None:
    # The model's heading and rule stay inside the quote; a blank line is a bare ">" so the
    # quote does not end there; trailing spaces go.
    assert quoted("\n# Heading\n\n---  \ntext\n\n") == "> # Heading\n>\n> ---\n> text"


def test_an_empty_quote_is_still_a_quote() -> None:
    assert quoted("") == ">"
    assert quoted(" \n\t\n") == ">"


def test_a_dollar_amount_is_whole_dollars_unless_places_are_given() -> None:
    assert dollars(12.4) == f"${JOINER}12"
    assert dollars(0) == f"${JOINER}0"
    assert dollars(1.5, 2) == f"${JOINER}1.50"


def test_a_suggestion_fence_refuses_any_other_info_string_by_name() -> None:
    with pytest.raises(ValueError) as info:
        suggestion_fence("x", "python")
    assert str(info.value) == "not a suggestion info string: 'python'"
