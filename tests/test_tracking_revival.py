"""A finding whose code comes back is shown again: undo, a moved line, retyped or identical text.

The edits are those editors send for `dd`/`u`, `J`/`u`, `ddp`, `S` and retyping, and a line
replaced by itself — including the ranges Neovim computes by diffing, which cut across lines.
The property test applies generated edit sequences and then their inverses, in reverse order:
the visible findings and their ranges are exactly the original ones again, and a closed (fixed
or dismissed) finding never comes back.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.lsp.document_findings import MAX_WITHDRAWN
from redline.lsp.textlines import Range
from redline.lsp.tracking import FindingTracker
from redline.model import Category, Finding, Severity, finding_id

URI = "file:///repo/app.py"

TEXT = """import os
import sys


def handler(request):
    command = f"zip {request.name}"
    return subprocess.call(command, shell=True)


def other():
    try:
        go()
    except:
        pass
"""


def make(code: str, line: int, title: str = "t") -> Finding:
    n = code.count("\n")
    return Finding(
        id=finding_id("app.py", code, "Security", title),
        file="app.py",
        line=line,
        end_line=line + n,
        severity=Severity.HIGH,
        category=Category.SECURITY,
        title=title,
        comment="c",
        existing_code=code,
    )


IMPORT = make("import os", 1, "unused import")
SHELL = make("    return subprocess.call(command, shell=True)", 7, "shell")
EXCEPT = make("    except:", 13, "bare except")
ALL = (IMPORT, SHELL, EXCEPT)

Shown = list[tuple[str, tuple[int, int, int, int], bool]]


def shown(tracker: FindingTracker, mode: str = "mark") -> Shown:
    return [
        (t.id, (t.start_line, t.start_char, t.end_line, t.end_char), t.stale)
        for t in tracker.visible(URI, mode)  # type: ignore[arg-type]
    ]


def tracker_with(text: str = TEXT, findings: tuple[Finding, ...] = ALL) -> FindingTracker:
    tracker = FindingTracker()
    tracker.set_findings(URI, text, findings)
    return tracker


def edit(tracker: FindingTracker, rng: tuple[int, int, int, int], new: str) -> None:
    tracker.apply_change(URI, Range(*rng), new)


# -- what editors send -------------------------------------------------------------------------


def test_whole_line_deleted_then_put_back() -> None:
    tracker = tracker_with()
    before = shown(tracker)
    edit(tracker, (6, 0, 7, 0), "")  # `dd` as a line-range client sends it
    assert SHELL.id not in [i for i, _, _ in shown(tracker)]
    edit(tracker, (6, 0, 6, 0), "    return subprocess.call(command, shell=True)\n")  # `u`
    assert shown(tracker) == before


def test_neovim_dd_and_undo_ranges_cut_across_lines() -> None:
    # Neovim diffs the old and new lines: `dd` on `import os` above `import sys` is "delete
    # `os\nimport `", its undo "insert `os\nimport ` after `import `".
    tracker = tracker_with()
    before = shown(tracker)
    edit(tracker, (0, 7, 1, 7), "")
    assert tracker.text(URI) == TEXT.replace("import os\n", "", 1)
    assert IMPORT.id not in [i for i, _, _ in shown(tracker, "withdraw")]
    edit(tracker, (0, 7, 0, 7), "os\nimport ")
    assert tracker.text(URI) == TEXT
    assert shown(tracker) == before


def test_join_onto_the_line_above_then_undo() -> None:
    tracker = tracker_with()
    before = shown(tracker)
    edit(tracker, (5, 35, 6, 4), " ")  # `J` on the line above the finding
    assert SHELL.id not in [i for i, _, _ in shown(tracker, "withdraw")]
    edit(tracker, (5, 35, 5, 36), "\n    ")  # `u`
    assert tracker.text(URI) == TEXT
    assert shown(tracker) == before


def test_join_the_next_line_onto_it_then_undo() -> None:
    tracker = tracker_with()
    before = shown(tracker)
    edit(tracker, (12, 11, 13, 8), " ")  # `J` on `except:`: `    except: pass`
    assert EXCEPT.id not in [i for i, _, _ in shown(tracker, "withdraw")]
    edit(tracker, (12, 11, 12, 12), "\n        ")
    assert shown(tracker) == before


def test_a_line_moved_down_takes_its_finding_along() -> None:
    tracker = tracker_with()
    edit(tracker, (0, 0, 1, 0), "")  # `dd` on `import os`
    edit(tracker, (1, 0, 1, 0), "import os\n")  # `p`: below `import sys`
    assert tracker.text(URI) == "import sys\nimport os\n" + TEXT.split("\n", 2)[2]
    assert shown(tracker)[0] == (IMPORT.id, (1, 0, 1, 9), False)


def test_a_line_replaced_by_identical_text_keeps_its_finding() -> None:
    tracker = tracker_with()
    before = shown(tracker)
    result = tracker.apply_change(URI, Range(6, 0, 7, 0), SHELL.existing_code + "\n")
    assert SHELL.id not in result.withdrawn
    assert shown(tracker) == before
    # Its text only, the line break kept (a replace-in-line, Kate's "replace all" of a word).
    result = tracker.apply_change(URI, Range(0, 0, 0, 9), "import os")
    assert IMPORT.id not in result.withdrawn
    assert shown(tracker) == before


def test_retyped_code_brings_it_back() -> None:
    tracker = tracker_with()
    before = shown(tracker)
    edit(tracker, (0, 0, 0, 9), "")  # `S`
    assert IMPORT.id not in [i for i, _, _ in shown(tracker)]
    for i, ch in enumerate("import os"):
        edit(tracker, (0, i, 0, i), ch)
    assert shown(tracker) == before


def test_code_missing_when_the_review_landed_is_shown_once_typed() -> None:
    tracker = tracker_with(TEXT.replace("import os\nimport sys\n", ""))
    assert IMPORT.id not in [i for i, _, _ in shown(tracker)]
    edit(tracker, (0, 0, 0, 0), "import os\n")
    assert shown(tracker)[0] == (IMPORT.id, (0, 0, 0, 9), False)


def test_a_full_replacement_brings_a_withdrawn_finding_back() -> None:
    tracker = tracker_with()
    before = shown(tracker)
    edit(tracker, (0, 0, 1, 0), "")
    tracker.apply_change(URI, None, TEXT)
    assert shown(tracker) == before


def test_a_closed_finding_never_comes_back() -> None:
    tracker = tracker_with()
    edit(tracker, (0, 0, 1, 0), "")
    tracker.close(IMPORT.id)  # dismissed from the list while withdrawn
    edit(tracker, (0, 0, 0, 0), "import os\n")
    assert IMPORT.id not in [i for i, _, _ in shown(tracker)]
    tracker.close(SHELL.id)  # its fix applied: the line replaced, then the fix undone
    edit(tracker, (6, 0, 7, 0), "    return subprocess.call(shlex.split(command))\n")
    edit(tracker, (6, 0, 7, 0), SHELL.existing_code + "\n")
    assert [i for i, _, _ in shown(tracker)] == [EXCEPT.id]
    tracker.apply_change(URI, None, TEXT)
    assert [i for i, _, _ in shown(tracker)] == [EXCEPT.id]


def test_withdrawn_findings_kept_are_bounded() -> None:
    lines = [f"value_{i} = compute({i})" for i in range(MAX_WITHDRAWN + 20)]
    findings = tuple(make(line, i + 1, str(i)) for i, line in enumerate(lines))
    tracker = tracker_with("\n".join(lines) + "\n", findings)
    edit(tracker, (0, 0, len(lines), 0), "")
    doc = tracker.document(URI)
    assert doc is not None and len(doc.withdrawn) == MAX_WITHDRAWN
    # The oldest are forgotten: the last MAX_WITHDRAWN come back with their code.
    edit(tracker, (0, 0, 0, 0), "\n".join(lines) + "\n")
    assert len(shown(tracker)) == MAX_WITHDRAWN


def test_a_blank_line_brings_nothing_back() -> None:
    # Without quoted code the review's line is all a finding has: a blank line is no anchor.
    blank = make("", 3, "no code")
    tracker = tracker_with(TEXT, (blank,))
    assert len(shown(tracker)) == 1
    edit(tracker, (2, 0, 4, 0), "")  # its blank line and the next: it is on `def` now
    assert shown(tracker, "withdraw") == []
    edit(tracker, (0, 0, 0, 0), "\n")
    assert shown(tracker, "withdraw") == []


# -- generated edits and their inverses ----------------------------------------------------------

DOC_LINES = [f"line_{i} = value_{i} + {i}" for i in range(12)]


@dataclass(frozen=True)
class Edit:
    rng: Range
    new: str


def position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


@st.composite
def edit_in(draw: st.DrawFn, text: str) -> tuple[Edit, Edit, str]:
    """An edit of `text`, its inverse (an edit of the result) and the result."""
    a = draw(st.integers(0, len(text)))
    b = draw(st.integers(a, min(len(text), a + draw(st.sampled_from([0, 3, 25, 60, 200])))))
    copy = draw(st.sampled_from(DOC_LINES))
    new = draw(
        st.sampled_from(["", "x", "\n", " ", "é😀", "new = 1\n", "a\nb\nc", f"{copy}\n", "\n    "])
    )
    result = text[:a] + new + text[b:]
    forward = Edit(Range(*position(text, a), *position(text, b)), new)
    back = Edit(Range(*position(result, a), *position(result, a + len(new))), text[a:b])
    return forward, back, result


def findings_on(draw: st.DrawFn) -> tuple[Finding, ...]:
    starts = draw(st.sets(st.integers(0, len(DOC_LINES) - 1), min_size=1, max_size=5))
    out = []
    for start in sorted(starts):
        size = draw(st.integers(1, 3))
        code = "\n".join(DOC_LINES[start : start + size])
        out.append(make(code, start + 1, f"f{start}"))
    return tuple(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_edits_then_their_inverses_restore_every_finding(data: st.DataObject) -> None:
    text = "\n".join(DOC_LINES) + "\n"
    findings = findings_on(data.draw)
    tracker = tracker_with(text, findings)
    original = shown(tracker)
    assert len(original) == len(findings) and not any(stale for _, _, stale in original)
    closed = set()
    inverses: list[Edit] = []
    current = text
    for _ in range(data.draw(st.integers(1, 8))):
        forward, back, current = data.draw(edit_in(current))
        tracker.apply_change(URI, forward.rng, forward.new)
        assert tracker.text(URI) == current
        inverses.append(back)
        if data.draw(st.booleans()) and data.draw(st.integers(0, 4)) == 0:
            victim = data.draw(st.sampled_from(findings)).id
            tracker.close(victim)
            closed.add(victim)
        for t in tracker.visible(URI, "withdraw"):
            # A finding shown is on its code, and never a closed one.
            assert t.id not in closed
            doc = tracker.document(URI)
            assert doc is not None and doc.matches(t)
    for back in reversed(inverses):
        tracker.apply_change(URI, back.rng, back.new)
        assert all(i not in closed for i, _, _ in shown(tracker))
    assert tracker.text(URI) == text
    assert shown(tracker) == [row for row in original if row[0] not in closed]


def test_an_undo_that_removes_the_other_copy_of_a_line_keeps_the_finding_on_its_own() -> None:
    """Found by the property below: a copy of the flagged line is put above it, the copy and
    what follows are replaced, then both edits are undone. The revival placed the finding on
    the copy (nearer where the replacement left it); the undo deleting the copy withdrew it,
    although its own line was there all along."""
    text = "".join(f"line_{i} = value_{i} + {i}\n" for i in range(12))
    first = make("line_0 = value_0 + 0", 1, "first")
    flagged = make("line_5 = value_5 + 5", 6, "flagged")
    tracker = tracker_with(text, (first, flagged))
    before = shown(tracker)
    copy = "line_5 = value_5 + 5\n"
    edit(tracker, (0, 0, 0, 0), copy)
    removed = "".join(f"line_{i} = value_{i} + {i}\n" for i in range(5))
    edit(tracker, (0, 0, 6, 0), "x")
    edit(tracker, (0, 0, 0, 1), copy + removed)  # undo the replacement
    edit(tracker, (0, 0, 1, 0), "")  # undo the copy
    assert tracker.text(URI) == text
    assert shown(tracker) == before
