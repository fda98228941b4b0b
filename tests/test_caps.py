"""Resource caps per run, tested the way an attacker would use the model: write_file called
hundreds of times (many reports, large reports), a change with many files against the
scripted model server, and a repository `.redline.toml` that tries to raise the caps.

Effects are asserted where they land: the files on disk, the requests that reached the server,
the coverage section of the report."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from redline.agent import LLMClient, RequestCapReached, ToolExecutor
from redline.cli.main import main
from redline.config import load_settings
from redline.config_models import AnalyzerSettings, LLMSettings, ModelSettings, Settings
from redline.errors import ConfigError
from redline.git.scopes import ScopeRequest
from redline.review.batching import BATCH_FILES
from redline.review.estimate import planned_calls, request_cap
from redline.review.pipeline import plan_review, run_review
from redline.tools import ToolContext, ToolLimits, build_tool_registry, default_report_dir

from gitrepo import GitRepo
from review_script import ReviewScript, role_of
from scripted_llm import Reply, ScriptedLLM

MB = 1_000_000
MIB = 1024 * 1024
USER = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in list(os.environ):
        if var.startswith("REDLINE_"):
            monkeypatch.delenv(var)
    monkeypatch.setenv("REDLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REDLINE_API_KEY", "sk-test-key-not-secret")
    # The default report directory is under the user cache dir: keep it in tmp too.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    path = tmp_path / "user.toml"
    path.write_text(text)
    monkeypatch.setenv("REDLINE_CONFIG", str(path))
    return path


def on_disk(reports: Path) -> dict[str, int]:
    """Every regular file under the report directory (temporary files included) → size."""
    if not reports.exists():
        return {}
    out = {}
    for dirpath, _, names in os.walk(reports):
        for name in names:
            path = Path(dirpath) / name
            out[str(path.relative_to(reports))] = path.stat().st_size
    return out


# -- write_file, driven call by call as a compromised model would --------------------------------


@pytest.fixture
def small_repo(repo: GitRepo) -> GitRepo:
    repo.write("app.py", "print('hello')\n")
    repo.commit("base")
    return repo


def _run_calls(ctx: ToolContext, calls: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    executor = ToolExecutor(build_tool_registry(ctx, ["write_file"]))

    async def go() -> list[tuple[bool, str]]:
        out = []
        for args in calls:
            result = await executor.run("write_file", json.dumps(args))
            out.append((result.ok, result.content))
        return out

    return asyncio.run(go())


def test_two_hundred_small_reports_stop_at_the_file_cap(
    small_repo: GitRepo, tmp_path: Path
) -> None:
    ctx = ToolContext(small_repo.root, report_dir=tmp_path / "reports")
    results = _run_calls(ctx, [{"path": f"r{i:03}.md", "content": "# r\n"} for i in range(200)])

    files = on_disk(ctx.reports)
    assert len(files) == 20
    assert sorted(files) == [f"r{i:03}.md" for i in range(20)]
    assert all(ok for ok, _ in results[:20])
    refused = results[20:]
    assert not any(ok for ok, _ in refused)
    assert all("write_file: limit of 20 files per run reached" in text for _, text in refused)
    assert "'r020.md' was not written" in refused[0][1]
    # Rewriting a report of this run is still allowed (it is not a new file).
    assert _run_calls(ctx, [{"path": "r000.md", "content": "# final\n"}])[0][0]
    assert (ctx.reports / "r000.md").read_text() == "# final\n"
    assert ctx.writes.notes() == [
        "write_file: limit of 20 files per run reached; 180 further writes refused "
        "(20 reports, 88 bytes written)"
    ]


def test_two_hundred_one_megabyte_reports_stop_at_the_byte_cap(
    small_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = ToolContext(small_repo.root, report_dir=tmp_path / "reports")
    redacted: list[int] = []
    real_redact = ctx.redact

    def counting_redact(text: str) -> str:
        redacted.append(len(text))
        return real_redact(text)

    monkeypatch.setattr(ctx, "redact", counting_redact)
    big = "A" * (MB - 1) + "\n"
    cpu = time.process_time()
    results = _run_calls(ctx, [{"path": f"big-{i:03}.md", "content": big} for i in range(200)])
    cpu = time.process_time() - cpu

    files = on_disk(ctx.reports)
    assert len(files) == 10  # 10 × 1 MB fit in 10 MiB, the 11th does not
    assert sum(files.values()) == 10 * MB <= 10 * MIB
    assert [ok for ok, _ in results] == [True] * 10 + [False] * 190
    message = results[10][1]
    assert "write_file: limit of 10,485,760 bytes written per run reached" in message
    assert "10,000,000 bytes written so far; this report is 1,000,000 bytes" in message
    assert "'big-010.md' was not written" in message
    # Refused writes cost no redaction (nor disk work): only the ten written were redacted.
    # (The short refusal messages are redacted too, like every tool result.)
    assert sum(1 for n in redacted if n >= MB) == 10
    assert cpu < 60, f"{cpu:.1f} s of CPU for 200 refused-or-written reports"
    assert ctx.writes.notes() == [
        "write_file: limit of 10,485,760 bytes written per run reached; 190 further writes "
        "refused (10 reports, 10,000,000 bytes written)"
    ]


def test_rewriting_one_report_counts_every_write_against_the_byte_cap(
    small_repo: GitRepo, tmp_path: Path
) -> None:
    limits = ToolLimits(max_write_total_bytes=3 * MB)
    ctx = ToolContext(small_repo.root, report_dir=tmp_path / "reports", limits=limits)
    big = "B" * MB
    results = _run_calls(ctx, [{"path": "review.md", "content": big} for _ in range(50)])
    assert [ok for ok, _ in results] == [True] * 3 + [False] * 47
    assert on_disk(ctx.reports) == {"review.md": MB}
    assert ctx.writes.bytes_written == 3 * MB


def test_a_failed_write_is_not_charged(small_repo: GitRepo, tmp_path: Path) -> None:
    limits = ToolLimits(max_write_files=1)
    ctx = ToolContext(small_repo.root, report_dir=tmp_path / "reports", limits=limits)
    (tmp_path / "reports" / "taken.md").mkdir(parents=True)  # a directory: the write fails
    results = _run_calls(
        ctx, [{"path": "taken.md", "content": "x"}, {"path": "ok.md", "content": "y"}]
    )
    assert [ok for ok, _ in results] == [False, True]
    assert "is a directory" in results[0][1]
    assert on_disk(ctx.reports) == {"ok.md": 1}


# -- write_file caps in a real `redline ask` run --------------------------------------------------


def _ask_agent(steps: list[Reply]) -> Any:
    """Plays the agent by conversation position (the number of assistant turns so far)."""

    def handler(body: dict[str, Any]) -> Reply:
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        return steps[min(step, len(steps) - 1)]

    return handler


def test_ask_run_write_caps_come_from_the_user_file_and_reach_the_report(
    small_repo: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    user_config(
        tmp_path,
        monkeypatch,
        "[llm]\nmax_retries = 0\ntimeout = 20\n"
        "[tools]\nmax_write_files = 3\nmax_write_total_bytes = 5000\n",
    )
    # The repository under review tries to lift every cap.
    small_repo.write(
        ".redline.toml",
        "[tools]\nmax_write_files = 100000\nmax_write_total_bytes = 999999999\n"
        "[llm]\nmax_requests = 100000\n",
    )
    small_repo.commit("raise the caps")
    steps = [
        Reply.tools(
            *(("write_file", {"path": f"r{i}.md", "content": "x" * 100}) for i in range(8))
        ),
        Reply.tool("write_file", {"path": "r0.md", "content": "y" * 6000}),
        Reply.tool("submit_review", {"summary": "done", "findings": []}),
    ]
    with ScriptedLLM(handler=_ask_agent(steps)) as llm:
        code = main(
            [
                "ask", "review the last commit", "--repo", str(small_repo.root), "--quiet",
                "--model", "openai/scripted", "--api-base", llm.base_url, "--format", "json",
            ]
        )  # fmt: skip
        out, err = capsys.readouterr()
        requests = list(llm.requests)
    assert code == 0, err
    assert "ignored tools.max_write_files" in err
    assert "ignored tools.max_write_total_bytes" in err
    assert "ignored llm.max_requests" in err

    reports = default_report_dir(Path(os.path.realpath(small_repo.root)))
    assert str(reports).startswith(str(tmp_path))
    assert on_disk(reports) == {"r0.md": 100, "r1.md": 100, "r2.md": 100}

    # What the model was told, in the request after each step.
    results = [str(m["content"]) for m in requests[1]["messages"] if m.get("role") == "tool"]
    assert len(results) == 8
    assert all(r.startswith("wrote 100 bytes") for r in results[:3])
    assert all("write_file: limit of 3 files per run reached" in r for r in results[3:])
    last = [str(m["content"]) for m in requests[2]["messages"] if m.get("role") == "tool"][-1]
    assert "write_file: limit of 5,000 bytes written per run reached" in last

    notes = json.loads(out)["coverage"]["notes"]
    assert (
        "write_file: limit of 3 files per run reached; 5 further writes refused "
        "(3 reports, 300 bytes written)"
    ) in notes
    assert any(n.startswith("write_file: limit of 5,000 bytes written per run") for n in notes)


# -- the model request cap --------------------------------------------------------------------


def _client_settings(llm: ScriptedLLM, **limits: Any) -> Settings:
    limits.setdefault("timeout", 5.0)
    return Settings(
        models=ModelSettings(model="openai/scripted", api_base=llm.base_url, api_key="test-key"),
        llm=LLMSettings(**limits),
    )


async def test_request_cap_counts_retries_and_truncation_re_asks() -> None:
    replies = [Reply.rate_limited(0), Reply.rate_limited(0), Reply.text("never")]
    with ScriptedLLM(replies) as llm:
        client = LLMClient(_client_settings(llm, max_retries=5, max_requests=2), backoff_base=0.01)
        with pytest.raises(RequestCapReached, match=r"model request cap \(2\) reached"):
            await client.complete("reviewer", USER)
        assert len(llm.requests) == 2
        assert (client.requests_sent, client.requests_refused) == (2, 1)

    with ScriptedLLM([Reply.truncated(), Reply.text("never")]) as llm:
        client = LLMClient(_client_settings(llm, max_requests=1))
        with pytest.raises(RequestCapReached):
            await client.complete("reviewer", USER, max_tokens=50)
        assert len(llm.requests) == 1


async def test_request_cap_holds_under_concurrency() -> None:
    with ScriptedLLM(handler=lambda body: Reply.slow(0.05, "ok")) as llm:
        client = LLMClient(_client_settings(llm, max_concurrency=8, max_requests=5))
        results = await asyncio.gather(
            *(client.complete("reviewer", USER) for _ in range(30)), return_exceptions=True
        )
        assert len(llm.requests) == 5
    assert sum(1 for r in results if isinstance(r, RequestCapReached)) == 25


FILES = 40


@pytest.fixture
def wide_change(repo: GitRepo) -> GitRepo:
    """A branch that adds FILES small Python files, and a .redline.toml lifting the cap."""
    repo.write("README.md", "base\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(FILES):
        repo.write(f"pkg/mod_{i:02}.py", f"def f{i}(x):\n    return x + {i}\n")
    repo.write(".redline.toml", "[llm]\nmax_requests = 100000\n")
    repo.commit("many files")
    return repo


def test_review_of_a_wide_change_stops_at_the_user_request_cap(
    wide_change: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cap = 5  # the planner and four reviewer calls (small files share a call, five a call)
    user_config(
        tmp_path,
        monkeypatch,
        f"[llm]\nmax_retries = 1\ntimeout = 20\nmax_requests = {cap}\n"
        "[analyzers]\nruff = false\nbandit = false\n",
    )
    script = ReviewScript()
    with ScriptedLLM(handler=script) as llm:
        code = main(
            [
                "review", "--branch", "main", "--repo", str(wide_change.root), "--quiet",
                "--model", "openai/scripted", "--api-base", llm.base_url, "--format", "json",
            ]
        )  # fmt: skip
        out, err = capsys.readouterr()
        sent = len(llm.requests)
    assert code == 0, err
    # The change's own 100000 is not used (the review reads the settings of its base), and
    # the attempt is a finding on the line that makes it.
    assert "ignored llm.max_requests" not in err
    assert sent <= cap
    assert sent == cap  # every request up to the cap succeeded: none was wasted

    result = json.loads(out)
    coverage = result["coverage"]
    capped = {
        s["path"]
        for s in coverage["skipped"]
        if s["reason"] == f"not reviewed: model request cap ({cap}) reached"
    }
    reviewed = set(coverage["reviewed_files"])
    assert script.count("planner") == 1
    assert script.count("reviewer") == cap - 1  # the planner took one request
    modules = {f"pkg/mod_{i:02}.py" for i in range(FILES)}
    assert modules <= capped | reviewed and not capped & reviewed
    assert len(reviewed) == (cap - 1) * BATCH_FILES  # each call that was sent covered five files
    assert len(capped) == FILES + 1 - len(reviewed)  # .redline.toml is in the change too
    assert any(f"model request cap ({cap}) reached" in n for n in coverage["notes"])
    assert coverage["model_calls"] == cap
    (edit,) = [f for f in result["findings"] if f["file"] == ".redline.toml"]
    assert "llm.max_requests" in edit["title"] and edit["severity"] == "Medium"


def test_default_request_cap_is_derived_from_the_plan(repo: GitRepo) -> None:
    """No llm.max_requests: 2 × planned calls + 20. A model that fails every reviewer call
    would otherwise get 1 + 3 attempts × 5 files × 4 tries = 61+ requests."""
    repo.write("README.md", "base\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(5):
        repo.write(f"m{i}.py", f"X = {i}\n")
    repo.commit("five files")
    script = ReviewScript()
    script.faults[("reviewer", "")] = [Reply.error(500)] * 1000
    with ScriptedLLM(handler=script) as llm:
        settings = Settings(
            models=ModelSettings(model="openai/scripted", api_base=llm.base_url, api_key="k"),
            llm=LLMSettings(max_retries=3, timeout=20),
            analyzers=AnalyzerSettings(ruff=False, bandit=False),
        )
        plan = plan_review(repo.root, ScopeRequest("branch", "main"), settings)
        client = LLMClient(settings, backoff_base=0.001, backoff_max=0.002)
        review = run_review(plan, settings, model_hooks={"client": client})
        sent = len(llm.requests)
    cap = request_cap(planned_calls(5), None)
    assert cap == 2 * (1 + 5 + 2) + 20 == client.max_requests
    assert sent == cap
    assert [role_of(r) for r in llm.requests].count("planner") == 1
    skipped = {s.path: s.reason for s in review.coverage.skipped}
    assert set(skipped) >= {f"m{i}.py" for i in range(5)}
    assert all(skipped[f"m{i}.py"].startswith("not reviewed: ") for i in range(5))
    assert any(f"model request cap ({cap}) reached" in r for r in skipped.values())
    assert any("no further attempt, the model request cap" in n for n in review.coverage.notes)


def test_ask_request_cap_from_the_flag(
    small_repo: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    user_config(tmp_path, monkeypatch, "[llm]\nmax_retries = 0\ntimeout = 20\n")
    counter = iter(range(10_000))

    # Never submits; distinct arguments each time, so the loop detector does not end it first.
    def varied(body: dict[str, Any]) -> Reply:
        n = next(counter)
        return Reply.tool("git", {"command": f"log -n {n + 1} --oneline"})

    with ScriptedLLM(handler=varied) as llm:
        code = main(
            [
                "ask", "review everything", "--repo", str(small_repo.root), "--quiet",
                "--model", "openai/scripted", "--api-base", llm.base_url, "--format", "json",
                "--max-requests", "3",
            ]
        )  # fmt: skip
        out, err = capsys.readouterr()
        sent = len(llm.requests)
    assert code == 2, err  # stopped before submitting: a failed review
    assert sent == 3
    notes = json.loads(out)["coverage"]["notes"]
    assert notes[0] == "the model request cap (3) reached before the agent submitted a review"
    assert (
        "model request cap (3) reached: 1 model calls were not sent after 3 requests (raise "
        "llm.max_requests to allow more)"
    ) in notes


def test_ask_default_request_cap_follows_the_step_limit(small_repo: GitRepo) -> None:
    from redline.review.ask import ask_planned_calls

    assert request_cap(ask_planned_calls(50), None) == 2 * (50 + 5) + 20
    assert request_cap(ask_planned_calls(50), 7) == 7


# -- configuration -------------------------------------------------------------------------------


def test_repository_file_cannot_raise_or_set_the_caps(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("[llm]\nmax_requests = 40\n[tools]\nmax_write_files = 5\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".redline.toml").write_text(
        "[llm]\nmax_requests = 100000\nmax_retries = 10\n"
        "[tools]\nmax_write_files = 100000\nmax_write_total_bytes = 999999999\n"
        '[review]\nexclude = ["gen/*"]\n'
    )
    loaded = load_settings(repo, environ={}, user_file=user)
    s = loaded.settings
    assert s.llm.max_requests == 40 and "user file" in loaded.sources["llm.max_requests"]
    assert s.tools.max_write_files == 5
    assert s.tools.max_write_total_bytes == 10 * MIB
    assert s.llm.max_retries == 3  # retries are the user's too (11 requests instead of 4)
    assert s.review.exclude == ["gen/*"]  # the rest of the file still applies
    for key in (
        "llm.max_requests",
        "llm.max_retries",
        "tools.max_write_files",
        "tools.max_write_total_bytes",
    ):
        assert any(f"ignored {key}: " in w and "your user file" in w for w in loaded.warnings)
    limits = ToolLimits.from_settings(s)
    assert (limits.max_write_files, limits.max_write_total_bytes) == (5, 10 * MIB)

    # pyproject.toml's [tool.redline] is a repository file too.
    (repo / ".redline.toml").unlink()
    (repo / "pyproject.toml").write_text("[tool.redline.tools]\nmax_write_files = 100000\n")
    loaded = load_settings(repo, environ={}, user_file=user)
    assert loaded.settings.tools.max_write_files == 5
    assert any("ignored tools.max_write_files" in w for w in loaded.warnings)


def test_caps_from_environment_and_flags(tmp_path: Path) -> None:
    env = {
        "REDLINE_MAX_REQUESTS": "12",
        "REDLINE_MAX_WRITE_FILES": "2",
        "REDLINE_MAX_WRITE_BYTES": "4096",
    }
    loaded = load_settings(None, environ=env, user_file=tmp_path / "none.toml")
    assert loaded.settings.llm.max_requests == 12
    assert loaded.sources["llm.max_requests"] == "environment REDLINE_MAX_REQUESTS"
    assert (loaded.settings.tools.max_write_files, loaded.settings.tools.max_write_total_bytes) == (
        2,
        4096,
    )
    loaded = load_settings(
        None, flags={"llm.max_requests": 9}, environ=env, user_file=tmp_path / "none.toml"
    )
    assert loaded.settings.llm.max_requests == 9
    assert loaded.sources["llm.max_requests"] == "flag --max-requests"
    with pytest.raises(ConfigError, match=r"llm\.max_requests"):
        load_settings(None, environ={"REDLINE_MAX_REQUESTS": "0"}, user_file=tmp_path / "n")
