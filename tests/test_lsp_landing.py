"""A big review's results land without stalling the server: requests that arrive while 200
files of diagnostics are being published are answered among them, not after them, and what
lands is consistent with the buffers edited meanwhile. Seen by a raw JSON-RPC client.

The review is offline: ruff on 200 new files with six bare `except:` each (E722), ~1,200
findings, landing twice (the analyzers' early list, then the final one). On a server that
publishes a landing in one go, a request sent when its first diagnostics arrive is answered
only after all 200 files: the count of diagnostics before the answer tells the two apart
without timing anything."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from raw_rpc import Message, RawClient

from gitrepo import GitRepo
from lsp_support import server_env
from review_script import ReviewScript
from scripted_llm import ScriptedLLM

FILES = 200
BLOCKS = 6
OPEN = 199  # the file opened in the editor: the last one listed


def module_path(i: int) -> str:
    return f"pkg{i // 10}/handler_{i}.py"


def module_text(i: int) -> str:
    out = [f'"""Handlers of service {i}."""', "", "import logging", ""]
    out.append("log = logging.getLogger(__name__)")
    for f in range(BLOCKS):
        out += [
            "",
            "",
            f"def handle_{f}(records: list[dict]) -> int:",
            "    count = 0",
            "    for record in records:",
            "        try:",
            f'            count += int(record["n_{f}"])',
            f"        except:  # batch {f}",  # each line differs: no ambiguous quote
            "            log.warning('skipped')",
            "    return count",
        ]
    return "\n".join(out) + "\n"


def except_lines(text: str) -> list[int]:
    return [i for i, line in enumerate(text.splitlines()) if line.strip().startswith("except:")]


@pytest.fixture
def big_repo(tmp_path: Path) -> Path:
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "handlers\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(FILES):
        repo.write(module_path(i), module_text(i))
    repo.commit("feature: handlers")
    return repo.root


@pytest.fixture
def client(big_repo: Path, tmp_path: Path) -> Iterator[RawClient]:
    config = tmp_path / "redline.toml"
    config.write_text("[analyzers]\nruff = true\nbandit = false\n", encoding="utf-8")
    env = server_env(tmp_path / "cache", REDLINE_CONFIG=str(config))
    c = RawClient(env, big_repo)
    yield c
    if c.proc.poll() is None:
        c.close()


def _is_diagnostics(m: Message) -> bool:
    return m.get("method") == "textDocument/publishDiagnostics" and bool(m["params"]["diagnostics"])


def _review(client: RawClient) -> tuple[str, int]:
    """Start the branch review; its task id and how many messages had arrived before it."""
    before = len(client.messages)
    answer = client.request(
        "workspace/executeCommand",
        {"command": "redline.review", "arguments": [{"scope": "branch", "base": "main"}]},
    )
    return str(answer["result"]["taskId"]), before


def _first_diagnostics(client: RawClient, after: int) -> None:
    """Until the first non-empty diagnostics after message `after` have arrived."""
    client.wait_for(lambda _: any(_is_diagnostics(m) for m in client.messages[after:]), 120)


def _diagnostics_before(client: RawClient, answer: Message, after: int) -> int:
    """Non-empty publishDiagnostics that arrived after message `after` and before `answer`."""
    at = next(i for i, m in enumerate(client.messages) if m is answer)
    return sum(1 for m in client.messages[after:at] if _is_diagnostics(m))


def _finished(client: RawClient, task_id: str) -> Message:
    return client.wait_for(
        lambda m: (
            m.get("method") == "redline/reviewState"
            and m["params"].get("taskId") == task_id
            and m["params"]["state"] in ("finished", "failed", "cancelled")
        ),
        timeout=120,
    )


def _open(client: RawClient, root: Path, i: int) -> tuple[str, str]:
    path = root / module_path(i)
    text = path.read_text(encoding="utf-8")
    doc = {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}
    client.notify("textDocument/didOpen", {"textDocument": doc})
    return path.as_uri(), text


def _hover(uri: str, line: int) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": 8}}


def test_requests_are_answered_while_the_results_land(client: RawClient, big_repo: Path) -> None:
    client.initialize(big_repo)
    uri, text = _open(client, big_repo, OPEN)
    lines = except_lines(text)
    # Warm: the first hover imports what hovers need.
    client.request("textDocument/hover", _hover(uri, lines[0]), timeout=30)

    task_id, start = _review(client)
    _first_diagnostics(client, start)
    hover = client.request("textDocument/hover", _hover(uri, 0), timeout=60)
    action = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": []},
        },
        timeout=60,
    )
    assert "error" not in hover and "error" not in action
    # Answered among the landing's diagnostics, not after all 200 files of them.
    assert _diagnostics_before(client, hover, start) < FILES
    assert _diagnostics_before(client, action, start) < FILES

    assert _finished(client, task_id)["params"]["state"] == "finished"
    # Everything landed: every file's six findings, the open file's where its buffer has them.
    final = client.wait_for(
        lambda m: (
            m.get("method") == "redline/findings"
            and m["params"].get("taskId") == task_id
            and sum(len(f["findings"]) for f in m["params"]["files"]) == FILES * BLOCKS
        ),
        timeout=30,
    )
    assert final["params"]["full"] is True
    shown = _last_diagnostics(client)
    assert len(shown) == FILES and all(len(d) == BLOCKS for d in shown.values())
    assert sorted(d["range"]["start"]["line"] for d in shown[uri]) == lines

    # Shutdown asked as the next review's results start landing: answered among them.
    _, start = _review(client)
    _first_diagnostics(client, start)
    answer = client.request("shutdown", timeout=60)
    assert answer["result"] is None
    assert _diagnostics_before(client, answer, start) < FILES
    client.notify("exit")
    assert client.close() == 0


def _last_diagnostics(client: RawClient) -> dict[str, list[dict[str, Any]]]:
    last: dict[str, list[dict[str, Any]]] = {}
    for m in client.messages:
        if m.get("method") == "textDocument/publishDiagnostics":
            last[m["params"]["uri"]] = m["params"]["diagnostics"]
    return {uri: d for uri, d in last.items() if d}


def test_an_edit_made_while_the_results_land_is_what_they_land_in(
    client: RawClient, big_repo: Path
) -> None:
    client.initialize(big_repo)
    uri, text = _open(client, big_repo, OPEN)
    task_id, start = _review(client)
    _first_diagnostics(client, start)
    # Three lines typed at the top of the open file while the other files' results land.
    top = {"line": 0, "character": 0}
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": top, "end": top}, "text": "# a\n# b\n# c\n"}],
        },
    )
    assert _finished(client, task_id)["params"]["state"] == "finished"
    moved = [line + 3 for line in except_lines(text)]

    def settled() -> bool:
        shown = _last_diagnostics(client).get(uri, [])
        return sorted(d["range"]["start"]["line"] for d in shown) == moved

    client.wait_for(lambda m: settled(), timeout=30)
    last = [
        m
        for m in client.messages
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    ][-1]
    assert last["params"]["version"] == 2
    listed = client.wait_for(
        lambda m: (
            m.get("method") == "redline/findings"
            and any(
                f["uri"] == uri and sorted(r["line"] - 1 for r in f["findings"]) == moved
                for f in m["params"]["files"]
            )
        ),
        timeout=30,
    )
    assert listed["params"]["taskId"] == task_id


# -- a model review posts its findings file by file ----------------------------------------------

MODEL_FILES = 8


def _scored(i: int, sign: str) -> str:
    return f"def score_{i}(w: int, b: int) -> int:\n    return w {sign} {i} * b\n"


def test_a_model_reviews_early_findings_update_the_list_file_by_file(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    for i in range(MODEL_FILES):
        repo.write(f"svc/score_{i}.py", _scored(i, "+"))
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(MODEL_FILES):
        repo.write(f"svc/score_{i}.py", _scored(i, "-"))
    repo.commit("feature: scores")
    findings = {
        f"svc/score_{i}.py": [
            {
                "file": f"svc/score_{i}.py",
                "severity": "High",
                "category": "Functionality",
                "title": f"Sign flip in score_{i}",
                "comment": "The boost is now subtracted.",
                "existing_code": f"    return w - {i} * b",
                "improved_code": f"    return w + {i} * b",
                "confidence": 0.9,
            }
        ]
        for i in range(MODEL_FILES)
    }
    config = tmp_path / "user.toml"
    config.write_text(
        "[llm]\nmax_retries = 0\ntimeout = 30\n\n[analyzers]\nruff = false\nbandit = false\n",
        encoding="utf-8",
    )
    with ScriptedLLM(handler=ReviewScript(findings=findings)) as llm:
        env = server_env(
            tmp_path / "cache",
            REDLINE_CONFIG=str(config),
            REDLINE_MODEL="openai/scripted",
            REDLINE_API_BASE=llm.base_url,
            REDLINE_API_KEY="sk-test-key-not-secret",
        )
        client = RawClient(env, repo.root)
        try:
            client.initialize(repo.root)
            task_id, start = _review(client)
            assert _finished(client, task_id)["params"]["state"] == "finished"
            final = client.wait_for(
                lambda m: (
                    m.get("method") == "redline/findings"
                    and m["params"].get("taskId") == task_id
                    and sum(len(f["findings"]) for f in m["params"]["files"]) == MODEL_FILES
                    and all(r.get("runs") == ["review"] for f in m["params"]["files"]
                            for r in f["findings"])
                ),
                timeout=30,
            )  # fmt: skip
            assert final["params"]["full"] is True
            lists = [
                m["params"]
                for m in client.messages[start:]
                if m.get("method") == "redline/findings" and m["params"].get("taskId") == task_id
            ]
            # The early findings' first list is whole, the next ones name the files that
            # changed; the final list is whole again: never a whole list per file.
            assert sum(1 for p in lists if p["full"]) <= 2, [p["full"] for p in lists]
            assert client.request("shutdown")["result"] is None
            client.notify("exit")
            assert client.close() == 0
        finally:
            if client.proc.poll() is None:
                client.proc.kill()
