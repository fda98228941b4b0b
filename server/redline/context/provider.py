"""Context bundles: what a reviewer model sees for one review unit, within a token budget.

A bundle always starts with the unit's diff (numbered new-side lines, see format.py), then adds
context by priority until the budget is spent:

1. the enclosing functions of the changed lines (level `function` and up, or a `function`
   request without a target); changes outside any function get ±hunk_margin lines instead;
2. what the planner or reviewer asked for, in the order asked: a named function, callers of a
   symbol, the previous version, another file, a text search;
3. the file's header (imports) and ±40 lines around each hunk (level `file_context` and up);
4. the whole new file (level `full_file`).

Everything shown from a file is tracked as line ranges per (side, path), so the same lines
never appear twice: a function already inside a window is not repeated, overlapping windows are
merged, and a section lists every reason its lines are there. What does not fit, or cannot be
read, is named in `omitted` with the reason — a reviewer (and the user) must know what it did
not see. The diff is never dropped, even over budget.

Safety: file versions come from ScopeDiff.read_new/read_old (hardened, size-capped); requested
paths pass the tools' path checks (no `..`, no `.git`, no secret files); searches use the
hardened runner's `git grep` with fixed options; every section is passed through
ToolContext.clean (secrets masked, invisible characters made visible).
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from redline.agent.toolkit import ToolError
from redline.context.assembly import (
    Assembly,
    Candidate,
    Lines,
    Missing,
    Side,
    Source,
    SourceKey,
    Text,
    count,
)
from redline.context.budget import (
    around,
    clamp,
    estimate_tokens,
    merge_ranges,
)
from redline.context.bundle import ContextBundle, ContextSection
from redline.context.format import (
    decode_source,
    format_patch,
    module_header_end,
)
from redline.context.request import ContextRequest
from redline.diff.functions import FunctionSpan, function_spans, has_grammar
from redline.diff.parse import FileDiff
from redline.errors import FileTooLargeError, RedlineError
from redline.git.pr import UNAVAILABLE_REV
from redline.git.process import decode
from redline.git.scopes import INDEX_REV, ScopeDiff
from redline.model import ContextLevel, PatchType, ReviewUnit
from redline.tools.code_tools import Definition, definitions
from redline.tools.names import check_names, is_git_name, is_secret_path, split_user_path
from redline.tools.sandbox import ToolContext

FILE_CONTEXT_MARGIN: Final = 40  # lines around each hunk at level file_context
MAX_REQUESTS: Final = 8  # context requests honoured per bundle; the rest are listed as omitted
MAX_HITS: Final = 30  # grep lines shown per callers/search section
MAX_HIT_CHARS: Final = 300
MAX_SEARCH_CHARS: Final = 200
MAX_DEFINITION_FILES: Final = 3  # files read to find a named function outside this unit's file
# The previous version is shown whole only when it costs at most 1/4 of the budget.
PREVIOUS_WHOLE_SHARE: Final = 4

# Same shape as tools.code_tools: identifiers, optionally dotted (Client.send).
_SYMBOL: Final = re.compile(
    r"[A-Za-z_$][A-Za-z0-9_$]{0,99}(?:\.[A-Za-z_$][A-Za-z0-9_$]{0,99}){0,4}"
)
_DEFINITION: Final = r"(?:def|class|function|func|fn|interface|type|struct)\s+"


@dataclass(frozen=True)
class _Hit:
    path: str
    line: int
    text: str


class ContextProvider:
    """Builds context bundles for the units of one ScopeDiff; file reads and searches are
    cached for the provider's lifetime (one review), so units of one file share them."""

    def __init__(
        self,
        scope: ScopeDiff,
        *,
        tool_ctx: ToolContext | None = None,
        token_budget: int = 6000,
        hunk_margin: int = 10,
    ) -> None:
        self.scope = scope
        self.ctx = tool_ctx or ToolContext(
            scope.repo_root, runner=scope.runner, old_rev=scope.old_rev
        )
        self.token_budget = token_budget
        self.hunk_margin = hunk_margin
        self._lock = threading.Lock()
        self._sources: dict[SourceKey, Source | str] = {}
        self._spans: dict[SourceKey, list[FunctionSpan]] = {}
        self._greps: dict[tuple[str, bool], tuple[list[_Hit], int] | str] = {}

    # -- public ---------------------------------------------------------------------------------

    def bundle(
        self,
        unit: ReviewUnit,
        level: ContextLevel,
        requests: Sequence[ContextRequest] = (),
    ) -> ContextBundle:
        diff_section, fd = self._diff_section(unit)
        asm = Assembly(self, self.token_budget, diff_section.tokens)
        if fd is not None:
            # Lines the diff already shows (numbered, new side): a section made only of them
            # would repeat them (a short function changed in one hunk, typically).
            asm.in_diff = (unit.file_path, [h.new_range for h in fd.hunks if h.new_count > 0])
        if diff_section.tokens > self.token_budget:
            asm.omit(
                f"the diff alone is ~{diff_section.tokens} tokens, over the "
                f"{self.token_budget}-token context budget: it is included whole, "
                "and nothing else fits"
            )
        for candidate in self._candidates(unit, fd, level, requests):
            asm.add(candidate)
        bundle = ContextBundle(
            unit_id=unit.unit_id,
            level=level,
            sections=[diff_section, *asm.sections(unit)],
            tokens=0,
            omitted=asm.omitted,
            file_path=self.shown_title(unit.file_path),
        )
        bundle.tokens = estimate_tokens(bundle.render())
        return bundle

    # -- candidates -------------------------------------------------------------------------------

    def _candidates(
        self,
        unit: ReviewUnit,
        fd: FileDiff | None,
        level: ContextLevel,
        requests: Sequence[ContextRequest],
    ) -> Iterator[Candidate]:
        if _is_secret(unit.file_path):
            yield Missing(
                f"{unit.file_path} looks like a secret file: none of its content is sent "
                "to the model, only that it changed"
            )
        wanted = list(requests[:MAX_REQUESTS])
        for extra in requests[MAX_REQUESTS:]:
            yield Missing(f"request {extra.kind} {extra.target!r}: over {MAX_REQUESTS} requests")
        bare_function = any(r.kind == "function" and not r.target.strip() for r in wanted)
        if level.depth >= ContextLevel.FUNCTION.depth or bare_function:
            yield from self._enclosing(unit, fd)
        for request in wanted:
            yield from self._requested(unit, fd, request)
        if level.depth >= ContextLevel.FILE_CONTEXT.depth:
            yield from self._file_context(unit)
        if level.depth >= ContextLevel.FULL_FILE.depth:
            src = self.source("new", unit.file_path)
            if isinstance(src, str):
                yield Missing(f"the whole file: {src}")
            elif src.lines:
                yield Lines("new", src.path, src.whole, "whole file", "file")

    def _requested(
        self, unit: ReviewUnit, fd: FileDiff | None, request: ContextRequest
    ) -> Iterator[Candidate]:
        target = request.target.strip()
        try:
            if request.kind == "function":
                if target:
                    yield from self._named_function(unit, target)
            elif request.kind == "callers":
                yield from self._callers(unit, fd, target)
            elif request.kind == "previous_version":
                yield from self._previous(unit, fd, target)
            elif request.kind == "file":
                yield from self._file(target)
            elif request.kind == "search":
                yield from self._search(target)
            else:
                yield Missing(f"unknown context request kind {request.kind!r}")
        except ToolError as exc:  # a refused path or symbol: the model is told why
            yield Missing(f"{request.kind} {target!r}: {exc}")
        except Exception as exc:  # one odd request must not lose the unit's review
            yield Missing(f"{request.kind} {target!r}: failed ({type(exc).__name__}: {exc})")

    def _enclosing(self, unit: ReviewUnit, fd: FileDiff | None) -> Iterator[Candidate]:
        src = self.source("new", unit.file_path)
        if isinstance(src, str):
            yield Missing(f"enclosing functions: {src}")
            return
        anchors = _new_anchors(unit, fd)
        spans = self._function_spans(src)
        chosen: dict[FunctionSpan, list[int]] = {}
        loose: list[int] = []
        for line in anchors:
            span = _innermost(spans, line)
            if span is None:
                loose.append(line)
            else:
                chosen.setdefault(span, []).append(line)
        for span, lines in chosen.items():
            # A function too long for the budget still gets the lines around the change in it.
            near = clamp(around(lines, self.hunk_margin), span.end)
            near = [(max(s, span.start), e) for s, e in near]
            label = f"±{self.hunk_margin} lines around the change in {span.name}"
            fallback = Lines("new", src.path, tuple(near), label, "hunk")
            whole = ((span.start, span.end),)
            yield Lines("new", src.path, whole, f"function {span.name}", "function", fallback)
        if loose:
            why = "outside any function" if has_grammar(src.path) else "no parser for this language"
            ranges = clamp(around(loose, self.hunk_margin), len(src.lines))
            label = f"±{self.hunk_margin} lines around the change ({why})"
            yield Lines("new", src.path, tuple(ranges), label, "hunk")

    def _file_context(self, unit: ReviewUnit) -> Iterator[Candidate]:
        src = self.source("new", unit.file_path)
        if isinstance(src, str):
            yield Missing(f"file context: {src}")
            return
        header = module_header_end(src.lines)
        if header:
            yield Lines("new", src.path, ((1, header),), "imports and module header", "header")
        for start, end in unit.hunk_ranges or []:
            window = clamp(
                [(start - FILE_CONTEXT_MARGIN, end + FILE_CONTEXT_MARGIN)], len(src.lines)
            )
            if window:
                label = f"±{FILE_CONTEXT_MARGIN} lines around the change"
                yield Lines("new", src.path, tuple(window), label, "window")

    def _named_function(self, unit: ReviewUnit, target: str) -> Iterator[Candidate]:
        path, sep, name = target.rpartition(":")
        explicit = bool(sep and path)
        if not explicit:
            path, name = unit.file_path, target
        name = name.strip()
        if not _SYMBOL.fullmatch(name):
            raise ToolError("a function request names an identifier, optionally path:Name")
        paths = [self._check_path(path)] if explicit else [unit.file_path]
        if not explicit:
            paths += [p for p in self._definition_files(name) if p != unit.file_path]
        for candidate_path in paths:
            src = self.source("new", candidate_path)
            if isinstance(src, str):
                if explicit:
                    yield Missing(f"function {name}: {src}")
                continue
            found = _find_definition(definitions(src.path, src.data), name)
            if found is not None:
                label = f"{found.kind} {found.name}"
                yield Lines("new", src.path, ((found.start, found.end),), label, "function")
                return
        yield Missing(f"function {name}: no definition found")

    def _callers(self, unit: ReviewUnit, fd: FileDiff | None, target: str) -> Iterator[Candidate]:
        symbols = [target] if target else self._changed_symbols(unit, fd)
        if not symbols:
            yield Missing("callers: no symbol given and the change is not inside a named function")
        for symbol in symbols:
            if not _SYMBOL.fullmatch(symbol):
                raise ToolError("callers needs an identifier such as parse_config or Client.send")
            found = self._grep(symbol.rsplit(".", 1)[-1], word=True)
            if isinstance(found, str):
                yield Missing(f"callers of {symbol}: {found}")
                continue
            hits, total = found
            tail = re.compile(_DEFINITION + re.escape(symbol.rsplit(".", 1)[-1]) + r"\b")
            lines = [
                f"{h.path}:{h.line}: {h.text}" + ("  (definition)" if tail.search(h.text) else "")
                for h in hits
            ]
            title = f"Uses of {symbol}: {count(total, 'occurrence')}{self._where()}"
            if total > len(hits):
                title += f", the first {len(hits)} shown"
            yield Text(("callers", symbol), "callers", title, "\n".join(lines) or "(none)")

    def _search(self, target: str) -> Iterator[Candidate]:
        if not target or "\n" in target or len(target) > MAX_SEARCH_CHARS:
            raise ToolError(f"search needs one line of text, at most {MAX_SEARCH_CHARS} characters")
        found = self._grep(target, word=False)
        if isinstance(found, str):
            yield Missing(f"search {target!r}: {found}")
            return
        hits, total = found
        title = f"Search for {target!r}: {count(total, 'match', 'matches')}{self._where()}"
        if total > len(hits):
            title += f", the first {len(hits)} shown"
        text = "\n".join(f"{h.path}:{h.line}: {h.text}" for h in hits) or "(none)"
        yield Text(("search", target), "search", title, text)

    def _file(self, target: str) -> Iterator[Candidate]:
        rel = self._check_path(target)
        src = self.source("new", rel)
        if isinstance(src, str):
            yield Missing(f"file {rel}: {src}")
        elif not src.lines:
            yield Missing(f"file {rel}: empty")
        else:
            yield Lines("new", rel, src.whole, "requested file", "file")

    def _previous(self, unit: ReviewUnit, fd: FileDiff | None, target: str) -> Iterator[Candidate]:
        own = {unit.file_path, unit.old_path or unit.file_path}
        path = unit.old_path or unit.file_path
        if target and target not in own:
            path = self._check_path(target)
        elif unit.patch_type is PatchType.ADD:
            yield Missing(f"previous version of {unit.file_path}: the file is new in this change")
            return
        src = self.source("old", path)
        if isinstance(src, str):
            yield Missing(f"previous version of {path}: {src}")
            return
        if not src.lines:
            yield Missing(f"previous version of {path}: it was empty")
            return
        whole = Lines("old", path, src.whole, "whole file", "previous_version")
        if path in own and fd is not None and fd.hunks:
            # A big old file would crowd out the rest of the context: the old versions of the
            # changed functions instead (or, outside functions, the old lines around each hunk).
            removed = _old_anchors(fd)
            windows = clamp(
                merge_ranges(
                    (h.old_start - self.hunk_margin, h.old_start + h.old_count + self.hunk_margin)
                    for h in fd.hunks
                ),
                len(src.lines),
            )
            hunks = Lines(
                "old", path, tuple(windows), "old lines around the change", "previous_version"
            )
            spans = [_innermost(self._function_spans(src), n) for n in removed]
            ranges = merge_ranges((s.start, s.end) for s in spans if s is not None)
            focused = hunks
            if ranges:
                names = ", ".join(dict.fromkeys(s.name for s in spans if s is not None))
                label = f"old version of {names}"
                focused = Lines("old", path, tuple(ranges), label, "previous_version", hunks)
            if src.cost(src.whole) > self.token_budget // PREVIOUS_WHOLE_SHARE:
                yield focused
                return
            whole = Lines("old", path, src.whole, "whole file", "previous_version", focused)
        yield whole

    # -- helpers -----------------------------------------------------------------------------------

    def _check_path(self, path: str) -> str:
        """A requested path as a repository-relative path, or ToolError (the tools' rules)."""
        parts = split_user_path(self.ctx.root, path)
        check_names(parts, path)
        return "/".join(parts)

    def _changed_symbols(self, unit: ReviewUnit, fd: FileDiff | None) -> list[str]:
        names = list(unit.metrics.functions)
        if not names:
            src = self.source("new", unit.file_path)
            if isinstance(src, Source):
                spans = self._function_spans(src)
                found = (_innermost(spans, n) for n in _new_anchors(unit, fd))
                names = [s.name for s in found if s is not None]
        # Callers call the last segment (obj.method(...)), not Class.method.
        return list(dict.fromkeys(n.rsplit(".", 1)[-1] for n in names))[:3]

    def _definition_files(self, name: str) -> list[str]:
        found = self._grep(name.rsplit(".", 1)[-1], word=True)
        if isinstance(found, str):
            return []
        pattern = re.compile(_DEFINITION + re.escape(name.rsplit(".", 1)[-1]) + r"\b")
        paths = [h.path for h in found[0] if pattern.search(h.text)]
        return list(dict.fromkeys(paths))[:MAX_DEFINITION_FILES]

    def source(self, side: Side, path: str) -> Source | str:
        """A decoded file version (cached), or why it cannot be shown."""
        key = (side, path)
        with self._lock:
            cached = self._sources.get(key)
        if cached is not None:
            return cached
        loaded = self._load(side, path)
        with self._lock:
            return self._sources.setdefault(key, loaded)

    def _load(self, side: Side, path: str) -> Source | str:
        if _is_secret(path):
            return "it looks like a secret file (keys, tokens, .env); Redline never sends those"
        try:
            data = self.scope.read_new(path) if side == "new" else self.scope.read_old(path)
        except FileTooLargeError as exc:
            return exc.message
        except RedlineError as exc:
            return f"cannot be read: {exc.message}"
        if data is None:
            if side == "old":
                return "it did not exist before this change"
            return "it has no new version here (deleted, or not available locally)"
        lines, note = decode_source(data)
        if lines is None:
            return "it is a binary file"
        return Source(side, path, lines, note, data)

    def _function_spans(self, src: Source) -> list[FunctionSpan]:
        key = (src.side, src.path)
        with self._lock:
            cached = self._spans.get(key)
        if cached is None:
            cached = function_spans(src.path, src.data)
            with self._lock:
                self._spans[key] = cached
        return cached

    def _grep(self, needle: str, *, word: bool) -> tuple[list[_Hit], int] | str:
        key = (needle, word)
        with self._lock:
            cached = self._greps.get(key)
        if cached is None:
            cached = self._run_grep(needle, word=word)
            with self._lock:
                self._greps[key] = cached
        return cached

    def _run_grep(self, needle: str, *, word: bool) -> tuple[list[_Hit], int] | str:
        """Fixed-string `git grep` over the new side's tracked files (the same options as the
        search_callers tool, plus the revision). `-e` keeps a needle starting with '-' a
        pattern; the revision is a full object id from the scope, never model text."""
        args = ["grep", "-n", "-z", "-F", "-I", "--no-color", "--no-textconv", "--full-name"]
        if word:
            args.append("-w")
        rev = self.scope.new_rev
        if rev == INDEX_REV:
            args.append("--cached")
        args += ["-e", needle]
        commit = rev if rev is not None and rev not in (INDEX_REV, UNAVAILABLE_REV) else None
        if commit is not None:
            args.append(commit)
        args.append("--")
        limits = self.ctx.limits
        try:
            result = self.ctx.runner.run_git(
                self.ctx.root,
                *args,
                timeout=limits.git_timeout,
                max_output=limits.max_git_output_bytes,
            )
        except RedlineError as exc:
            return f"git grep failed: {exc.message}"
        if result.returncode == 1:
            return [], 0
        if result.returncode != 0:
            return f"git grep failed: {result.error_text}"
        prefix = f"{commit}:" if commit else ""
        hits: list[_Hit] = []
        total = 0
        for record in decode(result.stdout).split("\n"):
            fields = record.split("\0", 2)
            if len(fields) != 3 or not fields[1].isdigit():
                continue
            path = fields[0].removeprefix(prefix)
            parts = [p for p in path.split("/") if p]
            if is_secret_path(parts) or any(is_git_name(p) for p in parts):
                continue  # a secret file is never shown, not even one line of it
            total += 1
            if len(hits) < MAX_HITS:
                text = fields[2].strip()
                if len(text) > MAX_HIT_CHARS:
                    text = text[:MAX_HIT_CHARS] + " …"
                hits.append(_Hit(path, int(fields[1]), text))
        return hits, total

    def _where(self) -> str:
        rev = self.scope.new_rev
        if rev == UNAVAILABLE_REV:
            return " (in the working tree: the change's commits are not available locally)"
        return ""

    def _diff_section(self, unit: ReviewUnit) -> tuple[ContextSection, FileDiff | None]:
        path = unit.file_path
        title = f"Diff of {path}"
        if unit.patch_type is PatchType.RENAME and unit.old_path:
            title += f" (renamed from {unit.old_path})"
        elif unit.patch_type is PatchType.ADD:
            title += " (new file)"
        elif unit.patch_type is PatchType.DELETE:
            title += " (deleted)"
        if _is_secret(path):
            text = "(content withheld: this looks like a secret file, such as .env or a key)"
            fd = None
        else:
            text, fd = format_patch(unit.patch)
        return self.make_section("diff", title, text, ""), fd

    def make_section(self, kind: str, title: str, text: str, language: str) -> ContextSection:
        section = ContextSection(kind, self.shown_title(title), self.ctx.clean(text), 0, language)
        section.tokens = estimate_tokens(section.render())
        return section

    def shown_title(self, text: str) -> str:
        return self.ctx.clean(text).replace("\n", " ")


# -- pure helpers -------------------------------------------------------------------------------


def _is_secret(path: str) -> bool:
    return is_secret_path([p for p in path.split("/") if p])


def _innermost(spans: Sequence[FunctionSpan], line: int) -> FunctionSpan | None:
    """The innermost span containing line; spans are sorted outer-first (function_spans)."""
    best = None
    stop = bisect.bisect_right([s.start for s in spans], line)
    for span in spans[:stop]:
        if span.end >= line:
            best = span
    return best


def _new_anchors(unit: ReviewUnit, fd: FileDiff | None) -> list[int]:
    """New-side lines that locate the change (added lines, and the line above a removal)."""
    if fd is not None and fd.hunks:
        return sorted({n for h in fd.hunks for n in h.anchors})
    return sorted(set(unit.added_lines))


def _old_anchors(fd: FileDiff) -> list[int]:
    """Old-side numbers of the removed lines (or, for pure additions, the line above them)."""
    out: list[int] = []
    for hunk in fd.hunks:
        old = hunk.old_start
        for line in hunk.lines:
            tag = line[:1]
            if tag == "-":
                out.append(old)
                old += 1
            elif tag == "+":
                out.append(max(old - 1, 1))
            elif tag != "\\":
                old += 1
    return sorted(set(out))


def _find_definition(defs: Sequence[Definition], name: str) -> Definition | None:
    exact = [d for d in defs if d.name == name]
    tail = [d for d in defs if d.name.rsplit(".", 1)[-1] == name.rsplit(".", 1)[-1]]
    matches = exact or tail
    return matches[0] if matches else None


__all__ = ["ContextBundle", "ContextProvider", "ContextSection", "estimate_tokens"]
