from __future__ import annotations

from redline.analyzers.base import Edit, RawResult
from redline.analyzers.convert import to_findings
from redline.analyzers.fixes import SourceText
from redline.model import AnchorState, Category, Finding, Severity
from redline.review.anchoring import anchor_finding
from redline.review.fusion import fuse
from redline.review.schemas import ModelFinding

FILE = "app/jobs.py"
SOURCE = """\
import subprocess


def run(cmd, opts={}):
    out = subprocess.run(cmd, shell=True, capture_output=True)
    return out.stdout


def parse(row):
    try:
        return int(row["n"])
    except:
        return None
"""
TEXTS = {FILE: SourceText(SOURCE)}
CHANGED = {FILE: set(range(1, 14))}


def _analyzer(*raws: RawResult) -> list[Finding]:
    return to_findings(raws, TEXTS, CHANGED)


def _bandit_b602() -> RawResult:
    return RawResult(
        "bandit",
        "B602",
        FILE,
        5,
        5,
        "subprocess call with shell=True identified, security issue.",
        severity=Severity.HIGH,
        confidence=0.9,
        security=True,
    )


def _ruff_b006() -> RawResult:
    # ruff's real B006 fix: `opts=None` plus a guard line in the body.
    return RawResult(
        "ruff",
        "B006",
        FILE,
        4,
        4,
        "Do not use mutable data structures for argument defaults",
        edits=(
            Edit(4, 19, 4, 21, "None"),
            Edit(5, 1, 5, 1, "    if opts is None:\n        opts = {}\n"),
        ),
        fix_unsafe=True,
    )


def _ruff_e722() -> RawResult:
    return RawResult("ruff", "E722", FILE, 12, 12, "Do not use bare `except`")


def _weak_s108() -> RawResult:
    return RawResult("ruff", "S108", FILE, 11, 11, "Probable insecure usage of temporary file")


def _model(
    existing: str,
    line: int,
    title: str,
    comment: str,
    category: Category = Category.SECURITY,
    severity: Severity = Severity.HIGH,
    improved: str | None = None,
    confidence: float = 0.7,
) -> Finding:
    mf = ModelFinding(
        file=FILE,
        line=line,
        severity=severity,
        category=category,
        title=title,
        comment=comment,
        existing_code=existing,
        improved_code=improved,
        confidence=confidence,
    )
    return anchor_finding(mf, SOURCE, source="model:gpt-4o-mini")


def test_model_and_bandit_agree_on_shell_injection() -> None:
    (b602,) = _analyzer(_bandit_b602())
    m = _model(
        "out = subprocess.run(cmd, shell=True, capture_output=True)",
        5,
        "Shell injection via subprocess",
        "`cmd` reaches a shell; an attacker can run arbitrary commands.",
    )
    (fused,) = fuse([m], [b602])
    assert fused.sources == ["model:gpt-4o-mini", "bandit:B602"]
    assert fused.confidence == round(1 - (1 - 0.7) * (1 - b602.confidence), 3)
    assert fused.title == m.title and fused.comment == m.comment
    assert fused.id == b602.id  # the deterministic reviewer's id survives re-reviews
    assert fused.severity is Severity.CRITICAL  # bandit's shell=True with a variable
    assert fused.rule_id == "B602"
    assert (fused.line, fused.end_line) == (5, 5)


def test_confidence_is_capped() -> None:
    (b602,) = _analyzer(_bandit_b602())
    m = _model(
        "subprocess.run(cmd, shell=True, capture_output=True)",
        5,
        "Command injection",
        "shell=True with user input.",
        confidence=1.0,
    )
    assert fuse([m], [b602])[0].confidence == 0.99


def test_analyzer_fix_is_kept_with_its_own_range_when_model_has_none() -> None:
    (b006,) = _analyzer(_ruff_b006())
    assert b006.improved_code == "def run(cmd, opts=None):\n    if opts is None:\n        opts = {}"
    m = _model(
        "def run(cmd, opts={}):",
        4,
        "Mutable default argument",
        "`opts={}` is shared between calls.",
        category=Category.FUNCTIONALITY,
        severity=Severity.MEDIUM,
    )
    (fused,) = fuse([m], [b006])
    assert fused.improved_code == b006.improved_code
    assert (fused.line, fused.end_line) == (b006.line, b006.end_line)
    assert fused.existing_code == b006.existing_code
    assert fused.comment == m.comment


def test_model_fix_wins_over_analyzer_fix() -> None:
    (b006,) = _analyzer(_ruff_b006())
    m = _model(
        "def run(cmd, opts={}):",
        4,
        "Mutable default",
        "Use None as the default.",
        category=Category.FUNCTIONALITY,
        improved="def run(cmd, opts=None):",
    )
    (fused,) = fuse([m], [b006])
    assert fused.improved_code == "def run(cmd, opts=None):"
    assert (fused.line, fused.end_line) == (4, 4)


def test_same_line_different_problem_does_not_merge() -> None:
    (b006,) = _analyzer(_ruff_b006())
    m = _model(
        "def run(cmd, opts={}):",
        4,
        "run() ignores its options",
        "`opts` is never passed to subprocess, so callers' settings are silently dropped.",
        category=Category.FUNCTIONALITY,
    )
    out = fuse([m], [b006])
    assert len(out) == 2
    assert {f.sources[0] for f in out} == {"model:gpt-4o-mini", "ruff:B006"}


def test_rule_id_in_model_text_is_enough() -> None:
    (e722,) = _analyzer(_ruff_e722())
    m = _model(
        "except:",
        12,
        "E722 here",
        "Catch ValueError and KeyError instead.",
        category=Category.QUALITY,
    )
    (fused,) = fuse([m], [e722])
    assert fused.sources == ["model:gpt-4o-mini", "ruff:E722"]


def test_unanchored_model_finding_never_merges() -> None:
    (b602,) = _analyzer(_bandit_b602())
    m = _model("os.system(cmd)", 5, "Shell injection", "os.system runs a shell.")
    assert m.anchor is AnchorState.UNANCHORED
    out = fuse([m], [b602])
    assert len(out) == 2
    assert out[-1] is m  # unanchored sorts after anchored findings of the same file


def test_analyzer_only_strong_kept_weak_downgraded() -> None:
    by_rule = {f.rule_id: f for f in _analyzer(_ruff_e722(), _weak_s108())}
    strong, weak = by_rule["E722"], by_rule["S108"]
    assert strong.confidence >= 0.85 and weak.confidence < 0.85
    out = {f.rule_id: f for f in fuse([], [strong, weak])}
    assert out["E722"] == strong
    assert out["S108"].severity is Severity.LOW  # Medium, one step down
    assert out["S108"].confidence == round(weak.confidence * 0.6, 3)


def test_downgrade_stops_at_info() -> None:
    (weak,) = _analyzer(_weak_s108())
    info = weak.model_copy(update={"severity": Severity.INFO})
    assert fuse([], [info])[0].severity is Severity.INFO


def test_no_downgrade_in_files_no_model_reviewed() -> None:
    (weak,) = _analyzer(_weak_s108())
    assert fuse([], [weak], reviewed_files=set()) == [weak]
    assert fuse([], [weak], reviewed_files={"other.py"}) == [weak]
    assert fuse([], [weak], reviewed_files={FILE})[0] != weak


def test_one_to_one_best_match_and_deterministic_order() -> None:
    b602, b006, e722 = (
        _analyzer(_bandit_b602())[0],
        _analyzer(_ruff_b006())[0],
        _analyzer(_ruff_e722())[0],
    )
    vague = _model(
        "out = subprocess.run(cmd, shell=True, capture_output=True)",
        5,
        "Subprocess output unchecked",
        "The return code is ignored.",
        category=Category.FUNCTIONALITY,
        confidence=0.9,
    )
    precise = _model(
        "out = subprocess.run(cmd, shell=True, capture_output=True)",
        5,
        "Command injection",
        "shell=True with a caller-controlled string.",
        confidence=0.6,
    )
    model_only = _model(
        "return int(row['n'])",
        11,
        "KeyError not handled",
        "A row without 'n' raises KeyError, which the bare except hides.",
        category=Category.FUNCTIONALITY,
    )
    a = fuse([vague, precise, model_only], [e722, b006, b602])
    b = fuse([model_only, precise, vague], [b602, e722, b006])
    assert a == b
    assert [f.line for f in a] == [4, 5, 5, 11, 12]
    merged = [f for f in a if len(f.sources) == 2]
    assert [f.title for f in merged] == ["Command injection"]
    # On the same line, the more severe finding comes first.
    assert a[1].severity.rank >= a[2].severity.rank
