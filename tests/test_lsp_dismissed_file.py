"""The language server, seen by a raw JSON-RPC client: after `redline.dismiss` wrote
`.redline/dismissed.toml`, the next review does not count it as a changed file, list it as
skipped, or publish anything for it (issue 25)."""

from __future__ import annotations

from pathlib import Path

from raw_rpc import RawClient, review_uncommitted

from gitrepo import GitRepo
from lsp_support import server_env


def test_a_dismissal_is_not_the_next_reviews_change(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    repo.write("a.py", "import os\nimport sys\nx = 1\n")
    client = RawClient(server_env(tmp_path / "cache"), repo.root)
    try:
        client.initialize(repo.root)
        first = review_uncommitted(client)
        assert first["findings"] == 2 and first["label"].endswith("1 file, +2 −0"), first
        findings = client.wait_for(
            lambda m: m.get("method") == "redline/findings" and m["params"]["files"]
        )
        finding_id = findings["params"]["files"][0]["findings"][0]["id"]
        answer = client.request(
            "workspace/executeCommand",
            {"command": "redline.dismiss", "arguments": [{"id": finding_id, "reason": "kept"}]},
        )
        assert answer["result"]["dismissed"] == [finding_id], answer
        assert (repo.root / ".redline" / "dismissed.toml").is_file()

        second = review_uncommitted(client)
        assert second["findings"] == 1
        assert second["label"].endswith("1 file, +2 −0"), second["label"]
        coverage = second["coverage"]
        assert coverage["reviewed_files"] == ["a.py"]
        assert [s for s in coverage["skipped"] if "dismissed" in s["path"]] == []
        published = {
            m["params"]["uri"]
            for m in client.messages
            if m.get("method") == "textDocument/publishDiagnostics"
        }
        assert published == {(repo.root / "a.py").as_uri()}, published
    finally:
        client.close()
