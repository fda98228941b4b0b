"""A suggested fix never keeps a worse defect (issue 24).

On `cur.execute("... '%s'" % name)` ruff offers UP031's rewrite to `.format(name)`, an Info
finding whose fix keeps the High SQL injection on the same line. Such a fix is withheld where
findings are finalised (review/fix_guard.py), so no output offers it: not the report, not
SARIF, not json-simple, not a GitHub suggestion. The finding stays and says why it has no fix.
A fix on lines no worse finding touches (the mutable default) is still offered. The language
server's side is in tests/test_lsp_fix_guard.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from markdown_oracle import suggestion_fences
from output_bed import cli_env, redline
from redline.model import Category, Finding, FixState, Severity
from redline.review.fix_guard import withhold_worse_fixes

from forge_bed import github_forge
from gitrepo import GitRepo

SLUG = "acme/widgets"
BASE = "def ok():\n    return 1\n"
FEATURE = '''\
def ok():
    return 1


def lookup(cur, name):
    cur.execute("SELECT * FROM users WHERE name = '%s'" % name)
    return cur.fetchall()


def collect(seen=[]):
    """Names seen so far."""
    return seen
'''
MUTABLE_LINE = 10
SQL_LINE = 6
FORMAT_FIX = ".format(name)"


def sql_repo(root: Path) -> GitRepo:
    repo = GitRepo(root)
    repo.write("app.py", BASE)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", FEATURE)
    repo.commit("feature")
    repo.git("remote", "add", "origin", f"https://github.com/{SLUG}.git")
    return repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    return sql_repo(tmp_path_factory.mktemp("sql") / "repo")


def review(tmp_path: Path, repo: GitRepo, fmt: str) -> str:
    run = redline(tmp_path, "review", "--repo", str(repo.root), "--branch", "main", "--quiet",
                  "--format", fmt)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    return run.stdout


def test_markdown_keeps_the_finding_and_says_why_it_has_no_fix(
    tmp_path: Path, repo: GitRepo
) -> None:
    md = review(tmp_path, repo, "markdown")
    assert f"`app.py:{SQL_LINE}` — Possible SQL injection" in md
    assert f"`app.py:{SQL_LINE}` — Use format specifiers instead of percent format" in md
    assert FORMAT_FIX not in md
    assert "No fix offered" in md and "Possible SQL injection" in md.split("No fix offered")[1]
    # The unsafe-fix sentence went with the fix it was about; the mutable default keeps both.
    assert md.count("The suggested fix is marked unsafe") == 1
    assert "def collect(seen=None):" in md


def test_sarif_offers_no_fix_that_keeps_the_injection(tmp_path: Path, repo: GitRepo) -> None:
    results = json.loads(review(tmp_path, repo, "sarif"))["runs"][0]["results"]
    by_rule = {r["ruleId"]: r for r in results}
    assert "fixes" not in by_rule["UP031"]
    assert FORMAT_FIX not in json.dumps(by_rule["UP031"])
    assert "No fix offered" in by_rule["UP031"]["message"]["text"]
    assert "fixes" in by_rule["B006"]


def test_json_outputs_carry_no_improved_code_for_it(tmp_path: Path, repo: GitRepo) -> None:
    items = json.loads(review(tmp_path, repo, "json-simple"))
    up031 = [i for i in items if "percent format" in i["suggestionContent"]]
    assert len(up031) == 1 and up031[0]["improvedCode"] is None
    full = json.loads(review(tmp_path, repo, "json"))
    [finding] = [f for f in full["findings"] if f["rule_id"] == "UP031"]
    assert finding["improved_code"] is None


def test_post_inline_suggests_no_format_rewrite(tmp_path: Path, repo: GitRepo) -> None:
    forge = github_forge(tmp_path / "forge", repo, SLUG, valid={"app.py": list(range(1, 14))})
    env = cli_env(tmp_path, {"REDLINE_GH": str(forge.root / "gh")})
    run = redline(
        tmp_path, "review", "--repo", str(repo.root), "--pr", "7", "--quiet",
        "--post", "--inline", "--dry-run", env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert FORMAT_FIX not in run.stderr + run.stdout
    bodies = _bodies(run.stderr)
    suggestions = [s.content for b in bodies for s in suggestion_fences(b)]
    # Only the mutable default's fix becomes a one-click suggestion.
    assert len(suggestions) == 1 and "seen=None" in suggestions[0]


def _bodies(stderr: str) -> list[str]:
    out: list[str] = []
    decoder = json.JSONDecoder()
    at = 0
    while (start := stderr.find("\n{", at)) != -1:
        try:
            data, end = decoder.raw_decode(stderr, start + 1)
        except ValueError:
            at = start + 1
            continue
        at = end
        out += [data["body"]] if "body" in data else []
        out += [c["body"] for c in data.get("comments", [])]
    return out


# -- the rule itself -----------------------------------------------------------------------------


def _finding(
    fid: str, line: int, end: int, severity: Severity, improved: str | None = None
) -> Finding:
    return Finding(
        id=fid, file="a.py", line=line, end_line=end, severity=severity,
        category=Category.QUALITY, title=fid, comment="c", existing_code="x",
        improved_code=improved, sources=["ruff:X1"], rule_id="X1",
    )  # fmt: skip


def test_a_fix_is_withheld_only_under_a_more_severe_unresolved_finding() -> None:
    high = _finding("high", 5, 5, Severity.HIGH)
    info = _finding("info", 4, 6, Severity.INFO, "y")
    same = _finding("same", 5, 5, Severity.HIGH, "z")
    apart = _finding("apart", 7, 9, Severity.LOW, "w")
    out = {f.id: f for f in withhold_worse_fixes([high, info, same, apart])}
    assert out["info"].improved_code is None and out["info"].fix is FixState.UNCHECKED
    assert "No fix offered" in out["info"].comment and "line 5" in out["info"].comment
    assert out["same"].improved_code == "z"  # as severe as the other: its fix stays
    assert out["apart"].improved_code == "w"  # no overlap


def test_a_fix_that_is_the_worse_findings_own_fix_stays() -> None:
    high = _finding("high", 5, 5, Severity.HIGH, "safe()")
    low = _finding("low", 5, 5, Severity.LOW, "safe()")
    deletion = _finding("del", 4, 6, Severity.LOW, "")
    out = {f.id: f for f in withhold_worse_fixes([high, low, deletion])}
    assert out["low"].improved_code == "safe()"
    assert out["del"].improved_code == ""  # deleting the lines removes the worse code too


# -- generated findings --------------------------------------------------------------------------

_SEVERITIES = list(Severity)


@st.composite
def findings(draw: st.DrawFn) -> list[Finding]:
    out = []
    for i in range(draw(st.integers(0, 8))):
        line = draw(st.one_of(st.none(), st.integers(1, 20)))
        end = None if line is None else line + draw(st.integers(0, 3))
        improved = draw(st.one_of(st.none(), st.sampled_from(["", "a()", "b()"])))
        f = _finding(f"f{i}", 1, 1, draw(st.sampled_from(_SEVERITIES)), improved)
        out.append(f.model_copy(update={"line": line, "end_line": end}))
    return out


def _overlap(a: Finding, b: Finding) -> bool:
    if a.line is None or b.line is None:
        return False
    return a.line <= (b.end_line or b.line) and b.line <= (a.end_line or a.line)


@given(findings())
def test_no_fix_left_keeps_a_worse_finding_and_nothing_else_changes(found: list[Finding]) -> None:
    out = withhold_worse_fixes(found)
    assert [f.id for f in out] == [f.id for f in found]
    for before, after in zip(found, out, strict=True):
        assert (after.line, after.end_line, after.severity) == (
            before.line, before.end_line, before.severity,
        )  # fmt: skip
        if after.improved_code is None and before.improved_code is not None:
            assert "No fix offered" in after.comment
        if after.improved_code is None:
            continue
        assert after.improved_code == before.improved_code
        for other in out:
            if other is after or not _overlap(after, other):
                continue
            if other.severity.rank > after.severity.rank:
                own = (other.line, other.end_line, other.improved_code) == (
                    after.line, after.end_line, after.improved_code,
                )  # fmt: skip
                assert after.line is not None and other.line is not None
                after_end, other_end = after.end_line or after.line, other.end_line or other.line
                within = after.line <= other.line and other_end <= after_end
                assert own or (after.improved_code.strip() == "" and within)
    assert withhold_worse_fixes(out) == out  # once is enough: the rule is settled
