"""Context a planner or reviewer asked for (a ContextRequest), as candidates for a bundle: a
named function, the uses of a symbol, another file, a text search, the previous version.

Requests are model text: a path passes RepoReader.check_path (the tools' rules), a symbol must
look like an identifier, a search is one short line; a refused or failing request becomes a
`Missing` naming why, never an error that loses the unit's review.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from redline.agent.toolkit import ToolError
from redline.context.assembly import Candidate, Lines, Missing, Source, Text, count
from redline.context.budget import clamp, merge_ranges
from redline.context.locate import innermost, new_anchors, old_anchors
from redline.context.repo_reader import RepoReader, definition_pattern
from redline.context.request import ContextRequest
from redline.diff.file_diff import FileDiff
from redline.model import PatchType, ReviewUnit
from redline.tools.code_tools import definitions, find_definition

MAX_SEARCH_CHARS: Final = 200
# The previous version is shown whole only when it costs at most 1/4 of the budget.
PREVIOUS_WHOLE_SHARE: Final = 4

# Same shape as tools.code_tools: identifiers, optionally dotted (Client.send).
_SYMBOL: Final = re.compile(
    r"[A-Za-z_$][A-Za-z0-9_$]{0,99}(?:\.[A-Za-z_$][A-Za-z0-9_$]{0,99}){0,4}"
)


class RequestedContext:
    """Turns one context request into candidates, reading through the provider's RepoReader."""

    def __init__(self, reader: RepoReader, *, token_budget: int, hunk_margin: int) -> None:
        self.reader = reader
        self.token_budget = token_budget
        self.hunk_margin = hunk_margin

    def candidates(
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

    def _named_function(self, unit: ReviewUnit, target: str) -> Iterator[Candidate]:
        path, sep, name = target.rpartition(":")
        explicit = bool(sep and path)
        if not explicit:
            path, name = unit.file_path, target
        name = name.strip()
        if not _SYMBOL.fullmatch(name):
            raise ToolError("a function request names an identifier, optionally path:Name")
        paths = [self.reader.check_path(path)] if explicit else [unit.file_path]
        if not explicit:
            paths += [p for p in self.reader.definition_files(name) if p != unit.file_path]
        for candidate_path in paths:
            src = self.reader.source("new", candidate_path)
            if isinstance(src, str):
                if explicit:
                    yield Missing(f"function {name}: {src}")
                continue
            found = find_definition(definitions(src.path, src.data), name)
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
            found = self.reader.grep(symbol.rsplit(".", 1)[-1], word=True)
            if isinstance(found, str):
                yield Missing(f"callers of {symbol}: {found}")
                continue
            hits, total = found
            tail = definition_pattern(symbol)
            lines = [
                f"{h.path}:{h.line}: {h.text}" + ("  (definition)" if tail.search(h.text) else "")
                for h in hits
            ]
            title = f"Uses of {symbol}: {count(total, 'occurrence')}{self.reader.where()}"
            if total > len(hits):
                title += f", the first {len(hits)} shown"
            yield Text(("callers", symbol), "callers", title, "\n".join(lines) or "(none)")

    def _search(self, target: str) -> Iterator[Candidate]:
        if not target or "\n" in target or len(target) > MAX_SEARCH_CHARS:
            raise ToolError(f"search needs one line of text, at most {MAX_SEARCH_CHARS} characters")
        found = self.reader.grep(target, word=False)
        if isinstance(found, str):
            yield Missing(f"search {target!r}: {found}")
            return
        hits, total = found
        title = f"Search for {target!r}: {count(total, 'match', 'matches')}{self.reader.where()}"
        if total > len(hits):
            title += f", the first {len(hits)} shown"
        text = "\n".join(f"{h.path}:{h.line}: {h.text}" for h in hits) or "(none)"
        yield Text(("search", target), "search", title, text)

    def _file(self, target: str) -> Iterator[Candidate]:
        rel = self.reader.check_path(target)
        src = self.reader.source("new", rel)
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
            path = self.reader.check_path(target)
        elif unit.patch_type is PatchType.ADD:
            yield Missing(f"previous version of {unit.file_path}: the file is new in this change")
            return
        src = self.reader.source("old", path)
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
            removed = old_anchors(fd)
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
            spans = [innermost(self.reader.function_spans(src), n) for n in removed]
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

    def _changed_symbols(self, unit: ReviewUnit, fd: FileDiff | None) -> list[str]:
        names = list(unit.metrics.functions)
        if not names:
            src = self.reader.source("new", unit.file_path)
            if isinstance(src, Source):
                spans = self.reader.function_spans(src)
                found = (innermost(spans, n) for n in new_anchors(unit, fd))
                names = [s.name for s in found if s is not None]
        # Callers call the last segment (obj.method(...)), not Class.method.
        return list(dict.fromkeys(n.rsplit(".", 1)[-1] for n in names))[:3]


__all__ = ["MAX_SEARCH_CHARS", "PREVIOUS_WHOLE_SHARE", "RequestedContext"]
