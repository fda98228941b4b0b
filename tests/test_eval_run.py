"""`redline eval` (issue 16): matching findings to planted bugs, the stage funnel, the case
repositories, and whole eval runs through the real CLI — offline, and with a scripted model on
127.0.0.1 that reports the planted bug (found at every stage) or whose verifier rejects it (lost
at "verified"). Mutants are hand-made (tests/eval_mutants.py)."""

from __future__ import annotations

import contextlib
import io
import json
import stat
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from eval_mutants import CART, CART_PY, cart_mutants, finding_for
from model_env import isolate_model_env
from redline.cli.main import main
from redline.eval import cases
from redline.eval.score import (
    ModelTrace,
    Truth,
    finding_matches,
    said_findings,
    stage_counts,
    totals,
)
from redline.eval.truth import CaseResult, Mutant, StageCounts
from redline.model import AnchorState, Category, Finding, Review, Severity

from gitrepo import GitRepo
from review_script import ReviewScript
from scripted_llm import ScriptedLLM


def _finding(file: str = CART, line: int | None = 6, code: str = "x = 1", **kw: Any) -> Finding:
    return Finding(
        id="RL-000000000000",
        file=file,
        line=line,
        end_line=kw.pop("end_line", line),
        severity=Severity.HIGH,
        category=Category.FUNCTIONALITY,
        title=kw.pop("title", "a bug"),
        comment="c",
        existing_code=code,
        sources=kw.pop("sources", ["model:openai/scripted"]),
        **kw,
    )


@pytest.fixture
def off_by_one() -> Mutant:
    m = cart_mutants()[0]
    assert m.bug.lines == (6,)
    return m


# --- matching --------------------------------------------------------------------------------


def test_a_finding_matches_within_one_line_or_by_quoting_the_planted_line(
    off_by_one: Mutant,
) -> None:
    truth = Truth.of(off_by_one)
    assert truth.texts == ("for i in range(len(items) + 1):",)
    for line in (5, 6, 7):
        assert finding_matches(truth, _finding(line=line)), line
    assert finding_matches(truth, _finding(line=2, end_line=5))  # a span ending next to it
    # Another line, and nothing quoted from the planted one: no match.
    assert not finding_matches(truth, _finding(line=8))
    assert not finding_matches(truth, _finding(line=None))
    # A quote of the planted line matches wherever the finding was placed (or not placed).
    quote = "    for i in range(len(items)  +  1):\n        result += items[i].price"
    assert finding_matches(truth, _finding(line=None, code=quote))
    assert finding_matches(truth, _finding(line=20, code="range(len(items) + 1)"))
    assert not finding_matches(truth, _finding(line=20, code="+ 1"))  # too short to be a quote
    assert not finding_matches(truth, _finding(line=None, code="   \n"))
    # The right line in the wrong file never matches.
    assert not finding_matches(truth, _finding(file="shop/other.py", line=6))
    assert not finding_matches(
        truth, _finding(file="shop/other.py", code="for i in range(len(items) + 1):")
    )


def test_what_the_model_said_is_read_from_its_raw_answer(off_by_one: Mutant) -> None:
    item = finding_for(off_by_one, existing_code="something else", line=7)
    single = json.dumps({"findings": [item], "need_context": [], "summary": ""})
    batch = json.dumps(
        {"files": [{"file": "other.py", "findings": [item]}, {"file": CART, "findings": [item]}]}
    )
    fenced = "Here you go:\n```json\n" + single + "\n```"
    # An answer the reviewer would reject (an unknown top-level key) still said what it said.
    rejected = json.dumps({"findings": [dict(item, file="")], "verdict": "bad"})
    for content in (single, batch, fenced, rejected):
        found = said_findings([content], CART)
        assert [(f.file, f.line) for f in found] == [(CART, 7)], content
    assert said_findings([None, "not json", "{}"], CART) == []


# --- the funnel ------------------------------------------------------------------------------


def _trace(contents: list[str], anchored: list[Finding]) -> ModelTrace:
    trace = ModelTrace()
    trace.add(CART, list(contents), anchored, ok=True)
    return trace


def _review(shown: list[Finding], dropped: list[Finding] | None = None) -> Review:
    return Review(
        task_id="t", scope="range", scope_label="r", repo="/r", findings=shown,
        dropped=dropped or [],
    )  # fmt: skip


def test_the_funnel_counts_where_the_planted_bug_was_lost(off_by_one: Mutant) -> None:
    truth = Truth.of(off_by_one)
    said = json.dumps({"findings": [finding_for(off_by_one)]})
    hit = _finding(line=6, code=off_by_one.bug.mutated, title="planted")
    miss = _finding(line=15, code="return None", title="other")

    everywhere = stage_counts(truth, _trace([said], [hit, miss]), _review([hit, miss]))
    assert everywhere == StageCounts(said=1, anchored=1, verified=1, shown=1)

    # Said with a wrong line but the planted line quoted; anchored elsewhere (a quote that
    # is not there): lost at anchoring.
    moved = json.dumps({"findings": [finding_for(off_by_one, line=40)]})
    lost = _finding(line=None, code="nothing like it", anchor=AnchorState.UNANCHORED)
    assert stage_counts(truth, _trace([moved], [lost]), _review([])) == StageCounts(said=1)

    # The verifier dropped it.
    dropped = stage_counts(truth, _trace([said], [hit]), _review([], dropped=[hit]))
    assert dropped == StageCounts(said=1, anchored=1)

    # Kept, then filtered before it was shown (severity threshold, a dismissal).
    assert stage_counts(truth, _trace([said], [hit]), _review([])) == StageCounts(
        said=1, anchored=1, verified=1
    )

    # An analyzer's finding on the line is shown, but it is not the model's: not in the funnel.
    analyzer = _finding(line=6, sources=["ruff:B007"])
    assert stage_counts(truth, _trace([], []), _review([analyzer])) == StageCounts()


def test_totals_recall_precision_f1_leave_errors_out(off_by_one: Mutant) -> None:
    def result(found: bool, findings: int, matching: int, error: str | None = None) -> CaseResult:
        return CaseResult(
            case_id="c", bug=off_by_one.bug, model="m", found=found, findings=findings,
            matching=matching, stages=StageCounts(1, 1, int(found), int(found)),
            anchoring={"exact": findings}, calls=4, tokens=100, cost=0.01, seconds=2.0,
            error=error,
        )  # fmt: skip

    t = totals([result(True, 2, 1), result(False, 2, 0), result(False, 0, 0, error="boom")], "m")
    assert (t.cases, t.errors, t.found) == (2, 1, 1)
    assert t.recall == 0.5 and t.precision == 0.25
    assert t.f1 == pytest.approx(2 * 0.5 * 0.25 / 0.75)
    assert t.stages == StageCounts(said=2, anchored=2, verified=1, shown=1)
    assert t.anchoring == {"exact": 4} and t.calls == 12 and t.seconds_per_case == 2.0
    assert totals([], "m").recall is None and totals([], "m").f1 is None


# --- the case repositories -------------------------------------------------------------------


@pytest.fixture
def cart_repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "user-repo")
    repo.write(CART, CART_PY)
    repo.write("README.md", "a cart\n")
    repo.commit("base")
    return repo


@pytest.fixture
def temp_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the eval's temporary directories go, so a test can see that none is left."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def _left(where: Path) -> list[Path]:
    """The eval's temporary directories still there (git's views, `redline-views-*`, are the
    review runner's own, shared and kept)."""
    return [p for p in where.iterdir() if p.name.startswith("redline-eval-")]


def test_each_case_is_one_commit_with_the_mutated_file_on_a_clone_of_head(
    cart_repo: GitRepo, temp_dirs: Path
) -> None:
    mutants = cart_mutants()
    with cases.case_workspace() as ws:
        base = cases.clone_head(ws, cart_repo.root)
        assert base == cart_repo.head()
        assert ws.source_files() == [(CART, CART_PY)]
        planted = cases.add_cases(ws, mutants)
        assert [c.case_id for c in planted] == [
            "c001-off_by_one", "c002-flipped_comparison", "c003-and_or_swap",
        ]  # fmt: skip
        clone = GitRepo.__new__(GitRepo)
        clone.root = ws.repo
        for case, m in zip(planted, mutants, strict=True):
            assert clone.git("diff", "--name-only", f"{case.base}..{case.head}") == f"{CART}\n"
            assert clone.git("show", f"{case.head}:{CART}") == m.source
            assert case.scope.arg == f"{base}..{case.head}"
        assert ws.repo.is_dir()
    assert _left(temp_dirs) == []
    # The user's repository is untouched: no branch, no commit.
    assert cart_repo.git("branch", "--list").split() == ["*", "main"]


def test_the_workspace_is_removed_on_ctrl_c(temp_dirs: Path) -> None:
    with pytest.raises(KeyboardInterrupt), cases.case_workspace() as ws:
        cases.commit_files(ws, [(CART, CART_PY)])
        cases.add_cases(ws, cart_mutants()[:1])
        raise KeyboardInterrupt
    assert _left(temp_dirs) == []


# --- whole runs through the CLI --------------------------------------------------------------


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> list[Mutant]:
    """The generator replaced by the hand-made mutants."""
    mutants = cart_mutants()

    def generate(files: list[tuple[str, str]], *, seed: int, limit: int | None) -> list[Mutant]:
        assert (CART, CART_PY) in files
        return mutants[:limit]

    monkeypatch.setattr(cases, "generate_mutants", generate)
    return mutants


def _eval(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["eval", "--quiet", *args])
    return code, out.getvalue()


def _saved(data: dict[str, Any]) -> dict[str, Any]:
    path = Path(data["path"])
    assert path.parent.name == "evals" and path.name == f"{data['eval_id']}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    saved: dict[str, Any] = json.loads(path.read_text())
    return saved


def test_an_offline_eval_scores_the_analyzers_and_saves_the_run(
    cart_repo: GitRepo,
    planted: list[Mutant],
    temp_dirs: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    isolate_model_env(monkeypatch, tmp_path)
    code, out = _eval("--repo", str(cart_repo.root), "--cases", "3", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["cases"] == 3 and data["models"] == ["offline"]
    (t,) = data["totals"]
    assert t["cases"] == 3 and t["errors"] == 0 and t["calls"] == 0
    assert [r["case_id"] for r in data["results"]] == [
        "c001-off_by_one", "c002-flipped_comparison", "c003-and_or_swap",
    ]  # fmt: skip
    saved = _saved(data)
    assert saved["eval_id"] == data["eval_id"] and saved["results"] == data["results"]
    assert Path(data["path"]).is_relative_to(tmp_path / "cache")
    assert _left(temp_dirs) == []

    code, table = _eval("--repo", str(cart_repo.root), "--cases", "2")
    assert code == 0
    assert "| analyzers | 2 | 0 |" in table and "| off_by_one | 0/1 |" in table
    assert "Recall by language (found / cases):" in table and "| python | 0/2 |" in table
    assert "results saved to" in table

    code, plan = _eval("--repo", str(cart_repo.root), "--cases", "2", "--estimate")
    assert code == 0 and "Nothing was sent" in plan


def test_bad_input_exits_2(cart_repo: GitRepo, tmp_path: Path) -> None:
    assert _eval("--repo", str(cart_repo.root), "--cases", "0")[0] == 2
    assert _eval("--repo", str(tmp_path / "missing"))[0] == 2
    empty = GitRepo(tmp_path / "empty")
    empty.write("notes.txt", "nothing to mutate\n")
    empty.commit()
    assert _eval("--repo", str(empty.root))[0] == 2  # no source file: nothing to plant


class PlantedScript(ReviewScript):
    """A reviewer that reports each case's planted bug (the one whose mutated line is in its
    prompt), with the planted line's file line number and quote."""

    def __init__(self, mutants: list[Mutant], **kw: Any) -> None:
        super().__init__(**kw)
        self.mutants = mutants

    def _reviewer(self, text: str, path: str) -> dict[str, Any]:
        found = [finding_for(m) for m in self.mutants if m.bug.mutated in text]
        return {"findings": found, "need_context": [], "summary": "reviewed"}


def _model_eval(
    repo: GitRepo, script: ReviewScript, models: tuple[str, ...] = ("openai/scripted",)
) -> tuple[int, dict[str, Any]]:
    with ScriptedLLM(handler=script) as llm:
        flags = [a for m in models for a in ("--model", m)]
        code, out = _eval(
            "--repo", str(repo.root), "--cases", "3", "--format", "json",
            *flags, "--api-base", llm.base_url,
        )  # fmt: skip
    return code, json.loads(out)


def test_a_model_that_reports_the_planted_line_is_found_at_every_stage(
    cart_repo: GitRepo,
    planted: list[Mutant],
    temp_dirs: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    isolate_model_env(monkeypatch, tmp_path)
    script = PlantedScript(planted)
    # Two models side by side on the same cases (the same scripted server answers both).
    code, data = _model_eval(cart_repo, script, ("openai/scripted", "openai/second"))
    assert code == 0
    assert data["models"] == ["openai/scripted", "openai/second"]
    for t in data["totals"]:
        assert t["cases"] == 3 and t["errors"] == 0
        assert t["recall"] == 1.0 and t["precision"] == 1.0 and t["f1"] == 1.0
        assert t["stages"] == {"said": 3, "anchored": 3, "verified": 3, "shown": 3}
        assert t["anchoring"] == {"exact": 3}
        assert t["calls"] >= 3 * 3 and t["tokens"] > 0  # planner, reviewer, verifier per case
    assert script.count("reviewer") == 6
    assert [(r["case_id"][:4], r["model"]) for r in data["results"][:2]] == [
        ("c001", "openai/scripted"), ("c001", "openai/second"),
    ]  # fmt: skip
    assert all(r["found"] and r["error"] is None for r in data["results"])
    assert _saved(data)["totals"] == data["totals"]
    assert _left(temp_dirs) == []


def test_a_finding_the_verifier_rejects_is_lost_at_verified(
    cart_repo: GitRepo,
    planted: list[Mutant],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    isolate_model_env(monkeypatch, tmp_path)
    script = PlantedScript(planted, verdicts={"planted": "INCORRECT"})
    code, data = _model_eval(cart_repo, script)
    assert code == 0
    (t,) = data["totals"]
    assert t["recall"] == 0.0 and t["precision"] is None
    assert t["stages"] == {"said": 3, "anchored": 3, "verified": 0, "shown": 0}


def test_a_model_that_cannot_be_used_exits_3_and_is_not_tried_again(
    cart_repo: GitRepo,
    planted: list[Mutant],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    isolate_model_env(monkeypatch, tmp_path, user_config="[llm]\nmax_retries = 0\ntimeout = 5\n")
    code, out = _eval(
        "--repo", str(cart_repo.root), "--cases", "2", "--format", "json",
        "--model", "openai/scripted", "--api-base", "http://127.0.0.1:9/v1",
    )  # fmt: skip
    assert code == 3
    data = json.loads(out)
    errors = [r["error"] for r in data["results"]]
    assert errors[0] and not errors[0].startswith("not run")
    assert errors[1].startswith("not run: ")
    assert data["totals"][0]["errors"] == 2 and data["totals"][0]["recall"] is None


def test_the_bundled_source_commits_the_corpus_and_redline_sources_only_when_mutated(
    monkeypatch: pytest.MonkeyPatch, temp_dirs: Path, tmp_path: Path
) -> None:
    isolate_model_env(monkeypatch, tmp_path)
    own = [("server/redline/tiny.py", "def f(x):\n    return x\n")]
    monkeypatch.setattr(cases, "bundled_files", lambda: ([(CART, CART_PY)], own))
    mutants = cart_mutants()
    monkeypatch.setattr(cases, "generate_mutants", lambda files, seed, limit: mutants[:limit])
    code, out = _eval("--corpus", "bundled", "--cases", "2", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["source"] == "bundled corpus" and data["cases"] == 2
    assert _left(temp_dirs) == []
    # The base holds Redline's own sources only when a mutant was planted in one.
    assert cases.bundled_base(mutants, [(CART, CART_PY)], own) == [(CART, CART_PY)]
    theirs = Mutant(bug=replace(mutants[0].bug, file=own[0][0]), source="def f(x):\n    return\n")
    assert cases.bundled_base([theirs], [(CART, CART_PY)], own) == [(CART, CART_PY), *own]


def test_run_eval_takes_each_reviews_client_from_a_hook(
    cart_repo: GitRepo, planted: list[Mutant], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The internal API the oracle uses: run_eval with a per-review `client` (and `on_file`)."""
    from redline.agent.llm import LLMClient
    from redline.config_models import AnalyzerSettings, LLMSettings, ModelSettings, Settings
    from redline.eval.run import Target, run_eval

    isolate_model_env(monkeypatch, tmp_path)
    seen: list[tuple[str, str]] = []
    with ScriptedLLM(handler=PlantedScript(planted)) as llm, cases.case_workspace() as ws:
        cases.clone_head(ws, cart_repo.root)
        planted_cases = cases.add_cases(ws, planted[:2])
        settings = Settings(
            models=ModelSettings(model="openai/scripted", api_base=llm.base_url, api_key="k"),
            llm=LLMSettings(max_retries=0, timeout=20),
            analyzers=AnalyzerSettings(ruff=False, bandit=False),
        )

        def hooks(target: Target, case: cases.Case) -> dict[str, Any]:
            on_file = lambda review: seen.append((case.case_id, review.path))  # noqa: E731
            return {"client": LLMClient(target.settings), "on_file": on_file}

        run = run_eval(planted_cases, [Target.of(settings)], source="t", seed=0, model_hooks=hooks)
    assert [r.found for r in run.results] == [True, True]
    assert [r.stages for r in run.results] == [StageCounts(1, 1, 1, 1)] * 2
    assert seen == [("c001-off_by_one", CART), ("c002-flipped_comparison", CART)]


def test_the_bundled_corpus_runs_offline_through_the_cli(
    monkeypatch: pytest.MonkeyPatch, temp_dirs: Path, tmp_path: Path
) -> None:
    """What a new user runs first: no repository, no model. Every operator is planted, in
    the corpus's languages, each case reviewed by the analyzers; the injection planted in
    Python code is one they catch."""
    from redline.eval.truth import ALL_OPERATORS

    isolate_model_env(monkeypatch, tmp_path)
    code, out = _eval("--corpus", "bundled", "--cases", "42", "--seed", "3", "--format", "json")
    assert code == 0
    data = json.loads(out)
    results = data["results"]
    assert len(results) == 42
    assert {r["bug"]["operator"] for r in results} == set(ALL_OPERATORS)
    assert {r["bug"]["language"] for r in results} >= {"python", "javascript", "go"}
    assert all(r["error"] is None and r["model"] == "offline" for r in results)
    # The analyzers' recall is what they found, case by case.
    found = sum(r["found"] for r in results)
    assert data["totals"][0]["recall"] == pytest.approx(found / 42)
    # Recall per language adds up to the same cases and finds.
    by_language = data["by_language"]["offline"]
    assert set(by_language) == {r["bug"]["language"] for r in results}
    assert sum(v["cases"] for v in by_language.values()) == 42
    assert sum(v["found"] for v in by_language.values()) == found
    for language, v in by_language.items():
        mine = [r for r in results if r["bug"]["language"] == language]
        assert v == {"found": sum(r["found"] for r in mine), "cases": len(mine)}
    assert _saved(data)["results"] == results
    assert _left(temp_dirs) == []


def test_a_model_without_a_price_is_unpriced_in_the_eval_table_never_zero(
    cart_repo: GitRepo, planted: list[Mutant], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_model_env(monkeypatch, tmp_path)
    with ScriptedLLM(handler=PlantedScript(planted)) as llm:
        code, table = _eval(
            "--repo", str(cart_repo.root), "--cases", "1",
            "--model", "openai/scripted", "--api-base", llm.base_url,
        )  # fmt: skip
    assert code == 0
    header = next(line for line in table.splitlines() if line.startswith("| model |"))
    rows = [line for line in table.splitlines() if line.startswith("| openai/scripted |")]
    column = [c.strip() for c in header.split("|")].index("cost")
    assert rows and all(r.split("|")[column].strip() == "unpriced" for r in rows), table
    assert "$0.0000" not in table
