"""How ProjectMemory ranks (memory/query.py): what benchmarks/memory_retrieval.py tuned.

A small in-memory store stands in for SQLite/PostgreSQL (their own contract tests cover them):
its lexical ranking is given, as a store's bm25 would give it, so the tests show what the fusion
does with it. The embedder is a fake one with one dimension per word, so similarity is overlap
of words, computed, not mocked per query.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from redline.memory.model import Edge, FileGraph, MemoryMeta, StoredSymbol, Symbol, Vectors
from redline.memory.query import ProjectMemory

WORDS = re.compile(r"[a-z]+")


class WordEmbedder:
    name = "words"
    dim = 64

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORDS.findall(text.lower()):
                out[row, hash(word) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


class ListStore:
    """Just enough of MemoryStore: symbols, call edges, a given lexical order, vectors."""

    def __init__(self, symbols: list[Symbol], edges: list[Edge], lexical_order: list[str]):
        self.stored = [StoredSymbol(i + 1, s) for i, s in enumerate(symbols)]
        self.edges = edges
        self.lexical_order = lexical_order
        self.matrix = WordEmbedder().embed([f"{s.qualname} {s.docstring}" for s in symbols])

    def symbols(self, *, path: str | None = None, name: str | None = None) -> list[StoredSymbol]:
        return [
            s
            for s in self.stored
            if (path is None or s.symbol.path == path) and (name is None or s.symbol.name == name)
        ]

    def edges_to(self, name: str, *, kinds: Sequence[str] = ("call",)) -> list[Edge]:
        return [e for e in self.edges if e.target == name and e.kind in kinds]

    def edges_from(self, path: str) -> list[Edge]:
        return [e for e in self.edges if e.path == path]

    def lexical(self, query: str, k: int) -> list[tuple[StoredSymbol, float]]:
        by_name = {s.symbol.qualname: s for s in self.stored}
        return [(by_name[q], float(10 - i)) for i, q in enumerate(self.lexical_order)][:k]

    def nearest(self, vector: Vectors, k: int) -> list[tuple[StoredSymbol, float]]:
        scores = self.matrix @ np.atleast_2d(vector)[0]
        order = np.argsort(-scores)[:k]
        return [(self.stored[i], float(scores[i])) for i in order]

    def vectors(self, ids: Sequence[int]) -> dict[int, Vectors]:
        return {i: self.matrix[i - 1] for i in ids if 0 < i <= len(self.stored)}

    def meta(self) -> MemoryMeta:
        return MemoryMeta(symbols=len(self.stored), built_at=1.0, model="words")

    def indexed_files(self) -> dict[str, str]:
        return {}

    def put_file(self, graph: FileGraph, blob: str, vectors: Vectors) -> None: ...
    def remove_files(self, paths: Sequence[str]) -> None: ...
    def set_meta(self, meta: MemoryMeta) -> None: ...
    def clear(self) -> None: ...
    def close(self) -> None: ...


def fn(path: str, qualname: str, doc: str = "", body: str = "") -> Symbol:
    return Symbol(path, qualname, "function", 1, 5, "python", f"def {qualname}():", doc, body)


def memory(
    symbols: list[Symbol], lexical_order: list[str], edges: list[Edge] | None = None
) -> ProjectMemory:
    store = ListStore(symbols, edges or [], lexical_order)
    return ProjectMemory(store, store.meta(), WordEmbedder())


def test_search_puts_first_the_function_whose_docstring_says_what_was_asked() -> None:
    """bm25 over identifiers and docstrings likes short docstrings: a one-word match ranks
    above the function that holds every word of the query. The user asked for the latter."""
    target = fn(
        "app/ctx.py",
        "from_environ",
        "Create an app context with request data from the given WSGI environ.",
    )
    decoys = [
        fn("app/a.py", "make_context", "Create a context."),
        fn("app/b.py", "environ_keys", "The environ keys."),
        fn("app/c.py", "request_data", "Request data."),
    ]
    mem = memory(
        [*decoys, target], ["make_context", "environ_keys", "request_data", "from_environ"]
    )
    hits = mem.search("Create an app context with request data from the given WSGI environ.")
    assert hits[0].stored.symbol.qualname == "from_environ"


def test_search_tells_a_function_from_a_wrapper_documented_alike_by_the_sentence_asked() -> None:
    """Both hold every word of the query (coverage ties); only one holds the sentence."""
    wrapper = fn(
        "app/helpers.py",
        "url_for",
        "Given values, generate a URL to the endpoint with the given values.",
        "return app.url_for()",
    )
    target = fn(
        "app/app.py",
        "Flask.url_for",
        "Generate a URL to the given endpoint with the given values.",
        "generate url endpoint values",
    )
    mem = memory([wrapper, target], ["url_for", "Flask.url_for"])
    hits = mem.search("Generate a URL to the given endpoint with the given values.")
    assert [h.stored.symbol.qualname for h in hits[:2]] == ["Flask.url_for", "url_for"]


def test_related_gives_a_functions_callers_and_similar_code_never_itself() -> None:
    changed = fn("lib/retry.py", "backoff", "Sleep longer after each failed attempt.")
    caller = fn("lib/client.py", "Client.send", "Send a request, retrying failures.")
    similar = fn("lib/poll.py", "poll_delay", "Sleep longer after each failed poll attempt.")
    unrelated = fn("lib/fmt.py", "format_size", "Format a byte count for people.")
    edges = [Edge("lib/client.py", 3, "call", "Client.send", "backoff", "backoff(n)")]
    mem = memory([changed, caller, similar, unrelated], ["backoff", "poll_delay"], edges)
    found = [h.stored.symbol.qualname for h in mem.related(changed, limit=3)]
    assert "backoff" not in found
    assert set(found[:2]) == {"Client.send", "poll_delay"}
    assert "format_size" not in found[:2]
