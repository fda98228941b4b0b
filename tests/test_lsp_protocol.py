"""The protocol as LSP 3.17 and JSON-RPC say, seen by a raw client over stdio: every request
answered (malformed params, out of lifecycle order, commands with arguments of the wrong
shape), `exit`'s exit code, a client that never answers `window/workDoneProgress/create`."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from raw_rpc import RawClient

from lsp_support import server_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002


@pytest.fixture
def demo_repo(tmp_path: Path) -> Path:
    return demo.build_demo_repo(tmp_path / "demo")


@pytest.fixture
def client(demo_repo: Path, tmp_path: Path) -> Iterator[RawClient]:
    c = RawClient(server_env(tmp_path / "cache"), demo_repo)
    yield c
    if c.proc.poll() is None:
        c.close()


def _hover(uri: str, position: object) -> dict[str, object]:
    return {"textDocument": {"uri": uri}, "position": position}


def test_malformed_params_answer_invalid_params(client: RawClient, demo_repo: Path) -> None:
    client.initialize(demo_repo)
    uri = (demo_repo / "app.py").as_uri()
    for params in ({}, _hover(uri, {"line": "x", "character": 0}), _hover(uri, None), []):
        answer = client.request("textDocument/hover", params, timeout=5)
        assert answer["error"]["code"] == INVALID_PARAMS, (params, answer)
        assert "textDocument/hover" in answer["error"]["message"]
    # The same for any method lsprotocol types, and the server goes on answering.
    answer = client.request("textDocument/codeAction", {"textDocument": {"uri": 5}}, timeout=5)
    assert answer["error"]["code"] == INVALID_PARAMS
    good = client.request("textDocument/hover", _hover(uri, {"line": 0, "character": 0}))
    assert "error" not in good
    # A malformed notification has nobody to answer: ignored, the server lives on.
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri}})
    assert "error" not in client.request("redline/debugInfo", {})
    assert client.request("shutdown")["result"] is None
    client.notify("exit")
    assert client.close() == 0


def test_request_with_unreadable_id_answers_invalid_request(
    client: RawClient, demo_repo: Path
) -> None:
    client.initialize(demo_repo)
    client.send({"jsonrpc": "2.0", "id": {"no": 1}, "method": "shutdown"})
    answer = client.wait_for(lambda m: "error" in m and m.get("id") is None, timeout=5)
    assert answer["error"]["code"] == INVALID_REQUEST


def test_request_before_initialize_answers_server_not_initialized(
    client: RawClient, demo_repo: Path
) -> None:
    uri = (demo_repo / "app.py").as_uri()
    answer = client.request("textDocument/hover", _hover(uri, {"line": 0, "character": 0}))
    assert answer["error"]["code"] == SERVER_NOT_INITIALIZED
    answer = client.request("redline/debugInfo", {})
    assert answer["error"]["code"] == SERVER_NOT_INITIALIZED
    # A notification before initialize is dropped: the document below was never opened.
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x\n"}},
    )
    assert "capabilities" in client.initialize(demo_repo)["result"]
    again = client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    assert again["error"]["code"] == INVALID_REQUEST
    assert "error" not in client.request("redline/debugInfo", {})


def test_requests_after_shutdown_answer_invalid_request(client: RawClient, demo_repo: Path) -> None:
    client.initialize(demo_repo)
    assert client.request("shutdown")["result"] is None
    for method, params in (("redline/debugInfo", {}), ("shutdown", None)):
        answer = client.request(method, params, timeout=5)
        assert answer["error"]["code"] == INVALID_REQUEST, answer
    client.notify("exit")
    assert client.proc.wait(10) == 0


def test_unknown_methods_and_late_cancels_are_logged_at_info_only(
    client: RawClient, demo_repo: Path
) -> None:
    client.initialize(demo_repo)
    answer = client.request("textDocument/documentSymbol", {"textDocument": {"uri": "file:///x"}})
    assert answer["error"]["code"] == -32601
    client.notify("$/unknownNotification", {})
    client.notify("$/cancelRequest", {"id": answer["id"]})  # already answered
    client.request("shutdown")
    client.notify("exit")
    assert client.close() == 0
    # REDLINE_LSP_LOG=INFO here: the lines are there, as INFO (none at the default level).
    lines = [line for line in client.stderr.splitlines() if "unknown" in line]
    assert len(lines) == 3 and all(" INFO pygls." in line for line in lines), lines


def test_exit_without_shutdown_exits_1(client: RawClient, demo_repo: Path) -> None:
    client.initialize(demo_repo)
    client.notify("exit")
    assert client.proc.wait(10) == 1


def test_review_goes_on_when_progress_create_is_never_answered(
    client: RawClient, demo_repo: Path
) -> None:
    client.initialize(demo_repo, {"window": {"workDoneProgress": True}})
    answer = client.request(
        "workspace/executeCommand",
        {"command": "redline.review", "arguments": [{"scope": "uncommitted"}]},
    )
    task_id = answer["result"]["taskId"]
    create = client.wait_for(lambda m: m.get("method") == "window/workDoneProgress/create")
    # Never answered: after the timeout (2 s) the review runs, without progress.
    done = client.wait_for(
        lambda m: (
            m.get("method") == "redline/reviewState"
            and m["params"].get("taskId") == task_id
            and m["params"]["state"] in ("finished", "failed")
        ),
        timeout=30,
    )
    assert done["params"]["state"] == "finished", done
    token = create["params"]["token"]
    assert not [m for m in client.messages if m.get("method") == "$/progress"
                and m["params"]["token"] == token]  # fmt: skip


# Every argument field a command reads, each of the wrong type.
_WRONG_FIELDS = {
    key: [1]
    for key in ("scope", "base", "ref", "range", "pr", "rounds", "request", "folder", "uri",
                "taskId", "task_id", "id", "findingId", "value", "reason", "format", "path",
                "text")
} | {"ids": 5}  # fmt: skip
_BAD_SHAPES: list[object] = ["nope", [42], [True], [[1]], [None, {}, 3], [_WRONG_FIELDS]]


def test_commands_with_arguments_of_the_wrong_shape_answer_invalid_params(
    client: RawClient, demo_repo: Path
) -> None:
    init = client.initialize(demo_repo)
    commands = init["result"]["capabilities"]["executeCommandProvider"]["commands"]
    assert "redline.review" in commands and "redline.debateStop" in commands
    for command in commands:
        for arguments in _BAD_SHAPES:
            if command == "redline.clear" and arguments == [_WRONG_FIELDS]:
                continue  # it reads no field: an object is all it takes
            answer = client.request(
                "workspace/executeCommand", {"command": command, "arguments": arguments}
            )
            assert answer.get("error", {}).get("code") == INVALID_PARAMS, (command, arguments)
    # A string is the scope: not one, so no review.
    answer = client.request(
        "workspace/executeCommand", {"command": "redline.review", "arguments": ["nope"]}
    )
    assert answer["error"]["code"] == INVALID_PARAMS
    assert "unknown scope 'nope'" in answer["error"]["message"]
    debug = client.request("redline/debugInfo", {})
    assert debug["result"]["running"] == []
    assert not [m for m in client.messages if m.get("method") == "redline/reviewState"]


# A custom analyzer that never finishes on its own: it notes its pid, then sleeps.
_SLOW_TOOL = (
    "import os, sys, time; open(sys.argv[1], 'a').write(f'{os.getpid()}\\n'); time.sleep(120)"
)


def _slow_analyzer_client(demo_repo: Path, tmp_path: Path) -> tuple[RawClient, Path]:
    pids = tmp_path / "pids"
    config = tmp_path / "redline.toml"
    command = json.dumps([sys.executable, "-c", _SLOW_TOOL, str(pids)])
    config.write_text(
        "[analyzers]\nruff = false\nbandit = false\n"
        f'[[analyzers.custom]]\nname = "slow"\ncommand = {command}\nglobs = ["*"]\n'
    )
    env = server_env(tmp_path / "cache", REDLINE_CONFIG=str(config))
    client = RawClient(env, demo_repo)
    client.initialize(demo_repo)
    return client, pids


def _start_review_and_wait_for_the_tool(client: RawClient, pids: Path, seen: int) -> int:
    answer = client.request(
        "workspace/executeCommand",
        {"command": "redline.review", "arguments": [{"scope": "branch"}]},
    )
    assert "result" in answer, answer
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = pids.read_text().split() if pids.exists() else []
        if len(lines) > seen:
            return int(lines[seen])
        time.sleep(0.02)
    raise AssertionError(f"the analyzer never started; stderr: {client.stderr[-2000:]}")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_cancel_kills_the_analyzers_at_once(demo_repo: Path, tmp_path: Path) -> None:
    client, pids = _slow_analyzer_client(demo_repo, tmp_path)
    latencies = []
    try:
        for attempt in range(3):
            pid = _start_review_and_wait_for_the_tool(client, pids, attempt)
            started = time.monotonic()
            answer = client.request("workspace/executeCommand", {"command": "redline.cancel"})
            task_id = answer["result"]["cancelled"][0]
            client.wait_for(
                lambda m, task_id=task_id: (
                    m.get("method") == "redline/reviewState"
                    and m["params"].get("taskId") == task_id
                    and m["params"]["state"] == "cancelled"
                )
            )
            latencies.append(time.monotonic() - started)
            assert _gone(pid), "the analyzer outlived the cancel"
    finally:
        client.close()
    # The bound is 0.2 s; a margin for a loaded test machine.
    assert statistics.median(latencies) < 0.5, latencies


def test_shutdown_during_a_review_exits_promptly(demo_repo: Path, tmp_path: Path) -> None:
    client, pids = _slow_analyzer_client(demo_repo, tmp_path)
    pid = _start_review_and_wait_for_the_tool(client, pids, 0)
    started = time.monotonic()
    try:
        assert client.request("shutdown")["result"] is None
        client.notify("exit")
        assert client.proc.wait(10) == 0
        elapsed = time.monotonic() - started
    finally:
        client.close()
    # The client keeps its end of stdin open, as editors do while they wait for the exit.
    assert elapsed < 2.0, elapsed
    deadline = time.monotonic() + 2
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(pid), "the analyzer outlived the server"
