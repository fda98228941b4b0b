"""One file's diff → its ReviewUnits: hunks grouped, each group tagged, measured and given an id.

Grouping. A file's hunks are taken in order; a hunk joins the open group when it starts within
`GROUP_GAP_LINES` new-side lines of the previous hunk's end, or continues the function the
previous hunk ended in, *and* the group stays within `settings.large_unit_lines` changed lines.
A single hunk larger than that is still one unit (tagged `large`). Deleted files, binary files,
submodule changes, mode-only changes and renames without content changes are one unit each.

Unit ids. `unit_id = "U-" + sha256(material)[:12]` where `material` is the new path (old path
for deletions) followed by the unit's changed lines ('+'/'-' lines with their prefix and exact
bytes), joined by "\\n". Line numbers and context lines are not part of it, so a hunk that merely
moves (code above it changed) keeps its id. Units without hunks use their identifying header
lines instead (mode, rename source, binary blob ids). Two units of one diff with identical
material (the same edit pasted twice in a file) get "\\n#2", "\\n#3", ... appended, in diff
order, so ids stay unique and deterministic.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from redline.config_models import ReviewSettings
from redline.diff.changes import Changes, change_lines
from redline.diff.deleted import deleted_symbols
from redline.diff.file_diff import FileDiff, Hunk
from redline.diff.file_kind import UNREAD_TAGS, FileKind, kind_of
from redline.diff.functions import function_spans, names_for_lines
from redline.diff.links import link_reason
from redline.diff.new_side import ReadNew, content_file_tags, text_new_side
from redline.diff.tags import (
    only_comments,
    ordered_tags,
    security_sensitive_text,
    whitespace_only_change,
)
from redline.model import PatchType, ReviewUnit, Tag, UnitMetrics

GROUP_GAP_LINES = 20  # hunks closer than this (new side) are reviewed together
# Deleted files whose definitions are not searched for: skipped whatever they defined.
_NO_SYMBOL_TAGS = UNREAD_TAGS | {Tag.BINARY, Tag.GENERATED, Tag.MINIFIED, Tag.DOCS, Tag.TEST}
# Files whose changed lines are not looked at for content tags.
_NO_CONTENT_TAGS = UNREAD_TAGS | {Tag.BINARY}
_UNPARSED_TAGS = UNREAD_TAGS | {Tag.GENERATED, Tag.MINIFIED}
_IDENTITY_HEADERS = (
    "old mode ",
    "new mode ",
    "new file mode ",
    "deleted file mode ",
    "rename from ",
    "copy from ",
    "Binary files ",
    "GIT binary patch",
    "Submodule ",
)


def units_or_fallback(
    fd: FileDiff,
    read_new: ReadNew | None,
    settings: ReviewSettings,
    seen: dict[str, int],
    *,
    functions: bool = False,
    content: bool = True,
    security: bool = True,
) -> tuple[list[ReviewUnit], bool]:
    """fd's units and True, or its fallback unit and False when building them failed.
    `security=False`: no security_sensitive tag (nothing will read it; see UnitBuilder)."""
    try:
        units = _file_units(
            fd, read_new, settings, seen, functions, content=content, security=security
        )
        return units, True
    except Exception as exc:  # one odd file must not lose the whole review
        reason = f"could not build review units: {type(exc).__name__}: {exc}"
        return [_fallback_unit(fd, settings, seen, reason)], False


def cut_reason(size: int, cap: int) -> str:
    """Why a file whose diff section was cut while it was read is not reviewed."""
    return (
        f"diff too large: {size:,} bytes, over the per-file limit of {cap:,} "
        "(2 × review.max_file_bytes); not read"
    )


def _fallback_unit(
    fd: FileDiff, settings: ReviewSettings, seen: dict[str, int], reason: str
) -> ReviewUnit:
    try:
        return _whole_file_unit(fd, _FileContext.of(fd), settings, seen, skip_reason=reason)
    except Exception:  # last resort: a bare skipped unit still tells the user what happened
        uid = _unit_id("\n".join([fd.path, "error", reason]), seen)
        return ReviewUnit(
            unit_id=uid, file_path=fd.path, patch_type=PatchType.MODIFY, skip_reason=reason
        )


@dataclass(slots=True)
class _FileContext:
    """What is known about one file while its units are built: its verdict (file_kind.py,
    decided once per path) and the tags its units start from (the verdict's, plus what the
    diff and the new version add)."""

    path: str
    kind: FileKind
    language: str | None
    tags: set[Tag]
    patch_type: PatchType
    old_path: str | None
    names: dict[int, str | None] | None = None  # enclosing function per anchor line, if known
    security: bool = True  # whether the changed lines are scanned for the security tag

    @classmethod
    def of(cls, fd: FileDiff) -> _FileContext:
        path = fd.path
        kind = kind_of(path)
        patch_type = _patch_type(fd)
        tags = set(kind.tags)
        if fd.binary:
            tags.add(Tag.BINARY)
        old_path = fd.old_path if patch_type is PatchType.RENAME or fd.is_copy else None
        return cls(path, kind, kind.syntax, tags, patch_type, old_path)


def _patch_type(fd: FileDiff) -> PatchType:
    if fd.is_deleted or fd.new_path is None:
        return PatchType.DELETE
    if fd.is_new or fd.old_path is None or fd.is_copy:
        return PatchType.ADD
    if fd.old_path != fd.new_path:
        return PatchType.RENAME
    return PatchType.MODIFY


def _file_units(
    fd: FileDiff,
    read_new: ReadNew | None,
    settings: ReviewSettings,
    seen: dict[str, int],
    functions: bool = True,
    *,
    content: bool = True,
    security: bool = True,
) -> list[ReviewUnit]:
    """fd's units. With content=False the new version is not looked at: the units lack the
    tags it decides (add_content_tags adds them), and function metrics are not computed."""
    if fd.cut:  # cut while it was read: only its header is known, and nothing is read
        ctx = _FileContext.of(fd)
        return [_whole_file_unit(fd, ctx, settings, seen, skip_reason=cut_reason(*fd.cut))]
    if fd.link:  # its content is a target path: reviewed as a link, never as code
        ctx = _FileContext.of(fd)
        ctx.language = None
        return [_whole_file_unit(fd, ctx, settings, seen, skip_reason=link_reason(fd))]
    if fd.binary and content and not fd.is_deleted and not fd.submodule:
        fd = text_new_side(fd, read_new, settings) or fd
    ctx = _FileContext.of(fd)
    ctx.security = security
    if fd.error or fd.combined:
        reason = fd.error or "combined (merge) diff: review it against one parent instead"
        return [_whole_file_unit(fd, ctx, settings, seen, skip_reason=reason)]
    if fd.binary or fd.submodule or fd.is_deleted or not fd.hunks:
        return [_whole_file_unit(fd, ctx, settings, seen)]

    new_content = content_file_tags(ctx.path, ctx.tags, fd, read_new, settings) if content else None
    # Parsed once, and only when the unit is going to be reviewed.
    # Not for new files either: their depth (full_file) does not depend on their functions.
    if (
        functions
        and new_content is not None
        and ctx.patch_type is not PatchType.ADD
        and not ctx.tags & _UNPARSED_TAGS
        and ctx.kind.grammar
    ):
        anchors = [line for hunk in fd.hunks for line in hunk.anchors]
        ctx.names = names_for_lines(function_spans(ctx.path, new_content, anchors), anchors)
    groups = _group(fd.hunks, ctx.names, settings.large_unit_lines)
    return [_unit(fd, ctx, group, settings, seen) for group in groups]


def _group(
    hunks: Sequence[Hunk], names: dict[int, str | None] | None, limit: int
) -> list[list[Hunk]]:
    groups: list[list[Hunk]] = [[hunks[0]]]
    size = hunks[0].changed
    for prev, hunk in itertools.pairwise(hunks):
        near = hunk.new_range[0] - prev.new_range[1] <= GROUP_GAP_LINES
        if (near or _same_function(prev, hunk, names)) and size + hunk.changed <= limit:
            groups[-1].append(hunk)
            size += hunk.changed
        else:
            groups.append([hunk])
            size = hunk.changed
    return groups


def _same_function(prev: Hunk, hunk: Hunk, names: dict[int, str | None] | None) -> bool:
    if names is None or not prev.anchors or not hunk.anchors:
        return False
    last, first = names.get(prev.anchors[-1]), names.get(hunk.anchors[0])
    return last is not None and last == first


def _unit(
    fd: FileDiff,
    ctx: _FileContext,
    hunks: Sequence[Hunk],
    settings: ReviewSettings,
    seen: dict[str, int],
) -> ReviewUnit:
    changes = Changes.of(hunks)
    tags = set(ctx.tags)
    if not tags & _NO_CONTENT_TAGS:
        tags |= _content_tags(ctx, changes)
    if changes.count > settings.large_unit_lines:
        tags.add(Tag.LARGE)
    functions: list[str] = []
    single = False
    if ctx.names is not None:
        found = [ctx.names.get(line) for h in hunks for line in h.anchors]
        functions = list(dict.fromkeys(name for name in found if name))
        single = len(functions) == 1 and None not in found
    return ReviewUnit(
        unit_id=_unit_id(changes.material(ctx.path), seen),
        file_path=ctx.path,
        old_path=ctx.old_path,
        patch_type=ctx.patch_type,
        language=ctx.language,
        tags=ordered_tags(tags),
        metrics=UnitMetrics(
            added=changes.added,
            removed=changes.removed,
            hunks=len(hunks),
            functions=functions,
            single_function=single,
        ),
        added_lines=[line for h in hunks for line in h.added],
        hunk_ranges=[h.new_range for h in hunks],
        patch=_patch_text(fd.header, hunks),
    )


def _whole_file_unit(
    fd: FileDiff,
    ctx: _FileContext,
    settings: ReviewSettings,
    seen: dict[str, int],
    skip_reason: str | None = None,
) -> ReviewUnit:
    """One unit for a file that is not split: deleted, binary, submodule, no hunks, unparsable."""
    hunks = [] if skip_reason else fd.hunks
    changes = Changes.of(hunks)
    tags = set(ctx.tags)
    if not skip_reason and not fd.submodule and not tags & _NO_CONTENT_TAGS:
        tags |= _content_tags(ctx, changes)
    if changes.count > settings.large_unit_lines:
        tags.add(Tag.LARGE)
    identity = [line for line in fd.header if line.startswith(_IDENTITY_HEADERS)]
    if fd.binary or fd.submodule or fd.link:
        identity += [line for line in fd.header if line.startswith("index ")]
    new_side = ctx.patch_type is not PatchType.DELETE
    patch = _patch_text(fd.header, hunks)
    symbols: list[str] = []
    if not new_side and not skip_reason and not tags & _NO_SYMBOL_TAGS and changes.removed:
        symbols = deleted_symbols(ctx.path, changes.removed_text)
        if symbols:  # the unit shows what the file defined, not its whole text
            patch = _patch_text(fd.header, []) + deleted_summary(changes.removed, symbols)
    return ReviewUnit(
        unit_id=_unit_id(changes.material("\n".join([ctx.path, *identity])), seen),
        file_path=ctx.path,
        old_path=ctx.old_path,
        patch_type=ctx.patch_type,
        language=ctx.language,
        tags=ordered_tags(tags),
        metrics=UnitMetrics(added=changes.added, removed=changes.removed, hunks=len(hunks)),
        added_lines=[line for h in hunks for line in h.added] if new_side else [],
        hunk_ranges=[h.new_range for h in hunks] if new_side else [],
        patch=patch,
        skip_reason=skip_reason,
        symbols=symbols,
    )


def _content_tags(ctx: _FileContext, changes: Changes) -> set[Tag]:
    tags: set[Tag] = set()
    # Prose is read by people: "password" in a README or a changelog is not a security change.
    if ctx.security and not ctx.kind.prose and security_sensitive_text(ctx.path, changes.text):
        tags.add(Tag.SECURITY_SENSITIVE)
    if changes.count and only_comments(ctx.language, change_lines(changes)):
        tags.add(Tag.ONLY_COMMENTS)
    if changes.count and whitespace_only_change(
        ctx.language, changes.removed_text, changes.added_text
    ):
        tags.add(Tag.ONLY_WHITESPACE)
    return tags


def _unit_id(material: str, seen: dict[str, int]) -> str:
    """Id of a unit from its material (see the module docstring)."""
    uid = "U-" + hashlib.sha256(material.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]
    count = seen.get(uid, 0) + 1
    seen[uid] = count
    if count == 1:
        return uid
    material += f"\n#{count}"
    return "U-" + hashlib.sha256(material.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]


def deleted_summary(removed: int, symbols: Sequence[str]) -> str:
    """The body of a deleted file's patch: how much went and the definitions that went with it
    (review/deleted.py adds where the new tree still uses them)."""
    return f"# file deleted ({removed} lines); its definitions: {', '.join(symbols)}\n"


def _patch_text(header: list[str], hunks: Sequence[Hunk]) -> str:
    out = list(header)
    for hunk in hunks:
        out.append(hunk.header)
        out += hunk.lines
    return "\n".join(out) + "\n" if out else ""
