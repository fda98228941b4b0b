"""Code actions and hovers on the findings under the cursor.

Quick fixes come from `fixes.py` (the suggested code, only when the fixed file still parses;
dismiss this finding or every finding in the file; show the suggested code), as versioned
`WorkspaceEdit`s when the client supports them, so a client refuses an edit whose buffer moved
on. Hovers show each finding's Markdown (`hover.py`), redacted. Both answer from the tracker's
in-memory state only: no disk, no git, so they stay fast while a review runs.

A code action does only what the user asked for. When the client names Redline diagnostics in
`context.diagnostics`, the answer is about those findings only (within the range): Kate 22.12's
Quick Fix names the diagnostic under the cursor, asks over the whole document, and runs every
action returned. A diagnostic is known by the finding id in its `data`, or, from a client that
drops `data` (Kate), by the range and message it was published with. A request over the whole
document is not at a place: it gets fixes, never a dismissal (fixes.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from redline.lsp import fixes, publish
from redline.lsp.document_findings import DocumentFindings, TrackedFinding
from redline.lsp.handlers import Handlers
from redline.lsp.textlines import Range, from_client_units
from redline.redaction import redact

if TYPE_CHECKING:
    from redline.lsp.language_server import RedlineServer

HANDLERS = Handlers()


def _points(ls: RedlineServer, uri: str, rng: types.Range) -> Range | None:
    doc = ls.tracker.document(uri)
    if doc is None:
        return None
    enc = ls.encoding
    start = from_client_units(doc.line_text(rng.start.line), rng.start.character, enc)
    end = from_client_units(doc.line_text(rng.end.line), rng.end.character, enc)
    return Range(rng.start.line, start, rng.end.line, end)


def _shown_at(ls: RedlineServer, uri: str, rng: Range) -> list[TrackedFinding]:
    floor = ls.settings.min_severity.rank
    return [
        t
        for t in ls.tracker.at(uri, rng, ls.settings.stale_display)
        if t.finding.severity.rank >= floor
    ]


def _named(
    ls: RedlineServer,
    doc: DocumentFindings,
    candidates: list[TrackedFinding],
    named: list[types.Diagnostic],
) -> dict[str, types.Diagnostic]:
    """The client's Redline diagnostics by the id of the finding each is about."""
    out: dict[str, types.Diagnostic] = {}
    for d in named:
        finding_id = publish.finding_id_of(d)
        if finding_id is None:
            # Kate sends diagnostics back without `data`: match what was published.
            finding_id = next((t.id for t in candidates if _published_as(ls, doc, t, d)), None)
        if finding_id is not None:
            out[finding_id] = d
    return out


def _published_as(
    ls: RedlineServer, doc: DocumentFindings, tracked: TrackedFinding, d: types.Diagnostic
) -> bool:
    """Whether `d` has the range and message the finding was published with (diagnostics.py);
    the range first, since the message costs a redaction."""
    rng = publish.client_range(publish.focus(tracked, doc), doc, ls.encoding)
    if rng != d.range:
        return False
    return publish.to_diagnostic(tracked.finding, rng, stale=tracked.stale).message == d.message


def _whole_document(doc: DocumentFindings, rng: Range) -> bool:
    end = doc.clamp(len(doc.lines), 0)
    return (
        (rng.start_line, rng.start_char) == (0, 0)
        and doc.clamp(rng.end_line, rng.end_char) == end
        and end != (0, 0)
    )


@HANDLERS.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, fixes.DISMISS_KIND]),
)
def on_code_action(
    ls: RedlineServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    uri = ls.uris.seen(params.text_document.uri)  # the key (any spelling finds the document)
    doc = ls.tracker.document(uri)
    rng = _points(ls, uri, params.range)
    if doc is None or rng is None:
        return None
    found = _shown_at(ls, uri, rng)
    ours = [d for d in params.context.diagnostics if d.source == publish.SOURCE]
    theirs = _named(ls, doc, found, ours)
    if ours:
        # The client asked about these diagnostics: nothing else, even if in range.
        found = [t for t in found if t.id in theirs]
    if not found:
        return None
    path = found[0].finding.file
    repeated = fixes.repeated_families(ls.tracker.visible(uri, "mark"))
    spelled = params.text_document.uri  # edits and command arguments echo the client's
    specs = fixes.code_actions_for(
        found,
        doc.text,
        path,
        params.context.only,
        uri=spelled,
        repeated=repeated,
        dismissals=not _whole_document(doc, rng),
    )
    if not specs:
        return None
    buffer = ls.open_document(uri)
    version = buffer.version if buffer is not None else None
    actions = []
    for spec in specs:
        edit = None
        if spec.edit is not None:
            fake = TrackedFinding(found[0].finding, *_unpack(spec.edit.range))
            text_edit = types.TextEdit(
                range=publish.client_range(fake, doc, ls.encoding, whole=True),
                new_text=spec.edit.new_text,
            )
            edit = _workspace_edit(ls, spelled, version, text_edit)
        command = None
        if spec.command is not None:
            command = types.Command(
                title=spec.title, command=spec.command.name, arguments=list(spec.command.arguments)
            )
        diagnostics = [theirs[i] for i in spec.finding_ids if i in theirs]
        actions.append(
            types.CodeAction(
                title=spec.title,
                kind=spec.kind,
                diagnostics=diagnostics or None,
                edit=edit,
                command=command,
                is_preferred=spec.is_preferred or None,
            )
        )
    return actions


@HANDLERS.feature(types.TEXT_DOCUMENT_HOVER)
def on_hover(ls: RedlineServer, params: types.HoverParams) -> types.Hover | None:
    uri = ls.uris.seen(params.text_document.uri)
    doc = ls.tracker.document(uri)
    point = types.Range(start=params.position, end=params.position)
    rng = _points(ls, uri, point)
    if doc is None or rng is None:
        return None
    found = _shown_at(ls, uri, rng)
    if not found:
        return None
    from redline.lsp.hover import hover_markdown

    beside = ls.settings.hover_beside_diagnostic
    text = redact(
        "\n\n---\n\n".join(
            hover_markdown(t.finding, t.stale, beside_diagnostic=beside) for t in found
        )
    )
    caps = ls.client_capabilities.text_document
    formats = caps.hover.content_format if caps and caps.hover else None
    kind = (
        types.MarkupKind.Markdown
        if not formats or types.MarkupKind.Markdown in formats
        else types.MarkupKind.PlainText
    )
    return types.Hover(
        contents=types.MarkupContent(kind=kind, value=text),
        range=publish.client_range(found[0], doc, ls.encoding),
    )


def _unpack(rng: Range) -> tuple[int, int, int, int]:
    return rng.start_line, rng.start_char, rng.end_line, rng.end_char


def _workspace_edit(
    ls: RedlineServer, uri: str, version: int | None, edit: types.TextEdit
) -> types.WorkspaceEdit:
    caps = ls.client_capabilities.workspace
    versioned = bool(caps and caps.workspace_edit and caps.workspace_edit.document_changes)
    if versioned:
        # With the version, a client refuses the edit if the buffer moved on since.
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=uri, version=version
                    ),
                    edits=[edit],
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: [edit]})
