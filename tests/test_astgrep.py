"""ast-grep with Redline's rule pack: every rule against its own examples, run as a review runs
it (real ast-grep process, the runner's scratch directory, conversion to findings), and the
guards around the run (no repository config, no suppression comments, coverage)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from redline.analyzers import astgrep, run_analyzers
from redline.analyzers.base import AnalyzerFailed
from redline.analyzers.rules import RULES
from redline.config_models import AnalyzerSettings
from redline.model import AnalyzerRun, Finding
from wording_checks import repeats

CASES = Path(__file__).parent / "astgrep_cases"
ONLY_ASTGREP = AnalyzerSettings(ruff=False, bandit=False, ast_grep=True)
SWALLOWED = textwrap.dedent(
    """\
    package app

    func Save() {
    \terr := write()
    \tif err != nil {}
    }
    """
)


def case(rule: str) -> dict[str, Any]:
    path = CASES / f"{rule}.yml"
    assert path.is_file(), f"rule {rule} has no examples: add {path.name} with valid/invalid"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["id"] == rule
    return data


def review(files: dict[str, str], settings: AnalyzerSettings = ONLY_ASTGREP, **kw: Any) -> Any:
    """Run the analyzers on `files`, every line counted as changed."""
    contents = {path: text.encode() for path, text in files.items()}
    changed = {path: set(range(1, text.count("\n") + 2)) for path, text in files.items()}
    return run_analyzers(contents, changed, settings, **kw)


def hits(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f"ast-grep:{rule}" in f.sources]


def astgrep_run(runs: list[AnalyzerRun]) -> AnalyzerRun:
    return next(r for r in runs if r.name == "ast-grep")


@pytest.mark.parametrize("rule", astgrep.rule_ids())
def test_rule_has_examples_and_a_table_entry(rule: str) -> None:
    data = case(rule)
    assert data["invalid"], f"{rule}: no positive example"
    assert data["valid"], f"{rule}: no negative example"
    assert rule in RULES, f"{rule}: add its severity, category and advice to analyzers/rules.py"


@pytest.mark.parametrize("rule", astgrep.rule_ids())
def test_rule_finds_its_positive_examples_and_not_its_negative_ones(rule: str) -> None:
    data = case(rule)
    for suffix in data["suffix"].split():
        for n, code in enumerate(data["invalid"]):
            outcome = review({f"src/case{n}{suffix}": code})
            assert astgrep_run(outcome.runs).status == "ok", astgrep_run(outcome.runs).message
            found = hits(outcome.findings, rule)
            assert found, f"{rule}: positive example {n} ({suffix}) not found:\n{code}"
            assert found[0].title == RULES[rule].title
            assert not repeats(found[0]), repeats(found[0])  # the title and body say it once
        for n, code in enumerate(data["valid"]):
            outcome = review({f"src/case{n}{suffix}": code})
            assert not hits(outcome.findings, rule), (
                f"{rule}: negative example {n} ({suffix}) reported:\n{code}"
            )


def test_every_example_file_names_a_rule_of_the_pack() -> None:
    ids = set(astgrep.rule_ids())
    stale = [p.name for p in CASES.glob("*.yml") if p.stem not in ids]
    assert not stale
    assert len(ids) == len(astgrep.rule_ids()), "rule ids must be unique"


def test_rule_pack_is_shipped_in_the_package() -> None:
    names = [name for name, _ in astgrep.rule_files()]
    assert {"go.yml", "java.yml", "rust.yml", "typescript.yml", "python.yml"} <= set(names)
    languages = {astgrep.rule_language(d) for d in astgrep.rule_documents()}
    assert languages == {"go", "java", "rust", "typescript", "tsx", "python"}


def test_swallowed_go_error_is_a_finding_on_its_line_with_coverage() -> None:
    outcome = review({"app/save.go": SWALLOWED}, AnalyzerSettings())
    (finding,) = hits(outcome.findings, "go-swallowed-error")
    assert finding.line == 5
    assert finding.existing_code == "\tif err != nil {}"
    assert finding.title == "Error checked and then ignored"
    run = astgrep_run(outcome.runs)
    assert (run.status, run.files, run.findings) == ("ok", 1, 1)
    assert run.version == "0.51.1"
    assert run.seconds is not None and 0 < run.seconds < 60
    assert outcome.given["ast-grep"] == ["app/save.go"]
    # ruff and bandit take no Go file.
    assert "app/save.go" not in outcome.given.get("ruff", [])


def test_only_changed_lines_count() -> None:
    outcome = run_analyzers(
        {"app/save.go": SWALLOWED.encode()}, {"app/save.go": {1, 2, 3}}, ONLY_ASTGREP
    )
    assert not outcome.findings
    assert astgrep_run(outcome.runs).status == "ok"


def test_a_suppression_comment_in_the_change_does_not_silence_a_rule() -> None:
    code = SWALLOWED.replace("\tif err", "\t// ast-grep-ignore\n\tif err")
    code = code.replace("func Save", "// ast-grep-ignore: go-swallowed-error\nfunc Save")
    (finding,) = hits(review({"app/save.go": code}).findings, "go-swallowed-error")
    assert finding.existing_code == "\tif err != nil {}"


def test_repository_config_files_are_not_read() -> None:
    """An sgconfig.yml whose rule turns every rule off, a .gitignore and an .ignore that
    ignore Go files, all part of the change: the pack still runs on the Go file."""
    files = {
        "sgconfig.yml": "ruleDirs: [rules]\nutilDirs: [utils]\n",
        "rules/x.yml": "id: go-swallowed-error\nlanguage: go\nrule: {pattern: NOPE}\n",
        ".gitignore": "*.go\n",
        ".ignore": "*.go\n",
        "app/.gitignore": "*\n",
        "app/save.go": SWALLOWED,
    }
    outcome = review(files)
    assert len(hits(outcome.findings, "go-swallowed-error")) == 1
    assert outcome.given["ast-grep"] == ["app/save.go"]


def test_turned_off_it_does_not_run() -> None:
    outcome = review({"app/save.go": SWALLOWED}, AnalyzerSettings(ast_grep=False))
    assert "ast-grep" not in {r.name for r in outcome.runs}
    assert not outcome.findings


def test_missing_binary_says_so_and_the_others_stand(tmp_path: Path) -> None:
    files = {"app/save.go": SWALLOWED, "app/x.py": "import os\n"}
    outcome = review(files, AnalyzerSettings(), executables={"ast-grep": tmp_path / "nope"})
    run = astgrep_run(outcome.runs)
    assert run.status == "missing" and "not found" in run.message
    assert [f.rule_id for f in outcome.findings] == ["F401"]


def test_file_selection_by_suffix() -> None:
    taken = ["a.go", "b/C.java", "lib.rs", "x.py", "t.ts", "u.tsx", "v.js", "w.mjs", "y.CJS"]
    left = ["Makefile", "a.c", "go.mod", "README.md", "x.pyc", ".ts", "Dockerfile"]
    assert [p for p in taken + left if astgrep.takes(p)] == taken


def test_parse_maps_rows_and_clones() -> None:
    line = (
        b'{"ruleId":"js-empty-catch@tsx","file":"./src/a.js","message":"m  n",'
        b'"range":{"start":{"line":2,"column":4},"end":{"line":4,"column":0}}}\n\n'
    )
    (result,) = astgrep.parse(line, Path("/nowhere")).results
    assert (result.rule, result.file, result.line, result.end_line, result.message) == (
        "js-empty-catch",
        "src/a.js",
        3,
        4,
        "m n",
    )


@pytest.mark.parametrize("out", [b"not json\n", b'{"ruleId": "x"}\n', b'[{"ruleId": 1}]\n'])
def test_unreadable_output_fails_the_run(out: bytes) -> None:
    with pytest.raises(AnalyzerFailed):
        astgrep.parse(out, Path("/nowhere"))


def test_test_code_is_left_to_the_rules_that_matter_there() -> None:
    """Ignored errors in a test file are on purpose (measured: all 13 hits on gin, cobra and
    consul-template were tests setting variables); an empty `if err != nil {}` is a bug there
    too."""
    code = SWALLOWED.replace("\terr := write()", '\tos.Setenv("A", "1")\n\tos.MkdirAll("x", 0o755)')
    code = code.replace("\tos.Setenv", "\terr := write()\n\tos.Setenv")
    found = review({"app/save_test.go": code, "app/save.go": code}).findings
    assert {(f.file, f.rule_id) for f in found} == {
        ("app/save.go", "go-ignored-error"),
        ("app/save.go", "go-swallowed-error"),
        ("app/save_test.go", "go-swallowed-error"),
    }


def test_a_file_that_cannot_be_copied_fails_the_run_not_the_review(tmp_path: Path) -> None:
    with astgrep.Workdir() as work, pytest.raises(AnalyzerFailed, match=r"could not copy a\.go"):
        work.copy(tmp_path, ["a.go"])  # not in the scratch directory
