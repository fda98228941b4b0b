"""`redline debate` as a user runs it: the real command in a subprocess on a real repository,
three debaters and a summarizer played by a scripted OpenAI-compatible server (each debater
its own model string, so the script knows who is speaking), through litellm's real HTTP path.
Interactive mode runs on a pseudo-terminal; Ctrl+C is a real SIGINT."""

from __future__ import annotations

import io
import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from model_env import isolate_model_env
from redline.cli.debate_input import decide
from redline.cli.debate_view import DebateView
from redline.debate.events import DebateEvent, Decision, EventKind

from gitrepo import GitRepo
from scripted_llm import Reply, ScriptedLLM

DEBATERS = {"openai/alice": "Alice", "openai/bob": "Bob", "openai/carol": "Carol"}
JUDGE = "openai/judge"
CACHE_LINE = '    return f"user:{name}"'
INTERJECTION = "please look at the cache key, not the logging"
SUMMARY = {
    "overview": "The debaters agree the cache key ignores the tenant.",
    "consensus": [{"point": "The cache key ignores the tenant.", "file": "app/cache.py"}],
    "disagreements": [],
    "action_items": [
        {
            "title": "Cache key collides across tenants",
            "detail": "Two tenants with the same user name share cached entries.",
            "severity": "High",
            "category": "Security",
            "file": "app/cache.py",
            "existing_code": CACHE_LINE,
            "improved_code": '    return f"user:{tenant}:{name}"',
            "supported_by": ["Debater A", "Debater B", "Debater C"],
        }
    ],
}


def user_config(base_url: str, **debate: Any) -> str:
    lines = ["[llm]", "max_retries = 0", "timeout = 30", "", "[debate]"]
    lines += [f"{k} = {v}" for k, v in debate.items()]
    for model, label in DEBATERS.items():
        name = label.lower()
        lines += [
            "",
            f"[debate.reviewers.{name}]",
            f'model = "{model}"',
            f'api_base = "{base_url}"',
            f'label = "{label}"',
            f'prompt = "You are {label}. Argue about the change."',
        ]
    lines += ["", "[debate.summarizer]", f'model = "{JUDGE}"', f'api_base = "{base_url}"']
    return "\n".join(lines) + "\n"


@dataclass
class DebateScript:
    """Answers by model: a debater says something that names it and counts its calls; the
    judge answers the summary. `slow` delays a debater's first call (Ctrl+C lands in it);
    `slow_after_stop` delays every call once `stopped` is set (the second Ctrl+C lands)."""

    slow: dict[str, float] = field(default_factory=dict)
    slow_after_stop: float = 0.0
    stopped: threading.Event = field(default_factory=threading.Event)
    calls: dict[str, int] = field(default_factory=dict)

    def __call__(self, body: dict[str, Any]) -> Reply:
        model = "openai/" + str(body.get("model", "")).split("/")[-1]
        n = self.calls[model] = self.calls.get(model, 0) + 1
        delay = self.slow.pop(model, 0.0) if n == 1 else 0.0
        if self.stopped.is_set():
            delay = self.slow_after_stop
        if model == JUDGE:
            return Reply.text(json.dumps(SUMMARY), delay=delay)
        label = DEBATERS[model]
        return Reply.text(f"{label} point {n}: the cache key ignores the tenant.", delay=delay)


def debater_requests(llm: ScriptedLLM) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for body in llm.requests:
        model = "openai/" + str(body.get("model", "")).split("/")[-1]
        if model in DEBATERS:
            out.append((DEBATERS[model], body))
    return out


def judge_requests(llm: ScriptedLLM) -> list[dict[str, Any]]:
    return [b for b in llm.requests if str(b.get("model", "")).endswith("judge")]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app/__init__.py", "")
    repo.write("app/cache.py", 'def key(name: str) -> str:\n    return f"{name}"\n')
    repo.commit("base")
    repo.checkout("-b", "feature")
    repo.write(
        "app/cache.py",
        f"def key(name: str, tenant: str) -> str:\n{CACHE_LINE}\n",
    )
    repo.commit("cache keys per user")
    return repo


@pytest.fixture
def script() -> DebateScript:
    return DebateScript()


@pytest.fixture
def llm(
    script: DebateScript, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[ScriptedLLM]:
    with ScriptedLLM(handler=script) as server:
        isolate_model_env(monkeypatch, tmp_path, user_config=user_config(server.base_url))
        yield server


def redline_args(repo: GitRepo, *extra: str) -> list[str]:
    cli = [sys.executable, "-m", "redline.cli", "debate", "--branch", "main"]
    return [*cli, "--repo", str(repo.root), *extra]


def run_debate(repo: GitRepo, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        redline_args(repo, *extra),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
        timeout=120,
    )


def wait_for(predicate: Any, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


# -- the whole debate ------------------------------------------------------------------------


def test_three_debaters_take_three_rounds_in_order_and_the_report_has_it_all(
    repo: GitRepo, llm: ScriptedLLM
) -> None:
    result = run_debate(repo, "--rounds", "3", "--format", "json")
    assert result.returncode == 0, result.stderr

    speakers = [label for label, _ in debater_requests(llm)]
    assert speakers[:9] == ["Alice", "Bob", "Carol"] * 3
    assert len(judge_requests(llm)) == 1

    report = json.loads(result.stdout)
    debate = report["debate"]
    turns = [t for t in debate["turns"] if t["kind"] == "turn"]
    assert [t["label"] for t in turns] == ["Alice", "Bob", "Carol"] * 3
    assert [t["round"] for t in turns] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert "Alice point 1: the cache key ignores the tenant." in turns[0]["text"]
    assert len(debate["positions"]) == 3
    assert {p["label"] for p in debate["positions"]} == {"Debater A", "Debater B", "Debater C"}
    assert "The cache key ignores the tenant." in debate["summary_markdown"]
    assert debate["stop_reason"] == "rounds"
    # The action item is anchored on the line it quotes.
    (finding,) = [f for f in report["findings"] if "Cache key" in f["title"]]
    assert finding["file"] == "app/cache.py"
    assert finding["line"] == 2

    # The debate streamed on stderr, turn by turn, with the positions and the summary.
    err = result.stderr
    assert "Round 1 · Alice (openai/alice)" in err
    assert err.index("Round 1 · Alice") < err.index("Round 1 · Bob") < err.index("Round 3 · Carol")
    assert "Bob point 1: the cache key ignores the tenant." in err
    assert "Final positions (anonymous)" in err
    assert "Neutral summary" in err


def test_markdown_report_goes_to_stdout_while_the_debate_streams_on_stderr(
    repo: GitRepo, llm: ScriptedLLM
) -> None:
    result = run_debate(repo, "--rounds", "1")
    assert result.returncode == 0, result.stderr
    live = "── Round 1 · Carol (openai/carol) ──"
    assert live in result.stderr
    assert live not in result.stdout
    assert "Carol point 1" in result.stdout  # the report's transcript
    assert "Cache key collides across tenants" in result.stdout
    assert "`app/cache.py:2`" in result.stdout


def test_quiet_shows_no_debate_and_fail_on_exits_1(repo: GitRepo, llm: ScriptedLLM) -> None:
    result = run_debate(repo, "--rounds", "1", "--quiet", "--fail-on", "high")
    assert result.returncode == 1, result.stderr
    assert "Round 1" not in result.stderr
    assert "fail-on threshold high (set by flag --fail-on)" in result.stderr


# -- interactive -----------------------------------------------------------------------------


def test_interactive_interjection_reaches_the_next_debater_and_q_ends_the_debate(
    repo: GitRepo, llm: ScriptedLLM
) -> None:
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            redline_args(repo, "--interactive", "--rounds", "3", "--format", "json"),
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.close(slave)
        # Typed ahead, answered one prompt each: continue, interject, quit.
        os.write(master, f"\n{INTERJECTION}\nq\n".encode())
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(master)
    assert proc.returncode == 0, err

    turns = debater_requests(llm)
    assert [label for label, _ in turns[:2]] == ["Alice", "Bob"]
    assert INTERJECTION not in json.dumps(turns[0][1]["messages"])
    assert INTERJECTION in json.dumps(turns[1][1]["messages"])
    assert len(judge_requests(llm)) == 1  # the summaries are still made

    debate = json.loads(out)["debate"]
    assert [t["label"] for t in debate["turns"] if t["kind"] == "turn"] == ["Alice", "Bob"]
    assert any(t["kind"] == "interjection" and INTERJECTION in t["text"] for t in debate["turns"])
    assert debate["stop_reason"] == "user"
    assert debate["summary_markdown"]
    assert "Enter to continue, type to interject, q to end the debate" in err
    assert INTERJECTION in err  # marked in the live debate


def test_interactive_without_a_terminal_is_refused_before_anything_runs(
    repo: GitRepo, llm: ScriptedLLM
) -> None:
    result = run_debate(repo, "--interactive")
    assert result.returncode == 2
    assert "--interactive needs a terminal on stdin" in result.stderr
    assert llm.requests == []


# -- Ctrl+C ----------------------------------------------------------------------------------


def test_ctrl_c_ends_the_debate_and_the_summaries_are_still_made(
    repo: GitRepo, llm: ScriptedLLM, script: DebateScript
) -> None:
    script.slow["openai/bob"] = 30.0  # Bob's first turn is where Ctrl+C lands
    proc = subprocess.Popen(
        redline_args(repo, "--rounds", "3", "--format", "json"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_for(lambda: script.calls.get("openai/bob", 0) >= 1), "Bob never spoke"
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert time.monotonic() - started < 20  # the slow turn was cut short, not waited for
    assert "stopping: finishing with the summaries — Ctrl+C again to abort" in err

    debate = json.loads(out)["debate"]
    assert debate["stop_reason"] == "user"
    assert [t["label"] for t in debate["turns"] if t["kind"] == "turn"] == ["Alice"]
    assert "openai/carol" not in script.calls or script.calls["openai/carol"] <= 1
    assert len(judge_requests(llm)) == 1
    assert debate["summary_markdown"]


def test_a_second_ctrl_c_aborts_with_exit_130(
    repo: GitRepo, llm: ScriptedLLM, script: DebateScript
) -> None:
    script.slow["openai/alice"] = 30.0
    script.slow_after_stop = 30.0  # the summaries hang: only an abort ends the run
    proc = subprocess.Popen(
        redline_args(repo, "--rounds", "3"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert wait_for(lambda: script.calls.get("openai/alice", 0) >= 1), "Alice never spoke"
    script.stopped.set()
    proc.send_signal(signal.SIGINT)
    before = len(llm.requests)
    wait_for(lambda: len(llm.requests) > before, timeout=15)  # a summary call, now hanging
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "redline: interrupted" in err
    assert out == ""  # no report for an aborted debate


# -- before anything runs --------------------------------------------------------------------


def test_estimate_prints_calls_and_tokens_and_sends_nothing(
    repo: GitRepo, llm: ScriptedLLM
) -> None:
    result = run_debate(repo, "--estimate", "--format", "json", "--rounds", "2")
    assert result.returncode == 0, result.stderr
    estimate = json.loads(result.stdout)
    # 3 debaters × 2 rounds of turns (1 to 6 calls each), 3 positions, 1 summary (+1 re-ask).
    assert estimate["calls_min"] == 3 * 2 + 3 + 1
    assert estimate["calls_max"] >= 3 * 2 * 6 + 3 + 2
    assert [m["model"] for m in estimate["models"]] == [*DEBATERS, JUDGE]
    assert estimate["prompt_tokens"] > 0
    assert llm.requests == []

    markdown = run_debate(repo, "--estimate", "--rounds", "2")
    assert markdown.returncode == 0, markdown.stderr
    assert "at least 10," in markdown.stdout
    assert "Nothing was sent to any model." in markdown.stdout
    assert llm.requests == []


def test_no_model_is_a_usage_error_before_anything_runs(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate_model_env(monkeypatch, tmp_path)  # no model anywhere
    result = run_debate(repo)
    assert result.returncode == 2
    assert "debate needs a model" in result.stderr
    assert result.stdout == ""


def test_rounds_out_of_range_is_refused(repo: GitRepo, llm: ScriptedLLM) -> None:
    result = run_debate(repo, "--rounds", "0")
    assert result.returncode == 2
    assert "rounds must be a whole number from 1 to 20" in result.stderr
    assert llm.requests == []


# -- the pieces ------------------------------------------------------------------------------


def test_the_view_draws_turns_from_events_and_strips_terminal_escapes() -> None:
    out = io.StringIO()
    view = DebateView(out)
    events = [
        (EventKind.STARTED, {"debaters": [{"name": "a", "label": "A", "model": "m/a"}],
                             "rounds": 2, "scopeLabel": "branch feature"}),
        (EventKind.TURN_STARTED, {"round": 1, "speaker": "a", "label": "A", "model": "m/a"}),
        (EventKind.DELTA, {"round": 1, "speaker": "a", "text": "The key "}),
        (EventKind.DELTA, {"round": 1, "speaker": "a", "text": "\x1b]0;pwned\x07collides."}),
        (EventKind.TURN_FINISHED, {"round": 1, "speaker": "a", "label": "A", "kind": "turn",
                                   "text": "The key collides.", "tokens": 12, "latencyMs": 1500}),
        (EventKind.INTERJECTION, {"round": 2, "text": "what about the tenant?"}),
        (EventKind.TURN_STARTED, {"round": 2, "speaker": "a", "label": "A", "model": "m/a"}),
        (EventKind.TURN_FINISHED, {"round": 2, "speaker": "a", "label": "A", "kind": "pass",
                                   "text": "", "tokens": 3, "latencyMs": 200}),
        (EventKind.NOTE, {"text": "older turns were compacted"}),
        (EventKind.STOPPED, {"reason": "passed", "text": "every debater passed"}),
        (EventKind.SUMMARIES, {"positions": [{"label": "Debater A", "text": "Fix the key."}]}),
        (EventKind.SUMMARY, {"markdown": "## Consensus\n- the key", "failed": False}),
        (EventKind.FINAL, {"findings": [{}], "counts": {}, "tokens": 99, "costUsd": None}),
    ]  # fmt: skip
    for kind, data in events:
        view(DebateEvent(kind, data))
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "Debate over branch feature: 1 debater, 2 rounds — A (m/a)" in text
    assert "── Round 1 · A (m/a) ──" in text
    # Spelled out (report/controls.py), streamed once, not repeated at the end.
    assert "The key \\u001b]0;pwned\\u0007collides.\n" in text
    assert text.count("collides") == 1
    assert "12 tokens, 1.5 s" in text
    assert "» You (before round 2): what about the tenant?" in text
    assert "(passes: nothing to add)" in text
    assert "· note: older turns were compacted" in text
    assert "■ The debate ended: every debater passed" in text
    assert text.index("Final positions") < text.index("Debater A:") < text.index("Fix the key.")
    assert "## Consensus" in text
    assert "1 finding; 99 tokens" in text


def test_a_turn_that_did_not_stream_is_shown_when_it_finishes() -> None:
    out = io.StringIO()
    view = DebateView(out)
    view(DebateEvent(EventKind.TURN_STARTED, {"round": 1, "label": "B", "speaker": "b"}))
    view(
        DebateEvent(
            EventKind.TURN_FINISHED,
            {"kind": "skipped", "text": "", "note": "its model failed", "tokens": 0},
        )
    )
    assert "[skipped: its model failed]" in out.getvalue()


def test_what_a_typed_line_means() -> None:
    assert decide("\n") == Decision.go_on()
    assert decide(None) == Decision.go_on()  # end of input: the debate runs on
    assert decide(" Q \n") == Decision.stop()
    assert decide("and the tenant?\n") == Decision.interject("and the tenant?")


def test_a_debate_whose_models_refuse_the_key_exits_3(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with ScriptedLLM(default=Reply.error(401, "Incorrect API key provided")) as server:
        isolate_model_env(monkeypatch, tmp_path, user_config=user_config(server.base_url))
        result = run_debate(repo, "--rounds", "2", "--quiet")
    assert result.returncode == 3, result.stderr
    line = f"model openai/alice at {server.base_url}: the key was refused (401)"
    assert f"redline: error: {line}" in result.stderr.splitlines()
    assert f"**The model could not be used:** {line}." in result.stdout
    # No model was asked twice (fewer than two debaters left ends the debate before Carol).
    asked = [r["model"] for r in server.requests]
    assert asked == ["alice", "bob"]


# -- posted on the pull request ---------------------------------------------------------------


def test_the_debate_is_posted_on_the_pull_request_with_its_suggestion(
    repo: GitRepo, llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forge_bed import github_forge

    repo.git("remote", "add", "origin", "https://github.com/acme/cache.git")
    forge = github_forge(
        tmp_path / "forge", repo, "acme/cache", valid={"app/cache.py": [1, 2]}, number=3
    )
    monkeypatch.setenv("REDLINE_GH", str(forge.root / "gh"))
    cli = [sys.executable, "-m", "redline.cli", "debate", "--pr", "3", "--repo", str(repo.root)]
    result = subprocess.run(
        [*cli, "--rounds", "1", "--post", "--inline", "--quiet"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [summary] = forge.state()["issue_comments"]
    assert summary["body"].rstrip().endswith("<!-- redline:summary:debate -->")
    assert "The cache key ignores the tenant." in summary["body"]  # the neutral summary
    [comment] = forge.state()["review_comments"]
    assert (comment["path"], comment["line"]) == ("app/cache.py", 2)
    assert '```suggestion\n    return f"user:{tenant}:{name}"\n```' in comment["body"]
