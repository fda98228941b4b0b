"""`redline.ask` through a real server process and the scripted model over HTTP: an ask that
never submits a review is a failed review in the editor too, not "finished, no findings"; a
review whose model cannot be used says so once, in the CLI's own line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types

from test_ask import AskScript

from lsp_support import plain, server_env, start_session, stop_session
from scripted_llm import Reply, ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")


async def test_an_ask_that_never_submits_fails_with_its_reason(tmp_path: Path) -> None:
    repo = demo.build_demo_repo(tmp_path / "demo")
    script = AskScript([Reply.tool("git", {"command": "status"})])  # loops until stopped
    with ScriptedLLM(handler=script) as llm:
        cache = tmp_path / "cache"
        env = server_env(
            cache,
            REDLINE_MODEL="openai/scripted",
            REDLINE_API_BASE=llm.base_url,
            REDLINE_API_KEY="sk-test-key-not-secret",
        )
        s = await start_session(repo, "vscode", env)
        try:
            asked = plain(await s.command("redline.ask", {"request": "review the branch"}))
            end = await s.finished(asked["taskId"], timeout=60)
            assert end["state"] == "failed", end
            assert end["error"].startswith("the agent was stopped for repeating a tool"), end
            shown = [m for m in s.client.messages if m.type == types.MessageType.Error]
            assert any("the review failed: the agent was stopped" in m.message for m in shown)
            # The report with the reason stays available to the report view.
            report = plain(await s.client.protocol.send_request_async("redline/report", {}))
            assert "**Review failed:** the agent was stopped" in report["markdown"]
        finally:
            await stop_session(s)


async def test_a_review_whose_model_refuses_the_key_says_so_once(tmp_path: Path) -> None:
    repo = demo.build_demo_repo(tmp_path / "demo")
    with ScriptedLLM(default=Reply.error(401, "Incorrect API key provided")) as llm:
        env = server_env(
            tmp_path / "cache",
            REDLINE_MODEL="openai/scripted",
            REDLINE_API_BASE=llm.base_url,
            REDLINE_API_KEY="sk-test-key-not-secret",
        )
        s = await start_session(repo, "vscode", env)
        try:
            task = await s.review(scope="branch", base="main")
            end = await s.finished(task, timeout=60)
            line = f"model openai/scripted at {llm.base_url}: the key was refused (401)"
            # The analyzers' findings are published; the state and one message say why only
            # theirs.
            assert end["state"] == "finished", end
            assert end["modelError"] == line and end["findings"] > 0
            shown = [m.message for m in s.client.messages]
            assert shown == [f"Redline: {line}"]
            assert len(llm.requests) == 1
        finally:
            await stop_session(s)
