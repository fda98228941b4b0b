"""The language server, seen by a raw JSON-RPC client: `redline.dismiss` with `learn` keeps
the dismissal's reason as a learning (issue 27), and the next review applies it — to every
finding of the dismissed finding's rule in its scope, counted in the coverage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raw_rpc import RawClient, review_uncommitted
from redline.memory.learnings import COMMITTED_FILE, parse

from gitrepo import GitRepo
from lsp_support import server_env


def _dismiss(client: RawClient, args: dict[str, Any]) -> dict[str, Any]:
    return client.request(
        "workspace/executeCommand", {"command": "redline.dismiss", "arguments": [args]}
    )


def test_a_dismissal_with_learn_becomes_a_learning_the_next_review_applies(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write("pkg/a.py", "x = 1\n")
    repo.commit("base")
    repo.write("pkg/a.py", "import os\nimport sys\nx = 1\n")  # two F401 findings
    client = RawClient(server_env(tmp_path / "cache"), repo.root)
    try:
        client.initialize(repo.root)
        first = review_uncommitted(client)
        assert first["findings"] == 2, first
        findings = client.wait_for(
            lambda m: m.get("method") == "redline/findings" and m["params"]["files"]
        )
        finding_id = findings["params"]["files"][0]["findings"][0]["id"]

        refused = _dismiss(client, {"id": finding_id, "reason": " ", "learn": True})
        assert "error" in refused and "only with a reason" in refused["error"]["message"]
        assert not (repo.root / ".redline" / "dismissed.toml").exists()  # nothing dismissed

        answer = _dismiss(
            client,
            {"id": finding_id, "reason": "imports re-export", "learn": {"paths": ["pkg/**"]}},
        )
        learned = answer["result"]["learned"]
        assert answer["result"]["dismissed"] == [finding_id], answer
        (item,) = parse((repo.root / COMMITTED_FILE).read_text(encoding="utf-8")).learnings
        assert (item.id, item.text, item.paths, item.rules) == (
            learned,
            "imports re-export",
            ("pkg/**",),
            ("F401",),
        )

        second = review_uncommitted(client)
        uses = second["coverage"]["learnings"]
        # Both unused imports are the learning's now (it applies before dismissals); what is
        # left is the Low finding on the user's own new learnings file.
        assert [(u["id"], u["findings_dropped"]) for u in uses] == [(learned, 2)], uses
        assert second["findings"] == 1, second
    finally:
        client.close()
