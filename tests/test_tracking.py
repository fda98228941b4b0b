"""Findings follow the code: shifted by edits around them, stale when their code is edited."""

from __future__ import annotations

import gc
import random
import time

import pytest

from redline.lsp.document_findings import TrackedFinding
from redline.lsp.textlines import Range, from_client_units, split_keepends, to_client_units
from redline.lsp.tracking import FindingTracker
from redline.model import Category, Finding, Severity, finding_id

URI = "file:///repo/app.py"

TEXT = """import os
import sys


def handler(request):
    data = eval(request.body)
    return data


def other():
    return 1
"""


def make(code: str, line: int | None, end_line: int | None = None, title: str = "t") -> Finding:
    return Finding(
        id=finding_id("app.py", code, "Security", title),
        file="app.py",
        line=line,
        end_line=end_line if end_line is not None else line,
        severity=Severity.HIGH,
        category=Category.SECURITY,
        title=title,
        comment="c",
        existing_code=code,
        improved_code="data = json.loads(request.body)",
    )


EVAL = make("    data = eval(request.body)", 6)


def tracker_with(text: str = TEXT, *findings: Finding) -> FindingTracker:
    tracker = FindingTracker()
    tracker.set_findings(URI, text, findings or (EVAL,))
    return tracker


def only(tracker: FindingTracker, mode: str = "mark") -> TrackedFinding:
    shown = tracker.visible(URI, mode)  # type: ignore[arg-type]
    assert len(shown) == 1
    return shown[0]


def naive_apply(text: str, rng: Range, new: str) -> str:
    """Reference edit on the whole string (slow but obviously right)."""
    lines = split_keepends(text)

    def offset(line: int, char: int) -> int:
        if line >= len(lines):
            return len(text)
        content = lines[line].rstrip("\r\n")
        return sum(len(x) for x in lines[:line]) + min(char, len(content))

    a, b = offset(rng.start_line, rng.start_char), offset(rng.end_line, rng.end_char)
    return text[:a] + new + text[b:]


def code_at(tracker: FindingTracker, t: TrackedFinding) -> str:
    doc = tracker.document(URI)
    assert doc is not None
    return "\n".join(doc.line_text(i) for i in range(t.start_line, t.end_line + 1))


# -- placement -------------------------------------------------------------------------------


def test_placed_on_whole_lines_of_its_code() -> None:
    t = only(tracker_with())
    assert (t.start_line, t.start_char, t.end_line, t.end_char) == (5, 0, 5, 29)
    assert not t.stale


def test_editor_text_differs_from_review_so_finding_is_re_anchored() -> None:
    tracker = FindingTracker()
    result = tracker.set_findings(URI, "# new header\n\n" + TEXT, [EVAL])
    assert result.moved == [EVAL.id]
    assert only(tracker).start_line == 7


def test_changed_code_is_stale_and_vanished_code_withdrawn() -> None:
    tracker = FindingTracker()
    result = tracker.set_findings(URI, TEXT.replace("request.body", "request.data"), [EVAL])
    # One short token changed: found fuzzily, so shown only as stale.
    assert result.stale == [EVAL.id]
    assert tracker.visible(URI) == []
    result = tracker.set_findings(URI, "print('hello')\n", [EVAL])
    assert result.withdrawn == [EVAL.id]
    assert tracker.visible(URI, "mark") == []


# -- incremental edits -----------------------------------------------------------------------


def test_lines_inserted_above_move_it_down() -> None:
    tracker = tracker_with()
    result = tracker.apply_change(URI, Range(0, 0, 0, 0), "# one\n# two\n")
    assert result.moved == [EVAL.id] and not result.stale
    t = only(tracker)
    assert (t.start_line, t.end_line, t.end_char) == (7, 7, 29)
    assert code_at(tracker, t) == EVAL.existing_code


def test_lines_deleted_above_move_it_up() -> None:
    tracker = tracker_with()
    tracker.apply_change(URI, Range(0, 0, 2, 0), "")  # delete "import os\nimport sys\n"
    t = only(tracker)
    assert t.start_line == 3 and code_at(tracker, t) == EVAL.existing_code


def test_same_line_edit_before_a_mid_line_range_shifts_characters() -> None:
    # A range that starts mid-line (as a stale range can) moves with a same-line edit.
    tracker = tracker_with()
    tracker.apply_change(URI, Range(5, 4, 5, 4), "x")  # touches the code: stale
    t = only(tracker)
    assert t.stale
    tracker.apply_change(URI, Range(4, 0, 5, 0), "def handler(request):\n")  # no-op above
    tracker.apply_change(URI, Range(5, 0, 5, 0), "")  # empty edit: nothing
    assert only(tracker).stale


def test_edit_ending_on_the_first_line_of_a_mid_line_range_shifts_its_characters() -> None:
    tracker = FindingTracker()
    text = "abc = 1; data = eval(x)\n"
    finding = make("abc = 1; data = eval(x)", 1)
    tracker.set_findings(URI, text, [finding])
    tracker.apply_change(URI, Range(0, 9, 0, 9), "  ")  # inside: stale, range widened
    t = only(tracker)
    assert t.stale and (t.start_char, t.end_char) == (0, 25)
    # Make the range mid-line by joining a line before it.
    tracker.apply_change(URI, Range(0, 0, 0, 0), "q\n")
    # Join: the stale range grows to cover the edit, so it now starts mid-line.
    tracker.apply_change(URI, Range(0, 1, 1, 0), "; ")
    t = only(tracker)
    assert (t.start_line, t.start_char, t.end_line, t.end_char) == (0, 1, 0, 28)
    tracker.apply_change(URI, Range(0, 0, 0, 1), "QQQ")  # same line, before: +2 characters
    t = only(tracker)
    assert (t.start_line, t.start_char, t.end_line, t.end_char) == (0, 3, 0, 30)


def test_edit_inside_the_code_makes_it_stale() -> None:
    tracker = tracker_with()
    result = tracker.apply_change(URI, Range(5, 11, 5, 15), "literal_eval")
    assert result.stale == [EVAL.id]
    assert tracker.visible(URI, "withdraw") == []
    t = only(tracker, "mark")
    assert t.stale and (t.start_line, t.end_line) == (5, 5)


def test_typing_at_the_start_of_the_code_line_makes_it_stale() -> None:
    tracker = tracker_with()
    assert tracker.apply_change(URI, Range(5, 0, 5, 0), "# ").stale == [EVAL.id]


def test_typing_at_the_end_of_the_code_line_makes_it_stale_trailing_space_does_not() -> None:
    tracker = tracker_with()
    assert tracker.apply_change(URI, Range(5, 29, 5, 29), "   ").stale == []
    assert not only(tracker).stale
    assert tracker.apply_change(URI, Range(5, 32, 5, 32), "x").stale == [EVAL.id]


def test_undo_makes_it_fresh_again() -> None:
    tracker = tracker_with()
    tracker.apply_change(URI, Range(5, 11, 5, 15), "literal_eval")
    result = tracker.apply_change(URI, Range(5, 11, 5, 23), "eval")
    assert result.refreshed == [EVAL.id]
    t = only(tracker, "withdraw")
    assert (t.start_line, t.start_char, t.end_line, t.end_char) == (5, 0, 5, 29)


def test_edit_below_does_not_touch_it() -> None:
    tracker = tracker_with()
    before = only(tracker).range
    result = tracker.apply_change(URI, Range(9, 0, 10, 12), "def other():\n    return 2\n")
    assert not result.changed
    assert only(tracker).range == before


def test_enter_at_end_of_code_line_and_at_its_start() -> None:
    tracker = tracker_with()
    assert not tracker.apply_change(URI, Range(5, 29, 5, 29), "\n    ").changed
    assert tracker.apply_change(URI, Range(5, 0, 5, 0), "\n").moved == [EVAL.id]
    t = only(tracker, "withdraw")
    assert t.start_line == 6 and code_at(tracker, t) == EVAL.existing_code


def test_joining_the_line_above_onto_the_code_makes_it_stale() -> None:
    tracker = tracker_with()
    assert tracker.apply_change(URI, Range(4, 21, 5, 0), "").stale == [EVAL.id]


def test_joining_the_line_below_onto_the_code_makes_it_stale() -> None:
    tracker = tracker_with()
    assert tracker.apply_change(URI, Range(5, 29, 6, 0), "").stale == [EVAL.id]


def test_deleting_the_whole_code_withdraws_it() -> None:
    tracker = tracker_with()
    result = tracker.apply_change(URI, Range(5, 0, 6, 0), "")
    assert result.withdrawn == [EVAL.id]
    assert tracker.visible(URI, "mark") == []


def test_multi_line_insert_and_delete_around_a_multi_line_finding() -> None:
    code = "def handler(request):\n    data = eval(request.body)\n    return data"
    finding = make(code, 5, 7)
    tracker = tracker_with(TEXT, finding, make("    return 1", 11, title="other"))
    tracker.apply_change(URI, Range(2, 0, 2, 0), "A = 1\nB = 2\nC = 3\n")
    shown = tracker.visible(URI)
    assert [(t.start_line, t.end_line) for t in shown] == [(7, 9), (13, 13)]
    assert code_at(tracker, shown[0]) == code
    tracker.apply_change(URI, Range(1, 0, 5, 0), "")  # delete 4 lines above
    shown = tracker.visible(URI)
    assert [(t.start_line, t.end_line) for t in shown] == [(3, 5), (9, 9)]
    # An edit inside the multi-line finding makes it stale; the other one moves.
    result = tracker.apply_change(URI, Range(4, 4, 4, 8), "x\ny\nz = 1\n    data")
    assert result.stale == [finding.id]
    assert [t.id for t in tracker.visible(URI)] == [shown[1].id]
    assert tracker.visible(URI)[0].start_line == 12


def test_full_replace_re_anchors() -> None:
    tracker = tracker_with(TEXT, EVAL, make("    return 1", 11, title="other"))
    new = "\n\n\n" + TEXT.replace("    return 1\n", "    return 2\n    return 3\n")
    result = tracker.apply_change(URI, None, new)
    assert result.moved == [EVAL.id]
    # "return 1" → "return 2": fuzzy at best, or gone.
    assert len(result.stale + result.withdrawn) == 1
    assert [t.start_line for t in tracker.visible(URI)] == [8]
    assert tracker.text(URI) == new


def test_reanchor_after_disk_change_withdraws_vanished_code() -> None:
    tracker = tracker_with()
    result = tracker.reanchor(URI, "x = 1\n")
    assert result.withdrawn == [EVAL.id]
    assert tracker.visible(URI, "mark") == []


def test_reanchor_refreshes_a_stale_finding_whose_code_is_back() -> None:
    tracker = tracker_with()
    tracker.apply_change(URI, Range(5, 11, 5, 15), "literal_eval")
    assert tracker.reanchor(URI, TEXT).refreshed == [EVAL.id]


# -- line endings and encodings --------------------------------------------------------------


def test_crlf_document() -> None:
    text = TEXT.replace("\n", "\r\n")
    tracker = tracker_with(text)
    t = only(tracker)
    assert (t.start_line, t.end_char) == (5, 29)
    tracker.apply_change(URI, Range(1, 10, 1, 10), "\r\nimport re")
    t = only(tracker, "withdraw")
    assert t.start_line == 6 and code_at(tracker, t) == EVAL.existing_code
    assert tracker.text(URI) == text.replace("import sys\r\n", "import sys\r\nimport re\r\n")
    # Typing "\n" right after a "\r" line end merges into one CRLF break: no new line.
    assert tracker.apply_change(URI, Range(0, 9, 0, 9), "").changed is False


def test_cr_then_lf_across_the_edit_is_one_line_break() -> None:
    tracker = tracker_with("a\rb\n" + TEXT, make("    data = eval(request.body)", 8))
    tracker.apply_change(URI, Range(1, 0, 1, 1), "\n")  # "a\r" + "\n" + "\n" ...
    assert tracker.text(URI) == "a\r\n\n" + TEXT
    t = only(tracker, "withdraw")
    assert code_at(tracker, t) == EVAL.existing_code


def test_emoji_before_the_code_on_the_same_line_uses_code_points() -> None:
    text = "s = '😀'; data = eval(x)\nprint(s)\n"
    finding = make("s = '😀'; data = eval(x)", 1)
    tracker = FindingTracker()
    tracker.set_findings(URI, text, [finding])
    t = only(tracker)
    assert t.end_char == len("s = '😀'; data = eval(x)") == 23
    line = "s = '😀'; data = eval(x)"
    assert to_client_units(line, 10, "utf-16") == 11
    assert to_client_units(line, 10, "utf-8") == 13
    assert from_client_units(line, 11, "utf-16") == 10
    assert from_client_units(line, 13, "utf-8") == 10
    assert from_client_units(line, 6, "utf-16") == 6  # inside the surrogate pair: round up
    # The client sends UTF-16 columns ("data" is 10..14 there, 9..13 in code points).
    result = tracker.apply_change(URI, Range(0, 10, 0, 14), "value", encoding="utf-16")
    assert result.stale == [finding.id]
    assert tracker.text(URI) == "s = '😀'; value = eval(x)\nprint(s)\n"


def test_out_of_range_positions_are_clamped() -> None:
    tracker = tracker_with()
    tracker.apply_change(URI, Range(99, 0, 120, 5), "# end\n")
    assert tracker.text(URI) == TEXT + "# end\n"
    assert not only(tracker).stale


# -- lifecycle -------------------------------------------------------------------------------


def test_close_never_republishes_until_clear() -> None:
    tracker = tracker_with()
    assert tracker.close(EVAL.id) == [URI]
    assert tracker.visible(URI, "mark") == []
    tracker.set_findings(URI, TEXT, [EVAL])
    assert tracker.visible(URI) == []
    tracker.clear()
    tracker.set_findings(URI, TEXT, [EVAL])
    assert only(tracker).id == EVAL.id


def test_remove_file_and_untracked_uri() -> None:
    tracker = tracker_with()
    tracker.remove_file(URI)
    assert tracker.visible(URI) == []
    assert not tracker.apply_change(URI, Range(0, 0, 0, 0), "x").changed


def test_at_finds_findings_under_a_cursor() -> None:
    tracker = tracker_with()
    assert [t.id for t in tracker.at(URI, Range(5, 3, 5, 3))] == [EVAL.id]
    assert tracker.at(URI, Range(2, 0, 3, 0)) == []


# -- randomized: the stored text is always right, fresh findings always sit on their code ----


@pytest.mark.parametrize("seed", range(12))
def test_random_edits_keep_text_and_fresh_findings_consistent(seed: int) -> None:
    rng = random.Random(seed)
    eol = rng.choice(["\n", "\r\n"])
    lines = [f"line_{i} = value_{i} + {i}" for i in range(60)]
    text = eol.join(lines) + eol
    findings = [make(lines[i], i + 1, title=str(i)) for i in range(0, 60, 7)]
    tracker = FindingTracker()
    tracker.set_findings(URI, text, findings)
    pieces = ["", "x", eol, f"new = 1{eol}", f"a{eol}b{eol}c", " ", "é😀"]
    for _ in range(150):
        current = split_keepends(text)
        sl = rng.randrange(len(current))
        el = min(len(current) - 1, sl + rng.choice([0, 0, 1, 2]))
        sc = rng.randrange(len(current[sl].rstrip("\r\n")) + 1)
        ec = rng.randrange(len(current[el].rstrip("\r\n")) + 1)
        if el == sl and ec < sc:
            sc, ec = ec, sc
        edit = Range(sl, sc, el, ec)
        new = rng.choice(pieces)
        text = naive_apply(text, edit, new)
        tracker.apply_change(URI, edit, new)
        assert tracker.text(URI) == text
        for t in tracker.visible(URI, "withdraw"):
            assert code_at(tracker, t).rstrip() == t.finding.existing_code, (seed, edit, new)


# -- speed -----------------------------------------------------------------------------------


def test_an_edit_in_a_10k_line_document_with_200_findings_takes_under_a_millisecond() -> None:
    lines = [f"value_{i} = compute({i}) + other_{i}" for i in range(10_000)]
    text = "\n".join(lines) + "\n"
    findings = [make(lines[i], i + 1, title=str(i)) for i in range(0, 10_000, 50)]
    tracker = FindingTracker()
    tracker.set_findings(URI, text, findings)
    assert len(tracker.visible(URI)) == 200
    # The bound is the behaviour (an edit must not lag typing), so it is measured as a median
    # with the collector off: a full collection in a process that has imported litellm takes
    # hundreds of milliseconds and says nothing about the tracker.
    timings = []
    gc.collect()
    gc.disable()
    try:
        for i in range(200):
            line = 10 + i * 37
            start = time.perf_counter()
            tracker.apply_change(URI, Range(line, 0, line, 0), "x" if i % 2 else "# note\n")
            timings.append(time.perf_counter() - start)
    finally:
        gc.enable()
    timings.sort()
    assert timings[len(timings) // 2] < 0.001, timings[len(timings) // 2]


def test_findings_shown_again_stay_where_the_edits_moved_them() -> None:
    # Two findings quote the same line: by its code alone the second could be either.
    block = "    try:\n        go()\n    except:\n        pass\n"
    text = "def a():\n" + block + "\n\ndef b():\n" + block
    first, second = make("    except:", 4, title="a"), make("    except:", 11, title="b")
    tracker = tracker_with(text, first, second)
    tracker.apply_change(URI, Range(0, 0, 0, 0), "# typed\n" * 20)
    # The review finishes after the edits: the same findings, at the lines it reviewed.
    edited = tracker.text(URI)
    assert edited is not None
    tracker.set_findings(URI, edited, [first, second])
    placed = {t.finding.title: t.start_line for t in tracker.visible(URI)}
    assert placed == {"a": 23, "b": 30}
