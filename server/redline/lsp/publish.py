"""Findings → LSP diagnostics, in the position encoding the client negotiated.

Ranges come from the tracker in code points of the document text it holds (the open buffer, or
the file on disk for a file that is not open: a file with findings is published either way) and
are converted to the client's negotiated units here, so a line holding an emoji before the
flagged code lands in the right place for a UTF-16 client (VS Code) and a UTF-8 one (Neovim
0.11) alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from redline.encoding import decode_text
from redline.enums import AnchorState, Severity
from redline.lsp import uris
from redline.lsp.document_findings import DocumentFindings, TrackedFinding
from redline.lsp.textlines import Encoding, to_client_units
from redline.redaction import redact

if TYPE_CHECKING:
    from redline.model import Finding

SOURCE = "redline"

SEVERITY: dict[Severity, types.DiagnosticSeverity] = {
    Severity.CRITICAL: types.DiagnosticSeverity.Error,
    Severity.HIGH: types.DiagnosticSeverity.Error,
    Severity.MEDIUM: types.DiagnosticSeverity.Warning,
    Severity.LOW: types.DiagnosticSeverity.Information,
    Severity.INFO: types.DiagnosticSeverity.Hint,
}

STALE_PREFIX = "(may be stale) "
# The quoted code is not in the file: the lines are where it most likely belongs.
APPROXIMATE_PREFIX = "(approximate location: quoted code not in the file) "
# `other/file.py:12` in a comment: the finding involves another file of the change.
_FILE_REF = re.compile(r"(?<![\w/.-])([\w][\w./-]*\.[A-Za-z0-9]+):(\d+)")
_MAX_MESSAGE = 600


def path_uri(root: Path, rel: str) -> str | None:
    """The URI of a repo-relative path, as the server spells it (a document key: uris.py);
    None when it would leave the repository (a finding's path is model text and must never
    make the server read or touch files elsewhere)."""
    if not rel or rel.startswith("/") or "\\" in rel:
        return None
    target = (root / rel).resolve()
    try:
        target.relative_to(root.resolve())
    except ValueError:
        return None
    return uris.key((root / rel).as_uri())


def uri_path(uri: str) -> Path | None:
    fs = uris.fs_path(uri)  # any spelling of a file URI; None for another scheme
    return Path(fs) if fs else None


def read_lines(path: Path, limit: int = 5_000_000) -> list[str] | None:
    """A file's lines (with endings) from disk, or None if it is gone, unreadable or huge."""
    try:
        if path.stat().st_size > limit:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    # As the review decoded it (a Latin-1 file's coding line honoured), so columns match.
    return decode_text(data)[0].splitlines(keepends=True)


def first_paragraph(text: str, limit: int = _MAX_MESSAGE) -> str:
    para = text.strip().split("\n\n", 1)[0]
    para = " ".join(para.split())
    return para if len(para) <= limit else para[: limit - 1].rstrip() + "…"


def client_range(
    tracked: TrackedFinding, doc: DocumentFindings, encoding: Encoding, *, whole: bool = False
) -> types.Range:
    """The tracked range in the client's units. Unless `whole`, a range that starts a line
    starts at its first non-blank character instead, so the squiggle skips indentation."""
    start_char = tracked.start_char
    first = doc.line_text(tracked.start_line)
    if not whole and start_char == 0 and (tracked.end_line > tracked.start_line or first.strip()):
        start_char = len(first) - len(first.lstrip())
    last = doc.line_text(tracked.end_line)
    end_char = tracked.end_char
    if tracked.end_line == tracked.start_line and not whole:
        end_char = max(end_char, start_char)
    return types.Range(
        start=types.Position(
            line=tracked.start_line,
            character=to_client_units(first, start_char, encoding),
        ),
        end=types.Position(
            line=tracked.end_line,
            character=to_client_units(last, end_char, encoding),
        ),
    )


def focus(tracked: TrackedFinding, doc: DocumentFindings) -> TrackedFinding:
    """The part of the tracked range the problem itself is on (`Finding.focus_line`): a fix
    may replace more lines than the problem holds (ruff's mutable-default fix spans the
    docstring below the `def`), and a diagnostic underlines the problem, never the fix. The
    tracker moves the fix's lines as a block, so the focus keeps its offset from their start;
    it never leaves them."""
    f = tracked.finding
    if f.focus_line is None or f.line is None:
        return tracked
    top, bottom = tracked.start_line, tracked.end_line
    first = min(max(top + f.focus_line - f.line, top), bottom)
    last = min(max(top + (f.focus_end_line or f.focus_line) - f.line, first), bottom)
    if (first, last) == (top, bottom):
        return tracked
    return replace(
        tracked,
        start_line=first,
        start_char=tracked.start_char if first == top else 0,
        end_line=last,
        end_char=tracked.end_char if last == bottom else len(doc.line_text(last)),
    )


def encoding_of(kind: object) -> Encoding:
    """pygls's negotiated PositionEncodingKind as the tracker's encoding name."""
    value = str(getattr(kind, "value", kind) or "utf-16").lower()
    if value in ("utf-8", "utf-32"):
        return value  # type: ignore[return-value]
    return "utf-16"


def related_information(
    finding: Finding, root: Path, known_files: Iterable[str]
) -> list[types.DiagnosticRelatedInformation]:
    """Other files of the change that the explanation points at (`path:line`)."""
    known = set(known_files)
    out: list[types.DiagnosticRelatedInformation] = []
    for match in _FILE_REF.finditer(finding.comment):
        rel, line = match.group(1), int(match.group(2))
        if rel == finding.file or rel not in known or line < 1:
            continue
        uri = path_uri(root, rel)
        if uri is None:
            continue
        pos = types.Position(line=line - 1, character=0)
        out.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=types.Range(start=pos, end=pos)),
                message=f"{rel}:{line}",
            )
        )
    return out


def to_diagnostic(
    finding: Finding,
    rng: types.Range,
    *,
    stale: bool = False,
    related: list[types.DiagnosticRelatedInformation] | None = None,
) -> types.Diagnostic:
    message = f"{finding.title}\n{first_paragraph(finding.comment)}".strip()
    if finding.anchor is AnchorState.APPROXIMATE:
        message = APPROXIMATE_PREFIX + message
    if stale:
        message = STALE_PREFIX + message
    return types.Diagnostic(
        range=rng,
        message=redact(message),
        severity=SEVERITY[finding.severity],
        code=finding.category.value,
        source=SOURCE,
        data={"id": finding.id},
        related_information=related or None,
    )


def finding_id_of(diagnostic: types.Diagnostic) -> str | None:
    data = diagnostic.data
    if isinstance(data, dict) and isinstance(data.get("id"), str):
        return str(data["id"])
    return None
