"""A repository under a path with `é` and `+`, driven by a raw JSON-RPC client that spells URIs
as Emacs (eglot) does — reserved characters such as `+` left unencoded — or with lowercase
percent escapes (as Neovim 0.7 does), never as the server itself would (`caf%C3%A9`,
`c%2B%2Bproj`): review, quick fix, squiggles that move with an edit, a rerun anchored to the
unsaved buffer, and a file opened after the review — each answered under the client's own
spelling of the URI."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest

from raw_rpc import Message, RawClient

from gitrepo import GitRepo
from lsp_support import server_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

REPORTS = "app/reports.py"
EXTRA = "app/extra.py"
# Committed on the branch beside the demo's change: a second file with a finding, opened only
# after the review.
EXTRA_TEXT = '"""Extra helpers."""\n\nimport os\n\n\ndef helper() -> int:\n    return 1\n'
# 0-based lines of the demo's four findings in app/reports.py (unused import, shell=True, bare
# except, mutable default).
LINES = [3, 20, 26, 30]


def emacs_uri(path: Path) -> str:
    # eglot's `url-hexify-string` with url-path-allowed-chars: `+ @ , ; =` stay as they are,
    # non-ASCII is encoded in upper case.
    return "file://" + quote(str(path), safe="/+@,;=!$&'()*")


def lowercase_uri(path: Path) -> str:
    # Every escape in lower case (Neovim 0.7's `vim.uri_from_fname`: `caf%c3%a9`), `+` encoded.
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), "file://" + quote(str(path)))


SPELLINGS: dict[str, Callable[[Path], str]] = {"emacs": emacs_uri, "lowercase": lowercase_uri}


def build_repo(tmp: Path) -> Path:
    root = tmp / "café" / "c++proj"
    demo.build_demo_repo(root)
    repo = GitRepo.__new__(GitRepo)
    repo.root = root
    repo.write(EXTRA, EXTRA_TEXT)
    repo.commit("Extra helpers")
    return root.resolve()


@pytest.fixture(params=sorted(SPELLINGS))
def spelling(request: pytest.FixtureRequest) -> Callable[[Path], str]:
    return SPELLINGS[request.param]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return build_repo(tmp_path)


@pytest.fixture
def client(repo: Path, tmp_path: Path) -> Iterator[RawClient]:
    c = RawClient(server_env(tmp_path / "cache"), repo)
    yield c
    if c.proc.poll() is None:
        c.close()


def _initialize(client: RawClient, root_uri: str) -> None:
    answer = client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "c++proj"}],
            "capabilities": {"workspace": {"workspaceEdit": {"documentChanges": True}}},
        },
    )
    assert "result" in answer, answer
    client.notify("initialized", {})


def _open(client: RawClient, uri: str, text: str, version: int = 1) -> None:
    doc = {"uri": uri, "languageId": "python", "version": version, "text": text}
    client.notify("textDocument/didOpen", {"textDocument": doc})


def _review(client: RawClient, command: str = "redline.review") -> None:
    args = [{"scope": "branch", "base": "main"}] if command == "redline.review" else [{}]
    answer = client.request("workspace/executeCommand", {"command": command, "arguments": args})
    task_id = answer["result"]["taskId"]
    done = client.wait_for(
        lambda m: (
            m.get("method") == "redline/reviewState"
            and m["params"].get("taskId") == task_id
            and m["params"]["state"] in ("finished", "failed", "cancelled")
        ),
        timeout=60,
    )
    assert done["params"]["state"] == "finished", done


def _diagnostics(client: RawClient, after: int) -> dict[str, list[int]]:
    """The lines of the last publishDiagnostics per uri, among messages[after:]."""
    out: dict[str, list[int]] = {}
    for m in client.messages[after:]:
        if m.get("method") == "textDocument/publishDiagnostics":
            params = m["params"]
            out[params["uri"]] = sorted(d["range"]["start"]["line"] for d in params["diagnostics"])
    return out


def _published(client: RawClient, uri: str, lines: list[int], after: int) -> Message:
    """Wait until `uri` (exactly as spelled) is published with diagnostics on `lines`."""

    def match(m: Message) -> bool:
        if m.get("method") != "textDocument/publishDiagnostics" or m["params"]["uri"] != uri:
            return False
        return sorted(d["range"]["start"]["line"] for d in m["params"]["diagnostics"]) == lines

    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        found = next((m for m in list(client.messages)[after:] if match(m)), None)
        if found is not None:
            return found
        time.sleep(0.05)
    raise AssertionError(
        f"no publishDiagnostics for {uri} on lines {lines}; published since: "
        f"{_diagnostics(client, after)}\nstderr: {client.stderr[-2000:]}"
    )


def test_a_client_spelling_of_a_path_with_e_acute_and_plus_is_answered_in_kind(
    client: RawClient, repo: Path, spelling: Callable[[Path], str]
) -> None:
    root_uri = spelling(repo)
    reports_uri = spelling(repo / REPORTS)
    extra_uri = spelling(repo / EXTRA)
    assert "é" not in reports_uri and ("%c3%a9" in reports_uri or "%C3%A9" in reports_uri)
    text = (repo / REPORTS).read_text(encoding="utf-8")
    _initialize(client, root_uri)
    _open(client, reports_uri, text)

    # The review's diagnostics come back under the client's spelling.
    seen = len(client.messages)
    _review(client)
    published = _published(client, reports_uri, LINES, seen)
    assert {d["source"] for d in published["params"]["diagnostics"]} == {"redline"}
    # The sidebar's rows name the open file as the client does.
    listed = [
        f["uri"]
        for m in client.messages[seen:]
        if m.get("method") == "redline/findings"
        for f in m["params"]["files"]
        if f["path"] == REPORTS
    ]
    assert listed and set(listed) == {reports_uri}, listed

    # A hover on the flagged line finds the finding, its range on that line.
    hover = client.request(
        "textDocument/hover",
        {"textDocument": {"uri": reports_uri}, "position": {"line": 3, "character": 8}},
    )
    assert hover.get("result"), hover
    assert "Unused import" in hover["result"]["contents"]["value"]
    assert hover["result"]["range"]["start"]["line"] == 3

    # Quick fix at the unused import: the fix, with an edit of the client's uri.
    answer = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": reports_uri},
            "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 0}},
            "context": {"diagnostics": []},
        },
    )
    actions: list[dict[str, Any]] = answer.get("result") or []
    fixes = [a for a in actions if a["title"].startswith("Redline: apply fix")]
    assert fixes, f"no quick fix at the unused import: {answer}"
    changes = fixes[0]["edit"]["documentChanges"]
    assert [c["textDocument"]["uri"] for c in changes] == [reports_uri]
    assert changes[0]["textDocument"]["version"] == 1

    # An edit above the findings (a new first line, unsaved) moves every squiggle down one.
    seen = len(client.messages)
    top = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": reports_uri, "version": 2},
            "contentChanges": [{"range": top, "text": "# a new first line\n"}],
        },
    )
    shifted = [line + 1 for line in LINES]
    _published(client, reports_uri, shifted, seen)

    # A rerun anchors to the unsaved buffer, not to the file on disk.
    seen = len(client.messages)
    _review(client, "redline.rerun")
    _published(client, reports_uri, shifted, seen)
    assert _diagnostics(client, seen).get(reports_uri) == shifted

    # A file opened after the review gets its squiggles, under the client's spelling (eglot
    # drops diagnostics of files it has not visited).
    seen = len(client.messages)
    _open(client, extra_uri, (repo / EXTRA).read_text(encoding="utf-8"))
    _published(client, extra_uri, [2], seen)
    # What the review published under the server's spelling is cleared first: a client that
    # compares URIs as text would show it twice.
    server_uri = (repo / EXTRA).as_uri()
    assert server_uri != extra_uri
    order = [
        (m["params"]["uri"], len(m["params"]["diagnostics"]))
        for m in client.messages[seen:]
        if m.get("method") == "textDocument/publishDiagnostics"
    ]
    assert order[:2] == [(server_uri, 0), (extra_uri, 1)], order

    # The open file's diagnostics were never published under another spelling.
    spelled = {
        m["params"]["uri"]
        for m in client.messages
        if m.get("method") == "textDocument/publishDiagnostics"
        and unquote(m["params"]["uri"]) == unquote(reports_uri)
    }
    assert spelled == {reports_uri}, spelled
