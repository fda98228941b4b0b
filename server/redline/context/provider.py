"""Context bundles: what a reviewer model sees for one review unit, within a token budget.

A bundle always starts with the unit's diff (numbered new-side lines, see format.py), then adds
context by priority until the budget is spent:

1. the enclosing functions of the changed lines (level `function` and up, or a `function`
   request without a target); changes outside any function get ±hunk_margin lines instead;
2. what the planner or reviewer asked for, in the order asked: a named function, callers of a
   symbol, the previous version, another file, a text search;
3. with project memory built (context/memory_context.py), the callers of each changed function
   and the most similar functions elsewhere (level `function` and up);
4. the file's header (imports) and ±40 lines around each hunk (level `file_context` and up);
5. the whole new file (level `full_file`).

Everything shown from a file is tracked as line ranges per (side, path), so the same lines
never appear twice: a function already inside a window is not repeated, overlapping windows are
merged, and a section lists every reason its lines are there. What does not fit, or cannot be
read, is named in `omitted` with the reason — a reviewer (and the user) must know what it did
not see. The diff is never dropped, even over budget.

Safety: everything read from the repository goes through a RepoReader (repo_reader.py): file
versions come from ScopeDiff.read_new/read_old (hardened, size-capped); requested paths pass
the tools' path checks (no `..`, no `.git`, no secret files); searches use the hardened
runner's `git grep` with fixed options. A secret file's content is never sent, not even its
diff; every section is passed through ToolContext.clean (secrets masked, invisible characters
made visible). What a model asked for is turned into candidates by requested.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Final

from redline.context.assembly import Assembly, Candidate, Lines, Missing, Side, Source
from redline.context.budget import around, clamp, estimate_tokens
from redline.context.bundle import ContextBundle, ContextSection
from redline.context.format import format_patch, module_header_end
from redline.context.locate import innermost, new_anchors
from redline.context.memory_context import MemoryContext
from redline.context.repo_reader import RepoReader, is_secret
from redline.context.request import ContextRequest
from redline.context.requested import RequestedContext
from redline.diff.file_diff import FileDiff
from redline.diff.functions import FunctionSpan, has_grammar
from redline.git.scopes import ScopeDiff
from redline.model import ContextLevel, PatchType, ReviewUnit
from redline.tools.sandbox import ToolContext

FILE_CONTEXT_MARGIN: Final = 40  # lines around each hunk at level file_context
MAX_REQUESTS: Final = 8  # context requests honoured per bundle; the rest are listed as omitted


class ContextProvider:
    """Builds context bundles for the units of one ScopeDiff; file reads and searches go
    through its RepoReader, cached for the provider's lifetime (one review), so units of one
    file share them."""

    def __init__(
        self,
        scope: ScopeDiff,
        *,
        tool_ctx: ToolContext | None = None,
        token_budget: int = 6000,
        hunk_margin: int = 10,
        use_memory: bool = True,
    ) -> None:
        self.scope = scope
        self.ctx = tool_ctx or ToolContext(
            scope.repo_root, runner=scope.runner, old_rev=scope.old_rev
        )
        self.token_budget = token_budget
        self.hunk_margin = hunk_margin
        self.reader = RepoReader(scope, self.ctx)
        self.requested = RequestedContext(
            self.reader, token_budget=token_budget, hunk_margin=hunk_margin
        )
        # Project memory, opened on the first bundle (once per review, never built here).
        self.use_memory = use_memory
        self._memory: MemoryContext | None = None
        self._memory_opened = False
        self._memory_lock = threading.Lock()

    @property
    def memory(self) -> MemoryContext | None:
        """Callers and similar code from project memory; None when it is not built."""
        with self._memory_lock:  # bundles may be built from several threads
            if not self._memory_opened and self.use_memory:
                from redline.tools.memory_tools import project_memory

                opened = project_memory(self.ctx)
                if opened is not None:
                    diff = self.scope.diff_text
                    self._memory = MemoryContext(
                        opened, self.reader, diff_text=diff, hunk_margin=self.hunk_margin
                    )
                self._memory_opened = True
            return self._memory

    # -- public ---------------------------------------------------------------------------------

    def warm_memory(self, units: Sequence[ReviewUnit]) -> None:
        """Start asking project memory about these units' changed functions in the background
        (memory_context.MemoryContext.warm), so their bundles do not wait for it."""
        if self.memory is not None:
            self.memory.warm(units)

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
        if is_secret(unit.file_path):
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
            yield from self.requested.candidates(unit, fd, request)
        if level.depth >= ContextLevel.FUNCTION.depth and self.memory is not None:
            yield from self.memory.candidates(unit, fd)
        if level.depth >= ContextLevel.FILE_CONTEXT.depth:
            yield from self._file_context(unit)
        if level.depth >= ContextLevel.FULL_FILE.depth:
            src = self.source("new", unit.file_path)
            if isinstance(src, str):
                yield Missing(f"the whole file: {src}")
            elif src.lines:
                yield Lines("new", src.path, src.whole, "whole file", "file")

    def _enclosing(self, unit: ReviewUnit, fd: FileDiff | None) -> Iterator[Candidate]:
        src = self.source("new", unit.file_path)
        if isinstance(src, str):
            yield Missing(f"enclosing functions: {src}")
            return
        anchors = new_anchors(unit, fd)
        spans = self.reader.function_spans(src)
        chosen: dict[FunctionSpan, list[int]] = {}
        loose: list[int] = []
        for line in anchors:
            span = innermost(spans, line)
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

    # -- reading and sections ----------------------------------------------------------------------

    def source(self, side: Side, path: str) -> Source | str:
        """A decoded file version (cached by the reader), or why it cannot be shown."""
        return self.reader.source(side, path)

    def _diff_section(self, unit: ReviewUnit) -> tuple[ContextSection, FileDiff | None]:
        path = unit.file_path
        title = f"Diff of {path}"
        if unit.patch_type is PatchType.RENAME and unit.old_path:
            title += f" (renamed from {unit.old_path})"
        elif unit.patch_type is PatchType.ADD:
            title += " (new file)"
        elif unit.patch_type is PatchType.DELETE:
            title += " (deleted)"
        if is_secret(path):
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


__all__ = ["ContextBundle", "ContextProvider", "ContextSection", "estimate_tokens"]
