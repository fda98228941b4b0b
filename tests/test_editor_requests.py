"""Kate's and Helix's configurations from README.md, run the way those editors run them, over raw
JSON-RPC: the server started with the snippet's exact command and arguments, the initialize
params each editor sends, and the requests each makes.

- Kate 22.12 (Debian 12's; KDE kate v22.12.3, addons/lspclient/lspclientserver.cpp and
  lspclientpluginview.cpp): no `data` in the diagnostics it sends back; its **Quick Fix** asks
  for the code actions of the one diagnostic under the cursor over the *whole document* and runs
  every action returned; its **Code Action** menu asks for the cursor's line with no
  diagnostics; it asks for `textDocument/documentSymbol` on every change whatever the server
  supports; it shows the server's stderr and every `window/logMessage` in its output pane.
- Helix 25.07 (helix-editor/helix 25.07.1, helix-lsp/src/client.rs and
  helix-term/src/commands/lsp.rs): asks at its one-character selection with the diagnostics
  that overlap it (their `data` kept), `only` unset, `triggerKind` Invoked.

tests/test_kate.py runs the real Kate with the same snippet when it is installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from editor_capabilities import HELIX_CAPABILITIES, KATE_CAPABILITIES
from far_findings import APP, DISMISS_COMMANDS, FSTRING_LINE, IMPORT_LINE, LINES, SHELL_LINE
from raw_rpc import Message, RawClient

from gitrepo import GitRepo
from readme_snippets import README, snippet
from real_clients import REDLINE, client_env

METHOD_NOT_FOUND = -32601


def is_dismissal(action: Message) -> bool:
    return (action.get("command") or {}).get("command") in DISMISS_COMMANDS


def batch_applied(kind: str | None) -> bool:
    """Kinds editors apply without the user choosing the action: a quick fix (Neovim's and
    eglot's "apply the only quickfix", VS Code's auto fix) and `source.fixAll` (fix on save)."""
    kind = kind or ""
    return any(kind == k or kind.startswith(k + ".") for k in ("quickfix", "source.fixAll"))


def ids_of(action: Message) -> set[str]:
    """The findings an action acts on: its command's finding id, if any."""
    args = (action.get("command") or {}).get("arguments") or []
    return {a for a in args[1:2] if isinstance(a, str)}


def apply(text: str, edits: list[Message]) -> str:
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def at(pos: Message) -> int:
        return offsets[pos["line"]] + pos["character"]

    for e in sorted(edits, key=lambda e: at(e["range"]["start"]), reverse=True):
        text = text[: at(e["range"]["start"])] + e["newText"] + text[at(e["range"]["end"]) :]
    return text


def edits_of(action: Message, uri: str) -> list[Message]:
    edit = action.get("edit") or {}
    if "changes" in edit:
        return list(edit["changes"].get(uri, []))
    return [e for change in edit.get("documentChanges", []) for e in change["edits"]]


def server_command(command: list[str]) -> list[str]:
    """The snippet's command as the editor runs it: its first word found on PATH (here, the
    console script of the environment under test)."""
    found = shutil.which(command[0], path=str(REDLINE.parent))
    assert found, f"{command[0]} not found in {REDLINE.parent}"
    return [found, *command[1:]]


@pytest.fixture
def app_repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.write("app.py", APP)  # uncommitted: what a save reviews
    return repo


class Editor:
    """A raw client speaking as one editor, with what it saw."""

    def __init__(self, client: RawClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.uri = (root / "app.py").as_uri()

    def diagnostics(self) -> list[Message]:
        published = [
            m["params"]["diagnostics"]
            for m in self.client.messages
            if m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == self.uri
        ]
        return published[-1] if published else []

    def wait_for_diagnostics(self, count: int) -> list[Message]:
        self.client.wait_for(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == self.uri
                and len(m["params"]["diagnostics"]) >= count
            ),
            timeout=60,
        )
        return self.diagnostics()

    def code_actions(self, rng: Message, context: Message) -> list[Message]:
        answer = self.client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": self.uri}, "range": rng, "context": context},
        )
        assert "result" in answer, answer
        return list(answer["result"] or [])

    def noise(self) -> list[str]:
        """What Kate's output pane would show beyond the start-up line: every stderr line, and
        every log or show message of type Error or Warning."""
        shown = [
            f"{m['method']} type {m['params']['type']}: {m['params']['message']}"
            for m in self.client.messages
            if m.get("method") in ("window/logMessage", "window/showMessage")
            and m["params"]["type"] in (1, 2)
        ]
        return shown + [line for line in self.client.stderr.splitlines() if line.strip()]


def _editor_answers(message: Message) -> Any:
    # What Kate and Helix answer: null to progress and registrations; Helix answers each
    # configuration item with its `config` for the server (none in the README's snippet).
    if message["method"] == "workspace/configuration":
        return [None for _ in message["params"]["items"]]
    return None


@pytest.fixture
def kate(app_repo: GitRepo, tmp_path: Path) -> Iterator[tuple[Editor, dict[str, Any]]]:
    config = json.loads(snippet("Kate", "json"))["servers"]["python"]
    assert ".git" in config["rootIndicationFileNames"]
    root = app_repo.root
    client = RawClient(
        client_env(tmp_path),
        root,
        command=server_command(config["command"]),
        answer=_editor_answers,
    )
    editor = Editor(client, root)
    yield editor, config
    if client.proc.poll() is None:
        client.close()


@pytest.fixture
def helix(app_repo: GitRepo, tmp_path: Path) -> Iterator[tuple[Editor, dict[str, Any]]]:
    config = tomllib.loads(snippet("Helix", "toml"))
    server = config["language-server"]["redline"]
    python = next(lang for lang in config["language"] if lang["name"] == "python")
    assert "redline" in python["language-servers"]
    root = app_repo.root
    client = RawClient(
        client_env(tmp_path),
        root,
        command=server_command([server["command"], *server.get("args", [])]),
        answer=_editor_answers,
    )
    editor = Editor(client, root)
    yield editor, server
    if client.proc.poll() is None:
        client.close()


def _kate_start(kate: Editor, config: dict[str, Any]) -> list[Message]:
    c = kate.client
    init = c.request(
        "initialize",
        {
            "capabilities": KATE_CAPABILITIES,
            "initializationOptions": config.get("initializationOptions"),
            "processId": os.getpid(),
            "rootPath": str(kate.root),
            "rootUri": kate.root.as_uri(),
        },
    )
    assert "result" in init, init
    c.notify("initialized", {})
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"languageId": "python", "text": APP, "uri": kate.uri, "version": 0}},
    )
    # Kate's symbol view asks whatever the server advertises, on open and after every change.
    symbols = c.request("textDocument/documentSymbol", {"textDocument": {"uri": kate.uri}})
    assert symbols["error"]["code"] == METHOD_NOT_FOUND
    # Kate has no way to send a command: the README's snippet reviews on save.
    c.notify("textDocument/didSave", {"textDocument": {"uri": kate.uri}})
    return kate.wait_for_diagnostics(4)


def _kate_diagnostic(d: Message) -> Message:
    """A diagnostic as Kate 22.12 sends it back (`to_json(LSPDiagnostic)`): no `data`."""
    return {
        "code": d["code"],
        "message": d["message"],
        "range": d["range"],
        "relatedInformation": [],
        "severity": d["severity"],
        "source": d["source"],
    }


def test_kate_quick_fix_runs_only_the_fix_of_the_finding_under_the_cursor(
    kate: tuple[Editor, dict[str, Any]], app_repo: GitRepo
) -> None:
    editor, config = kate
    diags = _kate_start(editor, config)
    by_line = {d["range"]["start"]["line"]: d for d in diags}
    assert {IMPORT_LINE, SHELL_LINE, FSTRING_LINE} <= set(by_line), diags
    import_id = by_line[IMPORT_LINE]["data"]["id"]

    # Quick Fix with the cursor on the unused import: the whole document, that diagnostic.
    whole = {
        "start": {"line": 0, "character": 0},
        "end": {"line": len(LINES) - 1, "character": len(LINES[-1])},
    }
    actions = editor.code_actions(whole, {"diagnostics": [_kate_diagnostic(by_line[IMPORT_LINE])]})
    assert actions, "no action for the unused import"
    # A Redline diagnostic the server cannot place (it changed since): nothing, not everything.
    unknown = {**_kate_diagnostic(by_line[IMPORT_LINE]), "message": "Unused import `sys`"}
    assert editor.code_actions(whole, {"diagnostics": [unknown]}) == []
    assert not [a["title"] for a in actions if is_dismissal(a)]
    assert {i for a in actions for i in ids_of(a)} == {import_id}
    edits = [e for a in actions for e in edits_of(a, editor.uri)]
    assert edits and all(e["range"]["end"]["line"] <= IMPORT_LINE + 1 for e in edits), edits

    # Kate runs every action returned: its edit, then its command.
    text = APP
    for action in actions:
        text = apply(text, edits_of(action, editor.uri))
    editor.client.notify(
        "textDocument/didChange",
        {"contentChanges": [{"text": text}], "textDocument": {"uri": editor.uri, "version": 2}},
    )
    for action in actions:
        command = action.get("command")
        if command:
            done = editor.client.request("workspace/executeCommand", command)
            assert "result" in done, done
    assert text == APP.replace("import os\n", "", 1)
    assert not (app_repo.root / ".redline" / "dismissed.toml").exists()
    # The fixed finding is gone; the others stay, one line up.
    editor.client.wait_for(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == editor.uri
            and import_id not in {d["data"]["id"] for d in m["params"]["diagnostics"]}
        )
    )
    left = {d["range"]["start"]["line"] for d in editor.diagnostics()}
    assert left >= {SHELL_LINE - 1, FSTRING_LINE - 1}, left


def test_kate_code_action_menu_offers_dismissals_kate_does_not_run(
    kate: tuple[Editor, dict[str, Any]],
) -> None:
    editor, config = kate
    diags = _kate_start(editor, config)
    shell = next(d for d in diags if d["range"]["start"]["line"] == SHELL_LINE)
    # The Code Action menu: the cursor's line, no diagnostics.
    line = {"start": {"line": SHELL_LINE, "character": 0}, "end": {"line": SHELL_LINE + 1,
                                                                     "character": 0}}  # fmt: skip
    actions = editor.code_actions(line, {"diagnostics": []})
    dismissals = [a for a in actions if is_dismissal(a)]
    assert dismissals, [a["title"] for a in actions]
    assert {i for a in dismissals for i in ids_of(a)} == {shell["data"]["id"]}
    assert not [a["kind"] for a in dismissals if batch_applied(a.get("kind"))]
    assert not [a for a in dismissals if a.get("isPreferred")]


def test_kate_output_pane_stays_quiet_at_the_default_log_level(
    kate: tuple[Editor, dict[str, Any]],
) -> None:
    editor, config = kate
    _kate_start(editor, config)
    for _ in range(5):  # every pause in typing
        answer = editor.client.request(
            "textDocument/documentSymbol", {"textDocument": {"uri": editor.uri}}
        )
        assert answer["error"]["code"] == METHOD_NOT_FOUND
    # Kate 22.12 sends `shutdown` without an id, then `exit`.
    editor.client.notify("shutdown", {})
    editor.client.notify("exit", {})
    assert editor.client.close() == 0  # the notification counted as the shutdown
    assert editor.noise() == [], "\n".join(editor.noise())


def test_helix_snippet_reviews_and_answers_code_actions_at_the_cursor(
    helix: tuple[Editor, dict[str, Any]],
) -> None:
    editor, _server = helix
    c = editor.client
    init = c.request(
        "initialize",
        {
            "processId": os.getpid(),
            "workspaceFolders": [{"name": editor.root.name, "uri": editor.root.as_uri()}],
            "rootPath": str(editor.root),
            "rootUri": editor.root.as_uri(),
            "capabilities": HELIX_CAPABILITIES,
            "clientInfo": {"name": "helix", "version": "25.07.1"},
        },
    )
    assert init["result"]["capabilities"]["positionEncoding"] == "utf-8"
    assert "redline.review" in init["result"]["capabilities"]["executeCommandProvider"]["commands"]
    c.notify("initialized", {})
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": editor.uri, "languageId": "python", "version": 0, "text": APP}},
    )
    # `:lsp-workspace-command redline.review`: no arguments (before 25.07), or a JSON one.
    started = c.request("workspace/executeCommand", {"command": "redline.review"})
    assert "taskId" in started["result"], started
    diags = editor.wait_for_diagnostics(4)

    # `space a` with the cursor in the f-string: a one-character selection, the diagnostics
    # overlapping it (Helix keeps their `data`).
    fstring = next(d for d in diags if d["range"]["start"]["line"] == FSTRING_LINE)
    cursor = {"line": FSTRING_LINE, "character": 7}
    selection = {"start": cursor, "end": {"line": FSTRING_LINE, "character": 8}}
    actions = editor.code_actions(selection, {"diagnostics": [fstring], "triggerKind": 1})
    assert {i for a in actions for i in ids_of(a)} == {fstring["data"]["id"]}
    fixes = [a for a in actions if edits_of(a, editor.uri)]
    assert fixes and all(a["kind"] == "quickfix" for a in fixes)
    dismissals = [a for a in actions if is_dismissal(a)]
    assert dismissals and not [a["kind"] for a in dismissals if batch_applied(a.get("kind"))]
    assert [a["title"] for a in actions if a.get("isPreferred")] in ([], [fixes[0]["title"]])

    # `%` (select all) then `space a`: every diagnostic overlaps, the whole document is asked.
    last = len(LINES) - 1
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": last, "character": 0}}
    everything = editor.code_actions(whole, {"diagnostics": diags, "triggerKind": 1})
    assert not [a["title"] for a in everything if is_dismissal(a)]
    assert {i for a in everything for i in ids_of(a)} <= {d["data"]["id"] for d in diags}

    # The README's example, as Helix 25.07 parses it: the JSON values after the command name.
    example = re.search(r":lsp-workspace-command redline\.review (\{.*?\})`", README.read_text())
    assert example, "README.md has no :lsp-workspace-command example with a JSON argument"
    with_json = c.request(
        "workspace/executeCommand",
        {"command": "redline.review", "arguments": [json.loads(example.group(1))]},
    )
    assert "taskId" in with_json["result"], with_json
    task = with_json["result"]["taskId"]
    c.wait_for(
        lambda m: (
            m.get("method") == "redline/reviewState"
            and m["params"]["taskId"] == task
            and m["params"]["state"] in ("finished", "failed", "cancelled")
        ),
        timeout=60,
    )

    c.request("shutdown")
    c.notify("exit")
    assert c.close() == 0
    assert editor.noise() == [], "\n".join(editor.noise())
