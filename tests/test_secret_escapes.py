"""The secrets an independent attack run got through (issue 23), end to end through the
installed CLI: each kind committed in a pull request, reviewed with the scripted model — which
records every request body and, playing a compromised model, quotes every secret back in a
finding — then reported as Markdown, JSON and SARIF and posted to a fake forge (`--post
--inline`, once as a dry run). And `ask`, whose agent passes secrets as tool arguments (a file
named after a token, a key in a `git log -S`, an access key id as a symbol), which its progress
lines on stderr used to print as they were.

Asserted on what a user would see: no secret, nor any 10-character piece of one, in any request
the model received, in a report, in a task record or cached answer, on stderr, or in a body
posted (or printed as a dry run) to the forge.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model_env import isolate_model_env

from forge_bed import Forge, github_forge
from gitrepo import GitRepo
from real_clients import REDLINE
from review_script import ReviewScript
from scripted_llm import Reply, ScriptedLLM
from secret_corpus import CORPUS, SECOND_ROUND, UPPER_DIGITS, fragments_in, rand, random_key

SLUG = "octo/shop"
ESCAPED = [s for s in CORPUS if s.kind in SECOND_ROUND]
# Secrets the agent passes as tool arguments (built at run time: nothing here looks live).
GH_NAME = "ghp_" + random_key(36)
STRIPE_ARG = "sk_live_" + random_key(40)
AWS_ID = "AKIA" + rand(16, UPPER_DIGITS)
ARGUMENTS = [GH_NAME, STRIPE_ARG, AWS_ID]
NEEDLES = sorted({n for s in ESCAPED for n in s.needles} | set(ARGUMENTS))


def leaks(text: str) -> list[str]:
    """Every secret found whole or in part in `text`."""
    return [n for n in NEEDLES if fragments_in(n, text)]


def cache_leaks(cache: Path) -> dict[str, list[str]]:
    found = {}
    for path in cache.rglob("*"):
        if path.is_file() and (hits := leaks(path.read_bytes().decode("utf-8", "replace"))):
            found[str(path.relative_to(cache))] = hits
    return found


def quoting_findings() -> dict[str, list[dict[str, Any]]]:
    """Per file, a finding that quotes every secret in it: in its title, its comment and the
    code it cites (the model had them from elsewhere, say)."""
    out = {}
    for secret in ESCAPED:
        first = secret.text.splitlines()[0]
        out[secret.path] = [
            {
                "line": 1,
                "severity": "High",
                "category": "Security",
                "title": f"Committed credential {secret.needles[0]}",
                "comment": "Rotate " + " and ".join(secret.needles) + "; they are committed.",
                "existing_code": first,
                "improved_code": "# read it from the environment",
                "confidence": 0.9,
            }
        ]
    return out


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_model_env(monkeypatch, tmp_path, user_config="[llm]\nmax_retries = 0\ntimeout = 30\n")


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "# shop\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    for secret in ESCAPED:
        repo.write(secret.path, secret.text)
    # A file named after a token (the agent reads it by name).
    repo.write(f"notes/{GH_NAME}.txt", "rotate me\n")
    repo.commit("add integrations")
    repo.git("remote", "add", "origin", f"https://github.com/{SLUG}.git")
    return repo


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(handler=ReviewScript(findings=quoting_findings())) as server:
        yield server


def run(repo: GitRepo, *args: str, forge: Forge | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if forge is not None:
        env.update(REDLINE_GH=str(forge.root / "gh"), REDLINE_GLAB=str(forge.root / "glab"))
    return subprocess.run(
        [str(REDLINE), *args, "--repo", str(repo.root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_a_pull_request_full_of_them_is_reviewed_reported_and_posted_masked(
    repo: GitRepo, llm: ScriptedLLM, tmp_path: Path
) -> None:
    valid = {s.path: list(range(1, 12)) for s in ESCAPED}
    forge = github_forge(tmp_path / "forge", repo, SLUG, valid=valid)
    model = ("--model", "openai/scripted", "--api-base", llm.base_url)
    outputs: dict[str, str] = {}
    for fmt, post in (
        ("markdown", ("--post", "--inline", "--dry-run")),
        ("json", ("--post", "--inline")),
        ("sarif", ()),
    ):
        result = run(repo, "review", "--pr", "7", *model, "--format", fmt, *post, forge=forge)
        assert result.returncode == 0, result.stderr
        outputs[fmt] = result.stdout
        outputs[f"{fmt} stderr"] = result.stderr

    # Every file went to the model, and the model's findings came back into the reports.
    sent = json.dumps(llm.requests)
    for secret in ESCAPED:
        assert f"`{secret.path}`" in sent, secret.path
    report = json.loads(outputs["json"])
    quoted = [f for f in report["findings"] if f["title"].startswith("Committed credential")]
    assert len(quoted) >= len(ESCAPED) // 2, [f["title"] for f in report["findings"]]

    assert all("[REDACTED:" in f["comment"] for f in quoted)
    assert "would post" in outputs["markdown stderr"]  # the dry run printed its bodies

    assert leaks(sent) == []
    for name, text in outputs.items():
        assert leaks(text) == [], name
    state = forge.state()  # its "diff" is the pull request's, secrets and all
    posted = state["review_comments"] + state["issue_comments"]
    assert len(posted) > len(ESCAPED) // 2
    assert leaks(json.dumps(posted)) == []
    assert leaks(json.dumps(forge.calls())) == []  # what the forge CLI received on stdin
    assert cache_leaks(tmp_path / "cache") == {}


AGENT_MARK = "You are Redline's review agent"


def test_ask_never_prints_a_tool_argument_or_result_unmasked(repo: GitRepo, tmp_path: Path) -> None:
    mailgun = next(s for s in ESCAPED if s.kind == "mailgun-key").needles[0]
    shopify = next(s for s in ESCAPED if s.kind == "shopify-admin-token").needles[0]
    steps = [
        Reply.tool("read_file", {"path": f"notes/{GH_NAME}.txt"}),
        Reply.tool("git", {"command": f"log -S {STRIPE_ARG} --oneline"}),
        Reply.tool("search_callers", {"symbol": AWS_ID}),
        Reply.tool("search_callers", {"symbol": "SECRET_KEY"}),  # the .conf line comes back
        Reply.tool("git", {"command": f"log -S {mailgun} --oneline"}),
        Reply.tool("read_file", {"path": f"shop/{shopify}.py"}),
        Reply.tool("read_file", {"path": "config/app.config.xml"}),
        Reply.tool("git", {"command": "diff main...HEAD"}),
        Reply.tool(
            "submit_review",
            {
                "summary": "Credentials are committed: " + ", ".join(NEEDLES),
                "findings": [
                    {
                        "file": s.path,
                        "line": 1,
                        "severity": "High",
                        "category": "Security",
                        "title": "Committed credential",
                        "comment": " and ".join(s.needles) + " are in the code.",
                        "existing_code": s.text.splitlines()[0],
                        "confidence": 0.9,
                    }
                    for s in ESCAPED
                ],
            },
        ),
    ]

    def handler(body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        if not messages or AGENT_MARK not in str(messages[0].get("content")):
            return Reply.text(json.dumps({"verdicts": [], "quality_score": 80, "feedback": ""}))
        step = sum(1 for m in messages if m.get("role") == "assistant")
        return steps[min(step, len(steps) - 1)]

    with ScriptedLLM(handler=handler) as llm:
        result = run(
            repo, "ask", "review the feature branch against main", "--format", "json",
            "--model", "openai/scripted", "--api-base", llm.base_url,
        )  # fmt: skip
        requests = list(llm.requests)
    assert result.returncode == 0, result.stderr
    # The progress lines name every call, with its arguments masked.
    assert result.stderr.count("redline: agent: ") >= len(steps) - 1, result.stderr
    assert "[REDACTED:github-token:" in result.stderr
    assert "[REDACTED:stripe-key:" in result.stderr
    assert "[REDACTED:aws-access-key-id:" in result.stderr
    tool_results = [
        str(m["content"]) for r in requests for m in r["messages"] if m.get("role") == "tool"
    ]
    assert any("SECRET_KEY" in t and "app.conf" in t for t in tool_results), tool_results
    assert leaks(result.stderr) == []
    assert leaks(json.dumps(requests)) == []
    assert leaks(result.stdout) == []
    assert cache_leaks(tmp_path / "cache") == {}
