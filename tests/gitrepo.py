"""Real git repositories in temporary directories, for tests and benchmarks.

Commands run with a fixed identity and dates and without the user's global config, so a test
sees the same repository on every machine.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/nonexistent",
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


class GitRepo:
    def __init__(self, root: Path, *, branch: str = "main") -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", branch)

    def git(self, *args: str, input: bytes | None = None) -> str:
        out = subprocess.run(
            ["git", *args], cwd=self.root, env=_ENV, input=input, capture_output=True, check=False
        )
        if out.returncode != 0:
            raise AssertionError(
                f"git {' '.join(args)} failed: {out.stderr.decode(errors='replace')}"
            )
        return out.stdout.decode("utf-8", errors="replace")

    def write(self, rel: str, content: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_bytes(content.encode("utf-8"))
        else:
            path.write_bytes(content)
        return path

    def commit(self, message: str = "commit", *, add_all: bool = True) -> str:
        if add_all:
            self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def checkout(self, *args: str) -> None:
        self.git("checkout", "-q", *args)
