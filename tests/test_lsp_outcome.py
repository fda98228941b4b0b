"""How an empty review is told, seen by a raw JSON-RPC client: a plain client (Neovim, Emacs,
Kate, Helix) gets one Info `window/showMessage` "no findings" per review; the VS Code extension,
whose status bar and sidebar already say it, declares so in its initializationOptions (read here
from editor-client/src/client.ts, as it sends them) and gets none; a review with findings gets
none either."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from raw_rpc import RawClient

from gitrepo import GitRepo
from lsp_support import server_env

INFO = 3
CLIENT_TS = Path(__file__).resolve().parents[1] / "editor-client" / "src" / "client.ts"


def extension_initialization_options() -> dict[str, Any]:
    """The object literal the extension passes as `initializationOptions` (flat, literal
    values), as JSON."""
    found = re.search(r"initializationOptions:\s*(\{[^{}]*\})", CLIENT_TS.read_text("utf-8"))
    assert found, "client.ts passes no initializationOptions literal"
    quoted = re.sub(r"(\w+)\s*:", r'"\1":', found.group(1))
    value: dict[str, Any] = json.loads(quoted)
    return value


@pytest.fixture
def clean_change(repo: GitRepo) -> GitRepo:
    repo.write("clean.py", "def add(a: int, b: int) -> int:\n    return a + b\n")
    repo.commit("init")
    repo.write("clean.py", "def add(a: int, b: int) -> int:\n    return b + a\n")
    return repo


def _client(repo: GitRepo, tmp_path: Path, options: dict[str, Any] | None) -> RawClient:
    client = RawClient(server_env(tmp_path / "cache"), repo.root)
    answer = client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": repo.root.as_uri(),
            "capabilities": {},
            **({"initializationOptions": options} if options is not None else {}),
        },
    )
    assert "result" in answer, answer
    client.notify("initialized", {})
    return client


@pytest.fixture
def plain_client(clean_change: GitRepo, tmp_path: Path) -> Iterator[RawClient]:
    client = _client(clean_change, tmp_path, None)
    yield client
    client.close()


def _review(client: RawClient) -> dict[str, Any]:
    answer = client.request(
        "workspace/executeCommand",
        {"command": "redline.review", "arguments": [{"scope": "uncommitted"}]},
    )
    task_id = answer["result"]["taskId"]
    done = client.wait_for(
        lambda m: (
            m.get("method") == "redline/reviewState"
            and m["params"].get("taskId") == task_id
            and m["params"]["state"] in ("finished", "failed", "cancelled")
        ),
        timeout=60,
    )
    # Anything sent with the outcome has arrived once a later request is answered.
    assert "result" in client.request("redline/debugInfo", {})
    params: dict[str, Any] = done["params"]
    return params


def _shown(client: RawClient) -> list[dict[str, Any]]:
    return [m["params"] for m in client.messages if m.get("method") == "window/showMessage"]


def test_a_plain_client_is_told_once_per_empty_review(plain_client: RawClient) -> None:
    for review in (1, 2):
        end = _review(plain_client)
        assert end["state"] == "finished" and end["findings"] == 0, end
        shown = _shown(plain_client)
        assert len(shown) == review, shown
        assert shown[-1]["type"] == INFO
        assert shown[-1]["message"] == f"Redline: no findings ({end['label']})"
        assert "uncommitted changes on main" in shown[-1]["message"]


def test_the_vscode_extension_says_it_itself_so_the_server_does_not(
    clean_change: GitRepo, tmp_path: Path
) -> None:
    options = extension_initialization_options()
    assert options.get("clientShowsOutcome") is True, options
    client = _client(clean_change, tmp_path, options)
    try:
        end = _review(client)
        assert end["state"] == "finished" and end["findings"] == 0, end
        assert _shown(client) == []
    finally:
        client.close()


def test_a_review_with_findings_shows_no_message(plain_client: RawClient, repo: GitRepo) -> None:
    repo.write("clean.py", "import os\n\ndef add(a: int, b: int) -> int:\n    return b + a\n")
    end = _review(plain_client)
    assert end["state"] == "finished" and end["findings"] >= 1, end
    assert _shown(plain_client) == []
