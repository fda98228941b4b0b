"""The code graph of one file: its functions, methods and classes, and its calls, imports and
references, from one tree-sitter parse and one query (extract_rules.py).

`extract(path, data)` is pure: it reads nothing but `data`, runs nothing (tree-sitter only
parses), and returns None for a language without a grammar. The grammars, and the qualified
names of functions, are diff/functions.py's: a function is called here exactly what
`function_spans` calls it, so the memory and the review speak of the same names. Classes are
named the same way ("Outer.Inner", "outer_function.LocalClass").

Caps (a hostile or generated file must not cost unbounded time, memory or index space; when
one is reached the graph says so with `truncated=True`, which the build reports):
- MAX_FILE_BYTES = 1 MiB: hand-written source files are smaller (aiohttp's largest is 43 KB,
  litellm's 800 KB proxy_server.py is the largest seen in the installed packages); bigger ones
  are generated, vendored or minified and their symbols are noise. Extracting 800 KB costs
  ~0.25 s of CPU. A bigger file gives an empty graph with truncated=True (not None: None
  means "no grammar").
- MAX_SYMBOLS_PER_FILE = 5,000: the most definitions of any file among ~12,000 real ones
  (Redline, its installed packages, aiohttp, ripgrep, gin, gson, express, ...) is 1,773 (a
  generated visitor); the first ones in file order are kept.
- MAX_EDGES_PER_FILE = 20,000: the most among the same files is 7,882 (a minified bundle);
  the first ones in file order are kept.
- MAX_BODY_CHARS = 2,000 (~50 lines): shows a typical function whole and more than the
  embedding model reads (256 word pieces, ~1,000 characters); for a class, its head and first
  members. Bounds the stored text per symbol.
- MAX_DOC_CHARS = 1,000: a docstring's summary and first paragraphs, what a search matches.
- MAX_SIGNATURE_CHARS = 300: a long parameter list, whitespace collapsed.
- MAX_EDGE_TEXT_CHARS = 200: a callee expression or module path as written.
- Definitions and uses deeper than diff/functions.MAX_DEFINITION_DEPTH (128) syntax levels
  are not looked at (minified bundles reach ~100; naming one d deep costs d² steps).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from tree_sitter import Node, Parser

from redline.diff.functions import (
    Grammar,
    definition_start_row,
    grammar_for,
    language_for,
    qualified_name,
    query_cursor,
)
from redline.memory.extract_docs import capped, docstring, head_start, signature
from redline.memory.extract_edges import uses
from redline.memory.extract_rules import RULES, Rules, query_for
from redline.memory.model import Edge, FileGraph, Symbol, SymbolKind

MAX_FILE_BYTES = 1 << 20
MAX_SYMBOLS_PER_FILE = 5_000
MAX_EDGES_PER_FILE = 20_000
MAX_BODY_CHARS = 2_000
MAX_DOC_CHARS = 1_000
MAX_SIGNATURE_CHARS = 300
MAX_EDGE_TEXT_CHARS = 200

# Function node types that are methods wherever they are.
_METHODS = frozenset(
    {"method_definition", "method_declaration", "constructor_declaration"}
    | {"compact_constructor_declaration"}
)
_NOT_CLASSES = frozenset({"mod_item"})  # Rust modules qualify names but hold functions
_KIND_ORDER = {"import": 0, "call": 1, "reference": 2}  # at one node: edges in this order


@dataclass(slots=True)
class _Definition:
    node: Node
    qualname: str
    kind: SymbolKind
    start_byte: int  # decorators included
    start: int  # 1-based line, decorators included
    end: int


def extract(path: str, data: bytes) -> FileGraph | None:
    """The symbols and edges of one file version; None when its language has no grammar."""
    language = language_for(path)
    grammar = grammar_for(language) if language else None
    query = query_for(language) if language else None
    if language is None or grammar is None or query is None:
        return None
    if len(data) > MAX_FILE_BYTES:
        return FileGraph(path, language, truncated=True)
    rules = RULES[language]
    try:
        tree = Parser(grammar.language).parse(data)
        captures = query_cursor(query).captures(tree.root_node)
    except Exception:  # tree-sitter refusing an input costs this file's graph, nothing more
        return FileGraph(path, language, truncated=True)
    definitions = _definitions(captures, grammar, rules)
    symbols = [_symbol(path, language, rules, d, data) for d in definitions[:MAX_SYMBOLS_PER_FILE]]
    edges, edges_cut = _edges(path, language, rules, captures, definitions, data)
    truncated = len(definitions) > MAX_SYMBOLS_PER_FILE or edges_cut
    return FileGraph(path, language, tuple(symbols), tuple(edges), truncated=truncated)


def _definitions(
    captures: dict[str, list[Node]], grammar: Grammar, rules: Rules
) -> list[_Definition]:
    found = []
    classes = frozenset(rules.classes)
    for capture, kind in (("function", "function"), ("class", "class")):
        for node in captures.get(capture, ()):
            qualname = qualified_name(node, grammar)
            if not qualname:
                continue
            row = definition_start_row(node)
            if kind == "class" and node.type == "type_spec":  # Go: `type T struct` as one
                parent = node.parent
                if parent is not None and parent.named_child_count == 1:
                    row = parent.start_point[0]
            symbol_kind: SymbolKind = "class"
            if kind == "function":
                symbol_kind = "method" if _is_method(node, grammar, classes) else "function"
            start_byte = _start_byte(node)
            found.append(
                _Definition(node, qualname, symbol_kind, start_byte, row + 1, node.end_point[0] + 1)
            )
    found.sort(key=lambda d: (d.start_byte, -d.node.end_byte))
    return found


def _start_byte(node: Node) -> int:
    """Where a definition starts, decorators included (the bytes of definition_start_row)."""
    parent = node.parent
    if parent is not None and parent.type == "decorated_definition":
        return parent.start_byte
    start = node.start_byte
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type == "decorator":
        start = sibling.start_byte
        sibling = sibling.prev_named_sibling
    return start


def _is_method(node: Node, grammar: Grammar, classes: frozenset[str]) -> bool:
    if node.type in _METHODS:
        return True
    parent = node.parent
    while parent is not None:
        if parent.type in grammar.functions:
            return False
        if parent.type in classes or parent.type in grammar.scopes:
            return parent.type not in _NOT_CLASSES
        parent = parent.parent
    return False


def _symbol(path: str, language: str, rules: Rules, d: _Definition, data: bytes) -> Symbol:
    node = d.node
    # Decode a bounded slice: the body is cut at MAX_BODY_CHARS characters (≤ 4 bytes each).
    start = min(d.start_byte, head_start(node))
    raw = data[start : min(node.end_byte, start + 4 * MAX_BODY_CHARS + 4)]
    return Symbol(
        path=path,
        qualname=d.qualname,
        kind=d.kind,
        start=d.start,
        end=d.end,
        language=language,
        signature=signature(node, data, MAX_SIGNATURE_CHARS),
        docstring=docstring(node, rules.doc, MAX_DOC_CHARS),
        body=capped(raw.decode("utf-8", errors="replace"), MAX_BODY_CHARS),
    )


class _Enclosing:
    """The innermost definition around a byte offset. Definitions are nested or disjoint
    (they are syntax nodes), so the candidates are the last one starting before the offset
    and its ancestors."""

    def __init__(self, definitions: list[_Definition]) -> None:
        self.starts = [d.start_byte for d in definitions]
        self.ends = [d.node.end_byte for d in definitions]
        self.names = [d.qualname for d in definitions]
        self.parent: list[int] = []
        stack: list[int] = []
        for i, d in enumerate(definitions):
            while stack and self.ends[stack[-1]] <= d.start_byte:
                stack.pop()
            self.parent.append(stack[-1] if stack else -1)
            stack.append(i)

    def name_at(self, offset: int) -> str:
        i = bisect.bisect_right(self.starts, offset) - 1
        while i >= 0 and self.ends[i] <= offset:
            i = self.parent[i]
        return self.names[i] if i >= 0 else ""


def _edges(
    path: str,
    language: str,
    rules: Rules,
    captures: dict[str, list[Node]],
    definitions: list[_Definition],
    data: bytes,
) -> tuple[list[Edge], bool]:
    enclosing = _Enclosing(definitions)
    common = rules.common
    found = [
        (
            node.start_byte,
            -node.end_byte,
            _KIND_ORDER[kind],
            node.start_point[0] + 1,
            kind,
            target,
            text,
        )
        for node, kind, target, text in uses(language, rules, captures, data, MAX_EDGE_TEXT_CHARS)
        # References to `T` (a type parameter) or `int` say nothing about who uses what.
        if kind != "reference" or (len(target) > 1 and target not in common)
    ]
    # File order, outer before inner (`a().b` before `a`); stable: an import's names stay in
    # their order. Deterministic whatever order the query gave the captures in.
    found.sort(key=lambda use: use[:3])
    edges: list[Edge] = []
    seen_refs: set[tuple[str, str]] = set()
    calls: set[tuple[str, str, int]] = set()
    for offset, _, _, line, kind, target, text in found:
        source = enclosing.name_at(offset)
        if kind == "call":
            calls.add((source, target, line))
        elif kind == "reference":
            # One reference per (user, name), its first, and none beside a call of the name
            # (`errors.BadRequest()`): "which code uses this class" needs no more, and a class
            # named on every line must not fill the edge budget.
            if (source, target) in seen_refs or (source, target, line) in calls:
                continue
            seen_refs.add((source, target))
        if len(edges) == MAX_EDGES_PER_FILE:
            return edges, True
        edges.append(Edge(path, line, kind, source, target, text))
    return edges, False
