"""Static analyzers against real ruff and bandit processes (and small fake tools)."""

from __future__ import annotations

import json
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from redline.analyzers import AnalyzerOutcome, run_analyzers
from redline.analyzers.base import Edit
from redline.analyzers.fixes import SourceText, apply_fix
from redline.analyzers.rules import rule_info
from redline.config_models import AnalyzerSettings, CustomAnalyzer
from redline.model import Category, Finding, Severity

SAMPLE = textwrap.dedent(
    """\
    import os
    import subprocess


    def run(user_input, items=[]):
        try:
            subprocess.call("ls " + user_input, shell=True)
        except:
            pass
        return items


    def untouched():
        import json
        return 1
    """
)
CHANGED = set(range(1, 11))  # line 14's unused import is not part of the change
# bandit on every file: these tests are about what bandit reports and how it merges with ruff,
# not about which files the default `bandit_scope` picks (see the bandit_scope tests).
EVERY_FILE = AnalyzerSettings(bandit_scope="all")


def by_rule(outcome: AnalyzerOutcome, rule: str) -> Finding:
    matches = [f for f in outcome.findings if any(s.endswith(f":{rule}") for s in f.sources)]
    assert len(matches) == 1, [f.sources for f in outcome.findings]
    return matches[0]


def run_of(outcome: AnalyzerOutcome, name: str) -> str:
    return next(r.status for r in outcome.runs if r.name == name)


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture(scope="module")
def outcome() -> AnalyzerOutcome:
    return run_analyzers({"app/tasks.py": SAMPLE.encode()}, {"app/tasks.py": CHANGED}, EVERY_FILE)


def test_both_tools_ran(outcome: AnalyzerOutcome) -> None:
    assert {r.name: r.status for r in outcome.runs} == {
        "ruff": "ok",
        "bandit": "ok",
        "ast-grep": "ok",
    }
    assert all(r.files == 1 and r.version for r in outcome.runs)


def test_shell_injection_is_critical_and_merged_across_tools(outcome: AnalyzerOutcome) -> None:
    finding = by_rule(outcome, "S602")
    assert finding.line == 7
    assert finding.severity is Severity.CRITICAL
    assert finding.category is Category.SECURITY
    assert finding.sources == ["ruff:S602", "bandit:B602"]
    # Two tools agreeing is stronger evidence than either alone.
    assert finding.confidence > 0.9
    assert finding.existing_code == '        subprocess.call("ls " + user_input, shell=True)'
    assert "https://" in finding.comment


def test_bare_except(outcome: AnalyzerOutcome) -> None:
    finding = by_rule(outcome, "E722")
    assert (finding.line, finding.severity, finding.rule_id) == (8, Severity.MEDIUM, "E722")
    assert finding.sources == ["ruff:E722"]
    assert finding.existing_code == "    except:"


def test_unused_import_gets_rufs_fix(outcome: AnalyzerOutcome) -> None:
    finding = by_rule(outcome, "F401")
    assert (finding.line, finding.end_line) == (1, 1)
    assert finding.severity is Severity.LOW
    assert finding.category is Category.QUALITY
    assert finding.title == "Unused import `os`"
    assert finding.existing_code == "import os"
    assert finding.improved_code == ""  # the fix deletes the line
    assert finding.id.startswith("RL-")


def test_mutable_default_gets_widened_unsafe_fix(outcome: AnalyzerOutcome) -> None:
    finding = by_rule(outcome, "B006")
    assert (finding.line, finding.severity, finding.category) == (
        5,
        Severity.MEDIUM,
        Category.FUNCTIONALITY,
    )
    assert finding.existing_code == "def run(user_input, items=[]):"
    assert finding.improved_code == (
        "def run(user_input, items=None):\n    if items is None:\n        items = []"
    )
    assert "unsafe" in finding.comment


def test_results_on_unchanged_lines_are_dropped(outcome: AnalyzerOutcome) -> None:
    assert all(f.line is not None and f.line <= 10 for f in outcome.findings)
    assert not [f for f in outcome.findings if "json" in f.title]


def test_noise_rules_are_not_findings(outcome: AnalyzerOutcome) -> None:
    rules = {s for f in outcome.findings for s in f.sources}
    assert "bandit:B404" not in rules  # "import subprocess" is not a defect


def test_missing_analyzer_does_not_stop_the_others(tmp_path: Path) -> None:
    result = run_analyzers(
        {"a.py": SAMPLE.encode()},
        {"a.py": CHANGED},
        EVERY_FILE,
        executables={"bandit": tmp_path / "no-such-bandit"},
    )
    bandit = next(r for r in result.runs if r.name == "bandit")
    assert bandit.status == "missing" and "not found" in bandit.message
    assert run_of(result, "ruff") == "ok"
    assert by_rule(result, "S602").sources == ["ruff:S602"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("echo boom >&2; exit 3\n", "exited with code 3: boom"),
        ("echo 'this is not json'\n", "unreadable ruff output"),
        ("sleep 5\n", "timed out"),
    ],
)
def test_crashing_analyzer_fails_cleanly(tmp_path: Path, body: str, expected: str) -> None:
    fake = script(tmp_path, "ruff", body)
    result = run_analyzers(
        {"a.py": b"import os\n"},
        {"a.py": {1}},
        AnalyzerSettings(bandit=False, ast_grep=False, timeout=0.5),
        executables={"ruff": fake},
    )
    (run,) = result.runs
    assert run.status == "failed"
    assert expected in run.message
    assert result.findings == []


SARIF_TOOL = textwrap.dedent(
    """\
    import json, sys
    results = []
    for arg in sys.argv[1:]:
        results.append({
            "ruleId": "X1",
            "ruleIndex": 0,
            "level": "error",
            "message": {"text": "Risky call in " + arg},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": arg[2:]},
                "region": {"startLine": 2, "startColumn": 1, "endColumn": 12},
            }}],
            "fixes": [{"artifactChanges": [{
                "artifactLocation": {"uri": arg[2:]},
                "replacements": [{
                    "deletedRegion": {"startLine": 2, "startColumn": 5, "endColumn": 10},
                    "insertedContent": {"text": "safe_call"},
                }],
            }]}],
        })
    rules = [{"id": "X1", "properties": {"tags": ["security"]}}]
    print(json.dumps({"version": "2.1.0", "runs": [
        {"tool": {"driver": {"name": "myscan", "rules": rules}}, "results": results}
    ]}))
    """
)


def test_custom_sarif_analyzer(tmp_path: Path) -> None:
    tool = tmp_path / "myscan.py"
    tool.write_text(SARIF_TOOL)
    custom = CustomAnalyzer(
        name="myscan", command=[sys.executable, str(tool), "{files}"], globs=["*.py"]
    )
    files = {"src/a.py": b"import x\nx = risky(1)\n", "notes.txt": b"hello\n"}
    result = run_analyzers(
        files,
        {"src/a.py": {2}, "notes.txt": {1}},
        AnalyzerSettings(ruff=False, bandit=False, ast_grep=False, custom=[custom]),
    )
    (run,) = result.runs
    assert (run.name, run.status, run.files, run.findings) == ("myscan", "ok", 1, 1)
    (finding,) = result.findings
    assert finding.file == "src/a.py" and finding.line == 2
    assert finding.severity is Severity.HIGH
    assert finding.category is Category.SECURITY
    assert finding.sources == ["myscan:X1"]
    assert finding.existing_code == "x = risky(1)"
    assert finding.improved_code == "x = safe_call(1)"


def test_bad_sarif_fails_and_unmatched_globs_skip(tmp_path: Path) -> None:
    tool = tmp_path / "bad.py"
    tool.write_text("print('{not sarif')\n")
    bad = CustomAnalyzer(name="bad", command=[sys.executable, str(tool), "{files}"])
    unused = CustomAnalyzer(name="gotool", command=["true"], globs=["*.go"])
    result = run_analyzers(
        {"a.py": b"x = 1\n"},
        {"a.py": {1}},
        AnalyzerSettings(ruff=False, bandit=False, ast_grep=False, custom=[bad, unused]),
    )
    runs = {r.name: r for r in result.runs}
    assert runs["bad"].status == "failed" and "not SARIF" in runs["bad"].message
    assert runs["gotool"].status == "skipped"


def test_non_utf8_and_syntax_errors_do_not_crash() -> None:
    files = {
        "latin.py": b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'\n",
        "broken.py": b"def f(:\n    pass\n",
        "good.py": b"import os\n",
    }
    changed = {"latin.py": {1, 2}, "broken.py": {1, 2}, "good.py": {1}}
    result = run_analyzers(files, changed, EVERY_FILE)
    runs = {r.name: r for r in result.runs}
    # latin.py is handed to ruff as UTF-8 (its coding line honoured), so ruff reads all three;
    # bandit cannot parse broken.py and the run says so instead of "ok".
    assert (runs["ruff"].status, runs["ruff"].message) == ("ok", "")
    assert runs["bandit"].status == "partial"
    assert runs["bandit"].message.startswith("bandit could not check broken.py: ")
    syntax = [f for f in result.findings if f.file == "broken.py"]
    assert syntax and syntax[0].severity is Severity.HIGH and syntax[0].line == 1
    assert [f.rule_id for f in result.findings if f.file == "good.py"] == ["F401"]


def test_unsafe_paths_are_refused() -> None:
    files = {"../escape.py": b"x = 1\n", "/etc/abs.py": b"x = 1\n", "ok.py": b"import os\n"}
    changed = {path: {1} for path in files}
    result = run_analyzers(files, changed, AnalyzerSettings(bandit=False))
    assert {s.path for s in result.skipped} == {"../escape.py", "/etc/abs.py"}
    assert {f.file for f in result.findings} == {"ok.py"}


def test_file_named_like_an_option_is_a_file() -> None:
    result = run_analyzers({"-rf.py": b"import os\n"}, {"-rf.py": {1}}, EVERY_FILE)
    assert [r.status for r in result.runs] == ["ok", "ok", "ok"]
    assert [f.file for f in result.findings] == ["-rf.py"]


def test_secret_values_are_redacted_from_text() -> None:
    code = b'def connect():\n    password = "hunter2secret"\n    return password\n'
    result = run_analyzers({"db.py": code}, {"db.py": {2}}, EVERY_FILE)
    (finding,) = [f for f in result.findings if f.category is Category.SECURITY]
    assert finding.sources == ["ruff:S105", "bandit:B105"]
    assert "hunter2secret" in finding.existing_code
    assert "hunter2secret" not in finding.title + finding.comment
    bandit_only = run_analyzers({"db.py": code}, {"db.py": {2}}, AnalyzerSettings(ruff=False))
    (finding,) = bandit_only.findings
    assert "hunter2secret" not in finding.title + finding.comment
    # bandit quotes the value (masked), never the name: the title has no name to show.
    assert finding.title == "Possible hardcoded password"


def test_masking_hides_values_never_the_analyzers_words() -> None:
    # Literals that are also pieces of the message's own words ("passw" in "password").
    code = b'DB_PASSWORD = "passw"\npwd = "password"\ntoken = "hunter2"\n'
    result = run_analyzers({"db.py": code}, {"db.py": {1, 2, 3}}, EVERY_FILE)
    texts = [f.title + " " + f.comment for f in result.findings if f.category is Category.SECURITY]
    assert len(texts) == 3
    for text in texts:
        assert "***ord" not in text and "hardcoded ***" not in text
        assert "Possible hardcoded password" in text
        assert "hunter2" not in text


def test_a_title_is_not_repeated_as_the_body() -> None:
    result = run_analyzers({"m.py": b"print(undefined_thing)\n"}, {"m.py": {1}}, AnalyzerSettings())
    (finding,) = result.findings
    assert finding.title == "Undefined name `undefined_thing`"
    assert finding.title not in finding.comment
    assert finding.comment.startswith("This raises NameError")


def test_long_titles_are_cut_between_words() -> None:
    from redline.analyzers.base import RawResult
    from redline.analyzers.convert import to_findings

    words = "Something odd happens to the configuration value here " * 4
    raw = RawResult(tool="custom", rule="X1", file="m.py", line=1, end_line=1, message=words)
    (finding,) = to_findings([raw], {"m.py": SourceText("x = 1\n")}, {"m.py": {1}})
    assert finding.title.endswith("…") and len(finding.title) <= 100
    assert words.startswith(finding.title.removesuffix("…") + " ")


# --- pure parts ------------------------------------------------------------------------------


def test_apply_fix_partial_line_and_crlf() -> None:
    source = SourceText("import os, sys\r\nprint(sys)\r\n")
    fix = apply_fix(source, 1, 1, [Edit(1, 1, 1, 15, "import sys")])
    assert fix is not None
    assert (fix.line, fix.end_line, fix.existing_code, fix.improved_code) == (
        1,
        1,
        "import os, sys",
        "import sys",
    )


def test_apply_fix_widens_to_every_edited_line() -> None:
    source = SourceText("a = f(\n    1,\n)\nb = 2\n")
    fix = apply_fix(source, 1, 1, [Edit(1, 5, 3, 2, "g(1)")])
    assert fix is not None
    assert (fix.line, fix.end_line) == (1, 3)
    assert fix.existing_code == "a = f(\n    1,\n)"
    assert fix.improved_code == "a = g(1)"


def test_apply_fix_rejects_edits_that_do_not_fit() -> None:
    source = SourceText("x = 1\n")
    assert apply_fix(source, 1, 1, [Edit(5, 1, 6, 1, "")]) is None
    overlapping = [Edit(1, 1, 1, 4, "a"), Edit(1, 2, 1, 5, "b")]
    assert apply_fix(source, 1, 1, overlapping) is None


def test_source_text_lines_ignore_form_feeds() -> None:
    # str.splitlines() would split at \x0c and shift every later line number.
    source = SourceText("a\x0cb\nc\n")
    assert source.line_count == 2
    assert source.lines(2, 2) == "c"


def test_constant_shell_command_is_only_low() -> None:
    message = "`subprocess` call with `shell=True` seems safe, but may be changed in the future"
    assert rule_info("ruff", "S602", message).severity is Severity.LOW
    assert rule_info("bandit", "B602", "identified, security issue").severity is Severity.CRITICAL


def test_unknown_bandit_rule_keeps_bandit_rating() -> None:
    info = rule_info("bandit", "B999", "something", Severity.MEDIUM, 0.4)
    assert (info.severity, info.category, info.confidence) == (
        Severity.MEDIUM,
        Category.SECURITY,
        0.4,
    )


def test_sarif_parse_reads_message_strings() -> None:
    from redline.analyzers.sarif_command import parse

    log = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "t",
                        "rules": [{"id": "R", "messageStrings": {"m": {"text": "bad {0}"}}}],
                    }
                },
                "results": [
                    {
                        "ruleId": "R",
                        "message": {"id": "m", "arguments": ["thing"]},
                        "level": "note",
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": "file:///scratch/x%20y.py"},
                                    "region": {"startLine": 3},
                                }
                            }
                        ],
                    }
                ],
            }
        ],
    }
    report = parse(json.dumps(log).encode(), "t", Path("/scratch"))
    (result,) = report.results
    assert (result.file, result.line, result.message) == ("x y.py", 3, "bad thing")
    assert result.severity is Severity.LOW
