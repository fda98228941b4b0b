"""The `git grep` baseline of benchmarks/memory_retrieval.py: what today's context provider can
find without project memory, ranked as generously as its searches allow.

Every search is the provider's own: `git grep -n -z -w -F -I` of whole words over the tracked
files through the hardened runner (tools/code_tools.git_grep_words, the search behind the
`search_callers` tool and RepoReader.grep), read with grep_hits (secret files left out). A hit
line is mapped to its innermost enclosing function at HEAD (diff/functions.function_spans, the
spans RepoReader gives the provider), or to the function starting at most 3 lines below it
(its doc comment, in Go or JavaScript); other hits outside any function are dropped.

- For a function (co-change queries): RepoReader.grep keeps the first MAX_HITS (30) lines of a
  search, so each search here does too. In this order, duplicates dropped:
  1. the functions whose lines use the function's name (last segment): a `callers` request;
  2. the definitions among the hits of each of its callees' names (identifiers followed by `(`
     in its body, in order, keywords left out): a `function` request for each callee, which
     RepoReader.definition_files answers from the same grep (definition_pattern lines);
  3. the other functions using those callees: a `callers` request for each callee.
- For a docstring: one search for all its words (3+ characters, common English words left
  out), every hit kept (more than the provider keeps: the baseline is generous), each function
  scored by how many distinct words its lines hold, then by its number of hit lines.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from _history import Key, innermost
from redline.context.repo_reader import MAX_HITS, definition_pattern
from redline.diff.functions import FunctionSpan
from redline.git.runner import GitRunner
from redline.tools.code_tools import git_grep_words, grep_hits

TIMEOUT: Final = 20.0  # ToolLimits.git_timeout
MAX_OUTPUT: Final = 8 * 1024 * 1024  # ToolLimits.max_git_output_bytes
MAX_CALLEES: Final = 20
DOC_ABOVE: Final = 3  # a hit this many lines above a definition is its doc comment

_CALL: Final = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
KEYWORDS: Final = frozenset(
    [
        "if",
        "elif",
        "else",
        "for",
        "while",
        "return",
        "def",
        "class",
        "lambda",
        "with",
        "not",
        "and",
        "or",
        "in",
        "is",
        "assert",
        "yield",
        "await",
        "async",
        "print",
        "super",
        "self",
        "cls",
        "func",
        "go",
        "defer",
        "switch",
        "case",
        "select",
        "range",
        "make",
        "new",
        "len",
        "append",
        "panic",
        "recover",
        "type",
        "struct",
        "interface",
        "map",
        "chan",
        "var",
        "const",
        "import",
        "package",
    ]
)
STOPWORDS: Final = frozenset(
    [
        "the",
        "and",
        "for",
        "that",
        "this",
        "with",
        "from",
        "are",
        "was",
        "were",
        "been",
        "has",
        "have",
        "had",
        "not",
        "but",
        "its",
        "it's",
        "into",
        "than",
        "then",
        "them",
        "they",
        "their",
        "there",
        "which",
        "what",
        "when",
        "where",
        "who",
        "whom",
        "why",
        "how",
        "all",
        "any",
        "each",
        "can",
        "could",
        "should",
        "would",
        "will",
        "may",
        "might",
        "must",
        "shall",
        "does",
        "did",
        "done",
        "doing",
        "use",
        "used",
        "uses",
        "using",
        "one",
        "two",
        "also",
        "only",
        "such",
        "other",
        "more",
        "most",
        "some",
        "same",
        "very",
        "just",
        "being",
        "our",
        "you",
        "your",
        "returns",
        "return",
        "given",
        "get",
        "set",
        "see",
        "note",
        "e.g",
        "i.e",
    ]
)


class GrepBaseline:
    """Searches of one checked-out repository at HEAD, cached by needle."""

    def __init__(self, root: Path, spans: dict[str, list[FunctionSpan]]) -> None:
        self.root = root
        self.spans = spans
        self.runner = GitRunner()
        self._cache: dict[tuple[str, ...], list[tuple[str, int, str]]] = {}
        self._lines: dict[str, list[str]] = {}

    def grep(self, words: Sequence[str]) -> list[tuple[str, int, str]]:
        key = tuple(words)
        if key not in self._cache:
            result = git_grep_words(
                self.runner, self.root, words, timeout=TIMEOUT, max_output=MAX_OUTPUT
            )
            self._cache[key] = [
                (path, int(line), text)
                for path, line, text in grep_hits(result)
                if line.isdigit() and path in self.spans
            ]
        return self._cache[key]

    def enclosing(self, path: str, line: int) -> Key | None:
        """The innermost function holding the line, else one starting within DOC_ABOVE lines
        below it: a doc comment above its definition (Go, JavaScript, Rust) is the function's
        as much as a Python docstring inside it is."""
        spans = self.spans.get(path, [])
        name = innermost(spans, line)
        if name is None:
            name = next((s.name for s in spans if line < s.start <= line + DOC_ABOVE), None)
        return None if name is None else (path, name)

    def body(self, key: Key) -> str:
        path, name = key
        if path not in self._lines:
            self._lines[path] = (self.root / path).read_text(errors="replace").splitlines()
        span = next((s for s in self.spans.get(path, []) if s.name == name), None)
        if span is None:
            return ""
        return "\n".join(self._lines[path][span.start : span.end])  # after the first line

    def _functions(self, hits: Sequence[tuple[str, int, str]]) -> Iterator[Key]:
        for path, line, _ in hits:
            key = self.enclosing(path, line)
            if key is not None:
                yield key

    def related(self, key: Key) -> list[Key]:
        """Functions the provider's searches reach from the function `key`, ranked."""
        name = key[1].rsplit(".", 1)[-1]
        callees = list(
            dict.fromkeys(
                c for c in _CALL.findall(self.body(key)) if c not in KEYWORDS and c != name
            )
        )[:MAX_CALLEES]
        ranked: list[Key] = list(self._functions(self.grep([name])[:MAX_HITS]))
        callee_hits = {callee: self.grep([callee])[:MAX_HITS] for callee in callees}
        for callee, hits in callee_hits.items():
            pattern = definition_pattern(callee)
            ranked += self._functions([h for h in hits if pattern.search(h[2])])
        for hits in callee_hits.values():
            ranked += self._functions(hits)
        return list(dict.fromkeys(ranked))

    def text(self, query: str) -> list[Key]:
        """Functions whose lines hold the most distinct words of `query`."""
        words = list(dict.fromkeys(w for w in _WORD.findall(query) if w.lower() not in STOPWORDS))
        if not words:
            return []
        patterns = {
            w: re.compile(rf"(?<![A-Za-z0-9_]){re.escape(w)}(?![A-Za-z0-9_])") for w in words
        }
        distinct: dict[Key, set[str]] = {}
        lines: Counter[Key] = Counter()
        for path, line, text in self.grep(words):
            key = self.enclosing(path, line)
            if key is None:
                continue
            distinct.setdefault(key, set()).update(w for w, p in patterns.items() if p.search(text))
            lines[key] += 1
        order = {key: i for i, key in enumerate(distinct)}
        return sorted(distinct, key=lambda k: (-len(distinct[k]), -lines[k], order[k]))
