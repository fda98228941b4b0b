"""The real Kate (Debian 12's 22.12) with README.md's Kate snippet, as a user sets it up.

Kate runs headless under Xvfb, driven by xdotool: it opens a file of a repository with
uncommitted changes, the save reviews them (`autoReviewOnSave`), then **Quick Fix** (found in
Kate's command bar) with the cursor on the unused import. `redline` on Kate's PATH is a recording
proxy (tests/kate/record_proxy.py) in front of the real server, so the test sees every byte
Kate and the server exchange, and the server's stderr (which Kate shows in its output pane).

Kate 22.12's Quick Fix asks for the diagnostic under the cursor over the whole document and runs
every action returned: only that finding's fix may come back. tests/test_editor_requests.py
replays the same requests over raw JSON-RPC where Kate is not installed.

`make test-deps` installs Kate, Xvfb, xdotool and dbus (161 Debian packages, ~35 MB, about 75 s);
elsewhere (no root, no apt) this test is skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from far_findings import APP, DISMISS_COMMANDS, FSTRING_LINE, IMPORT_LINE

from gitrepo import GitRepo
from readme_snippets import snippet
from real_clients import REDLINE, TESTS, client_env

TOOLS = ("kate", "Xvfb", "xdotool", "dbus-run-session")
PROXY = TESTS / "kate" / "record_proxy.py"
Message = dict[str, Any]

pytestmark = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in TOOLS),
    reason="Kate is not installed: apt-get install -y --no-install-recommends "
    "kate xvfb xdotool (dbus-run-session is in dbus)",
)


def frames(path: Path) -> list[Message]:
    """The JSON-RPC messages in a recorded byte stream."""
    data = path.read_bytes() if path.exists() else b""
    out: list[Message] = []
    at = 0
    while (end := data.find(b"\r\n\r\n", at)) >= 0:
        headers = data[at:end].decode("ascii").split("\r\n")
        length = next(int(h.split(":")[1]) for h in headers if h.lower().startswith("content-"))
        body = data[end + 4 : end + 4 + length]
        if len(body) < length:
            break
        out.append(json.loads(body))
        at = end + 4 + length
    return out


class KateSession:
    def __init__(self, root: Path, tmp: Path) -> None:
        self.root = root
        self.record = tmp / "record"
        self.record.mkdir()
        home = tmp / "home"
        config = home / ".config"
        (config / "kate" / "lspclient").mkdir(parents=True)
        # The README's snippet, verbatim, where Kate's "User Server Settings" page writes it.
        (config / "kate" / "lspclient" / "settings.json").write_text(snippet("Kate", "json"))
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        wrapper = bin_dir / "redline"
        wrapper.write_text(
            f'#!/bin/sh\nexec "{sys.executable}" "{PROXY}" "{self.record}" "{REDLINE}" "$@"\n'
        )
        wrapper.chmod(0o755)
        # Kate asks once before it starts a server command line; the user said yes.
        (config / "katerc").write_text(f"[lspclient]\nAllowedServerCommandLines={wrapper} lsp\n")
        # KIO's sockets live here, and a socket's path holds at most 107 bytes: not under
        # pytest's long tmp_path, or Kate cannot save ("Can not create a socket").
        self.runtime = Path(tempfile.mkdtemp(prefix="kate"))
        runtime = self.runtime
        self.env = client_env(
            tmp,
            HOME=str(home),
            XDG_CONFIG_HOME=str(config),
            XDG_DATA_HOME=str(home / ".local" / "share"),
            XDG_CACHE_HOME=str(home / ".cache"),
            XDG_RUNTIME_DIR=str(runtime),
            PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            QT_QPA_PLATFORM="xcb",
        )
        self.log = (tmp / "kate.log").open("wb")
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, file: Path) -> None:
        # Xvfb picks a free display and writes its number to the pipe once it is ready (other
        # X servers may run on this machine).
        read, write = os.pipe()
        screen = ["-screen", "0", "1280x1024x24", "-nolisten", "tcp"]
        self._spawn(["Xvfb", "-displayfd", str(write), *screen], pass_fds=(write,))
        os.close(write)
        with os.fdopen(read) as ready:
            self.env["DISPLAY"] = ":" + ready.readline().strip()
        self.window = ""
        self._spawn(["dbus-run-session", "--", "kate", "-n", "-l", "1", str(file)])
        found = self.xdotool("search", "--sync", "--onlyvisible", "--name", file.name, timeout=30)
        self.window = found.split()[0]
        self.xdotool("windowfocus", "--sync", self.window)

    def _spawn(self, command: list[str], pass_fds: tuple[int, ...] = ()) -> None:
        self.procs.append(
            subprocess.Popen(
                command,
                env=self.env,
                stdout=self.log,
                stderr=self.log,
                start_new_session=True,
                pass_fds=pass_fds,
            )
        )

    def xdotool(self, *args: str, timeout: float = 10) -> str:
        done = subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, timeout=timeout, check=True
        )
        return done.stdout.decode()

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.xdotool("key", "--window", self.window, key)
            time.sleep(0.2)

    def type(self, text: str) -> None:
        self.xdotool("type", "--window", self.window, "--delay", "60", text)

    def sent(self) -> list[Message]:
        return frames(self.record / "in.bin")

    def methods_sent(self) -> set[str]:
        return {m.get("method", "") for m in self.sent()}

    def received(self) -> list[Message]:
        return frames(self.record / "out.bin")

    def stderr(self) -> str:
        path = self.record / "err.bin"
        return path.read_text(errors="replace") if path.exists() else ""

    def wait(self, what: str, done: Callable[[], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"Kate: {what} did not happen in {timeout} s")
            time.sleep(0.2)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        self.log.close()
        shutil.rmtree(self.runtime, ignore_errors=True)


@pytest.fixture
def kate(tmp_path: Path) -> Iterator[tuple[KateSession, GitRepo]]:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.write("app.py", APP)
    session = KateSession(repo.root, tmp_path)
    try:
        yield session, repo
    finally:
        session.stop()


def _diagnostics(session: KateSession, uri: str) -> list[Message]:
    published = [
        m["params"]["diagnostics"]
        for m in session.received()
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    ]
    return published[-1] if published else []


def test_kate_quick_fix_with_the_readme_snippet_applies_that_fix_only(
    kate: tuple[KateSession, GitRepo],
) -> None:
    session, repo = kate
    file = repo.root / "app.py"
    uri = file.as_uri()
    session.start(file)
    session.wait("the server's start", lambda: any(m.get("id") == 1 for m in session.received()))

    session.wait("didOpen", lambda: "textDocument/didOpen" in session.methods_sent())

    # Kate cannot send a command: a save reviews the uncommitted changes.
    for _attempt in range(3):  # a key pressed while the window still settles can be lost
        session.xdotool("windowfocus", "--sync", session.window)
        session.keys("ctrl+Home")
        session.type("#")
        session.keys("BackSpace", "ctrl+s")
        with contextlib.suppress(AssertionError):
            session.wait("didSave", lambda: "textDocument/didSave" in session.methods_sent(), 5)
            break
    session.wait("the review's diagnostics", lambda: len(_diagnostics(session, uri)) >= 4, 90)
    import_id = next(
        d["data"]["id"]
        for d in _diagnostics(session, uri)
        if d["range"]["start"]["line"] == IMPORT_LINE
    )

    # Quick Fix, from Kate's command bar, with the cursor on the unused import.
    session.keys("ctrl+Home", "ctrl+alt+i")
    session.type("quick fix")
    session.keys("Return")

    def quick_fix_request() -> Message | None:
        return next(
            (
                m
                for m in session.sent()
                if m.get("method") == "textDocument/codeAction"
                and m["params"]["context"]["diagnostics"]
            ),
            None,
        )

    session.wait("Quick Fix's request", lambda: quick_fix_request() is not None)
    asked = quick_fix_request()
    assert asked is not None
    # What tests/test_editor_requests.py replays: the whole document, that one diagnostic.
    assert asked["params"]["range"]["start"] == {"line": 0, "character": 0}
    assert asked["params"]["range"]["end"]["line"] == len(APP.split("\n")) - 1
    assert len(asked["params"]["context"]["diagnostics"]) == 1
    assert "data" not in asked["params"]["context"]["diagnostics"][0]

    def commands() -> list[Message]:
        sent = session.sent()
        return [m["params"] for m in sent if m.get("method") == "workspace/executeCommand"]

    session.wait("the fix's command", lambda: bool(commands()))
    time.sleep(2)  # anything else Kate would run
    assert [c["command"] for c in commands() if c["command"] in DISMISS_COMMANDS] == []
    assert commands() == [{"command": "redline.fixApplied", "arguments": [uri, import_id]}]
    assert not (repo.root / ".redline" / "dismissed.toml").exists()
    changes = [
        m["params"]["contentChanges"][-1]["text"]
        for m in session.sent()
        if m.get("method") == "textDocument/didChange"
    ]
    assert changes and changes[-1] == APP.replace("import os\n", "", 1)
    assert 'print(f"done")' in changes[-1].split("\n")[FSTRING_LINE - 1]

    # Kate's output pane: the server's stderr, and its log and show messages.
    noisy = [
        m["params"]["message"]
        for m in session.received()
        if m.get("method") in ("window/logMessage", "window/showMessage")
        and m["params"]["type"] in (1, 2)
    ]
    assert noisy == [] and session.stderr() == ""
