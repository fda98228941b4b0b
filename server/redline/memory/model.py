"""What project memory holds: symbols, the edges between them, and the store's interface.

Everything here is plain data (dataclasses) shared by the parts of memory: extraction
(extract.py: tree-sitter → FileGraph), embedding (embed.py: text → unit vectors), storage
(store.py: the MemoryStore protocol, SQLite and PostgreSQL behind it), building (build.py:
incremental by blob) and reading (query.py: callers, similar code, search).

Lines are 1-based and inclusive, paths repository-relative with `/`. Texts stored here were
redacted before they were stored (build.py passes them through the one redaction choke point):
a store never holds a secret the repository contained.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

SymbolKind = Literal["function", "method", "class"]
EdgeKind = Literal["call", "import", "reference"]
Vectors = npt.NDArray[np.float32]  # (n, dim), rows L2-normalised


@dataclass(frozen=True)
class Symbol:
    """A function, method or class: where it is and the text that describes it (capped)."""

    path: str
    qualname: str  # "Client.send", "outer.inner", Go "Receiver.Method"
    kind: SymbolKind
    start: int
    end: int
    language: str
    signature: str = ""  # the definition's head, up to its body
    docstring: str = ""
    body: str = ""  # the whole definition's text, capped (MAX_BODY_CHARS in extract.py)

    @property
    def name(self) -> str:
        """The last segment of the qualified name: what a call site spells."""
        return self.qualname.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Edge:
    """One use of a name in a file: a call, an import, or another reference to a symbol.

    `source` is the qualname of the innermost symbol the use is inside ("" at module level);
    `target` is the name used, last segment only (`send` for `self.client.send(...)`; the
    module's last segment for an import); `text` is how it was spelled, capped."""

    path: str
    line: int
    kind: EdgeKind
    source: str
    target: str
    text: str = ""


@dataclass(frozen=True)
class FileGraph:
    """What one file version contributes to the graph."""

    path: str
    language: str
    symbols: tuple[Symbol, ...] = ()
    edges: tuple[Edge, ...] = ()
    # A cap of extract.py was reached (file too big: no symbols; or too many symbols/edges:
    # the first ones in file order kept). The build says so in MemoryMeta.limits_reached.
    truncated: bool = False


@dataclass(frozen=True)
class StoredSymbol:
    """A symbol as a store returns it: with the store's id for it."""

    id: int
    symbol: Symbol


@dataclass(frozen=True)
class Hit:
    """A ranked answer: a stored symbol, its score (higher is better) and why it was found."""

    stored: StoredSymbol
    score: float
    why: str  # "calls send", "similar code (0.82)", "matches 'retry'"


@dataclass
class MemoryMeta:
    """What a store says about itself: for `redline memory status` and a review's coverage."""

    symbols: int = 0
    files: int = 0
    edges: int = 0
    built_at: float | None = None  # time.time() of the last finished build or refresh
    head: str = ""  # the commit the last build read
    model: str = ""  # the embedding model's name; vectors from another model are not compared
    size_bytes: int = 0
    limits_reached: list[str] = field(default_factory=list)  # "symbol cap 50000 reached", ...


class MemoryStore(Protocol):
    """One repository's memory. The SQLite store (the default, one file per repository in
    Redline's cache) and the PostgreSQL store (a team's shared index) implement it alike, and
    the same tests run against both."""

    def indexed_files(self) -> dict[str, str]:
        """path → the blob id of the version indexed."""
        ...

    def put_file(self, graph: FileGraph, blob: str, vectors: Vectors) -> None:
        """Replace everything known about graph.path (one row of vectors per symbol)."""
        ...

    def remove_files(self, paths: Sequence[str]) -> None: ...

    def symbols(self, *, path: str | None = None, name: str | None = None) -> list[StoredSymbol]:
        """Symbols of a file, or named `name` (last segment), or both."""
        ...

    def edges_to(self, name: str, *, kinds: Sequence[EdgeKind] = ("call",)) -> list[Edge]:
        """Uses of a name (its last segment) anywhere, e.g. the call sites of `send`."""
        ...

    def edges_from(self, path: str) -> list[Edge]:
        """The uses a file makes (its calls, imports, references)."""
        ...

    def nearest(self, vector: Vectors, k: int) -> list[tuple[StoredSymbol, float]]:
        """The k symbols whose vectors are closest (cosine) to one query vector."""
        ...

    def lexical(self, query: str, k: int) -> list[tuple[StoredSymbol, float]]:
        """The k symbols best matching words of the query in identifiers and docstrings."""
        ...

    def meta(self) -> MemoryMeta: ...

    def set_meta(self, meta: MemoryMeta) -> None: ...

    def clear(self) -> None:
        """Forget everything (`redline memory forget`)."""
        ...

    def close(self) -> None: ...
