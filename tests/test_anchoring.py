from __future__ import annotations

import difflib
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.model import AnchorState, Category, FixState, Severity, finding_id
from redline.review import matchers, quotes
from redline.review.anchoring import (
    FUZZY_THRESHOLD,
    MAX_FUZZY_LINES,
    MAX_FUZZY_WINDOWS,
    Anchor,
    anchor_finding,
    locate,
    split_lines,
)
from redline.review.matchers import NEAR_HINT
from redline.review.schemas import ModelFinding

SOURCE = """\
import subprocess


def run(cmd):
    result = subprocess.run(cmd, shell=True, capture_output=True)
    return result.stdout


def add(items=[]):
    items.append(1)
    return items
"""


def _text(text: str, anchor: Anchor) -> str:
    assert anchor.start_line is not None and anchor.end_line is not None
    return "\n".join(split_lines(text)[anchor.start_line - 1 : anchor.end_line])


def _mf(existing: str, line: int | None = None, improved: str | None = None) -> ModelFinding:
    return ModelFinding(
        file="app/run.py",
        line=line,
        severity=Severity.HIGH,
        category=Category.SECURITY,
        title="Shell injection",
        comment="cmd comes from the request; shell=True lets it run arbitrary commands.",
        existing_code=existing,
        improved_code=improved,
        confidence=0.8,
    )


# --- exact -------------------------------------------------------------------------------


def test_exact_multiline_at_hint() -> None:
    a = locate("def add(items=[]):\n    items.append(1)\n", SOURCE, hint_line=9)
    assert (a.start_line, a.end_line, a.state, a.score, a.method) == (
        9,
        10,
        AnchorState.EXACT,
        1.0,
        "verbatim",
    )


def test_exact_without_hint_is_exact() -> None:
    a = locate("    return items", SOURCE)
    assert (a.start_line, a.state) == (11, AnchorState.EXACT)


def test_moved_code_with_wrong_model_line_is_relocated() -> None:
    # The model counted lines inside the diff and said line 2.
    a = locate("def add(items=[]):\n    items.append(1)", SOURCE, hint_line=2)
    assert (a.start_line, a.end_line, a.state) == (9, 10, AnchorState.RELOCATED)


def test_hint_within_tolerance_is_exact() -> None:
    a = locate("def add(items=[]):", SOURCE, hint_line=12)
    assert (a.start_line, a.state) == (9, AnchorState.EXACT)


def test_trailing_whitespace_in_file_is_not_content() -> None:
    text = "a = 1   \nb = 2\t\n"
    a = locate("a = 1\nb = 2", text, 1)
    assert (a.start_line, a.end_line, a.method) == (1, 2, "verbatim")


# --- whitespace ------------------------------------------------------------------------


def test_dedented_quote_matches_by_whitespace() -> None:
    a = locate("items.append(1)\nreturn items", SOURCE, hint_line=10)
    assert (a.start_line, a.end_line, a.method, a.state) == (
        10,
        11,
        "whitespace",
        AnchorState.EXACT,
    )


def test_blank_lines_and_spacing_differences_are_ignored() -> None:
    text = "def f(a,  b):\n\n    return  a + b\n"
    a = locate("def f(a, b):\n    return a + b", text, 1)
    assert (a.start_line, a.end_line, a.method) == (1, 3, "whitespace")


def test_fragment_quote_is_placed_on_its_line() -> None:
    a = locate("subprocess.run(cmd, shell=True, capture_output=True)", SOURCE, 5)
    assert (a.start_line, a.end_line, a.state) == (5, 5, AnchorState.EXACT)
    assert a.prefix == "    result = " and a.suffix == ""


def test_tiny_fragment_does_not_match() -> None:
    assert locate("cmd", SOURCE, 5).state is AnchorState.UNANCHORED


# --- fuzzy -----------------------------------------------------------------------------


def test_fuzzy_match_survives_a_small_edit() -> None:
    # The user renamed `items` to `values` in one line after the review.
    text = SOURCE.replace("    items.append(1)", "    values.append(1)")
    a = locate("def add(items=[]):\n    items.append(1)\n    return items", text, 9)
    assert (a.start_line, a.end_line, a.method) == (9, 11, "fuzzy")
    assert a.state is AnchorState.APPROXIMATE
    assert FUZZY_THRESHOLD <= a.score < 1.0


def test_fuzzy_single_line() -> None:
    text = SOURCE.replace("capture_output=True", "capture_output=False")
    a = locate("result = subprocess.run(cmd, shell=True, capture_output=True)", text, 5)
    assert (a.start_line, a.method) == (5, "fuzzy")


def test_different_code_is_unanchored() -> None:
    a = locate("for row in cursor.fetchall():\n    print(row)", SOURCE, 3)
    assert a == Anchor(None, None, AnchorState.UNANCHORED, 0.0)


# --- ties, gutters, encodings ------------------------------------------------------------


def test_duplicates_broken_by_hint() -> None:
    text = "x = 1\nlog(x)\n\nx = 1\nlog(x)\n\nx = 1\nlog(x)\n"
    assert locate("x = 1\nlog(x)", text, 5).start_line == 4
    assert locate("x = 1\nlog(x)", text, 8).start_line == 7
    assert locate("x = 1\nlog(x)", text).start_line == 1


def test_number_gutter_is_stripped() -> None:
    quote = "  9| def add(items=[]):\n 10|     items.append(1)"
    a = locate(quote, SOURCE, 9)
    assert (a.start_line, a.end_line, a.state, a.method) == (9, 10, AnchorState.EXACT, "verbatim")
    assert locate("9: def add(items=[]):\n10:     items.append(1)", SOURCE, 9).start_line == 9
    assert locate("9 +def add(items=[]):\n10 +    items.append(1)", SOURCE, 9).start_line == 9


def test_diff_markers_are_stripped_and_removed_lines_dropped() -> None:
    quote = "@@ -7,3 +9,3 @@\n-def add(items=None):\n+def add(items=[]):\n+    items.append(1)"
    a = locate(quote, SOURCE, 9)
    assert (a.start_line, a.end_line, a.method) == (9, 10, "verbatim")


def test_code_that_looks_like_a_gutter_matches_itself() -> None:
    text = "steps:\n- run: make\n- run: test\n"
    a = locate("- run: make\n- run: test", text, 2)
    assert (a.start_line, a.end_line) == (2, 3)


def test_crlf_file() -> None:
    text = SOURCE.replace("\n", "\r\n")
    a = locate("def add(items=[]):\r\n    items.append(1)\r\n", text, 9)
    assert (a.start_line, a.end_line, a.method) == (9, 10, "verbatim")
    assert locate("def add(items=[]):\n    items.append(1)", text, 9).start_line == 9


def test_non_ascii_and_tabs() -> None:
    text = "def grüße():\n\treturn '🎉 ok'\n\n名前 = 'テスト'\n"
    assert locate("\treturn '🎉 ok'", text, 2).start_line == 2
    assert locate("return '🎉 ok'", text, 2).method == "whitespace"
    assert locate("名前 = 'テスト'", text).start_line == 4


def test_empty_and_oversized_quotes_are_unanchored() -> None:
    assert locate("", SOURCE, 1).state is AnchorState.UNANCHORED
    assert locate("  \n\n", SOURCE, 1).state is AnchorState.UNANCHORED
    assert locate("x = 1", "", 1).state is AnchorState.UNANCHORED
    assert locate(SOURCE + "extra = 1\n", SOURCE, 1).state is AnchorState.UNANCHORED


# --- cost: work done, not wall-clock time (timings are in benchmarks/anchoring.py) ----------


def _big_file(n: int = 5000) -> str:
    return "".join(
        f"def f{i}(x):\n    return x * {i} + helper_{i % 97}(x)\n" for i in range(n // 2)
    )


class _CountingMatcher(difflib.SequenceMatcher[str]):
    """SequenceMatcher that counts the fuzzy windows scored (each gets a real_quick_ratio) and
    the full ratio() computations (the quadratic part)."""

    windows = 0
    ratios = 0

    def real_quick_ratio(self) -> float:
        _CountingMatcher.windows += 1
        return super().real_quick_ratio()

    def ratio(self) -> float:
        _CountingMatcher.ratios += 1
        return super().ratio()


@pytest.fixture
def matcher(monkeypatch: pytest.MonkeyPatch) -> type[_CountingMatcher]:
    _CountingMatcher.windows = _CountingMatcher.ratios = 0
    monkeypatch.setattr(matchers, "difflib", SimpleNamespace(SequenceMatcher=_CountingMatcher))
    return _CountingMatcher


def test_exact_match_on_a_big_file_reuses_the_index_and_scores_nothing(
    matcher: type[_CountingMatcher], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _big_file()
    locate("warm-up", text)  # builds the cached line index once, as a review does per file
    splits: list[str] = []
    norms: list[str] = []
    real_split, real_norm = quotes.split_lines, matchers.norm
    monkeypatch.setattr(quotes, "split_lines", lambda t: splits.append(t) or real_split(t))
    monkeypatch.setattr(matchers, "split_lines", lambda t: splits.append(t) or real_split(t))
    monkeypatch.setattr(matchers, "norm", lambda line: norms.append(line) or real_norm(line))
    matcher.windows = 0
    quote = "def f2400(x):\n    return x * 2400 + helper_72(x)"
    a = locate(quote, text, 10)
    assert (a.start_line, a.method) == (4801, "verbatim")
    # The file is not split or normalised again, and no fuzzy window is scored: only the quote
    # itself is split.
    assert text not in splits and splits == [quote]
    assert norms == []
    assert matcher.windows == 0


def test_fuzzy_is_bounded_on_a_big_file(matcher: type[_CountingMatcher]) -> None:
    text = _big_file()
    a = locate("def f2400(y):\n    return y * 2400 + helper_72(y)", text, 4801)
    assert (a.start_line, a.method) == (4801, "fuzzy")
    # Only windows sharing a distinctive identifier are scored (helper_72 is on 1 line in 97),
    # and those within NEAR_HINT lines of the model's line.
    assert 0 < matcher.windows < 100 + 2 * NEAR_HINT + 1
    # A quote made of lines that are everywhere scores at most MAX_FUZZY_WINDOWS windows (the
    # cap bites on this file), and no more on a file four times the size.
    counts = []
    for size in (5000, 20000):
        matcher.windows = matcher.ratios = 0
        locate("return x * 1 + helper_1(y)\nreturn x * 1 + helper_1(z)", _big_file(size), 1)
        assert matcher.ratios <= matcher.windows
        counts.append(matcher.windows)
    assert counts[0] == MAX_FUZZY_WINDOWS and counts[1] <= MAX_FUZZY_WINDOWS
    # A quote longer than MAX_FUZZY_LINES is not fuzzy-matched at all (quadratic worst case).
    matcher.windows = 0
    long_quote = "changed\n" + "\n".join(text.splitlines()[1 : MAX_FUZZY_LINES + 1])
    assert locate(long_quote, text, 1).method == "none"
    assert matcher.windows == 0


# --- property ------------------------------------------------------------------------------

_line = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_line, min_size=1, max_size=40), st.data())
def test_any_slice_of_the_file_is_found(lines: list[str], data: st.DataObject) -> None:
    text = "\n".join(lines) + "\n"
    start = data.draw(st.integers(0, len(lines) - 1))
    end = data.draw(st.integers(start, len(lines) - 1))
    quote = lines[start : end + 1]
    body = [i for i in range(start, end + 1) if lines[i].strip()]
    snippet = "\n".join(quote)
    if not body:
        assert locate(snippet, text, start + 1).state is AnchorState.UNANCHORED
        return
    # With the model's line pointing at it, the slice itself (blank edges trimmed) is chosen.
    a = locate(snippet, text, body[0] + 1)
    assert (a.start_line, a.end_line) == (body[0] + 1, body[-1] + 1)
    assert a.state is AnchorState.EXACT
    # Without a hint any occurrence may be chosen, but its text is the slice's text.
    b = locate(snippet, text)
    found = [line.rstrip() for line in split_lines(_text(text, b))]
    assert found == [line.rstrip() for line in lines[body[0] : body[-1] + 1]]


# --- anchor_finding ----------------------------------------------------------------------


def test_anchor_finding_uses_file_text_and_stable_id() -> None:
    mf = _mf("def add(items=[]):", line=40, improved="def add(items=None):")
    f = anchor_finding(mf, SOURCE, source="model:gpt-4o-mini")
    assert (f.line, f.end_line, f.anchor) == (9, 9, AnchorState.RELOCATED)
    assert f.sources == ["model:gpt-4o-mini"] and f.confidence == 0.8
    assert f.id == finding_id("app/run.py", "def add(items=[]):", "Security")
    # A differently quoted report of the same code gets the same id.
    other = anchor_finding(_mf("  9| def add(items=[]):", line=9), SOURCE, source="model:x")
    assert other.id == f.id


def test_anchor_finding_reindents_improved_code() -> None:
    mf = _mf("items.append(1)\nreturn items", 10, "items = items or []\nitems.append(1)")
    f = anchor_finding(mf, SOURCE, source="model:m")
    assert f.existing_code == "    items.append(1)\n    return items"
    assert f.improved_code == "    items = items or []\n    items.append(1)"


def test_anchor_finding_splices_fragment_fix_into_the_line() -> None:
    mf = _mf(
        "subprocess.run(cmd, shell=True, capture_output=True)",
        5,
        "subprocess.run(shlex.split(cmd), capture_output=True)",
    )
    f = anchor_finding(mf, SOURCE, source="model:m")
    assert f.existing_code == "    result = subprocess.run(cmd, shell=True, capture_output=True)"
    assert f.improved_code == "    result = subprocess.run(shlex.split(cmd), capture_output=True)"
    # A model that answers with the whole line does not get the prefix twice.
    whole = mf.model_copy(
        update={"improved_code": "result = subprocess.run(shlex.split(cmd), capture_output=True)"}
    )
    g = anchor_finding(whole, SOURCE, source="model:m")
    assert g.improved_code == "    result = subprocess.run(shlex.split(cmd), capture_output=True)"


def test_anchor_finding_unanchored_keeps_quote_and_has_no_line() -> None:
    f = anchor_finding(_mf("  3| eval(payload)", 3), SOURCE, source="model:m")
    assert (f.line, f.end_line, f.anchor) == (None, None, AnchorState.UNANCHORED)
    assert f.existing_code == "eval(payload)"
    g = anchor_finding(_mf("def add(items=[]):", 9), None, source="model:m")
    assert g.anchor is AnchorState.UNANCHORED and g.line is None


# --- near-miss quotes (issue 10) -------------------------------------------------------------


def test_near_miss_policy_measured_on_the_bed() -> None:
    """tests/near_miss_bed.py, printed by benchmarks/anchoring.py (28 near-misses, 145
    legitimate re-quotes):

        legitimate | any policy  | 145: 145 exact quote, right line
         near-miss | relocate    |  28: 28 file text as quote + fix, right line   (the old way)
         near-miss | approximate |  28: 28 model quote, labelled approximate, right line
         near-miss | unanchored  |  28: 28 no location

    No legitimate quote reaches the fuzzy level (whitespace, tabs, trailing space and the
    prompt gutter are all handled before it), so the policy for fuzzy matches only decides
    what near-misses look like. They land on the line they were made from every time, so
    "approximate" keeps a right location that "unanchored" would throw away, while never
    showing the file's text as the quote or offering the fix: approximate is the policy."""
    from near_miss_bed import SOURCE, measure, quotes

    table = measure()
    assert table[("legitimate", "approximate")] == {"exact quote, right line": 145}
    assert table[("near-miss", "approximate")] == {
        "model quote, labelled approximate, right line": 28
    }
    for q in quotes():
        if q.kind != "near-miss":
            continue
        f = anchor_finding(_mf(q.text, line=q.line, improved="pass"), SOURCE, source="model:m")
        assert f.anchor is AnchorState.APPROXIMATE and f.line == q.line
        assert f.existing_code == q.text and f.improved_code == "pass"
        assert f.fix is FixState.NOT_IN_FILE and not f.fix_applicable
        assert f.confidence < 0.5 + 1e-9


def test_redline_gutter_is_stripped_even_on_short_lines() -> None:
    text = "a = 1\nx = 2\nb = 3\n"
    a = locate("   2 +| x = 2", text, 2)
    assert (a.start_line, a.method, a.state) == (2, "verbatim", AnchorState.EXACT)
    # Unchanged and removed lines of the same hunk: the removed one is not in the new file.
    a = locate("   1  | a = 1\n      -| y = 0\n   2 +| x = 2", text, 1)
    assert (a.start_line, a.end_line, a.method) == (1, 2, "verbatim")


# --- the change's lines and the model's line (found with the oracle, tests/test_eval_oracle.py)


def _guards(n: int) -> str:
    """A Go-like file where `if err != nil {` / `return nil, err` repeat every 6 lines."""
    return "".join(
        f"func f{i}() ([]byte, error) {{\n\tb, err := read{i}()\n\tif err != nil {{\n"
        "\t\treturn nil, err\n\t}\n}\n"
        for i in range(n)
    )


def test_equal_quotes_prefer_the_changed_line_over_a_far_or_diff_relative_hint() -> None:
    text = _guards(10)  # `if err != nil {` on lines 3, 9, 15, ..., 57
    # The model counted the line in the diff (4) or drifted by 12: the change is on line 33.
    for hint in (4, 24, 47, None):
        a = locate("if err != nil {", text, hint, changed={33})
        assert (a.start_line, a.method) == (33, "whitespace"), hint
    # Without the change's lines, the nearest match to the hint wins, as before.
    assert locate("if err != nil {", text, 24).start_line == 21
    # A line number pointing exactly at another match is the model's word: it wins.
    assert locate("if err != nil {", text, 15, changed={33}).start_line == 15


def test_a_misquote_sharing_no_word_with_the_file_is_found_near_the_line_or_on_the_change() -> None:
    text = "\n".join(f"const v{i} = compute({i});" for i in range(60)) + "\n  // ignore\n"
    # `ignores` is in no line: no identifier proposes a window, yet the quote is one letter off.
    a = locate("  // ignores", text, 55)
    assert (a.start_line, a.state) == (61, AnchorState.APPROXIMATE)
    # The model's number is useless (diff-relative), but the line is the change's.
    assert locate("  // ignores", text, 3).state is AnchorState.UNANCHORED
    assert locate("  // ignores", text, 3, changed={61}).start_line == 61


def test_a_single_word_is_not_a_fragment_of_another_line() -> None:
    text = "def find(items):\n    for item in items:\n        if item.ok:\n            item\n"
    # The model misquoted the changed line `item` as `items`: not the `items` in line 1 or 2.
    a = locate("            items", text, 4, changed={4})
    assert (a.start_line, a.state) == (4, AnchorState.APPROXIMATE)
    # Two tokens still make a fragment.
    assert locate("for item", text, 2).method == "whitespace"


def test_a_fuzzy_match_on_the_change_beats_a_closer_one_elsewhere() -> None:
    text = "total = price * count\nx = 1\ny = 2\ntotal = price * counts\n"
    quote = "total = price * countz"
    assert locate(quote, text, 1).start_line == 1
    assert locate(quote, text, 1, changed={4}).start_line == 4
