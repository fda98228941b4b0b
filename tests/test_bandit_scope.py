"""Which files bandit runs on (`analyzers.bandit_scope`), what the coverage says about it, the
ruff+bandit merge of one check reported on different lines of a statement, and the fix verdict
asked of the statements around a fix: against real ruff and bandit processes."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from redline import config
from redline.analyzers import AnalyzerOutcome, run_analyzers, statements
from redline.analyzers.base import RawResult
from redline.analyzers.convert import to_findings
from redline.analyzers.fixes import SourceText
from redline.analyzers.statements import FixChecker, Statements
from redline.config_models import AnalyzerSettings
from redline.model import AnalyzerRun, Finding, FixState
from redline.review.fix_check import fix_state

from gitrepo import GitRepo
from real_clients import REDLINE, client_env

# SQL built in a list, not in a query call: bandit's B608 sees it, ruff's S608 does not (the
# shape of CPython's sqlite3/dump.py). A `shell=<variable>` call: bandit's B602, not ruff's.
DUMP = textwrap.dedent(
    """\
    import subprocess


    def dump(rows):
        return [
            f'INSERT INTO "seq" VALUES(\\'{row[0]}\\',{row[1]})'
            for row in rows
        ]


    def start(args, shell):
        return subprocess.Popen(args, shell=shell)
    """
)
# Nothing that any of bandit's checks beyond ruff's fires on; ruff still finds the unused
# variable and the swallowed exception (S110, a check both tools have).
PLAIN = textwrap.dedent(
    """\
    def total(items):
        unused = 0
        try:
            return sum(items)
        except Exception:
            pass
    """
)
# flask 2.0's tests/conftest.py: bandit puts B106 on the call's first line, ruff S106 on the
# keyword two lines down.
CONFTEST = textwrap.dedent(
    """\
    def app(Flask):
        app = Flask("flask_test")
        app.config.update(
            TESTING=True,
            SECRET_KEY="test key",
        )
        return app
    """
)


def _all_lines(files: dict[str, str]) -> dict[str, set[int]]:
    return {path: set(range(1, text.count("\n") + 2)) for path, text in files.items()}


def _run(files: dict[str, str], settings: AnalyzerSettings, **kwargs: object) -> AnalyzerOutcome:
    return run_analyzers(
        {path: text.encode() for path, text in files.items()},
        _all_lines(files),
        settings,
        **kwargs,  # type: ignore[arg-type]
    )


def _runs(outcome: AnalyzerOutcome) -> dict[str, AnalyzerRun]:
    return {r.name: r for r in outcome.runs}


def _sources(outcome: AnalyzerOutcome, path: str) -> list[list[str]]:
    return [f.sources for f in outcome.findings if f.file == path]


# --- bandit_scope ----------------------------------------------------------------------------


def test_default_runs_bandit_where_its_own_checks_can_fire_and_says_so() -> None:
    outcome = _run({"db/dump.py": DUMP, "util.py": PLAIN}, AnalyzerSettings())
    bandit = _runs(outcome)["bandit"]
    assert (bandit.status, bandit.files) == ("partial", 1)
    assert bandit.message == "ran on 1 of 2 Python files; ruff's S rules cover the rest"
    # bandit's unique checks on the file it ran on: SQL built in a list, shell=<variable>.
    dump = _sources(outcome, "db/dump.py")
    assert ["bandit:B608"] in dump and ["bandit:B602"] in dump
    # The plain file is ruff's alone, and ruff's findings there are what they always were.
    plain = _run({"util.py": PLAIN}, AnalyzerSettings(bandit=False))
    assert _sources(outcome, "util.py") == [["ruff:F841"], ["ruff:S110"]]
    assert [f for f in outcome.findings if f.file == "util.py"] == plain.findings
    assert _runs(outcome)["ruff"].files == 2 and _runs(outcome)["ruff"].status == "ok"


def test_no_file_for_bandit_is_a_skipped_run_with_the_reason() -> None:
    outcome = _run({"util.py": PLAIN}, AnalyzerSettings())
    bandit = _runs(outcome)["bandit"]
    assert (bandit.status, bandit.files, bandit.findings) == ("skipped", 0, 0)
    assert bandit.message == "not needed: ruff's S rules cover these files"


def test_bandit_scope_all_restores_every_file() -> None:
    outcome = _run({"db/dump.py": DUMP, "util.py": PLAIN}, AnalyzerSettings(bandit_scope="all"))
    bandit = _runs(outcome)["bandit"]
    assert (bandit.status, bandit.files, bandit.message) == ("ok", 2, "")
    # bandit now also sees the plain file: its S110 agrees with ruff's, one merged finding.
    assert _sources(outcome, "util.py") == [["ruff:F841"], ["ruff:S110", "bandit:B110"]]


def test_security_sensitive_scope_follows_the_tagged_files() -> None:
    files = {"auth/session.py": PLAIN, "util.py": PLAIN}
    settings = AnalyzerSettings(bandit_scope="security_sensitive")
    outcome = _run(files, settings, security_sensitive={"auth/session.py"})
    bandit = _runs(outcome)["bandit"]
    assert (bandit.status, bandit.files) == ("partial", 1)
    assert "security-sensitive" in bandit.message
    assert _sources(outcome, "auth/session.py")[-1] == ["ruff:S110", "bandit:B110"]
    assert _sources(outcome, "util.py")[-1] == ["ruff:S110"]
    # Tags not known (a caller that does not pass them): every file, as before.
    assert _runs(_run(files, settings))["bandit"].files == 2


@pytest.mark.parametrize("scope", ["security_sensitive", "beyond_ruff"])
def test_a_review_runs_bandit_on_the_file_that_needs_it_and_its_report_says_so(
    tmp_path: Path, scope: str
) -> None:
    # Through the CLI: the pipeline hands the units' security_sensitive tags to the analyzers.
    repo = GitRepo(tmp_path / "r")
    repo.write("README.md", "base\n")
    repo.commit("base")
    repo.write("db/dump.py", DUMP)
    repo.write("util.py", PLAIN)
    proc = subprocess.run(
        [str(REDLINE), "review", "--repo", str(repo.root), "--format", "json"],
        # Which files bandit runs on is the user's setting (a repository file may not set it).
        env=client_env(tmp_path, REDLINE_BANDIT_SCOPE=scope),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    review = json.loads(proc.stdout)
    runs = {run["name"]: run for run in review["coverage"]["analyzers"]}
    assert (runs["bandit"]["status"], runs["bandit"]["files"]) == ("partial", 1)
    assert "ran on 1 of 2 Python files" in runs["bandit"]["message"]
    sources = {(f["file"], tuple(f["sources"])) for f in review["findings"]}
    assert ("db/dump.py", ("bandit:B608",)) in sources
    assert ("util.py", ("ruff:S110",)) in sources


def test_without_ruffs_security_rules_bandit_runs_everywhere() -> None:
    for settings in (AnalyzerSettings(ruff=False), AnalyzerSettings(ruff_select=["F", "E9"])):
        bandit = _runs(_run({"util.py": PLAIN}, settings))["bandit"]
        assert (bandit.status, bandit.files, bandit.message) == ("ok", 1, "")


def test_bandit_scope_is_a_setting_and_an_environment_variable(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text('[analyzers]\nbandit_scope = "all"\n')
    loaded = config.load_settings(tmp_path, environ={}, user_file=user)
    assert loaded.settings.analyzers.bandit_scope == "all"
    env = {"REDLINE_BANDIT_SCOPE": "security_sensitive"}
    loaded = config.load_settings(tmp_path, environ=env, user_file=user)
    assert loaded.settings.analyzers.bandit_scope == "security_sensitive"
    assert AnalyzerSettings().bandit_scope == "beyond_ruff"
    with pytest.raises(config.ConfigError):
        config.load_settings(tmp_path, environ={"REDLINE_BANDIT_SCOPE": "some"}, user_file=user)


def test_bandit_chunks_run_side_by_side_and_find_the_same() -> None:
    # Enough files for one chunk per core: the findings are those of one bandit process.
    files = {f"pkg/m{i}.py": DUMP for i in range(24)}
    outcome = _run(files, AnalyzerSettings(ruff=False))
    assert _runs(outcome)["bandit"].files == 24
    assert all(
        sorted(map(tuple, _sources(outcome, path))) == [("bandit:B602",), ("bandit:B608",)]
        for path in files
    )


# --- one check, two tools, two lines of one statement ------------------------------------------


def test_one_statement_two_lines_two_tools_is_one_finding() -> None:
    files = {"tests/conftest.py": CONFTEST}
    both = _run(files, AnalyzerSettings(bandit_scope="all"))
    (finding,) = both.findings
    assert finding.sources == ["ruff:S106", "bandit:B106"]
    # Independent evidence: 1 - (1 - 0.6)(1 - 0.6), each tool's own confidence for S106.
    ruff_only = _run(files, AnalyzerSettings(bandit=False)).findings[0]
    bandit_only = _run(files, AnalyzerSettings(ruff=False)).findings[0]
    expected = 1 - (1 - ruff_only.confidence) * (1 - bandit_only.confidence)
    assert finding.confidence == pytest.approx(expected, abs=1e-3)
    # Where ruff points (the keyword's line), and with ruff's id: the same finding whether or
    # not bandit ran on the file.
    assert (bandit_only.line, ruff_only.line) == (3, 5)
    assert (finding.line, finding.end_line) == (5, 5)
    assert finding.id == ruff_only.id
    assert _runs(both)["ruff"].findings == 1 and _runs(both)["bandit"].findings == 1


def _raw(tool: str, rule: str, line: int, end_line: int | None = None) -> RawResult:
    return RawResult(tool, rule, "m.py", line, end_line or line, f"{rule} message")


def _fused(source: str, *raws: RawResult) -> list[Finding]:
    text = SourceText(source)
    return to_findings(raws, {"m.py": text}, {"m.py": set(range(1, text.line_count + 1))})


def test_different_statements_do_not_merge() -> None:
    source = textwrap.dedent(
        """\
        import subprocess
        subprocess.run(a, shell=True)
        subprocess.run(
            b,
            shell=True)
        """
    )
    # ruff on line 2, bandit on the call of lines 3-5: two statements, two findings.
    findings = _fused(source, _raw("ruff", "S602", 2), _raw("bandit", "B602", 3, 5))
    assert [f.sources for f in findings] == [["ruff:S602"], ["bandit:B602"]]
    # A compound statement's header and a statement of its body are not one statement.
    source = "with open(p) as f:\n    exec(f.read())\n"
    findings = _fused(source, _raw("ruff", "S102", 1), _raw("bandit", "B102", 2))
    assert len(findings) == 2
    # Different checks on one statement stay apart too.
    findings = _fused(CONFTEST, _raw("ruff", "S106", 5), _raw("bandit", "B105", 3, 6))
    assert len(findings) == 2


def test_same_statement_merge_is_one_to_one_and_needs_a_parse() -> None:
    source = textwrap.dedent(
        """\
        connect(
            password="a1",
            token="b2",
        )
        """
    )
    raws = (
        _raw("ruff", "S106", 2),
        _raw("ruff", "S106", 3),
        _raw("bandit", "B106", 1, 4),
    )
    findings = _fused(source, *raws)
    assert sorted(map(len, (f.sources for f in findings))) == [1, 2]
    # A file that does not parse has no statements to go by: nothing merges.
    assert len(_fused(source + "def (:\n", *raws[:1], raws[2])) == 2


# --- the fix verdict, from the statements around the fix ---------------------------------------

MODULE = textwrap.dedent(
    '''\
    """Doc."""
    import os


    class Report:
        """A report."""

        @property
        def name(self):
            return "%s" % self.title

        def render(self, rows):
            out = []
            for row in rows:
                out.append(
                    "%s: %s" % (row.key,
                                row.value)
                )
            return out


    TEMPLATE = """
    x = %s
    """ % 1
    '''
)


@pytest.mark.parametrize(
    ("line", "end_line", "improved"),
    [
        (10, 10, '        return f"{self.title}"'),  # in a method
        (16, 17, '                    f"{row.key}: {row.value}"'),  # continuation lines
        (10, 10, '        return f"{self.title"'),  # breaks the file
        (10, 10, "    return 1"),  # dedented into the class body: the file still parses
        (10, 10, "return 1"),  # dedented to the top: `self` lines below no longer fit
        (9, 9, "    x = 1"),  # replaces a decorated def: the decorator has nothing left
        (13, 13, "            out = ["),  # opens a bracket the file never closes
        (23, 23, "x = {}"),  # inside a string at column 0
        (2, 2, ""),  # deletes a top-level line
        (13, 13, ""),  # deletes a statement of a block
        (24, 24, '""".format(1)'),
    ],
)
def test_fix_verdict_from_the_run_is_the_whole_files(
    line: int, end_line: int, improved: str
) -> None:
    source = SourceText(MODULE)
    whole = fix_state("m.py", MODULE, line, end_line, improved)
    checker = FixChecker(Statements({"m.py": source}))
    assert checker.verdict("m.py", source, line, end_line, improved) is whole
    assert whole in (FixState.PARSES, FixState.DOES_NOT_PARSE)


def test_a_fix_that_parses_is_told_without_parsing_the_whole_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def whole_file(*args: object) -> FixState:
        raise AssertionError("parsed the whole file")

    monkeypatch.setattr(statements, "fix_state", whole_file)
    source = SourceText(MODULE)
    checker = FixChecker(Statements({"m.py": source}))
    for line, end_line, improved in [
        (10, 10, '        return f"{self.title}"'),
        (16, 17, '                    f"{row.key}: {row.value}"'),
        (2, 2, ""),
    ]:
        assert checker.verdict("m.py", source, line, end_line, improved) is FixState.PARSES


def test_the_trigger_scan_agrees_with_the_whole_pattern() -> None:
    """may_find_beyond_ruff searches only around trigger words: same answer as the pattern
    run over the whole text, on texts where the match is first, last, wrapped or absent."""
    from redline.analyzers.bandit import UNIQUE_CHECK_TRIGGER, may_find_beyond_ruff

    texts = [
        "subprocess.run(cmd, shell=flag)",
        "x = 1\nsubprocess.run(cmd, shell=flag)",
        "subprocess.run(cmd, shell=True)\n",
        "cur.execute('SELECT a FROM t WHERE b=' + b)\ny = 2\n",
        "q = 'INSERT\n INTO t VALUES (1)'",
        "os.chmod(path, 0o755)",
        "value = random.choice(items)",
        "Update the docs; select a shell script; no calls here.\n",
        "data = urlopen(url)",
        "model = torch.load(f)",
        "def f():\n    return 1\n",
        "İstanbul = 'select x from y'",  # lower() changes the length: the plain search
    ]
    for text in texts:
        assert may_find_beyond_ruff(text) == (UNIQUE_CHECK_TRIGGER.search(text) is not None), text
