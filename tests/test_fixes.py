"""Quick fixes: the edit yields the improved code exactly, and only parsing fixes are applied."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.lsp.document_findings import TrackedFinding
from redline.lsp.fixes import (
    DISMISS,
    DISMISS_FILE,
    DISMISS_KIND,
    FIX_APPLIED,
    QUICKFIX,
    SHOW_SUGGESTED,
    ActionSpec,
    code_actions_for,
    fix_edit,
    kind_allowed,
)
from redline.lsp.textlines import Range
from redline.lsp.tracking import FindingTracker
from redline.model import Category, Finding, FixState, Severity, Verification, finding_id
from redline.review.fix_check import fix_check, fix_state, fixed_text_parses, replace_lines

TEXT = "import os\n\n\ndef load(path):\n    data = eval(open(path).read())\n    return data\n"
CODE = "    data = eval(open(path).read())"
FIXED = "    with open(path) as fh:\n        data = json.load(fh)"


def make(
    improved: str | None = FIXED,
    *,
    code: str = CODE,
    line: int = 5,
    verdict: str | None = "CORRECT",
    title: str = "eval on file content",
    file: str = "app.py",
    fix: FixState = FixState.PARSES,
) -> Finding:
    return Finding(
        id=finding_id(file, code, "Security", title),
        file=file,
        line=line,
        end_line=line + code.count("\n"),
        severity=Severity.HIGH,
        category=Category.SECURITY,
        title=title,
        comment="Never eval file content.",
        existing_code=code,
        improved_code=improved,
        verification=Verification(verdict=verdict) if verdict else None,
        fix=fix,
    )


def tracked(finding: Finding, text: str = TEXT, uri: str = "file:///r/app.py") -> TrackedFinding:
    tracker = FindingTracker()
    tracker.set_findings(uri, text, [finding])
    (t,) = tracker.visible(uri, "mark")
    return t


def apply(text: str, rng: Range, new: str) -> str:
    lines = [*text.splitlines(keepends=True), ""]

    def offset(line: int, char: int) -> int:
        return sum(len(x) for x in lines[:line]) + char

    return text[: offset(rng.start_line, rng.start_char)] + new + text[offset(*rng.end) :]


# -- the edit --------------------------------------------------------------------------------


def test_fix_edit_yields_the_improved_code_exactly() -> None:
    finding = make()
    edit = fix_edit(tracked(finding).range, TEXT, finding.improved_code)
    assert edit is not None
    assert edit.range == Range(4, 0, 4, len(CODE))
    expected = TEXT.replace(CODE, FIXED)
    assert apply(TEXT, edit.range, edit.new_text) == expected == edit.fixed_text


def test_fix_edit_preserves_crlf_and_a_missing_trailing_newline() -> None:
    text = TEXT.replace("\n", "\r\n").rstrip("\r\n")  # no trailing newline
    finding = make(code="    return data", line=6, improved="    return dict(data)\n")
    edit = fix_edit(tracked(finding, text).range, text, finding.improved_code)
    assert edit is not None
    assert edit.fixed_text == text.replace("    return data", "    return dict(data)")
    multi = fix_edit(tracked(make(), text).range, text, FIXED)  # LF in the improved code
    assert multi is not None
    assert "\r\n        data = json.load(fh)\r\n" in multi.fixed_text
    assert "\n" not in multi.fixed_text.replace("\r\n", "")
    assert apply(text, multi.range, multi.new_text) == multi.fixed_text


def test_empty_improved_code_deletes_the_lines() -> None:
    finding = make(improved="", code="import os", line=1)
    edit = fix_edit(tracked(finding).range, TEXT, "")
    assert edit is not None
    assert edit.fixed_text == TEXT.removeprefix("import os\n")
    assert apply(TEXT, edit.range, edit.new_text) == edit.fixed_text
    # The last line of a file without a trailing newline takes the break before it.
    text = "a = 1\nb = 2"
    last = make(improved="", code="b = 2", line=2)
    edit = fix_edit(tracked(last, text).range, text, "")
    assert edit is not None and edit.fixed_text == "a = 1"


def test_no_edit_without_improved_code_or_when_nothing_changes() -> None:
    rng = tracked(make()).range
    assert fix_edit(rng, TEXT, None) is None
    assert fix_edit(rng, TEXT, CODE) is None
    assert fix_edit(Range(40, 0, 41, 0), TEXT, FIXED) is None


# -- parse checks ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "good", "bad"),
    [
        ("a.py", "x = 1\n", "x = (1\n"),
        ("a.js", "const x = 1;\n", "const x = (1;\n"),
        ("a.ts", "let x: number = 1;\n", "let x: number = ;\n"),
        ("a.tsx", "const e = <div>{x}</div>;\n", "const e = <div>{x</div>;\n"),
        ("a.go", "package a\nfunc f() int { return 1 }\n", "package a\nfunc f( { return 1 }\n"),
    ],
)
def test_fixed_text_parses(path: str, good: str, bad: str) -> None:
    assert fixed_text_parses(path, good) is True
    assert fixed_text_parses(path, bad) is False


def test_unknown_language_cannot_be_checked() -> None:
    assert fixed_text_parses("a.rb", "def x(") is None
    assert fixed_text_parses("README", "anything") is None


def test_a_document_broken_before_the_fix_cannot_be_judged() -> None:
    assert fix_check("a.py", "x = (1\n", "x = (2\n") is None
    assert fix_check("a.py", "x = 1\n", "x = (2\n") is False


# -- actions ---------------------------------------------------------------------------------


def titles(actions: list[ActionSpec]) -> list[str]:
    return [a.title for a in actions]


def test_verified_parsing_fix_is_preferred_and_closes_the_finding() -> None:
    finding = make()
    actions = code_actions_for([tracked(finding)], TEXT, "app.py", None, uri="file:///r/app.py")
    assert titles(actions) == [
        "Redline: apply fix — eval on file content",
        "Redline: dismiss finding — eval on file content",
        "Redline: dismiss all Redline findings in this file",
    ]
    fix, dismiss, dismiss_all = actions
    assert fix.kind == QUICKFIX and fix.is_preferred
    assert fix.edit is not None and fix.edit.fixed_text == TEXT.replace(CODE, FIXED)
    assert fix.command is not None
    assert (fix.command.name, fix.command.arguments) == (
        FIX_APPLIED,
        ("file:///r/app.py", finding.id),
    )
    assert fix.finding_ids == (finding.id,)
    assert dismiss.command is not None and dismiss.command.name == DISMISS
    assert dismiss_all.command is not None
    assert dismiss_all.command.name == DISMISS_FILE
    assert not dismiss.is_preferred and dismiss.edit is None


def test_unverified_or_unknown_language_fix_is_offered_but_not_preferred() -> None:
    unverified = code_actions_for([tracked(make(verdict=None))], TEXT, "app.py", None)
    assert unverified[0].title.startswith("Redline: apply fix") and not unverified[0].is_preferred
    partial = code_actions_for([tracked(make(verdict="PARTIALLY_CORRECT"))], TEXT, "app.py")
    assert not partial[0].is_preferred
    ruby = make(file="app.rb", fix=FixState.UNCHECKED)
    actions = code_actions_for([tracked(ruby)], TEXT, "app.rb", None)
    assert actions[0].title.startswith("Redline: apply fix") and not actions[0].is_preferred


def test_the_pipeline_verdict_is_the_one_the_editor_follows() -> None:
    improved = "    data = json.load(open(path)"
    assert fix_state("app.py", TEXT, 5, 5, improved) is FixState.DOES_NOT_PARSE
    assert fix_state("app.py", TEXT, 5, 5, FIXED) is FixState.PARSES
    assert fix_state("app.rb", TEXT, 5, 5, improved) is FixState.UNCHECKED
    assert fix_state("app.py", TEXT, 5, 5, "") is FixState.PARSES  # deleting the line
    assert replace_lines("a\r\nb\r\nc", 2, 2, "X\nY") == "a\r\nX\r\nY\r\nc"


def test_fix_that_does_not_parse_is_only_shown() -> None:
    broken = make(improved="    data = json.load(open(path)", fix=FixState.DOES_NOT_PARSE)
    actions = code_actions_for([tracked(broken)], TEXT, "app.py", None, uri="u")
    assert titles(actions)[0] == (
        "Redline: show suggested code (does not parse as is) — eval on file content"
    )
    assert actions[0].edit is None
    assert actions[0].command is not None
    assert actions[0].command.name == SHOW_SUGGESTED
    assert actions[0].command.arguments == ("u", broken.id)
    assert not any(a.title.startswith("Redline: apply fix") for a in actions)


def test_stale_finding_fix_is_only_shown() -> None:
    t = tracked(make())
    t.stale = True
    actions = code_actions_for([t], TEXT, "app.py", None)
    assert titles(actions)[0].startswith("Redline: show suggested code")


def test_finding_without_improved_code_only_dismisses() -> None:
    actions = code_actions_for([tracked(make(improved=None))], TEXT, "app.py", None)
    assert titles(actions) == [
        "Redline: dismiss finding — eval on file content",
        "Redline: dismiss all Redline findings in this file",
    ]


def test_only_filters_by_kind_prefix() -> None:
    t = tracked(make())
    assert code_actions_for([t], TEXT, "app.py", ["quickfix"])
    assert code_actions_for([t], TEXT, "app.py", [""])
    assert code_actions_for([t], TEXT, "app.py", ["source"]) == []
    assert code_actions_for([t], TEXT, "app.py", ["source.organizeImports"]) == []
    assert code_actions_for([t], TEXT, "app.py", ["refactor", "quickfix"])
    assert code_actions_for([t], TEXT, "app.py", ["quickfix.redline"]) == []
    assert kind_allowed("quickfix.redline", ["quickfix"])
    assert not kind_allowed("quickfixer", ["quickfix"])
    assert code_actions_for([], TEXT, "app.py", None) == []


def test_dismissals_are_never_of_a_kind_editors_apply_unasked() -> None:
    t = tracked(make())
    actions = code_actions_for([t], TEXT, "app.py", None)
    assert [a.kind for a in actions] == [QUICKFIX, DISMISS_KIND, DISMISS_KIND]
    # "Apply the only quick fix" (Neovim, eglot) and fix-on-save never reach a dismissal.
    quick = code_actions_for([t], TEXT, "app.py", ["quickfix"])
    assert titles(quick) == ["Redline: apply fix — eval on file content"]
    assert code_actions_for([t], TEXT, "app.py", ["source.fixAll"]) == []
    assert titles(code_actions_for([t], TEXT, "app.py", [DISMISS_KIND]))[0].startswith(
        "Redline: dismiss finding"
    )
    # A request over the whole document (not at a place): fixes only.
    whole = code_actions_for([t], TEXT, "app.py", None, dismissals=False)
    assert titles(whole) == ["Redline: apply fix — eval on file content"]


_KINDS = st.sampled_from(
    ["", "quickfix", "quickfix.x", "source", "source.fixAll", "source.fixAll.eslint", "refactor",
     "refactor.rewrite", "redline", DISMISS_KIND, "notebook"]
)  # fmt: skip


@given(
    only=st.one_of(st.none(), st.lists(_KINDS, max_size=3)),
    improved=st.sampled_from([None, "", FIXED]),
    stale=st.booleans(),
    dismissals=st.booleans(),
)
def test_every_action_is_of_a_kind_asked_for_and_no_dismissal_is_batch_applied(
    only: list[str] | None, improved: str | None, stale: bool, dismissals: bool
) -> None:
    t = tracked(make(improved=improved))
    t.stale = stale
    actions = code_actions_for([t], TEXT, "app.py", only, dismissals=dismissals)
    for action in actions:
        assert kind_allowed(action.kind, only)
        dismiss = action.command is not None and action.command.name in (DISMISS, DISMISS_FILE)
        assert dismiss == (action.kind == DISMISS_KIND)
        if dismiss:
            assert dismissals and not action.is_preferred
            assert not kind_allowed(action.kind, ["quickfix", "source.fixAll"])
    assert sum(a.is_preferred for a in actions) <= 1
    assert all(a.edit is not None for a in actions if a.is_preferred)


def test_two_findings_get_their_own_actions_and_one_dismiss_all() -> None:
    a = make()
    b = make(code="import os", line=1, improved="", title="unused import")
    tracker = FindingTracker()
    tracker.set_findings("u", TEXT, [a, b])
    actions = code_actions_for(tracker.visible("u"), TEXT, "app.py", None)
    assert titles(actions) == [
        "Redline: apply fix — unused import",
        "Redline: dismiss finding — unused import",
        "Redline: apply fix — eval on file content",
        "Redline: dismiss finding — eval on file content",
        "Redline: dismiss all Redline findings in this file",
    ]
    assert set(actions[-1].finding_ids) == {a.id, b.id}


def test_long_or_multi_line_titles_are_shortened() -> None:
    finding = make(title="line one\nline two " + "x" * 200)
    (action, *_rest) = code_actions_for([tracked(finding)], TEXT, "app.py", None)
    assert "\n" not in action.title and len(action.title) < 120 and action.title.endswith("…")
