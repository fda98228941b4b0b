"""Project memory in a context bundle: the callers of each changed function, and the most
similar functions elsewhere, so a reviewer sees how the change is used and how the codebase
handles the same thing.

Memory (redline/memory/query.py `ProjectMemory`) is opened once per review by the provider's
ToolContext (tools/memory_tools.project_memory) and never built by a review: without it these
candidates are simply not proposed, and the bundle is what it was. With it, the candidates
come after the enclosing functions and the model's own requests; what does not fit the budget
is named in `omitted`, as any other candidate.

Finding similar code starts from the changed function's stored vector when memory holds it
(ProjectMemory.similar(stored_first=True): a millisecond, no model), and embeds its text only
for a function memory does not have (the local model: tens of milliseconds a function, far
more on a busy machine), so a review warms the answers up beside
its first model call (`warm`, in a daemon thread, started by review/model_review.py before the
planner): a unit's bundle reads them from the cache, waits at most SIMILAR_WAIT for one not
ready yet, and otherwise goes without it (named in `omitted`). The graph's answers (callers)
take a millisecond and are always read. A bundle built without a warm-up (an estimate, a test,
the editor) asks memory itself.

Memory only says WHERE to look. The lines shown are read from the change's new side through
the provider's RepoReader (hardened reads, secret files never read) and pass through the
provider's clean() (redaction) like every section. The index may be a little stale: a caller
is located by path + qualified name in the file as it is now, and kept only when it still
calls the function; one that is gone is skipped.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from redline.context.assembly import Candidate, Lines, Missing, Source
from redline.context.budget import Range, clamp, merge_ranges
from redline.context.locate import innermost, new_anchors
from redline.context.repo_reader import RepoReader, is_secret
from redline.diff.file_diff import FileDiff
from redline.diff.functions import FunctionSpan, language_for
from redline.model import ReviewUnit

if TYPE_CHECKING:
    from redline.memory.model import Hit, Symbol, SymbolKind
    from redline.memory.query import ProjectMemory

MAX_FUNCTIONS: Final = 3  # changed functions of one unit looked up
MAX_CALLERS: Final = 3  # callers shown per changed function
MAX_SIMILAR: Final = 2  # similar functions shown per changed function
# Asked of memory beyond what is shown: some answers are left out (the function itself, a
# function of this diff, a caller gone from the current version).
_OVERFETCH: Final = 4
CALL_MARGIN: Final = 3  # lines around a call when the whole caller does not fit
MIN_SIMILARITY: Final = 0.35  # below this a "similar" function is noise
MAX_QUERY_CHARS: Final = 4000  # of a changed function's text, to find similar code


# Seconds a bundle waits for the warm-up's similar code for its unit; after that the unit goes
# without it (and says so): a review never waits for its memory.
SIMILAR_WAIT: Final = 1.0


@dataclass
class MemoryReads:
    """Time spent reading memory (milliseconds): per review unit in the bundle's path (what a
    bundle waits for, warm-up included when it is not done), per question asked of memory
    (the graph's callers; similar code: the embedding of the function and the nearest
    vectors), and the warm-up's total. The benchmarks report them."""

    per_unit: list[float] = field(default_factory=list)
    callers: list[float] = field(default_factory=list)
    similar: list[float] = field(default_factory=list)
    warm_ms: float = 0.0


class MemoryContext:
    """Candidates from project memory for the units of one review (cached per function name:
    the units of one file share them)."""

    def __init__(
        self,
        memory: ProjectMemory,
        reader: RepoReader,
        *,
        diff_text: str = "",
        hunk_margin: int = 10,
    ) -> None:
        self.memory = memory
        self.reader = reader
        self.diff_text = diff_text
        self.hunk_margin = hunk_margin
        self.reads = MemoryReads()
        self._callers: dict[str, list[Hit]] = {}
        self._similar: dict[tuple[str, str], list[Hit]] = {}
        self._changed: dict[str, list[Range]] | None = None
        # Guards the caches (memory is asked outside it: the store has its own lock), and
        # wakes a bundle waiting for the warm-up.
        self._cond = threading.Condition()
        self._warm: threading.Thread | None = None

    # -- warming up beside the first model call ---------------------------------------------

    def warm(self, units: Sequence[ReviewUnit]) -> None:
        """Ask memory about every unit's changed functions in a daemon thread, so the bundles
        built later find the answers ready. Best effort: a failure leaves the caches empty and
        the bundle asks again."""
        if self._warm is not None:
            return
        thread = threading.Thread(
            target=self._warm_up, args=(list(units),), name="redline-memory-warm", daemon=True
        )
        self._warm = thread
        thread.start()

    def _warm_up(self, units: list[ReviewUnit]) -> None:
        started = time.perf_counter()
        try:
            found = [f for f in (self._changed_functions(u, None) for u in units) if f]
            for _, spans in found:  # the graph first: cheap, and every unit needs it
                for span in spans:
                    self._callers_of(span)
            for src, spans in found:
                for span in spans:
                    self._similar_to(src, span)
        except Exception:  # the bundle asks again; a review never fails for its memory
            pass
        finally:
            self.reads.warm_ms = (time.perf_counter() - started) * 1000
            with self._cond:
                self._cond.notify_all()

    # -- candidates -------------------------------------------------------------------------

    def candidates(self, unit: ReviewUnit, fd: FileDiff | None) -> Iterator[Candidate]:
        found = self._changed_functions(unit, fd)
        if found is None:
            return
        src, changed = found
        started = time.perf_counter()
        callers = {span: self._callers_of(span) for span in changed}
        similar = {span: self._similar_ready(src, span) for span in changed}
        self.reads.per_unit.append((time.perf_counter() - started) * 1000)
        for span in changed:
            yield from self._caller_lines(src, span, callers[span])
        for span in changed:
            hits = similar[span]
            if hits is None:
                yield Missing(
                    f"similar to {span.name} (project memory): not ready after "
                    f"{SIMILAR_WAIT:g} s (the local model was still embedding); left out so "
                    "the review does not wait"
                )
            else:
                yield from self._similar_lines(src, span, hits)

    def _similar_ready(self, src: Source, span: FunctionSpan) -> list[Hit] | None:
        """Similar code for span: from the cache; while the warm-up runs, what it gives within
        SIMILAR_WAIT (None: not ready); without a warm-up running, asked here."""
        key = (src.path, span.name)
        warm = self._warm
        if warm is not None and warm.is_alive():
            with self._cond:
                self._cond.wait_for(
                    lambda: key in self._similar or not warm.is_alive(), SIMILAR_WAIT
                )
                if key in self._similar:
                    return self._similar[key]
            if warm.is_alive():
                return None
        return self._similar_to(src, span)

    def _changed_functions(
        self, unit: ReviewUnit, fd: FileDiff | None
    ) -> tuple[Source, list[FunctionSpan]] | None:
        if is_secret(unit.file_path):
            return None
        src = self.reader.source("new", unit.file_path)
        if isinstance(src, str):
            return None
        spans = self.reader.function_spans(src)
        if fd is None:
            from redline.context.format import format_patch

            fd = format_patch(unit.patch)[1]
        changed = list(
            dict.fromkeys(s for s in (innermost(spans, n) for n in new_anchors(unit, fd)) if s)
        )[:MAX_FUNCTIONS]
        return (src, changed) if changed else None

    def _callers_of(self, span: FunctionSpan) -> list[Hit]:
        name = span.name.rsplit(".", 1)[-1]
        with self._cond:
            cached = self._callers.get(name)
        if cached is not None:
            return cached
        started = time.perf_counter()
        hits = self.memory.callers(name, limit=MAX_CALLERS + _OVERFETCH)
        with self._cond:
            self.reads.callers.append((time.perf_counter() - started) * 1000)
            return self._callers.setdefault(name, hits)

    def _similar_to(self, src: Source, span: FunctionSpan) -> list[Hit]:
        key = (src.path, span.name)
        with self._cond:
            cached = self._similar.get(key)
        if cached is not None:
            return cached
        from redline.memory.model import Symbol

        # As the index embedded each symbol (memory/embed.symbol_text): the qualified name
        # first, then the code (similar() writes it as symbols are).
        body = "\n".join(src.lines[span.start - 1 : span.end])[:MAX_QUERY_CHARS]
        text = f"{span.name}\n{body}"
        kind: SymbolKind = "method" if "." in span.name else "function"
        me = Symbol(src.path, span.name, kind, span.start, span.end, _language(src.path))
        started = time.perf_counter()
        # A function memory holds is searched from its stored vector (stored_first): no model
        # call in the review. That vector is of the version indexed, not of the new text —
        # close enough to find similar code; a function memory does not have is embedded.
        hits = self.memory.similar(
            text, limit=MAX_SIMILAR + _OVERFETCH, exclude=me, stored_first=True
        )
        with self._cond:
            self.reads.similar.append((time.perf_counter() - started) * 1000)
            found = self._similar.setdefault(key, hits)
            self._cond.notify_all()
            return found

    # -- locating what memory named in the current version ------------------------------------

    def _caller_lines(
        self, src: Source, span: FunctionSpan, hits: Sequence[Hit]
    ) -> Iterator[Candidate]:
        name = span.name.rsplit(".", 1)[-1]
        calls = re.compile(rf"(?<![\w$]){re.escape(name)}\s*\(")
        shown = 0
        for hit in hits:
            if shown >= MAX_CALLERS:
                return
            sym = hit.stored.symbol
            if sym.path == src.path and sym.qualname == span.name:
                continue  # recursion: the function itself
            found = self._locate(sym)
            if found is None:
                continue
            caller_src, caller = found
            lines = [
                n
                for n in range(caller.start, caller.end + 1)
                if calls.search(caller_src.lines[n - 1])
            ]
            if not lines:
                continue  # the current version no longer calls it (the index is stale)
            label = f"caller of {name} (project memory)"
            windows = merge_ranges((n - CALL_MARGIN, n + CALL_MARGIN) for n in lines)
            near = clamp(windows, caller.end)
            near = [(max(s, caller.start), e) for s, e in near]
            fallback = Lines("new", caller_src.path, tuple(near[:2]), label, "callers")
            yield Lines(
                "new", caller_src.path, ((caller.start, caller.end),), label, "callers", fallback
            )
            shown += 1

    def _similar_lines(
        self, src: Source, span: FunctionSpan, hits: Sequence[Hit]
    ) -> Iterator[Candidate]:
        shown = 0
        for hit in hits:
            if shown >= MAX_SIMILAR or hit.score < MIN_SIMILARITY:
                return
            sym = hit.stored.symbol
            if sym.path == src.path and sym.qualname == span.name:
                continue  # itself
            found = self._locate(sym)
            if found is None:
                continue
            other_src, other = found
            if self._in_diff(other_src.path, other):
                continue  # changed by this diff: reviewed in its own right, not an example
            label = f"similar to {span.name} (project memory, similarity {hit.score:.2f})"
            yield Lines("new", other_src.path, ((other.start, other.end),), label, "similar")
            shown += 1

    def _locate(self, sym: Symbol) -> tuple[Source, FunctionSpan] | None:
        """The symbol's function in the current version of its file, by qualified name; None
        when the file or the function is gone (or cannot be shown)."""
        if is_secret(sym.path):
            return None
        src = self.reader.source("new", sym.path)
        if isinstance(src, str):
            return None
        for span in self.reader.function_spans(src):
            if span.name == sym.qualname:
                return src, span
        return None

    def _in_diff(self, path: str, span: FunctionSpan) -> bool:
        if self._changed is None:
            from redline.diff.parse import parse_git_diff

            self._changed = {}
            for fd in parse_git_diff(self.diff_text):
                ranges = [h.new_range for h in fd.hunks if h.new_count > 0]
                self._changed.setdefault(fd.path, []).extend(ranges)
        return any(s <= span.end and e >= span.start for s, e in self._changed.get(path, []))


def _language(path: str) -> str:
    return language_for(path) or ""


__all__ = ["MAX_CALLERS", "MAX_SIMILAR", "MemoryContext", "MemoryReads"]
