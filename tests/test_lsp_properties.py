"""The language server's views of a generated review (tests/review_strategies.py): diagnostics,
hovers and the sidebar's rows must not raise and must show every finding.

The review is shown as a finished review is (`jobs._finish`: diagnostics per file, then the
sidebar's `redline/findings` list) on a server stand-in that records what it would send. Each
file's text is laid out from its findings, every quoted code on the lines the finding names,
as the review read it. Then:

- every anchored finding has one diagnostic, on its lines, naming its title, with its id;
- a hover at each diagnostic names that finding;
- the sidebar lists every finding once — anchored ones at their line, unanchored ones too.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from tempfile import TemporaryDirectory
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from lsprotocol import types
from pygls.uris import from_fs_path

from redline.lsp import jobs
from redline.lsp.actions import on_hover
from redline.lsp.folders import Folder
from redline.lsp.settings import LspSettings
from redline.lsp.sidebar import FINDINGS
from redline.lsp.tracking import FindingTracker
from redline.lsp.uris import ClientUris
from redline.model import AnchorState, Finding, Review
from review_strategies import many_findings, marker, reviews

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_BREAK = re.compile(r"\r\n|\r|\n")


class _Registry:
    def current(self, uri: str) -> None:
        return None


class _Protocol:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))


class StandIn:
    """What diagnostics, the sidebar and the hover handler use of `RedlineServer`."""

    def __init__(self) -> None:
        self.settings = LspSettings()
        self.registry = _Registry()
        self.tracker = FindingTracker()
        self.findings_pending: set[str] = set()
        self.encoding = "utf-16"
        self.protocol = _Protocol()
        self.client_capabilities = types.ClientCapabilities()
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.uris = ClientUris()

    def is_open(self, uri: str) -> bool:
        return False

    def open_document(self, uri: str) -> None:
        return None

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        self.diagnostics[params.uri] = params.diagnostics

    def log_message(self, message: str, kind: Any = None) -> None:
        pass


def laid_out(review: Review) -> tuple[Review, dict[str, str]]:
    """The review with each anchored finding moved onto lines of its own, and each file's text:
    the finding's quoted code on exactly those lines (a line of its own when it quotes none)."""
    lines: dict[str, list[str]] = {}
    moved: list[Finding] = []
    for i, finding in enumerate(review.findings):
        if finding.line is None:
            moved.append(finding)
            continue
        text = lines.setdefault(finding.file, ["# laid out"])
        code = _BREAK.split(finding.existing_code)
        quote = "\n".join(code)
        if not quote.strip():
            code = [f"pass  # {marker(i)}"]
            # An approximate place is found by its quote: the review always has one.
            quote = code[0] if finding.anchor is AnchorState.APPROXIMATE else quote
        start = len(text) + 1
        text += [*code, "x = 0"]
        moved.append(
            finding.model_copy(
                update={"line": start, "end_line": start + len(code) - 1, "existing_code": quote}
            )
        )
    texts = {path: "\n".join(body) + "\n" for path, body in lines.items()}
    return review.model_copy(update={"findings": moved}), texts


def shown(review: Review, texts: dict[str, str], root: Path) -> StandIn:
    ls = StandIn()
    folder = Folder(uri=from_fs_path(str(root)) or "", path=root, root=root)

    async def finish() -> None:
        # Only the job's request kind is read: the run this review's findings belong to.
        job = SimpleNamespace(request=SimpleNamespace(kind="branch"), landing=None)
        await jobs._finish(ls, folder, job, review, texts, {})  # type: ignore[arg-type]
        for _ in range(20):  # the sidebar's list goes out on a later loop turn
            await asyncio.sleep(0.01)
            if ls.protocol.sent:
                return

    asyncio.run(finish())
    return ls


def _rows(ls: StandIn) -> Iterator[dict[str, Any]]:
    method, payload = ls.protocol.sent[-1]
    assert method == FINDINGS and payload["full"]
    for entry in payload["files"]:
        yield from entry["findings"]


def check(review: Review, root: Path) -> None:
    review, texts = laid_out(review)
    ls = shown(review, texts, root)
    index = {f.id: i for i, f in enumerate(review.findings)}
    by_id = {f.id: f for f in review.findings}
    # Diagnostics: one per anchored finding, on its first line, naming it.
    seen: dict[str, types.Diagnostic] = {}
    for uri, diagnostics in ls.diagnostics.items():
        for diagnostic in diagnostics:
            fid = diagnostic.data["id"]
            assert fid not in seen
            seen[fid] = diagnostic
            assert marker(index[fid]) in diagnostic.message
            # On the finding's lines (a quote found by its code starts at its first non-blank
            # line).
            finding = by_id[fid]
            assert finding.line is not None
            last = finding.end_line or finding.line
            assert finding.line - 1 <= diagnostic.range.start.line <= last - 1
            hover = on_hover(
                ls,  # type: ignore[arg-type]
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=diagnostic.range.start,
                ),
            )
            assert hover is not None and marker(index[fid]) in hover.contents.value  # type: ignore[union-attr]
    anchored = {f.id for f in review.findings if f.line is not None}
    assert set(seen) == anchored
    # The sidebar: every finding once.
    rows = list(_rows(ls))
    assert sorted(row["id"] for row in rows) == sorted(by_id)
    for row in rows:
        finding = by_id[row["id"]]
        assert marker(index[row["id"]]) in row["title"]
        if finding.line is not None:
            assert finding.line <= row["line"] <= (finding.end_line or finding.line)
        assert bool(row.get("unanchored")) == (finding.line is None)


@SETTINGS
@given(review=reviews())
def test_the_editor_shows_every_finding(review: Review) -> None:
    with TemporaryDirectory() as tmp:
        check(review, Path(tmp))


def test_thousands_of_findings_in_the_editor(tmp_path: Path) -> None:
    check(many_findings(1000), tmp_path)
