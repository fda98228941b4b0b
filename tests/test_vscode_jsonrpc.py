"""`redline lsp` through vscode-jsonrpc, the JSON-RPC library VS Code's language client uses:
tests/node/smoke.js runs a branch review of the demo repository with VS Code-like capabilities and
fails if vscode-jsonrpc reports an error or the server's stdout is not a clean LSP stream — the
way a stray write to stdout breaks the extension. The negative tests prove it notices."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from real_clients import REDLINE, TESTS, client_env, missing

sys.path.insert(0, str(TESTS.parent / "scripts"))
import demo

NODE_DIR = TESTS / "node"
SMOKE = NODE_DIR / "smoke.js"
TIMEOUT = 60  # seconds; a run takes about 3


def node() -> str:
    found = shutil.which("node")
    if found is None:
        missing("Node.js (node)", "apt-get install -y nodejs npm")
    assert found is not None
    if not (NODE_DIR / "node_modules" / "vscode-jsonrpc" / "package.json").exists():
        missing("vscode-jsonrpc", f"npm ci --prefix {NODE_DIR}")
    return found


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo.build_demo_repo(tmp_path / "demo")


SERVER = [str(REDLINE), "lsp"]


def smoke(server: list[str], repo: Path, tmp: Path) -> tuple[int, Summary, str]:
    proc = subprocess.run(
        [node(), str(SMOKE), str(repo), *server],
        cwd=repo,
        env=client_env(tmp, SMOKE_TIMEOUT_MS="45000"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    lines = proc.stdout.strip().splitlines()
    assert lines, f"no summary (exit {proc.returncode}); stderr: {proc.stderr[-3000:]}"
    return proc.returncode, Summary(json.loads(lines[-1])), proc.stderr


class Summary(dict[str, Any]):
    """smoke.js's JSON summary, shown whole in assertion messages."""

    def __repr__(self) -> str:
        return json.dumps(self, indent=1, ensure_ascii=False)


def shell(script: str) -> list[str]:
    """A server command: `script` run by sh, with the real server as "$@" (no file to exec)."""
    return ["/bin/sh", "-c", script, "sh", *SERVER]


def test_vscode_jsonrpc_session_is_clean(repo: Path, tmp_path: Path) -> None:
    code, summary, stderr = smoke(SERVER, repo, tmp_path)
    assert code == 0 and summary["ok"] is True, (summary, stderr[-3000:])
    assert summary["connectionErrors"] == []
    assert summary["serverInfo"]["name"] == "redline"
    assert summary["positionEncoding"] == "utf-16"
    assert summary["finished"]["state"] == "finished"
    # app/reports.py's four findings and one in each of the demo's files in other languages.
    assert summary["finished"]["findings"] == len(demo.EXPECTED)
    expected: dict[str, list[int]] = {}
    for path, line in sorted(demo.EXPECTED.values()):
        expected.setdefault(path, []).append(line - 1)
    assert summary["diagnostics"] == expected
    assert summary["sources"] == ["redline"]
    # Work-done progress was created the VS Code way, and the stdout probe left the connection
    # (and the same server process) working.
    assert "window/workDoneProgress/create" in summary["serverRequests"]
    assert summary["probe"]["samePid"] is True and summary["probe"]["running"] == []
    assert summary["stdoutMessages"] > 10
    assert summary["exitCode"] == 0


def test_smoke_test_fails_when_stdout_is_polluted_at_start(repo: Path, tmp_path: Path) -> None:
    code, summary, _ = smoke(shell('echo "starting redline"; exec "$@"'), repo, tmp_path)
    assert code == 1 and summary["ok"] is False, summary
    # vscode-jsonrpc itself rejects the stream, as VS Code's client would ...
    assert any("Content-Length" in e for e in summary["connectionErrors"]), summary
    # ... and so does the independent parse of the raw stdout.
    assert any("not a clean LSP stream" in f for f in summary["failures"]), summary


def test_smoke_test_fails_when_stdout_is_polluted_after_the_session(
    repo: Path, tmp_path: Path
) -> None:
    # Bytes after the last message never reach a vscode-jsonrpc callback: only the raw parse
    # sees them.
    code, summary, _ = smoke(shell('"$@"; echo "redline: bye"'), repo, tmp_path)
    assert code == 1 and summary["ok"] is False, summary
    assert (summary["finished"] or {}).get("state") == "finished", summary
    assert any("trailing bytes" in f for f in summary["failures"]), summary


def test_smoke_test_fails_without_the_servers_stdout_guard(repo: Path, tmp_path: Path) -> None:
    # The server with its guard (fd 1 pointed at stderr) switched off: the stdout probe's write
    # to fd 1 lands in the middle of the protocol stream.
    code = (
        "import sys; import redline.lsp.server as s; "
        "s._private_stdout = lambda: sys.stdout.buffer; sys.exit(s.main())"
    )
    exit_code, summary, _ = smoke([sys.executable, "-c", code], repo, tmp_path)
    assert exit_code == 1 and summary["ok"] is False, summary
    # fine until the probe wrote to fd 1
    assert (summary["finished"] or {}).get("state") == "finished", summary
    assert summary["connectionErrors"], summary
    assert any("not a clean LSP stream" in f for f in summary["failures"]), summary
