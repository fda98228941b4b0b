"""Reading the repository for context bundles, safely and once per review.

`RepoReader` is what a ContextProvider reads through: decoded file versions, their function
spans, and text searches. Searches are cached for the reader's lifetime (one review); file
versions and their spans only for the MAX_SOURCES most recently used: the units of one file are
built one after the other and share them, while a change of thousands of files never holds
every file's decoded lines, token costs and spans at once (several times the file's bytes
each; issue 23, "keep memory within a few times the diff").

Safety: file versions come from ScopeDiff.read_new/read_old (hardened, size-capped); secret
files (keys, tokens, .env) are never read, and grep hits in them (or in .git) are dropped;
requested paths pass the tools' path checks (no `..`, no `.git`, no secret files); searches
use the hardened runner's `git grep` with fixed options, the scope's own revision, and the
tool context's timeout and output cap; at most MAX_HITS lines of MAX_HIT_CHARS are kept. What
is read is not yet redacted: the provider passes every section through ToolContext.clean.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from redline.context.assembly import Side, Source, SourceKey
from redline.context.format import decode_source
from redline.diff.functions import FunctionSpan, function_spans
from redline.errors import FileTooLargeError, RedlineError
from redline.git.pr import UNAVAILABLE_REV
from redline.git.process import decode
from redline.git.scopes import INDEX_REV, ScopeDiff
from redline.tools.names import check_names, is_git_name, is_secret_path, split_user_path
from redline.tools.sandbox import ToolContext

MAX_HITS: Final = 30  # grep lines shown per callers/search section
MAX_HIT_CHARS: Final = 300
MAX_DEFINITION_FILES: Final = 3  # files read to find a named function outside this unit's file
# Decoded file versions (with their spans) kept at once: the files of the bundles being built
# (a unit's own file, the old side, a few requested or defining files) with room to spare.
MAX_SOURCES: Final = 32

_DEFINITION: Final = r"(?:def|class|function|func|fn|interface|type|struct)\s+"


@dataclass(frozen=True)
class GrepHit:
    path: str
    line: int
    text: str


# The first MAX_HITS hits and how many there were, or why the search failed.
GrepResult = tuple[list[GrepHit], int] | str


def is_secret(path: str) -> bool:
    return is_secret_path([p for p in path.split("/") if p])


def definition_pattern(symbol: str) -> re.Pattern[str]:
    """A line that defines the last segment of symbol (`def send`, `class Client`, ...)."""
    return re.compile(_DEFINITION + re.escape(symbol.rsplit(".", 1)[-1]) + r"\b")


class RepoReader:
    """File versions, function spans and searches of one ScopeDiff, cached (thread-safe):
    versions and spans of the `max_sources` most recently used files, searches all."""

    def __init__(self, scope: ScopeDiff, ctx: ToolContext, *, max_sources: int = MAX_SOURCES):
        self.scope = scope
        self.ctx = ctx
        self.max_sources = max_sources
        self._lock = threading.Lock()
        # Least recently used first; a file's spans leave with its version.
        self._sources: OrderedDict[SourceKey, Source | str] = OrderedDict()
        self._spans: dict[SourceKey, list[FunctionSpan]] = {}
        self._greps: dict[tuple[str, bool], GrepResult] = {}

    def held(self) -> int:
        """How many file versions the reader holds now (at most max_sources)."""
        with self._lock:
            return len(self._sources)

    def source(self, side: Side, path: str) -> Source | str:
        """A decoded file version (cached while recently used), or why it cannot be shown."""
        key = (side, path)
        with self._lock:
            cached = self._sources.get(key)
            if cached is not None:
                self._sources.move_to_end(key)
                return cached
        loaded = self._load(side, path)
        with self._lock:
            found = self._sources.setdefault(key, loaded)
            self._sources.move_to_end(key)
            while len(self._sources) > self.max_sources:
                gone, _ = self._sources.popitem(last=False)
                self._spans.pop(gone, None)
            return found

    def _load(self, side: Side, path: str) -> Source | str:
        if is_secret(path):
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

    def function_spans(self, src: Source) -> list[FunctionSpan]:
        key = (src.side, src.path)
        with self._lock:
            cached = self._spans.get(key)
        if cached is None:
            cached = function_spans(src.path, src.data)
            with self._lock:
                if key in self._sources:  # not for a version already dropped
                    self._spans[key] = cached
        return cached

    def check_path(self, path: str) -> str:
        """A requested path as a repository-relative path, or ToolError (the tools' rules)."""
        parts = split_user_path(self.ctx.root, path)
        check_names(parts, path)
        return "/".join(parts)

    def definition_files(self, name: str) -> list[str]:
        """Files whose grep hits look like they define name (at most MAX_DEFINITION_FILES)."""
        found = self.grep(name.rsplit(".", 1)[-1], word=True)
        if isinstance(found, str):
            return []
        pattern = definition_pattern(name)
        paths = [h.path for h in found[0] if pattern.search(h.text)]
        return list(dict.fromkeys(paths))[:MAX_DEFINITION_FILES]

    def grep(self, needle: str, *, word: bool) -> GrepResult:
        key = (needle, word)
        with self._lock:
            cached = self._greps.get(key)
        if cached is None:
            cached = self._run_grep(needle, word=word)
            with self._lock:
                self._greps[key] = cached
        return cached

    def _run_grep(self, needle: str, *, word: bool) -> GrepResult:
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
        hits: list[GrepHit] = []
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
                hits.append(GrepHit(path, int(fields[1]), text))
        return hits, total

    def where(self) -> str:
        """What a search title adds about where it searched (nothing for the change's own
        revision)."""
        rev = self.scope.new_rev
        if rev == UNAVAILABLE_REV:
            return " (in the working tree: the change's commits are not available locally)"
        return ""


__all__ = [
    "MAX_DEFINITION_FILES",
    "MAX_HITS",
    "MAX_HIT_CHARS",
    "GrepHit",
    "GrepResult",
    "RepoReader",
    "definition_pattern",
    "is_secret",
]
