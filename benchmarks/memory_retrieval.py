"""Does project memory find what a reviewer needs? Retrieval quality against real history.

Repositories: Redline's own (a clone of this checkout) and three real ones mirrored on this
machine (Flask and HTTPX in Python, Cobra in Go), each cloned into a temporary directory and
memory built at HEAD (memory/build.build_memory, the embedding model loaded once). The cases are
mined from each repository's own history (benchmarks/_history.py), so nobody wrote them for
this benchmark:

- co-change recall@10: for each of the last `--commits` non-merge commits that changed
  functions in two or more files (functions that still exist at HEAD), each changed function is
  a query; the answer is the other files' changed functions. A method's ten best functions
  outside the query's own file (a reviewer already sees that file) are compared with them:
  found / min(10, answers), averaged over the queries.
- docstring MRR@10: for each documented function (a sample of `--docs`), its docstring's first
  paragraph is the query (not its name); 1/rank of the function in the method's top ten, 0 when
  it is not there, averaged.

Methods, side by side for the same queries:

- graph: the graph around the function (its callers, then what it calls, then the symbols of
  the files its file imports or is imported by); for a docstring, the symbols its words name
  and their callers;
- lexical: the store's lexical index (BM25 over identifier words and docstrings) queried with
  the function's name, signature and docstring, or with the docstring;
- semantic: the nearest embeddings (ProjectMemory.similar) to the function's text
  (memory/embed.symbol_text) or to the docstring;
- combined: ProjectMemory.related for a function (the review context's question: callers and
  similar code), ProjectMemory.search for a docstring;
- grep baseline: what today's context provider finds with `git grep` (benchmarks/
  _grep_baseline.py says exactly what it runs).

    python benchmarks/memory_retrieval.py [--repos redline,flask,httpx,cobra] [--commits 300]
        [--docs 200] [--max-queries 400]
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MIRRORS = Path("/work/.mirror")
REPOS = {
    "redline": ROOT,
    "flask": MIRRORS / "pallets+flask" / "repo",
    "httpx": MIRRORS / "encode+httpx" / "repo",
    "cobra": MIRRORS / "spf13+cobra" / "repo",
}
TOP = 10
T = TypeVar("T")

# Before numpy is imported: one BLAS thread. On a loaded 2-core machine OpenBLAS's own threads
# fight the other processes and one embedding took 1.9 s instead of 0.17 s; the scores here do
# not depend on it (memory_costs.py measures the speed).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Before redline is imported: the index goes to a temporary cache, never the user's.
_CACHE = tempfile.mkdtemp(prefix="redline-memory-retrieval-")
atexit.register(shutil.rmtree, _CACHE, True)
os.environ["REDLINE_CACHE_DIR"] = str(Path(_CACHE, "cache"))

from _grep_baseline import GrepBaseline  # noqa: E402
from _history import (  # noqa: E402
    Key,
    co_changes,
    first_paragraph,
    git,
    head_functions,
    sample,
)
from redline.config_models import MemorySettings  # noqa: E402
from redline.memory.build import build_memory  # noqa: E402
from redline.memory.embed import Embedder, load_embedder, symbol_text  # noqa: E402
from redline.memory.model import Hit, StoredSymbol, Vectors  # noqa: E402
from redline.memory.query import ProjectMemory  # noqa: E402

METHODS = ("graph", "lexical", "semantic", "combined", "grep baseline")
MIN_DOC_WORDS = 4


class CachedEmbedder:
    """The embedder, remembering the query texts it embedded: semantic and combined ask for
    the same text's vector."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> Vectors:
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            for text, row in zip(missing, self.inner.embed(missing), strict=True):
                self._memo[text] = row
        if len(self._memo) > 4096:
            self._memo.clear()
            return self.inner.embed(texts)
        return np.stack([self._memo[t] for t in texts]).astype(np.float32)


def key(stored: StoredSymbol) -> Key:
    return (stored.symbol.path, stored.symbol.qualname)


def keys(hits: Sequence[Hit] | Sequence[tuple[StoredSymbol, float]]) -> list[Key]:
    out: list[Key] = []
    for hit in hits:
        stored = hit.stored if isinstance(hit, Hit) else hit[0]
        out.append(key(stored))
    return list(dict.fromkeys(out))


@dataclass
class Scores:
    values: dict[str, list[float]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, method: str, value: float, elapsed: float) -> None:
        self.values.setdefault(method, []).append(value)
        self.seconds[method] = self.seconds.get(method, 0.0) + elapsed

    def mean(self, method: str) -> float:
        found = self.values.get(method, [])
        return statistics.fmean(found) if found else float("nan")

    def count(self) -> int:
        return max((len(v) for v in self.values.values()), default=0)

    def ms(self, method: str) -> float:
        n = len(self.values.get(method, []))
        return 1000 * self.seconds.get(method, 0.0) / n if n else float("nan")


class Methods:
    """The four memory rankings and the grep baseline for one repository."""

    def __init__(self, memory: ProjectMemory, baseline: GrepBaseline) -> None:
        self.memory = memory
        self.baseline = baseline
        self._file_symbols: dict[str, list[StoredSymbol]] = {}
        self._importers: dict[str, list[str]] | None = None

    def symbols_of(self, path: str) -> list[StoredSymbol]:
        if path not in self._file_symbols:
            self._file_symbols[path] = self.memory.store.symbols(path=path)
        return self._file_symbols[path]

    def import_neighbours(self, path: str) -> list[str]:
        """Files `path` imports and files importing it, matched by module name (the last
        segment an import edge names against a file's stem, or its directory for Go)."""
        if self._importers is None:
            by_module: dict[str, list[str]] = {}
            for stored_path in self.memory.store.indexed_files():
                stem = Path(stored_path).stem
                by_module.setdefault(stem, []).append(stored_path)
                by_module.setdefault(Path(stored_path).parent.name, []).append(stored_path)
            self._importers = by_module
        own = {Path(path).stem, Path(path).parent.name}
        out: list[str] = []
        for edge in self.memory.store.edges_from(path):
            if edge.kind == "import":
                out += self._importers.get(edge.target, [])
        for module in own:
            out += [e.path for e in self.memory.store.edges_to(module, kinds=("import",))]
        return [p for p in dict.fromkeys(out) if p != path]

    # -- a function as the query ------------------------------------------------------------

    def graph(self, q: StoredSymbol) -> list[Key]:
        found = keys(self.memory.callers(q.symbol.name, limit=50))
        found += keys(self.memory.callees(q.symbol, limit=50))
        for path in self.import_neighbours(q.symbol.path):
            found += [key(s) for s in self.symbols_of(path) if s.symbol.kind != "class"]
        return found

    def lexical(self, q: StoredSymbol) -> list[Key]:
        s = q.symbol
        return keys(self.memory.store.lexical(f"{s.qualname} {s.signature} {s.docstring}", 50))

    def semantic(self, q: StoredSymbol) -> list[Key]:
        return keys(self.memory.similar(symbol_text(q.symbol), limit=50, exclude=q.symbol))

    def combined(self, q: StoredSymbol) -> list[Key]:
        return keys(self.memory.related(q.symbol, limit=50))

    def grep(self, q: StoredSymbol) -> list[Key]:
        return self.baseline.related(key(q))

    # -- a docstring as the query -----------------------------------------------------------

    def graph_text(self, text: str) -> list[Key]:
        found: list[Key] = []
        for word in dict.fromkeys(text.replace("`", " ").replace("(", " ").split()):
            word = word.strip(".,:;'\"")
            if word.isidentifier() and len(word) > 2:
                for stored in self.memory.definitions(word):
                    found.append(key(stored))
                    found += keys(self.memory.callers(stored.symbol.name, limit=5))
        return list(dict.fromkeys(found))

    def lexical_text(self, text: str) -> list[Key]:
        return keys(self.memory.store.lexical(text, TOP))

    def semantic_text(self, text: str) -> list[Key]:
        return keys(self.memory.similar(text, limit=TOP))

    def combined_text(self, text: str) -> list[Key]:
        return keys(self.memory.search(text, limit=TOP))

    def grep_text(self, text: str) -> list[Key]:
        return self.baseline.text(text)


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def timed(fn: Callable[[T], list[Key]], arg: T) -> tuple[list[Key], float]:
    start = time.perf_counter()
    found = fn(arg)
    return found, time.perf_counter() - start


def co_change_scores(
    methods: Methods, stored: dict[Key, StoredSymbol], cases: list, max_queries: int
) -> Scores:
    queries: list[tuple[Key, set[Key]]] = []
    for case in cases:
        for q in case.functions:
            answers = {k for k in case.functions if k[0] != q[0]}
            if q in stored and answers:
                queries.append((q, answers))
    if len(queries) > max_queries:
        step = len(queries) / max_queries
        queries = [queries[int(i * step)] for i in range(max_queries)]
    rankers: dict[str, Callable[[StoredSymbol], list[Key]]] = {
        "graph": methods.graph,
        "lexical": methods.lexical,
        "semantic": methods.semantic,
        "combined": methods.combined,
        "grep baseline": methods.grep,
    }
    scores = Scores()
    for q, answers in queries:
        for name, rank in rankers.items():
            found, elapsed = timed(rank, stored[q])
            top = [k for k in found if k[0] != q[0] and k != q][:TOP]
            scores.add(name, len(answers & set(top)) / min(TOP, len(answers)), elapsed)
    return scores


def docstring_scores(methods: Methods, stored: dict[Key, StoredSymbol], limit: int) -> Scores:
    documented = [
        k
        for k, s in stored.items()
        if s.symbol.kind != "class"
        and len(first_paragraph(s.symbol.docstring).split()) >= MIN_DOC_WORDS
    ]
    rankers: dict[str, Callable[[str], list[Key]]] = {
        "graph": methods.graph_text,
        "lexical": methods.lexical_text,
        "semantic": methods.semantic_text,
        "combined": methods.combined_text,
        "grep baseline": methods.grep_text,
    }
    scores = Scores()
    for k in sample(sorted(documented), limit):
        query = first_paragraph(stored[k].symbol.docstring)
        for name, rank in rankers.items():
            found, elapsed = timed(rank, query)
            top = found[:TOP]
            scores.add(name, 1 / (top.index(k) + 1) if k in top else 0.0, elapsed)
    return scores


@dataclass
class RepoResult:
    name: str
    commit: str
    lines: int
    symbols: int
    build_seconds: float
    matched: str
    cases: int
    co: Scores
    doc: Scores


def run_repo(
    name: str, source: Path, tmp: Path, embedder: Embedder, args: argparse.Namespace
) -> RepoResult:
    root = tmp / name
    if not (root / ".git").is_dir():
        subprocess.run(["git", "clone", "-q", str(source), str(root)], check=True)
    commit = git(root, "rev-parse", "HEAD").strip()
    settings = MemorySettings()
    report = build_memory(root, settings, embedder=embedder)
    say(f"{name}: built ({report.summary()})")
    memory = ProjectMemory.open(root, settings, embedder=CachedEmbedder(embedder))
    if memory is None:
        raise SystemExit(f"{name}: memory was built but ProjectMemory.open found none")
    with memory:
        spans = head_functions(root)
        lines = sum(
            len((root / p).read_bytes().splitlines()) for p in spans if (root / p).is_file()
        )
        stored: dict[Key, StoredSymbol] = {}
        for path in spans:
            for s in memory.store.symbols(path=path):
                stored.setdefault(key(s), s)
        at_head = {(p, s.name) for p, ss in spans.items() for s in ss}
        both = at_head & set(stored)
        matched = f"{len(both):,} of {len(at_head):,} functions found in memory by path+qualname"
        cases = co_changes(root, args.commits, both)
        methods = Methods(memory, GrepBaseline(root, spans))
        say(f"{name}: {len(cases)} co-change commits; {matched}")
        co = co_change_scores(methods, stored, cases, args.max_queries)
        say(f"{name}: co-change done")
        doc = docstring_scores(methods, stored, args.docs)
    return RepoResult(
        name, commit, lines, report.symbols, report.seconds, matched, len(cases), co, doc
    )


def print_result(r: RepoResult) -> None:
    print(
        f"\n{r.name} at {r.commit[:12]}: {r.lines:,} lines in files with a grammar, "
        f"{r.symbols:,} symbols, built in {r.build_seconds:.1f} s; {r.matched}"
    )
    print(
        f"  co-change: {r.cases} commits, {r.co.count()} queries; "
        f"docstrings: {r.doc.count()} queries"
    )
    print(f"  {'method':<14} {'recall@10':>10} {'ms/query':>9}   {'MRR@10':>8} {'ms/query':>9}")
    for m in METHODS:
        print(
            f"  {m:<14} {r.co.mean(m):>10.3f} {r.co.ms(m):>9.1f}   "
            f"{r.doc.mean(m):>8.3f} {r.doc.ms(m):>9.1f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--repos", default=",".join(REPOS))
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--max-queries", type=int, default=400)
    parser.add_argument(
        "--work",
        type=Path,
        help="keep the clones (DIR/<name>) and their index (DIR/cache) there, not in a "
        "temporary directory: the next run reuses them (the build is incremental)",
    )
    args = parser.parse_args()
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
        os.environ["REDLINE_CACHE_DIR"] = str(args.work.resolve() / "cache")
    names = [n for n in args.repos.split(",") if n]
    redline_commit = git(ROOT, "rev-parse", "HEAD").strip()
    print(f"Redline at {redline_commit[:12]} (the code measured)")
    print("load average (1, 5, 15 min) " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    embedder = load_embedder()
    results: list[RepoResult] = []
    with tempfile.TemporaryDirectory(prefix="repos-", dir=_CACHE) as scratch:
        tmp = args.work.resolve() if args.work is not None else Path(scratch)
        for name in names:
            source = REPOS[name]
            if not source.exists():
                print(f"\n{name}: {source} is not on this machine, skipped")
                continue
            results.append(run_repo(name, source, tmp, embedder, args))
            print_result(results[-1])
            sys.stdout.flush()
    print("\nload average (1, 5, 15 min) " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    for r in results:
        co = (r.co.mean("combined"), r.co.mean("grep baseline"))
        doc = (r.doc.mean("combined"), r.doc.mean("grep baseline"))
        met = co[0] > co[1] and doc[0] > doc[1]
        print(
            f"TARGET {r.name}: combined beats grep on co-change recall@10 ({co[0]:.3f} vs "
            f"{co[1]:.3f}) and docstring MRR@10 ({doc[0]:.3f} vs {doc[1]:.3f}): "
            f"{'met' if met else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
