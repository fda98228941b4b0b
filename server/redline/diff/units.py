"""A git diff → ReviewUnits: one per file per group of nearby hunks, with tags and metrics.

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

import dataclasses
import hashlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from redline.config_models import ReviewSettings
from redline.diff.content import (
    HEAD_LINES,
    MINIFIED_MEAN_LINE,
    binary_content,
    bundled,
    minified,
    vendored_header,
)
from redline.diff.deleted import deleted_symbols
from redline.diff.functions import function_spans, has_grammar, language_for, names_for_lines
from redline.diff.parse import FileDiff, Hunk, line_tags, parse_git_diff
from redline.diff.tags import (
    generated_header,
    only_comments,
    path_tags,
    prose,
    security_sensitive_text,
    whitespace_only_change,
)
from redline.errors import RedlineError
from redline.model import PatchType, ReviewUnit, Tag, UnitMetrics

ReadNew = Callable[[str], bytes | None]

GROUP_GAP_LINES = 20  # hunks closer than this (new side) are reviewed together
_HEAD_BYTES = 4096  # how much of a file is searched for a generated-file header
# Files whose content is never inspected (no read, no parse, no content tags): they are skipped.
_UNREAD_TAGS = frozenset({Tag.LOCKFILE, Tag.VENDORED})
# Deleted files whose definitions are not searched for: skipped whatever they defined.
_NO_SYMBOL_TAGS = _UNREAD_TAGS | {Tag.BINARY, Tag.GENERATED, Tag.MINIFIED, Tag.DOCS, Tag.TEST}
# Files whose changed lines are not looked at for content tags.
_NO_CONTENT_TAGS = _UNREAD_TAGS | {Tag.BINARY}
_UNPARSED_TAGS = _UNREAD_TAGS | {Tag.GENERATED, Tag.MINIFIED}
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


def build_units(
    diff_text: str,
    read_new: ReadNew | None = None,
    settings: ReviewSettings | None = None,
    *,
    prefetch: Callable[[list[str]], None] | None = None,
    functions: bool = True,
) -> list[ReviewUnit]:
    """Review units for every file of a git unified diff. Never raises on diff content.

    `read_new(path)` returns the new version of a file (None if unavailable); it is called at
    most once per file, and not at all for deleted, binary, submodule, lockfile or vendored files.
    Its content gives the size check (`large`), the generated-header check and the enclosing
    functions. `metrics.functions` stays empty (and `single_function` False) when they are not
    computed: no `read_new`, no grammar for the language, a file over `max_file_bytes`, a new
    file (its depth is full_file whatever its functions), a file that will be skipped, or
    `functions=False` — the offline review passes that, because only the model stages use
    function metrics and tree-sitter parsing costs more than everything else here together.
    """
    return UnitBuilder(settings, functions=functions).finish(diff_text, read_new, prefetch)


class UnitBuilder:
    """build_units, able to start while the diff is still arriving (a git.stream.DiffConsumer).

    `feed` parses each run of complete file sections as git writes it and returns the paths
    whose new version will be read, so the caller can read them meanwhile; `digest`, called
    once those reads are asked for, builds the run's units without function metrics: a file's
    units then do not depend on its new content, only its `large` and `generated` tags do, and
    `finish` adds those. `finish` gives exactly the units build_units gives for the whole text.
    """

    def __init__(self, settings: ReviewSettings | None = None, *, functions: bool = True):
        self.settings = settings or ReviewSettings()
        self.functions = functions
        self._reset()

    def _reset(self) -> None:
        self._texts: list[str] = []
        self._files: list[FileDiff] = []
        self._undrafted: list[FileDiff] = []  # fed, units not built yet (see digest)
        self._wanted: list[str] = []  # paths whose new version finish will read
        # Units built without the new content: (file, its units, built normally).
        self._drafts: list[tuple[FileDiff, list[ReviewUnit], bool]] = []
        self._seen: dict[str, int] = {}

    def feed(self, text: str) -> list[tuple[str, str]]:
        """Take complete file sections; return (path, new blob id) of the files to read. Only
        parses them: their units are built by digest (or finish), once the reads are asked for.
        """
        self._texts.append(text)
        files = parse_git_diff(text)
        self._files += files
        self._undrafted += files
        reads = [fd for fd in files if _will_read(fd)]
        self._wanted += [fd.path for fd in reads]
        return [(fd.path, blob) for fd in reads if (blob := fd.new_blob) is not None]

    def digest(self) -> None:
        """Build the units of the files fed since the last call (without function metrics; with
        them, the units wait for the new versions, in finish)."""
        files, self._undrafted = self._undrafted, []
        if not self.functions:
            self._draft(files)

    def _draft(self, files: list[FileDiff]) -> None:
        for fd in files:
            file_units, built = _units_or_fallback(
                fd, None, self.settings, self._seen, content=False
            )
            self._drafts.append((fd, file_units, built))

    def finish(
        self,
        diff_text: str,
        read_new: ReadNew | None = None,
        prefetch: Callable[[list[str]], None] | None = None,
    ) -> list[ReviewUnit]:
        """The units of diff_text. What was fed is used when it is the whole text; a diff that
        did not come through feed (GitHub's PR diff, a direct build_units call) is parsed here,
        and its new versions are read (prefetch) in the background while its units are built.
        """
        fed = "".join(self._texts) == diff_text
        if not fed:
            self._reset()
            self._texts.append(diff_text)
            self._files = parse_git_diff(diff_text)
            self._wanted = [fd.path for fd in self._files if _will_read(fd)]
        wanted = self._wanted if read_new is not None else []
        if prefetch is None or not wanted or self.functions:
            if prefetch is not None and wanted:
                # One batched read of every file _file_units will ask for, instead of one git
                # round trip per file (milliseconds against seconds on a large branch).
                prefetch(wanted)
            seen: dict[str, int] = {}
            return [
                unit
                for fd in self._files
                for unit in _units_or_fallback(
                    fd, read_new, self.settings, seen, functions=self.functions
                )[0]
            ]
        if fed:
            self.digest()  # the last sections fed, if the feeder did not
            prefetch(wanted)  # joins the read done while the diff arrived (or reads now)
        else:
            # The units do not depend on the new content (see the class docstring), so they are
            # built while git reads it in its own process: the two overlap.
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="redline-prefetch") as pool:
                reading = pool.submit(prefetch, wanted)
                self._draft(self._files)
                reading.result()  # a failed read fails the review, as the direct call would
        units: list[ReviewUnit] = []
        for fd, file_units, built in self._drafts:
            if built and fd.binary and _will_read(fd):
                # Only the new side can say whether a "binary" file is text: build it again.
                file_units = _units_or_fallback(fd, read_new, self.settings, self._seen)[0]
            elif built and _will_read(fd):
                _add_content_tags(file_units, fd, read_new, self.settings)
            units += file_units
        return units


def _units_or_fallback(
    fd: FileDiff,
    read_new: ReadNew | None,
    settings: ReviewSettings,
    seen: dict[str, int],
    *,
    functions: bool = False,
    content: bool = True,
) -> tuple[list[ReviewUnit], bool]:
    """fd's units and True, or its fallback unit and False when building them failed."""
    try:
        return _file_units(fd, read_new, settings, seen, functions, content=content), True
    except Exception as exc:  # one odd file must not lose the whole review
        reason = f"could not build review units: {type(exc).__name__}: {exc}"
        return [_fallback_unit(fd, settings, seen, reason)], False


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
    """What is known about one file while its units are built."""

    path: str
    language: str | None
    tags: set[Tag]
    patch_type: PatchType
    old_path: str | None
    names: dict[int, str | None] | None = None  # enclosing function per anchor line, if known

    @classmethod
    def of(cls, fd: FileDiff) -> _FileContext:
        path = fd.path
        patch_type = _patch_type(fd)
        tags = path_tags(path)
        if fd.binary:
            tags.add(Tag.BINARY)
        old_path = fd.old_path if patch_type is PatchType.RENAME or fd.is_copy else None
        return cls(path, language_for(path), tags, patch_type, old_path)


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
) -> list[ReviewUnit]:
    """fd's units. With content=False the new version is not looked at: the units lack the
    tags it decides (_add_content_tags adds them), and function metrics are not computed."""
    if fd.binary and content and not fd.is_deleted and not fd.submodule:
        fd = _text_new_side(fd, read_new, settings) or fd
    ctx = _FileContext.of(fd)
    if fd.error or fd.combined:
        reason = fd.error or "combined (merge) diff: review it against one parent instead"
        return [_whole_file_unit(fd, ctx, settings, seen, skip_reason=reason)]
    if fd.binary or fd.submodule or fd.is_deleted or not fd.hunks:
        return [_whole_file_unit(fd, ctx, settings, seen)]

    new_content = (
        _content_file_tags(ctx.path, ctx.tags, fd, read_new, settings) if content else None
    )
    # Parsed once, and only when the unit is going to be reviewed.
    # Not for new files either: their depth (full_file) does not depend on their functions.
    if (
        functions
        and new_content is not None
        and ctx.patch_type is not PatchType.ADD
        and not ctx.tags & _UNPARSED_TAGS
        and has_grammar(ctx.path)
    ):
        anchors = [line for hunk in fd.hunks for line in hunk.anchors]
        ctx.names = names_for_lines(function_spans(ctx.path, new_content, anchors), anchors)
    groups = _group(fd.hunks, ctx.names, settings.large_unit_lines)
    return [_unit(fd, ctx, group, settings, seen) for group in groups]


def _text_new_side(
    fd: FileDiff, read_new: ReadNew | None, settings: ReviewSettings
) -> FileDiff | None:
    """fd as a text change when git called it binary but its new side is text (git calls a file
    binary when either side is; the new side is what is reviewed): the whole new text as added
    lines, since the old side has no lines to compare with. None when the new side is binary
    too, unreadable or over the size limit."""
    content = _read(read_new, fd.path)
    if content is None or len(content) > settings.max_file_bytes or binary_content(content):
        return None
    lines = content.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return None
    count = len(lines)
    hunk = Hunk(
        header=f"@@ -0,0 +1,{count} @@ (the old side was binary: the whole new text)",
        old_start=0,
        old_count=0,
        new_start=1,
        new_count=count,
        lines=["+" + line for line in lines],
        tags="+" * count,
        added=list(range(1, count + 1)),
    )
    return dataclasses.replace(fd, binary=False, hunks=[hunk])


def _content_file_tags(
    path: str, tags: set[Tag], fd: FileDiff, read_new: ReadNew | None, settings: ReviewSettings
) -> bytes | None:
    """Add the tags the new version decides (large, generated, vendored, minified) to `tags`,
    the file's; return the version when it can be parsed for functions."""
    content = _read(read_new, path) if not tags & _UNREAD_TAGS else None
    tags |= _judged_by_content(path, content, fd.hunks[0] if fd.hunks else None, fd.hunks)
    if content is not None and len(content) > settings.max_file_bytes:
        tags.add(Tag.LARGE)
        content = None  # too big to parse; also what the context provider will refuse to send
    return content


def _judged_by_content(
    path: str, content: bytes | None, first: Hunk | None, hunks: Sequence[Hunk]
) -> set[Tag]:
    """generated, vendored and minified, from the new version; without it, from what the diff
    shows of it (the top of the file when the first hunk starts there; the added lines)."""
    tags: set[Tag] = set()
    if content is not None:
        head = content[:_HEAD_BYTES].decode("utf-8", errors="replace").split("\n", HEAD_LINES)
        head = head[:HEAD_LINES]
        # Minified text has few newlines: the mean line length says so without splitting.
        newlines = content.count(b"\n")
        if len(content) / (newlines + 1) >= MINIFIED_MEAN_LINE and minified(
            content.decode("utf-8", errors="replace").split("\n")
        ):
            tags.add(Tag.MINIFIED)
    else:
        head = (
            [line[1:] for line in first.lines if line.startswith((" ", "+"))][:HEAD_LINES]
            if first is not None and first.new_start <= 1
            else []
        )
        added = [line[1:] for h in hunks for line in h.lines if line.startswith("+")]
        if minified(added):
            tags.add(Tag.MINIFIED)
    if generated_header(iter(head)):
        tags.add(Tag.GENERATED)
    if vendored_header(path, head):
        tags.add(Tag.VENDORED)
    if bundled(head):
        tags.add(Tag.MINIFIED)
    return tags


def _add_content_tags(
    units: list[ReviewUnit], fd: FileDiff, read_new: ReadNew | None, settings: ReviewSettings
) -> None:
    """Give units built with content=False the tags their file's new version decides."""
    tags = path_tags(fd.path)  # what _FileContext.of starts from (binary files are not read)
    if fd.binary:
        tags.add(Tag.BINARY)
    before = set(tags)
    _content_file_tags(fd.path, tags, fd, read_new, settings)
    extra = tags - before
    if extra:
        for unit in units:
            unit.tags = _ordered(set(unit.tags) | extra)


def _will_read(fd: FileDiff) -> bool:
    """Whether _file_units reads this file's new version (keep in step with it)."""
    if fd.error or fd.combined or fd.submodule or fd.is_deleted:
        return False
    if fd.binary:
        return _maybe_text(fd.path)
    return bool(fd.hunks) and not path_tags(fd.path) & _UNREAD_TAGS


def _maybe_text(path: str) -> bool:
    """A "binary" file worth reading to see if its new side is text: one whose name says text
    (a known language, docs, config). Images and archives are not read at all."""
    return language_for(path) is not None or bool(path_tags(path) & {Tag.DOCS, Tag.CONFIG})


def _read(read_new: ReadNew | None, path: str) -> bytes | None:
    if read_new is None:
        return None
    try:
        return read_new(path)
    # An unreadable file only costs metrics, not the review. Only what a failed read raises
    # (ScopeDiff.read_new: RepositoryError, FileTooLargeError, git failures; the file system:
    # OSError; a path the file system cannot encode: UnicodeError). Anything else is a bug,
    # which _units_or_fallback reports on a skipped unit instead of dropping the metrics.
    except (RedlineError, OSError, UnicodeError):
        return None


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
    changes = _Changes.of(hunks)
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
        tags=_ordered(tags),
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
    changes = _Changes.of(hunks)
    tags = set(ctx.tags)
    if not skip_reason and not fd.submodule and not tags & _NO_CONTENT_TAGS:
        tags |= _content_tags(ctx, changes)
    if changes.count > settings.large_unit_lines:
        tags.add(Tag.LARGE)
    identity = [line for line in fd.header if line.startswith(_IDENTITY_HEADERS)]
    if fd.binary or fd.submodule:
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
        tags=_ordered(tags),
        metrics=UnitMetrics(added=changes.added, removed=changes.removed, hunks=len(hunks)),
        added_lines=[line for h in hunks for line in h.added] if new_side else [],
        hunk_ranges=[h.new_range for h in hunks] if new_side else [],
        patch=patch,
        skip_reason=skip_reason,
        symbols=symbols,
    )


# bytes.translate tables over a hunk's line tags: a 1 selects the line, a 0 skips it.
_CHANGED_SELECTOR = bytes(1 if chr(byte) in "+-" else 0 for byte in range(256))
_REMOVED_SELECTOR = bytes(1 if chr(byte) == "-" else 0 for byte in range(256))
_ADDED_SELECTOR = bytes(1 if chr(byte) == "+" else 0 for byte in range(256))


@dataclass(slots=True)
class _Changes:
    """A unit's changed lines in the forms its tags and id need, each built once.

    `text` is the '+'/'-' lines, prefix included, in diff order, joined by "\\n"; `removed_text`
    and `added_text` are the '-' and '+' lines without their prefix, joined the same way.
    """

    count: int
    removed: int
    added: int
    text: str
    removed_text: str
    added_text: str

    @classmethod
    def of(cls, hunks: Sequence[Hunk]) -> _Changes:
        lines: list[str] = []
        tag_parts: list[str] = []
        for hunk in hunks:
            lines += hunk.lines
            tag_parts.append(
                hunk.tags if len(hunk.tags) == len(hunk.lines) else line_tags(hunk.lines)
            )
        tags = "".join(tag_parts)
        # The lines are picked by their tags at C level: changes often come as many short runs
        # (a line replaced here and there), where a Python step per line or per run costs more.
        # Tags are ASCII in any diff git writes; anything else takes a per-tag table lookup.
        if tags.isascii():
            raw = tags.encode("ascii")
            changed = list(itertools.compress(lines, raw.translate(_CHANGED_SELECTOR)))
            removed = list(itertools.compress(lines, raw.translate(_REMOVED_SELECTOR)))
            added = list(itertools.compress(lines, raw.translate(_ADDED_SELECTOR)))
        else:
            changed = [line for line, tag in zip(lines, tags, strict=True) if tag in "+-"]
            removed = [line for line in changed if line[0] == "-"]
            added = [line for line in changed if line[0] == "+"]
        return cls(
            count=len(changed),
            removed=len(removed),
            added=len(added),
            text="\n".join(changed),
            removed_text=_unprefixed(removed, "\n-"),
            added_text=_unprefixed(added, "\n+"),
        )

    def material(self, head: str) -> str:
        """`head` and the changed lines, joined by "\\n": what the unit id hashes."""
        return f"{head}\n{self.text}" if self.count else head


def _unprefixed(lines: list[str], prefix: str) -> str:
    """ "\\n".join(line[1:] for line in lines), every line starting with prefix[1]: one C-level
    replace drops the prefix after each newline (no line contains one), and [1:] the first."""
    return "\n".join(lines).replace(prefix, "\n")[1:]


def _content_tags(ctx: _FileContext, changes: _Changes) -> set[Tag]:
    tags: set[Tag] = set()
    # Prose is read by people: "password" in a README or a changelog is not a security change.
    if not prose(ctx.path) and security_sensitive_text(ctx.path, changes.text):
        tags.add(Tag.SECURITY_SENSITIVE)
    if changes.count and only_comments(ctx.language, _change_lines(changes)):
        tags.add(Tag.ONLY_COMMENTS)
    if changes.count and whitespace_only_change(
        ctx.language, changes.removed_text, changes.added_text
    ):
        tags.add(Tag.ONLY_WHITESPACE)
    return tags


def _change_lines(changes: _Changes) -> Iterator[str]:
    """The removed then the added lines, without prefix, split only as far as they are read
    (only_comments stops at the first line that is not a comment)."""
    if changes.removed:
        yield from changes.removed_text.split("\n")
    if changes.added:
        yield from changes.added_text.split("\n")


_TAG_ORDER = {tag: i for i, tag in enumerate(Tag)}


def _ordered(tags: set[Tag]) -> list[Tag]:
    return sorted(tags, key=_TAG_ORDER.__getitem__)


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
