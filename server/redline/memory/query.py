"""Reading project memory: definitions, callers, uses, similar code and search.

`ProjectMemory.open` returns None when the repository's memory was never built: a review, the
agent's tools and the context provider use what is there and never wait for (or start) a
build. Everything here reads; nothing writes.

Search combines three signals (measured by benchmarks/memory_*.py): the store's lexical index
(identifiers and docstrings), the nearest vectors to the query's embedding, and the graph
around the best of those (their callers and what they call). `fuse` is the one place the first
two are combined (reciprocal-rank fusion); ranking.py holds it and the word bonuses, which
benchmarks/memory_retrieval.py tunes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from redline.memory.lexical import query_words
from redline.memory.model import (
    Edge,
    Hit,
    MemoryMeta,
    MemoryStore,
    StoredSymbol,
    Symbol,
    Vectors,
)
from redline.memory.ranking import (
    GRAPH_TOP,
    GRAPH_WEIGHT,
    POOL,
    STOP,
    Fused,
    bonus,
    fuse,
    phrase,
    reason,
)
from redline.memory.status import NOT_BUILT, status_line

if TYPE_CHECKING:
    from redline.config_models import MemorySettings, Settings
    from redline.memory.embed import Embedder

_QUERY_CACHE: Final = 256
_QUERY_VECTORS: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
_QUERY_LOCK = threading.Lock()


class ProjectMemory:
    """One repository's memory, open for reading. Not thread-safe beyond what its store is;
    close it when done (or use it as a context manager)."""

    def __init__(
        self, store: MemoryStore, meta: MemoryMeta, embedder: Embedder | None = None
    ) -> None:
        self.store = store
        self.meta = meta
        self._embedder = embedder
        self._embedder_failed = False

    @classmethod
    def open(
        cls,
        repo_root: Path,
        settings: Settings | MemorySettings,
        *,
        embedder: Embedder | None = None,
    ) -> ProjectMemory | None:
        """The repository's memory, or None when it was never built. Never builds, never
        creates an empty index (a SQLite file that does not exist stays absent)."""
        from redline.memory.store import open_existing_store

        store = open_existing_store(Path(repo_root).resolve(), settings)
        if store is None:
            return None
        try:
            meta = store.meta()
        except BaseException:
            store.close()
            raise
        if meta.built_at is None and meta.symbols == 0:
            store.close()
            return None
        return cls(store, meta, embedder)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> ProjectMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def status_line(self) -> str:
        """ "memory: 1,234 symbols, built 3 min ago" (+ ", limits reached: …")."""
        return status_line(self.meta)

    # -- the graph --------------------------------------------------------------------------

    def definitions(self, name: str) -> list[StoredSymbol]:
        """The functions, methods and classes named `name` (its last segment; a qualified
        name "Client.send" narrows to that qualname)."""
        last = name.rsplit(".", 1)[-1]
        found = self.store.symbols(name=last)
        if "." in name:
            found = [s for s in found if s.symbol.qualname.endswith(name)]
        return found

    def callers(self, name: str, *, limit: int = 10) -> list[Hit]:
        """The symbols whose body calls `name`, most call sites first. A call at module level
        has no calling symbol and is not among them (uses() has it)."""
        last = name.rsplit(".", 1)[-1]
        sites: dict[tuple[str, str], list[Edge]] = defaultdict(list)
        for edge in self.store.edges_to(last, kinds=("call",)):
            if edge.source:
                sites[(edge.path, edge.source)].append(edge)
        by_path: dict[str, list[StoredSymbol]] = {}
        hits: list[Hit] = []
        for (path, source), edges in sites.items():
            if path not in by_path:
                by_path[path] = self.store.symbols(path=path)
            stored = _enclosing(by_path[path], source, edges[0].line)
            if stored is None:
                continue
            lines = ", ".join(str(e.line) for e in sorted(edges, key=lambda e: e.line)[:3])
            hits.append(Hit(stored, float(len(edges)), f"calls {last} (line {lines})"))
        hits.sort(key=lambda h: (-h.score, h.stored.symbol.path, h.stored.symbol.start))
        return hits[:limit]

    def callees(self, symbol: Symbol, *, limit: int = 10) -> list[Hit]:
        """The indexed symbols `symbol` calls. Calls are known by name only, so a call is
        resolved where the spelling allows it: `helper()` to the helper of the same file, else
        to the functions and classes of that name; `self.method()` to the methods of the same
        file; `module.function()` and `Class.method()` to a name defined at most three times;
        a method of some other object (`weights.get()`) to nothing: which one is not known, and
        `.get` or `.append` would otherwise link everything to everything."""
        calls: dict[str, str] = {}
        imported: set[str] = set()
        for edge in self.store.edges_from(symbol.path):
            if edge.kind == "import":
                imported.add(edge.target)
            elif edge.kind == "call" and edge.source == symbol.qualname:
                calls.setdefault(edge.target, edge.text or edge.target)
        hits: list[Hit] = []
        for target, text in calls.items():
            found = [s for s in self.store.symbols(name=target) if not _same(s.symbol, symbol)]
            for stored in _resolve(found, text, symbol.path, imported):
                hits.append(Hit(stored, 1.0, f"called by {symbol.qualname}"))
        return hits[:limit]

    def uses(self, name: str) -> list[Edge]:
        """Every use of `name` (its last segment): calls, imports and other references."""
        return self.store.edges_to(name.rsplit(".", 1)[-1], kinds=("call", "import", "reference"))

    # -- vectors ----------------------------------------------------------------------------

    def similar(
        self,
        text: str,
        *,
        limit: int = 5,
        exclude: Symbol | None = None,
        stored_first: bool = False,
    ) -> list[Hit]:
        """The symbols whose embedding is nearest to `text`'s (a function's text: how the rest
        of the codebase does the same thing); `exclude` (the function itself) is left out.
        [] when no embedding model is usable, or the index was built with another one.

        `stored_first`: when memory holds `exclude` (same path and qualname) with a vector,
        search from that stored vector instead of embedding `text` — no model call (a
        review's changed function: tens of milliseconds saved per function, and the model
        need not even be loaded). The stored vector is of the version indexed, not of `text`
        as changed: close enough to find how the rest of the codebase does the same thing."""
        query = self._stored_vector(exclude) if stored_first and exclude is not None else None
        if query is None:
            embedder = self._usable_embedder()
            if embedder is None or not text.strip():
                return []
            query = self._vector(embedder, text)
        found = self.store.nearest(query, limit + 1)
        hits = [
            Hit(stored, score, f"similar code ({score:.2f})")
            for stored, score in found
            if exclude is None or not _same(stored.symbol, exclude)
        ]
        return hits[:limit]

    def search(self, query: str, *, limit: int = 10) -> list[Hit]:
        """Symbols for a free-text query: lexical and semantic rankings fused (`fuse`), then
        the callers and callees of the best few, each below the hit that reached it."""
        if not query.strip():
            return []
        rankings: dict[str, Sequence[tuple[StoredSymbol, float]]] = {
            "lexical": self.store.lexical(query, POOL)
        }
        embedder = self._usable_embedder()
        if embedder is not None:
            rankings["semantic"] = self.store.nearest(self._vector(embedder, query), POOL)
        fused = fuse(rankings)
        words = {w for w in query_words(query) if w not in STOP}
        wanted = phrase(query)
        fused = sorted(
            (replace(f, score=f.score + bonus(words, wanted, f.stored.symbol)) for f in fused),
            key=lambda f: (-f.score, f.stored.id),
        )
        scores = {f.stored.id: f.score for f in fused}
        reasons = {f.stored.id: reason(f, query) for f in fused}
        symbols = {f.stored.id: f.stored for f in fused}
        for top in fused[:GRAPH_TOP]:
            near = self.callers(top.stored.symbol.name, limit=5) + self.callees(
                top.stored.symbol, limit=5
            )
            for hit in near:
                score = top.score * GRAPH_WEIGHT
                if score > scores.get(hit.stored.id, 0.0):
                    scores[hit.stored.id] = score
                    reasons[hit.stored.id] = f"{hit.why} ({top.stored.symbol.qualname} matched)"
                    symbols[hit.stored.id] = hit.stored
        order = sorted(scores, key=lambda i: (-scores[i], i))[:limit]
        return [Hit(symbols[i], scores[i], reasons[i]) for i in order]

    def _stored_vector(self, symbol: Symbol) -> Vectors | None:
        """The stored vector of the symbol memory holds at symbol's path and qualname (the
        store's own vectors are all of one model: comparable), or None."""
        named = [
            s
            for s in self.store.symbols(path=symbol.path, name=symbol.name)
            if s.symbol.qualname == symbol.qualname
        ]
        if not named:
            return None
        found = self.store.vectors([s.id for s in named])
        for s in named:  # the first definition, when the name is defined twice
            if s.id in found:
                return found[s.id]
        return None

    def related(self, symbol: Symbol, *, limit: int = 10) -> list[Hit]:
        """Code related to a function: its callers, what it calls, the functions most similar
        to it and those sharing its words (name, signature, docstring), fused by rank — what a
        change to `symbol` may need to be read with, or changed with. The function itself is
        left out. benchmarks/memory_retrieval.py measures it against the functions changed
        together with `symbol` in the repository's history (co-change recall@10)."""
        from redline.memory.embed import symbol_text

        words = f"{symbol.qualname} {symbol.signature} {symbol.docstring}"
        rankings: dict[str, Sequence[tuple[StoredSymbol, float]]] = {
            "callers": [(h.stored, h.score) for h in self.callers(symbol.name, limit=POOL)],
            "calls": [(h.stored, h.score) for h in self.callees(symbol, limit=POOL)],
            "lexical": [
                (s, v)
                for s, v in self.store.lexical(words, POOL + 1)
                if not _same(s.symbol, symbol)
            ],
            "similar": [
                (h.stored, h.score)
                for h in self.similar(
                    symbol_text(symbol), limit=POOL, exclude=symbol, stored_first=True
                )
            ],
        }
        fused = [f for f in fuse(rankings) if not _same(f.stored.symbol, symbol)]
        return [Hit(f.stored, f.score, "; ".join(f.why)) for f in fused[:limit]]

    @staticmethod
    def _vector(embedder: Embedder, text: str) -> Vectors:
        """The query's embedding, written as symbols are (identifiers split into words: the
        two sides alike), from a small in-process cache: a review, its agent and the editor
        ask about the same changed functions more than once."""
        from redline.memory.embed import code_text

        key = (embedder.name, code_text(text))
        with _QUERY_LOCK:
            hit = _QUERY_VECTORS.get(key)
            if hit is not None:
                _QUERY_VECTORS.move_to_end(key)
                return hit
        vector = embedder.embed([key[1]])
        with _QUERY_LOCK:
            _QUERY_VECTORS[key] = vector
            while len(_QUERY_VECTORS) > _QUERY_CACHE:
                _QUERY_VECTORS.popitem(last=False)
        return vector

    def _usable_embedder(self) -> Embedder | None:
        if self._embedder is None and not self._embedder_failed:
            from redline.errors import RedlineError
            from redline.memory.embed import load_embedder

            try:
                self._embedder = load_embedder()
            except RedlineError:
                self._embedder_failed = True  # lexical and graph answers still work
        if self._embedder is None:
            return None
        if self.meta.model and self._embedder.name != self.meta.model:
            return None  # vectors of another model: not comparable
        return self._embedder


def _enclosing(symbols: list[StoredSymbol], qualname: str, line: int) -> StoredSymbol | None:
    """The symbol named qualname (the one around `line` when the name is defined twice)."""
    named = [s for s in symbols if s.symbol.qualname == qualname]
    around = [s for s in named if s.symbol.start <= line <= s.symbol.end]
    return next(iter(around or named), None)


def _resolve(
    found: list[StoredSymbol], text: str, path: str, imported: set[str]
) -> list[StoredSymbol]:
    """The definitions a call spelled `text` (in the file at `path`, which imports the names
    `imported`) may reach (see callees)."""
    receiver = text.partition("(")[0].rpartition(".")[0]
    local = [s for s in found if s.symbol.path == path]
    if not receiver:
        return local or [s for s in found if s.symbol.kind != "method"]
    head = receiver.split(".")[0]
    if head in ("self", "this", "cls"):
        return [s for s in local if s.symbol.kind == "method"]
    if head in imported or head[:1].isupper():  # module.function(), Class.method()
        return found if len(found) <= 3 else []
    return []  # a method of some object: which one is not known


def _same(a: Symbol, b: Symbol) -> bool:
    return a.path == b.path and a.qualname == b.qualname


def memory_status_line(repo_root: Path, settings: Settings | MemorySettings) -> str:
    """ "memory: 1,234 symbols, built 3 min ago", or "memory: not built"; never builds. A store
    that cannot be read says why in the line instead of failing the caller."""
    from redline.errors import RedlineError

    try:
        memory = ProjectMemory.open(repo_root, settings)
    except (RedlineError, OSError) as exc:
        return f"memory: unavailable ({_first_line(exc)})"
    if memory is None:
        return NOT_BUILT
    with memory:
        return memory.status_line()


def _first_line(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return text.strip().split("\n", 1)[0][:200]


__all__ = ["Fused", "ProjectMemory", "fuse", "memory_status_line"]
