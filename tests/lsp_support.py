"""Driving `python -m redline.lsp` from pytest-lsp: a session per test, in a real git repository,
with the custom notifications recorded and small polling helpers.

Polling `client.diagnostics` (and the recorded notifications) under a deadline, not
`wait_for_notification`: that has one waiter per method and misses what arrived before it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = [sys.executable, "-m", "redline.lsp"]
PROFILES = {"vscode": "visual-studio-code", "neovim": "neovim"}


def plain(value: Any) -> Any:
    """pygls delivers custom notification params as namedtuples: make them JSON-like."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def server_env(cache_dir: Path, **extra: str) -> dict[str, str]:
    """The server's environment: the test's, without any REDLINE_* the developer has set
    (their model must not be used), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env["REDLINE_CONFIG"] = os.devnull  # no user file
    env["REDLINE_CACHE_DIR"] = str(cache_dir)
    env["REDLINE_LSP_LOG"] = "INFO"
    env.update(extra)
    return env


class Session:
    """One client ↔ server session and what it has received."""

    def __init__(self, client: LanguageClient, root: Path, profile: str) -> None:
        self.client = client
        self.root = root
        self.profile = profile
        self.states: list[dict[str, Any]] = []
        self.findings: list[dict[str, Any]] = []  # every redline/findings notification
        self.listed: dict[str, dict[str, Any]] = {}  # uri → its entry, as a sidebar shows it
        self.listed_task: str | None = None

        @client.feature("redline/reviewState")
        def _state(params: Any) -> None:
            self.states.append(plain(params))

        @client.feature("redline/findings")
        def _findings(params: Any) -> None:
            self.findings.append(plain(params))
            payload = self.findings[-1]
            # What a sidebar shows: a full list replaces it, a partial one replaces its files.
            if payload.get("full", True):
                self.listed = {}
            for entry in payload["files"]:
                self.listed[entry["uri"]] = entry
            self.listed = {u: e for u, e in self.listed.items() if e["findings"]}
            self.listed_task = payload["taskId"]

    def rows(self) -> list[dict[str, Any]]:
        """Every finding the sidebar lists now, files in uri order."""
        return [row for uri in sorted(self.listed) for row in self.listed[uri]["findings"]]

    encoding = "utf-16"  # the negotiated position encoding, set by start_session

    def uri(self, rel: str) -> str:
        uri = from_fs_path(str(self.root / rel))
        assert uri is not None
        return uri

    async def command(self, name: str, *arguments: Any) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(arguments))
        )

    async def review(self, **request: Any) -> str:
        result = plain(await self.command("redline.review", request))
        assert "taskId" in result, result
        return str(result["taskId"])

    async def debug_info(self, **params: Any) -> dict[str, Any]:
        result = await self.client.protocol.send_request_async("redline/debugInfo", params)
        return dict(plain(result))

    async def until(self, check: Callable[[], Any], timeout: float = 20.0, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = check()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what or check}")
            await asyncio.sleep(0.02)

    def state_of(self, task_id: str, state: str) -> dict[str, Any] | None:
        return next(
            (s for s in self.states if s.get("taskId") == task_id and s["state"] == state), None
        )

    async def finished(self, task_id: str, timeout: float = 20.0) -> dict[str, Any]:
        """The task's last state once it ended (finished, cancelled or failed)."""

        def ended() -> dict[str, Any] | None:
            for state in ("finished", "cancelled", "failed"):
                found = self.state_of(task_id, state)
                if found:
                    return found
            return None

        result: dict[str, Any] = await self.until(ended, timeout, f"review {task_id} to end")
        return result

    def lines_of(self, rel: str) -> list[int]:
        """0-based start lines of Redline's diagnostics in a file."""
        diags = self.client.diagnostics.get(self.uri(rel), [])
        return sorted(d.range.start.line for d in diags if d.source == "redline")

    def open(self, rel: str, text: str | None = None, version: int = 1) -> str:
        uri = self.uri(rel)
        content = (self.root / rel).read_text(encoding="utf-8") if text is None else text
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=version, text=content
                )
            )
        )
        return uri

    def edit(self, rel: str, version: int, rng: types.Range, text: str) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=self.uri(rel), version=version
                ),
                content_changes=[types.TextDocumentContentChangePartial(range=rng, text=text)],
            )
        )


def _fix_code_action_parsing(client: LanguageClient) -> None:
    """lsprotocol 2025.0.0 structures any `(Command | CodeAction)` that has a `command` key as
    a Command, so a CodeAction carrying both an edit and a command (the LSP way to be told
    the edit was applied) would reach the test as a mangled Command. Editors tell the two apart
    by the type of `command` (a string only in Command); the test client does the same."""
    converter = client.protocol._converter

    def hook(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    # `A | B == typing.Union[A, B]`, so this replaces lsprotocol's hook for the union.
    converter.register_structure_hook(types.Command | types.CodeAction, hook)  # type: ignore[arg-type]


def without_memory_refresh(options: dict[str, Any] | None) -> dict[str, Any]:
    """The client's initializationOptions with the background memory refresh off unless the
    test sets it: a test that does not need project memory must not spend a CI minute building
    it when its session idles (tests/test_lsp_memory_refresh.py turns it on)."""
    options = dict(options or {})
    inner = options.get("redline")
    section = inner if isinstance(inner, dict) else options
    if not any(str(k).lower().startswith("memory") for k in section):
        section["memoryRefresh"] = False
    return options


async def start_session(
    root: Path,
    profile: str,
    env: dict[str, str],
    *,
    init_options: dict[str, Any] | None = None,
    configuration: dict[str, Any] | None = None,
) -> Session:
    config = ClientServerConfig(server_command=SERVER, server_env=env)
    init_options = without_memory_refresh(init_options)
    client = await config.start()
    assert isinstance(client, LanguageClient)
    _fix_code_action_parsing(client)
    if configuration is not None:
        client.set_configuration(configuration)
    session = Session(client, root, profile)
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(PROFILES[profile]),
            root_uri=from_fs_path(str(root)),
            workspace_folders=[
                types.WorkspaceFolder(uri=from_fs_path(str(root)) or "", name=root.name)
            ],
            initialization_options=init_options,
        )
    )
    encoding = result.capabilities.position_encoding
    session.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
    return session


async def stop_session(session: Session) -> None:
    client = session.client
    try:
        await asyncio.wait_for(client.shutdown_session(), timeout=10)
    finally:
        await client.stop()
    assert client.error is None, client.error
