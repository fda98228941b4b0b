"""A client that never answers `window/workDoneProgress/create` costs one wait, not one per
review: the server remembers it for the connection, and a late answer (a slow client, not a
deaf one) brings progress back. Seen by a raw JSON-RPC client, which can leave a request
unanswered."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from raw_rpc import Message, RawClient

from lsp_support import server_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

CREATE = "window/workDoneProgress/create"


@pytest.fixture
def demo_repo(tmp_path: Path) -> Path:
    return demo.build_demo_repo(tmp_path / "demo")


@pytest.fixture
def client(demo_repo: Path, tmp_path: Path) -> Iterator[RawClient]:
    c = RawClient(server_env(tmp_path / "cache"), demo_repo)
    yield c
    if c.proc.poll() is None:
        c.close()


def _review(client: RawClient) -> str:
    answer = client.request(
        "workspace/executeCommand",
        {"command": "redline.review", "arguments": [{"scope": "branch", "base": "main"}]},
    )
    return str(answer["result"]["taskId"])


def _state(client: RawClient, task_id: str, *states: str) -> Message:
    return client.wait_for(
        lambda m: (
            m.get("method") == "redline/reviewState"
            and m["params"].get("taskId") == task_id
            and m["params"]["state"] in states
        ),
        timeout=60,
    )


def _creates(client: RawClient) -> list[Message]:
    return [m for m in client.messages if m.get("method") == CREATE]


def _progress(client: RawClient, token: str) -> list[Message]:
    return [
        m
        for m in client.messages
        if m.get("method") == "$/progress" and m["params"]["token"] == token
    ]


def test_an_unanswered_progress_create_is_not_waited_for_again(
    client: RawClient, demo_repo: Path
) -> None:
    client.initialize(demo_repo, {"window": {"workDoneProgress": True}})
    first = _review(client)
    client.wait_for(lambda m: m.get("method") == CREATE)  # never answered
    assert _state(client, first, "finished", "failed")["params"]["state"] == "finished"

    # The next reviews ask no more: nothing to wait for, they start at once.
    for _ in range(2):
        task_id = _review(client)
        assert _state(client, task_id, "finished", "failed")["params"]["state"] == "finished"
    assert len(_creates(client)) == 1
    assert not [m for m in client.messages if m.get("method") == "$/progress"]


def test_a_late_answer_brings_progress_back(client: RawClient, demo_repo: Path) -> None:
    client.initialize(demo_repo, {"window": {"workDoneProgress": True}})
    first = _review(client)
    create = client.wait_for(lambda m: m.get("method") == CREATE)
    assert _state(client, first, "finished", "failed")["params"]["state"] == "finished"
    client.send({"jsonrpc": "2.0", "id": create["id"], "result": None})  # late, but answered
    # The late answer is read before the next command (messages are handled in order).
    assert "error" not in client.request("redline/debugInfo", {})

    second = _review(client)
    again = client.wait_for(lambda m: m.get("method") == CREATE and m is not create)
    client.send({"jsonrpc": "2.0", "id": again["id"], "result": None})
    assert _state(client, second, "finished", "failed")["params"]["state"] == "finished"
    token = again["params"]["token"]
    client.wait_for(lambda m: [p["params"]["value"]["kind"] for p in _progress(client, token)][-1:]
                    == ["end"])  # fmt: skip
    kinds = [p["params"]["value"]["kind"] for p in _progress(client, token)]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert not _progress(client, create["params"]["token"])  # the first review had none
