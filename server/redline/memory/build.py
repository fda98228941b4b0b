"""Building project memory: the work tree's files → symbols, edges and vectors in the store.

Incremental by blob: each tracked file's bytes are read from the work tree (memory/tree.py:
no link followed, secret files never read, caps), their git blob id computed in Python; a file
whose blob is already indexed is neither parsed nor embedded again, a file no longer tracked
(or no longer indexable) leaves the index, and `paths=` refreshes just those files (what the
language server does on save). Every text — signature, docstring, body, an edge's spelling —
passes the redaction choke point (the tools' `clean`: control characters made visible, key
patterns and the repository's `.env` values masked) BEFORE it is embedded or stored, so
neither the vectors nor the store ever hold a secret the repository contained.

Caps come from the user's settings: when the symbol cap or the index size cap is reached,
nothing more is added and MemoryMeta.limits_reached says so (shown by `memory status` and the
review's coverage). One builder at a time per repository (memory/lock.py). Nothing from the
repository runs: git goes through the hardened runner, parsing is tree-sitter, embedding is
local numpy.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np

from redline.errors import RedlineError
from redline.git.process import decode
from redline.git.runner import GitRunner
from redline.memory.extract import MAX_EDGES_PER_FILE, MAX_FILE_BYTES, MAX_SYMBOLS_PER_FILE
from redline.memory.lock import build_lock
from redline.memory.model import Edge, FileGraph, MemoryStore, Symbol, Vectors
from redline.memory.settings import excludes_of
from redline.memory.store import MemoryFullError, memory_settings
from redline.memory.tree import (
    TooLargeError,
    TreeReader,
    blob_id,
    content_refusal,
    tracked_files,
)
from redline.plural import plural
from redline.progress import Progress, ProgressEvent, Stage
from redline.tools.sandbox import make_visible

if TYPE_CHECKING:
    from redline.config_models import MemorySettings, Settings
    from redline.memory.embed import Embedder

# Symbols embedded in one call: big enough for numpy to batch well, small enough that a
# progress line moves and little is lost when a cap stops the build.
_EMBED_BATCH: Final = 64
_PROGRESS_EVERY: Final = 0.5  # seconds between progress lines
_NO_VECTORS: Final = np.zeros((0, 0), dtype=np.float32)
_UNTRIED: Final = "index full"
_PER_FILE: Final = "per-file caps reached"


@dataclass
class BuildReport:
    """What one build or refresh did."""

    parsed: int = 0  # files read, parsed and embedded (new or changed)
    reused: int = 0  # files whose blob was already indexed
    removed: int = 0  # files that left the index
    symbols: int = 0  # symbols in the index afterwards
    files: int = 0  # files in the index afterwards
    seconds: float = 0.0
    skipped: dict[str, str] = field(default_factory=dict)  # path → why it is not indexed
    limits_reached: list[str] = field(default_factory=list)
    model: str = ""

    def summary(self) -> str:
        text = (
            f"memory: {self.symbols:,} symbols in {self.files:,} files "
            f"({self.parsed:,} parsed, {self.reused:,} unchanged, {self.removed:,} removed"
        )
        if self.skipped:
            text += f", {len(self.skipped):,} skipped"
        text += f") in {self.seconds:.1f} s"
        if self.limits_reached:
            text += "; limits reached: " + "; ".join(self.limits_reached)
        return text


def build_memory(
    repo_root: Path,
    settings: Settings | MemorySettings,
    *,
    paths: Sequence[str] | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    lock_timeout: float | None = None,
    runner: GitRunner | None = None,
) -> BuildReport:
    """Bring the repository's memory up to date with its work tree (see the module docstring).

    `paths`: refresh only these repository-relative paths (None: the whole tree). `embedder`:
    a loaded one to reuse (the language server keeps one); otherwise it is loaded when the
    first symbol needs embedding, never for a build that parses nothing. `lock_timeout`: how
    long to wait for another builder (None: as long as it takes; 0: MemoryBusyError at once)."""
    from redline.memory.store import open_store

    started = time.monotonic()
    root = Path(repo_root).resolve()
    own_runner = runner is None
    git = runner or GitRunner()
    say = _Say(progress)
    try:
        with build_lock(
            root, timeout=lock_timeout, waiting=lambda: say.now("waiting for another memory build")
        ):
            store = open_store(root, memory_settings(settings))
            try:
                builder = _Builder(root, settings, store, git, embedder, say)
                report = builder.run(None if paths is None else list(paths))
            finally:
                store.close()
    finally:
        if own_runner:
            git.close()  # its private repository view
    report.seconds = time.monotonic() - started
    return report


class _Say:
    """Progress lines, at most one per _PROGRESS_EVERY seconds (a build reports per file)."""

    def __init__(self, sink: Progress | None) -> None:
        self.sink = sink
        self.last = 0.0

    def now(self, text: str, done: int | None = None, total: int | None = None) -> None:
        if self.sink is None:
            return
        self.last = time.monotonic()
        self.sink.report(ProgressEvent(Stage.COLLECTING, text, done, total))

    def maybe(self, text: str, done: int, total: int) -> None:
        if self.sink is not None and time.monotonic() - self.last >= _PROGRESS_EVERY:
            self.now(text, done, total)


class _Builder:
    def __init__(
        self,
        root: Path,
        settings: Settings | MemorySettings,
        store: MemoryStore,
        runner: GitRunner,
        embedder: Embedder | None,
        say: _Say,
    ) -> None:
        self.root = root
        self.limits = memory_settings(settings)
        self.excludes = excludes_of(settings)
        self.store = store
        self.runner = runner
        self.embedder = embedder
        self.say = say
        self.report = BuildReport()
        self.cleaner = _Cleaner(root)
        self.pending: list[tuple[FileGraph, str]] = []
        self.pending_symbols = 0
        self.total_symbols = 0
        self.indexed: dict[str, str] = {}
        self._counted: dict[str, int] = {}
        self._replaced: set[str] = set()
        self.full: str | None = None  # the index size cap, once the store refused a file for it
        self.not_added = 0
        self.cut: list[str] = []  # files over a per-file cap (size, symbols, edges)

    def run(self, paths: list[str] | None) -> BuildReport:
        meta = self.store.meta()
        previous_limits = list(meta.limits_reached)
        if meta.model and meta.model != self._model_name():
            self.store.clear()  # vectors of another model are not comparable: start again
            paths, previous_limits = None, []
        indexed = self.indexed = self.store.indexed_files()
        asked = None if paths is None else list(dict.fromkeys(_plain(p) for p in paths))
        listing = tracked_files(self.root, self.runner, self.excludes, asked)
        wanted = set(listing.paths)
        if asked is None:
            targets = listing.paths
            gone = [p for p in indexed if p not in wanted]
        else:
            targets = [p for p in asked if p in wanted]
            gone = [p for p in asked if p not in wanted and p in indexed]
            for p in asked:
                if p in listing.left_out:
                    self.report.skipped[p] = listing.left_out[p]
        if paths is None:
            self.report.skipped.update(listing.left_out)
        if gone:
            self.store.remove_files(gone)
            self.report.removed += len(gone)
            for p in gone:
                indexed.pop(p, None)
        self.total_symbols = self.store.meta().symbols
        self._index(targets, indexed)
        return self._finish(paths is None, previous_limits)

    def _index(self, targets: list[str], indexed: dict[str, str]) -> None:
        reader = TreeReader(self.root, MAX_FILE_BYTES)
        total = len(targets)
        for done, path in enumerate(targets):
            self.say.maybe(f"indexing files: {done:,} of {total:,}", done, total)
            try:
                data = reader.read(path)
            except RedlineError as exc:
                if isinstance(exc, TooLargeError):
                    self.cut.append(path)
                self._leave_out(path, exc.message, indexed)
                continue
            if data is None:
                self._leave_out(path, "missing from the work tree", indexed)
                continue
            blob = blob_id(data)
            if indexed.get(path) == blob:
                self.report.reused += 1
                continue
            if self.full is not None:
                self.not_added += 1  # the index is full: not read, parsed or embedded
                continue
            refused = content_refusal(path, data)
            graph = None if refused else _extract(path, data)
            if graph is None:
                self._leave_out(path, refused or "no symbols to index", indexed)
                continue
            if graph.truncated:
                self.cut.append(path)
            graph = self.cleaner.graph(graph, data)
            if self._over_symbol_cap(graph, indexed):
                self._flush()  # the store's count exact before it judges
                if self._over_symbol_cap(graph, indexed):
                    # Not embedded: given without vectors, the store refuses it and records
                    # why (meta().limits_reached counts the files it refused).
                    self._replacing(path, indexed)
                    self._put(graph, blob, _NO_VECTORS, indexed)
                    continue
            self._replacing(path, indexed)
            self.pending.append((graph, blob))
            self.pending_symbols += len(graph.symbols)
            if self.pending_symbols >= _EMBED_BATCH:
                self._flush()
        self._flush()

    def _over_symbol_cap(self, graph: FileGraph, indexed: dict[str, str]) -> bool:
        # A changed file's old symbols leave with its new version (put_file replaces them).
        old = self._old_symbols(graph.path, indexed)
        after = self.total_symbols - old + self.pending_symbols + len(graph.symbols)
        return after > self.limits.max_symbols

    def _old_symbols(self, path: str, indexed: dict[str, str]) -> int:
        if path not in indexed or path in self._replaced:
            return 0
        if path not in self._counted:
            self._counted[path] = len(self.store.symbols(path=path))
        return self._counted[path]

    def _replacing(self, path: str, indexed: dict[str, str]) -> None:
        """The old version's symbols no longer count: put_file removes them, whatever it does."""
        self.total_symbols -= self._old_symbols(path, indexed)
        self._replaced.add(path)

    def _put(self, graph: FileGraph, blob: str, vectors: Vectors, indexed: dict[str, str]) -> bool:
        """put_file; False when the store refused the file (a cap: its old version is gone)."""
        try:
            self.store.put_file(graph, blob, vectors)
        except MemoryFullError as exc:
            self.report.skipped[graph.path] = exc.note
            if indexed.pop(graph.path, None) is not None:
                self.report.removed += 1
            if exc.note.startswith("index size"):
                self.full = exc.note
            return False
        self.report.parsed += 1
        self.total_symbols += len(graph.symbols)
        return True

    def _leave_out(self, path: str, why: str, indexed: dict[str, str]) -> None:
        self.report.skipped[path] = why
        if path in indexed:
            self.store.remove_files([path])
            indexed.pop(path)
            self.report.removed += 1

    def _flush(self) -> None:
        if not self.pending:
            return
        texts = [_symbol_text(s) for graph, _ in self.pending for s in graph.symbols]
        vectors = _VECTORS.embed(self._embedder, self._model_name(), texts)
        row = 0
        for graph, blob in self.pending:
            n = len(graph.symbols)
            if self.full is None:
                self._put(graph, blob, vectors[row : row + n] if n else _NO_VECTORS, self.indexed)
            else:
                self.not_added += 1
            row += n
        self.pending, self.pending_symbols = [], 0

    def _model_name(self) -> str:
        """The name of the model this build embeds with (without loading it)."""
        if self.embedder is not None:
            return self.embedder.name
        from redline.memory.embed import MODEL_NAME

        return MODEL_NAME

    def _embedder(self) -> Embedder:
        if self.embedder is None:
            from redline.memory.embed import load_embedder

            self.say.now("loading the embedding model")
            self.embedder = load_embedder()
        return self.embedder

    def _finish(self, whole: bool, previous_limits: list[str]) -> BuildReport:
        # The store says which files it refused (and why) itself; this adds the files not even
        # tried once the index was full, and keeps an earlier build's line on a refresh.
        limits = [] if whole else [x for x in previous_limits if not x.startswith(_UNTRIED)]
        if self.cut and not any(x.startswith(_PER_FILE) for x in limits):
            limits.append(
                f"{_PER_FILE}: {plural(len(self.cut), 'file')} cut or not read "
                f"({MAX_FILE_BYTES // 1024:,} KiB, {MAX_SYMBOLS_PER_FILE:,} symbols, "
                f"{MAX_EDGES_PER_FILE:,} uses), e.g. {self.cut[0]}"
            )
        if self.not_added:
            limits.append(f"{_UNTRIED}: {plural(self.not_added, 'more changed file')} not read")
        meta = self.store.meta()
        head = self.runner.run_git(self.root, "rev-parse", "--verify", "-q", "HEAD")
        meta = replace(
            meta,
            built_at=time.time(),
            head=decode(head.stdout).strip() if head.returncode == 0 else "",
            model=self.embedder.name if self.embedder is not None else meta.model,
            limits_reached=limits,
        )
        self.store.set_meta(meta)
        meta = self.store.meta()
        self.report.symbols, self.report.files = meta.symbols, meta.files
        self.report.limits_reached = list(meta.limits_reached)
        self.report.model = meta.model
        return self.report


class _VectorCache:
    """Vectors of texts embedded lately in this process, by model and text digest: a file
    saved again in the editor changes one function, and only that one is embedded again (the
    language server's refresh; a one-shot CLI build gains nothing and loses little). Bounded:
    _CACHED_VECTORS rows of 384 floats (~12 MB), the oldest forgotten first."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._rows: OrderedDict[tuple[str, bytes], Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, embedder: Callable[[], Embedder], model: str, texts: list[str]) -> Vectors:
        if not texts:
            return _NO_VECTORS
        keys = [(model, hashlib.sha1(t.encode("utf-8", "surrogatepass")).digest()) for t in texts]
        with self._lock:
            found = {k: self._rows[k] for k in keys if k in self._rows}
            for k in found:
                self._rows.move_to_end(k)
        wanted = {k: i for i, k in enumerate(keys) if k not in found}  # each text once
        if wanted:
            fresh = embedder().embed([texts[i] for i in wanted.values()])
            with self._lock:
                for row, key in zip(fresh, wanted, strict=True):
                    found[key] = self._rows[key] = row
                while len(self._rows) > self._size:
                    self._rows.popitem(last=False)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)


_CACHED_VECTORS: Final = 8192
_VECTORS = _VectorCache(_CACHED_VECTORS)


def _plain(path: str) -> str:
    """A path as the index spells it: repository-relative, `/`-separated."""
    return path.replace("\\", "/").removeprefix("./")


def _extract(path: str, data: bytes) -> FileGraph | None:
    from redline.memory.extract import extract

    return extract(path, data)


def _symbol_text(symbol: Symbol) -> str:
    from redline.memory.embed import symbol_text

    return symbol_text(symbol)


class _Cleaner:
    """The tools' text hygiene (tools/sandbox.ToolContext.clean), batched: control characters
    made visible, then every secret masked — key patterns through the one redaction choke
    point (redline/redaction), plus the literal values of the repository's `.env` files."""

    def __init__(self, root: Path) -> None:
        from redline.tools.sandbox import ToolContext

        self._ctx = ToolContext(root)

    def graph(self, graph: FileGraph, source: bytes) -> FileGraph:
        """The graph with every text cleaned. Every text is a piece of the file: when the
        whole file holds no secret (the common case, one scan of it), no piece does."""
        if not self._has_secret(decode(source)):
            return replace(
                graph,
                symbols=tuple(
                    replace(
                        s,
                        signature=make_visible(s.signature),
                        docstring=make_visible(s.docstring),
                        body=make_visible(s.body),
                    )
                    for s in graph.symbols
                ),
                edges=tuple(replace(e, text=make_visible(e.text)) for e in graph.edges),
            )
        texts: list[str] = []
        for s in graph.symbols:
            texts += [s.signature, s.docstring, s.body]
        texts += [e.text for e in graph.edges]
        clean = self.many(texts)
        symbols = tuple(
            replace(s, signature=clean[3 * i], docstring=clean[3 * i + 1], body=clean[3 * i + 2])
            for i, s in enumerate(graph.symbols)
        )
        base = 3 * len(graph.symbols)
        edges = tuple(
            Edge(e.path, e.line, e.kind, e.source, e.target, clean[base + i])
            for i, e in enumerate(graph.edges)
        )
        return replace(graph, symbols=symbols, edges=edges)

    def _has_secret(self, text: str) -> bool:
        from redline.redaction import get_redactor

        return bool(get_redactor().find(text)) or any(v in text for v in self._values())

    def _values(self) -> list[str]:
        return self._ctx.secret_values()

    def many(self, texts: list[str]) -> list[str]:
        from redline.agent.redact import MASK
        from redline.redaction import redact_many

        out = redact_many([make_visible(t) for t in texts])
        values = self._ctx.secret_values()
        if values:
            for i, text in enumerate(out):
                for value in values:
                    if value in text:
                        text = text.replace(value, MASK)
                out[i] = text
        return out


__all__ = ["BuildReport", "build_memory"]
