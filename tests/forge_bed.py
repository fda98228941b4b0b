"""A fake forge for tests: copies of tests/fake_forge.py installed as `gh` and `glab` in a
directory, with the state they answer from and the log of every call they got."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from gitrepo import GitRepo

FAKE = Path(__file__).parent / "fake_forge.py"


class Forge:
    """The fake forge's directory: its executables, state and call log."""

    def __init__(self, root: Path, state: dict[str, Any]) -> None:
        self.root = root
        root.mkdir()
        for tool in ("gh", "glab"):
            shutil.copy(FAKE, root / tool)
            (root / tool).chmod(0o755)
        self.save(state)

    def state(self) -> dict[str, Any]:
        return json.loads((self.root / "state.json").read_text())

    def save(self, state: dict[str, Any]) -> None:
        (self.root / "state.json").write_text(json.dumps(state))

    def update(self, **changes: Any) -> None:
        self.save({**self.state(), **changes})

    def calls(self) -> list[dict[str, Any]]:
        log = self.root / "calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def writes(self) -> list[tuple[str, str]]:
        out = []
        for call in self.calls():
            argv = call["argv"]
            if argv[:1] == ["api"] and argv[argv.index("--method") + 1] != "GET":
                out.append((argv[argv.index("--method") + 1], argv[-1]))
        return out

    def clear_log(self) -> None:
        (self.root / "calls.jsonl").unlink(missing_ok=True)


def github_forge(
    root: Path, repo: GitRepo, slug: str, *, valid: dict[str, list[int]], number: int = 7
) -> Forge:
    """GitHub serving pull request `number`: the current branch of `repo` against main."""
    return Forge(
        root,
        {
            "slug": slug, "number": number, "login": "alice", "next_id": 100,
            "pr": {"title": "The change", "headRefName": "feature", "baseRefName": "main",
                   "headRefOid": repo.head(), "baseRefOid": repo.git("rev-parse", "main").strip()},
            "diff": repo.git("diff", "main...HEAD"), "valid": valid,
            "issue_comments": [], "review_comments": [],
        },
    )  # fmt: skip
