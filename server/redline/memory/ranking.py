"""How project memory ranks what it finds (memory/query.py asks; benchmarks/memory_retrieval.py
tunes): reciprocal-rank fusion of rankings, and the bonus a candidate gets for holding the
query's words — co-change recall@10 and docstring MRR@10 are measured against git grep there.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from redline.memory.lexical import identifier_words
from redline.memory.model import StoredSymbol, Symbol

# How search combines its signals (tuned by benchmarks/memory_retrieval.py).
POOL: Final = 50  # candidates taken from each ranking before fusion
RRF_K: Final = 60  # reciprocal-rank fusion's damping constant (Cormack et al. use 60)
GRAPH_TOP: Final = 3  # the best hits whose graph neighbours join the results
GRAPH_WEIGHT: Final = 0.5  # a neighbour's score: this share of the hit it was reached from
# A fused candidate's bonus for holding the query's words (its share of them, 0..1) anywhere in
# its name, signature, docstring or body: what `git grep` of the words ranks by, and what the
# bm25 of identifiers and docstrings alone misses (a docstring's words are often in the body).
# 0.05 outweighs the rank fusion's own spread (1/61 to 2/61): coverage first, fusion breaks
# ties. benchmarks/memory_retrieval.py, docstring MRR@10 on Flask: 0.931 → 0.968.
COVER_WEIGHT: Final = 0.05
PHRASE_WEIGHT: Final = 0.02
PHRASE_MIN_CHARS: Final = 12  # a shorter query is a word or two: its words say enough
# Words too common to say what a query is about.
STOP: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "if",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "with",
        "into",
        "its",
        "not",
        "when",
        "what",
        "how",
        "which",
        "all",
        "any",
    ]
)
_WORD: Final = re.compile(r"[A-Za-z][a-z0-9]*|[A-Z]+(?![a-z])|\d+")


@dataclass(frozen=True)
class Fused:
    """A candidate after fusion: its symbol, its score and why each ranking put it there."""

    stored: StoredSymbol
    score: float
    why: tuple[str, ...]


def fuse(
    rankings: Mapping[str, Sequence[tuple[StoredSymbol, float]]],
    *,
    k: float = RRF_K,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """Reciprocal-rank fusion: each ranking gives its r-th candidate (0-based) weight/(k + r + 1);
    a symbol's score is the sum over the rankings it is in. Ranks, not raw scores, so BM25 and
    cosine need no common scale. Best first; ties by id for a stable order."""
    scores: dict[int, float] = defaultdict(float)
    why: dict[int, list[str]] = defaultdict(list)
    symbols: dict[int, StoredSymbol] = {}
    for name, ranking in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, (stored, raw) in enumerate(ranking):
            scores[stored.id] += weight / (k + rank + 1)
            why[stored.id].append(f"{name} #{rank + 1} ({raw:.2f})")
            symbols[stored.id] = stored
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [Fused(symbols[i], scores[i], tuple(why[i])) for i in order]


def coverage(words: set[str], symbol: Symbol) -> float:
    """The share of `words` (a query's, as lexical.query_words spells them) that the symbol's
    name, signature, docstring or body holds."""
    if not words:
        return 0.0
    text = f"{symbol.qualname} {symbol.signature} {symbol.docstring} {symbol.body}"
    return len(words.intersection(identifier_words(text))) / len(words)


def phrase(text: str) -> str:
    return " ".join(_WORD.findall(text)).lower()


def bonus(words: set[str], wanted: str, symbol: Symbol) -> float:
    """What a fused candidate gains over its fused score: COVER_WEIGHT per share of the query's
    words it holds, and PHRASE_WEIGHT when its docstring holds the query as written (`wanted`,
    a pasted sentence of it), which tells a function from its near-twins (a wrapper documented
    alike)."""
    gain = COVER_WEIGHT * coverage(words, symbol)
    if len(wanted) >= PHRASE_MIN_CHARS and wanted in phrase(symbol.docstring):
        gain += PHRASE_WEIGHT
    return gain


def reason(fused: Fused, query: str) -> str:
    """Why a fused candidate was found: the query words its name or docstring share, and how
    similar its meaning is."""
    parts: list[str] = []
    symbol = fused.stored.symbol
    words = {w.lower() for w in _WORD.findall(query) if len(w) > 2} - STOP
    have = {w.lower() for w in _WORD.findall(f"{symbol.qualname} {symbol.docstring}")}
    shared = sorted(words & have)
    if shared:
        parts.append("matches " + ", ".join(repr(w) for w in shared[:4]))
    semantic = [w for w in fused.why if w.startswith("semantic")]
    if semantic:
        parts.append("similar meaning " + semantic[0].split(" ", 2)[2])
    return "; ".join(parts) or "; ".join(fused.why)
