"""The VS Code extension's manifest (editor-client/package.json) against the server it drives:
the two are written in different languages, so what must agree is checked here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from redline.lsp import commands, debates
from redline.lsp.server import build_server
from redline.lsp.settings import LspSettings, merge_settings

MANIFEST = Path(__file__).resolve().parents[1] / "editor-client" / "package.json"


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    return dict(json.loads(MANIFEST.read_text(encoding="utf-8")))


def server_commands() -> set[str]:
    build_server()  # registers every module's handlers
    return {c.name for h in (commands.HANDLERS, debates.HANDLERS) for c in h.commands}


def test_extension_commands_never_shadow_the_servers(manifest: dict[str, Any]) -> None:
    # vscode-languageclient registers every command the server advertises as a VS Code
    # command; an extension command with the same id would fail to register at activation.
    ours = {c["command"] for c in manifest["contributes"]["commands"]}
    theirs = server_commands()
    assert "redline.review" in theirs and "redline.dismiss" in theirs
    assert ours and not ours & theirs
    assert all(c.startswith("redlineClient.") for c in ours)


def test_every_palette_review_command_is_there(manifest: dict[str, Any]) -> None:
    titles = {f"{c.get('category', '')}: {c['title']}" for c in manifest["contributes"]["commands"]}
    for title in (
        "Redline: Review Uncommitted Changes",
        "Redline: Review Staged Changes",
        "Redline: Review Current Branch",
        "Redline: Review Branch Against…",
        "Redline: Review Commit…",
        "Redline: Review Pull Request…",
        "Redline: Ask Redline…",
        "Redline: Start Debate…",
        "Redline: Cancel Review",
        "Redline: Rerun Review",
        "Redline: Clear Findings",
        "Redline: Export Report…",
        "Redline: Open User Configuration",
        "Redline: Show Output",
        "Redline: Restart Server",
    ):
        assert title in titles


def test_the_settings_the_server_reads_are_the_ones_the_extension_offers(
    manifest: dict[str, Any],
) -> None:
    props: dict[str, dict[str, Any]] = manifest["contributes"]["configuration"]["properties"]
    client_only = {"redline.server.path", "redline.server.args", "redline.trace.server"}
    # Which program runs is the user's choice alone: a workspace cannot set it.
    for name in ("redline.server.path", "redline.server.args"):
        assert props[name]["scope"] == "machine", name
    for name, spec in props.items():
        if name in client_only:
            continue
        # A value other than the default, as VS Code sends the section: the server takes it.
        choices = spec.get("enum") or _other_values(spec)
        value = next(c for c in choices if c != spec["default"])
        merged = merge_settings(LspSettings(), {"redline": {name.split(".", 1)[1]: value}})
        assert merged != LspSettings(), f"the server ignores {name}"
        assert not merged.warnings, merged.warnings
    # No setting names a model, an API base or a key (the workspace controls these settings).
    for name in props:
        assert not any(word in name.lower() for word in ("model", "apibase", "key", "token"))


def _other_values(spec: dict[str, Any]) -> list[Any]:
    default = spec["default"]
    if spec["type"] == "boolean":
        return [not default]
    if spec["type"] == "number":
        return [default + 1]
    return ["develop"]


def test_restricted_mode_is_supported_without_the_workspace_choosing_the_server(
    manifest: dict[str, Any],
) -> None:
    # A reviewer opens a stranger's pull request in Restricted Mode: the extension must run
    # there, and no workspace value may name the program it starts or its arguments.
    trust = manifest["capabilities"]["untrustedWorkspaces"]
    assert trust["supported"] == "limited"
    props: dict[str, dict[str, Any]] = manifest["contributes"]["configuration"]["properties"]
    server_settings = {n for n in props if n.startswith("redline.server.")}
    assert server_settings >= {"redline.server.path", "redline.server.args"}
    assert set(trust["restrictedConfigurations"]) == server_settings
    assert "Restricted Mode" in trust["description"]


def test_activates_on_a_git_workspace_not_on_every_start(manifest: dict[str, Any]) -> None:
    events = manifest["activationEvents"]
    assert "*" not in events and "onStartupFinished" not in events
    assert "workspaceContains:.git" in events
    assert "onView:redline.findings" in events
    # Every palette command activates the extension (VS Code adds onCommand for contributed
    # commands itself from 1.74; the engine floor is 1.90).
    assert manifest["engines"]["vscode"] >= "^1.74"


def test_the_readme_names_no_distribution_redline_does_not_own() -> None:
    # "redline" on the package index is someone else's package: nothing tells a user to
    # install it by that name.
    client = MANIFEST.parent
    texts = [
        (client / "README.md").read_text(encoding="utf-8"),
        MANIFEST.read_text(encoding="utf-8"),
        *(p.read_text(encoding="utf-8") for p in (client / "src").glob("*.ts")),
    ]
    for text in texts:
        assert "install redline" not in text
        assert "pipx install redline\n" not in text


def test_the_readme_opening_presents_debate_as_a_mode_that_exists() -> None:
    readme = (MANIFEST.parents[1] / "README.md").read_text(encoding="utf-8")
    opening = readme[: readme.index("## ")]
    assert "next step" not in opening
    assert "redline debate" in opening
