"""The deterministic generator: candidates from every operator and file, validated lazily, chosen
round-robin over operators (and, per operator, over languages, then files).

Determinism: files are sorted by path, candidates by byte offset, and the only randomness is one
`random.Random(seed)` shuffling each (operator, language) pool in a fixed order. A candidate is
validated when it is drawn: it must parse without new ERROR/MISSING nodes (and, for Python,
with `ast` too when the original does) and must change a token other than a comment.
"""

from __future__ import annotations

import ast
import random
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Node, Point

from redline.eval.mutate.base import FN, Candidate, Source, parser
from redline.eval.mutate.registry import APPLIES, OPERATOR_FUNCTIONS
from redline.eval.truth import ALL_OPERATORS, CONTEXT_OPERATORS, LANGUAGES, Mutant, PlantedBug


@dataclass(frozen=True)
class Pending:
    src: Source
    operator: str
    function: str
    cand: Candidate


def candidates(
    files: Iterable[tuple[str, str]], operators: Sequence[str] | None = None
) -> list[Pending]:
    """Every candidate edit, unvalidated, in (file, operator, offset) order. An edit two
    operators propose goes to the first in OPERATORS order."""
    ops = _check(operators)
    seen: set[tuple[str, int, int, str]] = set()
    out: list[Pending] = []
    sources = [s for s in (Source.load(p, t) for p, t in sorted(files)) if s is not None]
    if any(op in CONTEXT_OPERATORS for op in ops):
        from redline.eval.mutate.ops_contract import Project

        project = Project.of(sources)
        for src in sources:
            src.project = project
    for src in sources:
        path = src.path
        for op in ops:
            if src.language not in APPLIES[op]:
                continue
            found = OPERATOR_FUNCTIONS[op](src)
            for cand in sorted(found, key=lambda c: (c.start, c.end, c.new, c.description)):
                key = (path, cand.start, cand.end, cand.new)
                name = src.function_name(cand.start)
                if key in seen or not name:
                    continue
                seen.add(key)
                out.append(Pending(src, op, name, cand))
    return out


def _check(operators: Sequence[str] | None) -> list[str]:
    if operators is None:
        return list(ALL_OPERATORS)
    unknown = [op for op in operators if op not in ALL_OPERATORS]
    if unknown:
        raise ValueError(f"unknown operators: {', '.join(unknown)}")
    return [op for op in ALL_OPERATORS if op in operators]  # ALL_OPERATORS order, no repeats


def generate(
    files: Iterable[tuple[str, str]],
    *,
    seed: int,
    limit: int | None = None,
    operators: Sequence[str] | None = None,
) -> list[Mutant]:
    """Mutants of `files` ((repo-relative path, text); the language from the extension), each
    mutating one function, deterministic for `seed`. With `limit`, the first `limit` mutants
    of a round-robin over operators, each operator rotating over the languages it has
    candidates in, so a small limit still spans every operator and language."""
    ops = _check(operators)
    rng = random.Random(seed)
    pools: dict[str, dict[str, list[Pending]]] = {op: {} for op in ops}
    for pending in candidates(files, ops):
        pools[pending.operator].setdefault(pending.src.language, []).append(pending)
    queues: list[list[Iterator[Pending]]] = []
    for i, op in enumerate(ops):
        langs = [lang for lang in LANGUAGES if lang in pools[op]]
        shift = i % len(langs) if langs else 0
        iters = []
        for lang in langs[shift:] + langs[:shift]:
            pool = pools[op][lang]
            rng.shuffle(pool)
            iters.append(iter(_spread(pool)))
        queues.append(iters)
    out: list[Mutant] = []
    turn = [0] * len(ops)
    while any(queues) and (limit is None or len(out) < limit):
        for i in range(len(ops)):
            if limit is not None and len(out) >= limit:
                break
            mutant = _draw(queues[i], turn, i)
            if mutant is not None:
                out.append(mutant)
    return out


def _draw(iters: list[Iterator[Pending]], turn: list[int], i: int) -> Mutant | None:
    """The next valid mutant of operator `i`, from its next language in turn."""
    while iters:
        k = turn[i] % len(iters)
        for pending in iters[k]:
            mutant = mutate(pending)
            if mutant is not None:
                turn[i] = k + 1
                return mutant
        del iters[k]  # this language is exhausted
        turn[i] = k
    return None


def _spread(pool: list[Pending]) -> list[Pending]:
    """Interleave a shuffled pool by file, files in order of first appearance."""
    by_file: dict[str, list[Pending]] = {}
    for pending in pool:
        by_file.setdefault(pending.src.path, []).append(pending)
    groups = list(by_file.values())
    out: list[Pending] = []
    for depth in range(max((len(g) for g in groups), default=0)):
        out.extend(g[depth] for g in groups if depth < len(g))
    return out


def mutate(pending: Pending) -> Mutant | None:
    """The mutant of one candidate, or None when it does not parse or changes nothing."""
    src, cand = pending.src, pending.cand
    new_bytes = cand.new.encode("utf-8", errors="surrogatepass")
    data = src.data[: cand.start] + new_bytes + src.data[cand.end :]
    if not _parses(src, data, cand, len(new_bytes)):
        return None
    text = data.decode("utf-8", errors="surrogatepass")
    original = src.data[cand.start : cand.end].decode("utf-8", errors="surrogatepass")
    shown = cand.shown or (original, cand.new)
    lines = changed_lines(src.text, text)
    if not lines:
        return None
    bug = PlantedBug(
        operator=pending.operator,
        language=src.language,
        file=src.path,
        lines=lines,
        function=pending.function,
        description=cand.description.replace(FN, pending.function),
        original=shown[0],
        mutated=shown[1],
        callers=cand.callers,
    )
    context: tuple[tuple[str, str], ...] = ()
    if cand.callers and src.project is not None:
        paths = dict.fromkeys(c.path for c in cand.callers if c.path != src.path)
        context = tuple((p, src.project.texts[p]) for p in paths if p in src.project.texts)
    return Mutant(bug=bug, source=text, context=context)


def _point(data: bytes, offset: int) -> Point:
    row = data.count(b"\n", 0, offset)
    return Point(row, offset - (data.rfind(b"\n", 0, offset) + 1))


def _parses(src: Source, data: bytes, cand: Candidate, new_len: int) -> bool:
    p = parser(src.kind)
    assert p is not None
    tree = src.tree.copy()
    new_end = cand.start + new_len
    tree.edit(
        start_byte=cand.start,
        old_end_byte=cand.end,
        new_end_byte=new_end,
        start_point=_point(src.data, cand.start),
        old_end_point=_point(src.data, cand.end),
        new_end_point=_point(data, new_end),
    )
    mutated = p.parse(data, tree)
    if mutated.root_node.has_error and _errors(mutated.root_node) > _errors(src.tree.root_node):
        return False
    if src.language == "python" and _original_ok(src.text) and not _python_ok(data.decode()):
        return False
    before = _tokens(src.tree.root_node, cand.start, cand.end)
    after = _tokens(mutated.root_node, cand.start, new_end)
    return before != after


@lru_cache(maxsize=8)
def _original_ok(text: str) -> bool:
    return _python_ok(text)


def _python_ok(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _errors(root: Node) -> int:
    if not root.has_error:
        return 0
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        count += node.is_error or node.is_missing
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    return count


def _tokens(root: Node, start: int, end: int) -> list[tuple[str, bytes]]:
    """The non-comment leaf tokens of the top-level definition around [start, end], so a change
    of only whitespace or comments compares equal."""
    node = next((c for c in root.children if c.start_byte <= start and end <= c.end_byte), root)
    out: list[tuple[str, bytes]] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "comment":
            continue
        if current.child_count == 0:
            out.append((current.type, current.text or b""))
        else:
            stack.extend(reversed(current.children))
    return out


def changed_lines(before: str, after: str) -> tuple[int, ...]:
    """The 1-based lines of `after` that differ from `before` (common leading and trailing lines
    trimmed); a pure deletion reports the two lines around the gap."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    limit = min(len(old), len(new)) - prefix
    while suffix < limit and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    if old == new:
        return ()
    first, last = prefix + 1, len(new) - suffix
    if last < first:  # lines only removed: the lines on either side of the gap
        return tuple(n for n in (first - 1, first) if 1 <= n <= len(new)) or (1,)
    return tuple(range(first, last + 1))
