"""Enclosing functions of changed lines, from a tree-sitter parse of the new file.

The grammars come from the installed wheels (tree-sitter-python, -javascript, -typescript, -go,
-java, -rust);
nothing is downloaded at run time. A file is parsed at most once: `function_spans` returns every
named function in the file as a line span with its qualified name, and `names_for_lines` maps
line numbers to the innermost span. `enclosing_functions` is the one-shot convenience for callers
that hold a single file.

Qualified names follow Python's `__qualname__` without `<locals>`: "Class.method",
"outer.inner"; Go methods are "Receiver.Method", Java methods "Class.method" (nested types
too: "Outer.Inner.method"), Rust methods "Type.method" (the type of their `impl`, generics
dropped; a trait's default methods "Trait.method"; a module's functions "module.function").
Anonymous functions (lambdas, callbacks, closures) are transparent: a line inside one belongs to
the nearest named function around it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from tree_sitter import Language, Node, Parser, Point, Query, QueryCursor, Range, Tree

from redline.diff.tags import split_path, suffix_and_stem

# Extension → language name. Only some of these have a grammar (see _GRAMMARS); the others
# still tell the planner and the comment heuristics what the file is.
_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".swift": "swift",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".sql": "sql",
    ".lua": "lua",
    ".r": "r",
    ".pl": "perl",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".json": "json",
    ".ini": "ini",
    ".cfg": "ini",
    ".md": "markdown",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".xml": "xml",
    ".css": "css",
    ".scss": "scss",
    ".vue": "vue",
    ".svelte": "svelte",
}
_BASENAMES: dict[str, str] = {
    "dockerfile": "dockerfile",
    "makefile": "makefile",
    "gnumakefile": "makefile",
    "containerfile": "dockerfile",
}


def language_for(path: str) -> str | None:
    """Language name from the file name, or None when unknown."""
    name = split_path(path)[1].lower()  # string operations: this runs for every file
    if name in _BASENAMES:
        return _BASENAMES[name]
    if name.startswith("dockerfile."):
        return "dockerfile"
    return _EXTENSIONS.get(suffix_and_stem(name)[0])


@dataclass(frozen=True, slots=True)
class FunctionSpan:
    start: int  # 1-based first line (decorators included)
    end: int  # 1-based last line
    name: str  # qualified


@dataclass(frozen=True, slots=True)
class Grammar:
    language: Language
    functions: frozenset[str]  # node types that are functions
    scopes: frozenset[str]  # node types that qualify names but are not functions (classes)
    name_of: Callable[[Node], str | None]


def _text(node: Node | None) -> str | None:
    if node is None or node.text is None:
        return None
    return node.text.decode("utf-8", errors="replace")


def _field_name(node: Node) -> str | None:
    return _text(node.child_by_field_name("name"))


def _js_name(node: Node) -> str | None:
    """Name of a JS/TS function node; anonymous functions take the name they are bound to."""
    own = node.child_by_field_name("name")
    if own is not None:
        return _text(own)
    parent = node.parent
    if parent is None:
        return None
    if parent.type == "variable_declarator":
        return _text(parent.child_by_field_name("name"))
    if parent.type == "pair":
        return _text(parent.child_by_field_name("key"))
    if parent.type in ("field_definition", "public_field_definition"):
        return _text(parent.child_by_field_name("property") or parent.child_by_field_name("name"))
    if parent.type == "assignment_expression":
        left = parent.child_by_field_name("left")
        # `module.exports.x = () => {}` is known as its last segment, like a method.
        if left is not None and left.type == "member_expression":
            return _text(left.child_by_field_name("property"))
        return _text(left)
    return None


def _go_name(node: Node) -> str | None:
    name = _field_name(node)
    if name is None or node.type != "method_declaration":
        return name
    receiver = node.child_by_field_name("receiver")
    recv_type = _go_receiver_type(receiver) if receiver is not None else None
    return f"{recv_type}.{name}" if recv_type else name


def _go_receiver_type(receiver: Node) -> str | None:
    # (r *Recv[T]) → Recv: unwrap pointer and generic wrappers down to the type identifier.
    for param in receiver.named_children:
        node: Node | None = param.child_by_field_name("type")
        while node is not None and node.type in ("pointer_type", "generic_type"):
            inner = node.child_by_field_name("type")
            node = inner if inner is not None else next(iter(node.named_children), None)
        return _text(node)
    return None


def _rust_name(node: Node) -> str | None:
    """A function's or a module's name; an `impl` block is named by its type, generics
    dropped (`impl<T> fmt::Display for Stack<T>` → "Stack")."""
    if node.type != "impl_item":
        return _field_name(node)
    target = node.child_by_field_name("type")
    while target is not None and target.type in ("generic_type", "scoped_type_identifier"):
        inner = target.child_by_field_name("type") or target.child_by_field_name("name")
        if inner is None:
            break
        target = inner
    return _text(target)


def load_language(kind: str) -> Language | None:
    """The tree-sitter grammar for a language kind (python, javascript, typescript, tsx, go,
    java, rust), or None when its wheel is missing or broken."""
    # Imported lazily so a broken grammar wheel only disables its own language.
    try:
        if kind == "python":
            import tree_sitter_python as mod

            return Language(mod.language())
        if kind == "javascript":
            import tree_sitter_javascript as js

            return Language(js.language())
        if kind in ("typescript", "tsx"):
            import tree_sitter_typescript as ts

            return Language(ts.language_tsx() if kind == "tsx" else ts.language_typescript())
        if kind == "go":
            import tree_sitter_go as go

            return Language(go.language())
        if kind == "java":
            import tree_sitter_java as java

            return Language(java.language())
        if kind == "rust":
            import tree_sitter_rust as rust

            return Language(rust.language())
    except Exception:  # any failure means "no grammar", never a crash
        return None
    return None


_JS_FUNCTIONS = (
    "function_declaration",
    "generator_function_declaration",
    "function_expression",
    "function",
    "generator_function",
    "arrow_function",
    "method_definition",
)
_JS_SCOPES = ("class_declaration", "class", "abstract_class_declaration")

_SPECS: dict[str, tuple[tuple[str, ...], tuple[str, ...], Callable[[Node], str | None]]] = {
    "python": (("function_definition",), ("class_definition",), _field_name),
    "javascript": (_JS_FUNCTIONS, _JS_SCOPES, _js_name),
    "typescript": (_JS_FUNCTIONS, _JS_SCOPES, _js_name),
    "tsx": (_JS_FUNCTIONS, _JS_SCOPES, _js_name),
    "go": (("function_declaration", "method_declaration"), (), _go_name),
    # Lambdas are transparent; annotations are part of a method's node (its modifiers).
    "java": (
        ("method_declaration", "constructor_declaration", "compact_constructor_declaration"),
        (
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
        ),
        _field_name,
    ),
    # Closures are transparent; a trait's signatures without a body are not functions.
    "rust": (("function_item",), ("impl_item", "trait_item", "mod_item"), _rust_name),
}


@cache
def grammar_for(kind: str) -> Grammar | None:
    """The grammar and naming rules of a language kind, or None without one (shared with
    memory/extract.py, so the memory's qualnames are exactly the ones computed here)."""
    spec = _SPECS.get(kind)
    language = load_language(kind) if spec else None
    if spec is None or language is None:
        return None
    functions, scopes, name_of = spec

    # Keep only node types this grammar version knows, so a grammar upgrade cannot break us.
    def known(types: Iterable[str]) -> frozenset[str]:
        return frozenset(t for t in types if language.id_for_node_kind(t, True) is not None)

    return Grammar(language, known(functions), known(scopes), name_of)


@cache
def _query(kind: str) -> Query | None:
    grammar = grammar_for(kind)
    if grammar is None or not grammar.functions:
        return None
    pattern = " ".join(f"({t}) @f" for t in sorted(grammar.functions))
    return Query(grammar.language, pattern)


# How deep in the syntax tree a definition is still looked at. Naming one walks its ancestors,
# and tree-sitter finds a node's parent by descending from the root, so a definition d deep
# costs d² steps: 500 nested functions (7 KB of JavaScript) took 9 s. Hand-written code
# nests its functions at most ~30 deep, minified bundles ~100; deeper is a hostile file.
MAX_DEFINITION_DEPTH = 128


def query_cursor(query: Query) -> QueryCursor:
    """A cursor that does not match below MAX_DEFINITION_DEPTH."""
    cursor = QueryCursor(query)
    cursor.set_max_start_depth(MAX_DEFINITION_DEPTH)
    return cursor


def qualified_name(node: Node, grammar: Grammar) -> str | None:
    """The qualified name ("Outer.Inner.name") of a function or class node; None: unnamed."""
    own = grammar.name_of(node)
    if not own:
        return None
    parts = [own]
    parent = node.parent
    while parent is not None:
        if parent.type in grammar.functions or parent.type in grammar.scopes:
            name = grammar.name_of(parent)
            if name:
                parts.append(name)
        parent = parent.parent
    return ".".join(reversed(parts))


def definition_start_row(node: Node) -> int:
    """First row of a definition, including its decorators."""
    parent = node.parent
    if parent is not None and parent.type == "decorated_definition":  # Python
        return parent.start_point[0]
    row = node.start_point[0]
    sibling = node.prev_named_sibling  # TS/JS class members: decorators are siblings
    while sibling is not None and sibling.type == "decorator":
        row = sibling.start_point[0]
        sibling = sibling.prev_named_sibling
    return row


def has_grammar(path: str) -> bool:
    """Whether enclosing functions can be computed for this file (a grammar is installed)."""
    kind = language_for(path)
    return kind is not None and _query(kind) is not None


def function_spans(
    path: str, source: bytes, near: Iterable[int] | None = None
) -> list[FunctionSpan]:
    """Every named function of the file as a 1-based line span, sorted outer-first.

    With `near` (line numbers), only the top-level definitions containing those lines are
    parsed: the spans then cover those lines correctly but not the rest of the file. Returns []
    for languages without a grammar and for anything tree-sitter cannot handle.
    """
    kind = language_for(path)
    grammar = grammar_for(kind) if kind else None
    query = _query(kind) if kind else None
    if grammar is None or query is None:
        return []
    try:
        tree = _parse(grammar.language, source, near)
        nodes = query_cursor(query).captures(tree.root_node).get("f", [])
    except Exception:  # a parse failure only costs the function metrics
        return []
    spans = []
    for node in nodes:
        name = qualified_name(node, grammar)
        if name:
            spans.append(FunctionSpan(definition_start_row(node) + 1, node.end_point[0] + 1, name))
    # Outer spans first (earlier start, then longer) so inner ones overwrite them below.
    spans.sort(key=lambda s: (s.start, -s.end))
    return spans


# Parsing is the expensive step (tree-sitter reads ~5-15 MB/s here, slower than git writes the
# diff), so a file is parsed once, and only around the changed lines: the top-level definitions
# that contain them, found by the lines that start in column 0 with an identifier character or
# a decorator. A definition's decorators stay with it. If that guess cuts a construct (a
# multi-line string with text in column 0), the partial parse has errors and the whole file is
# parsed instead, so the shortcut can cost time but never correctness.
_TOP_LEVEL = re.compile(rb"^[A-Za-z_$@]", re.MULTILINE)
_WINDOW_MAX_SHARE = 0.6  # above this share of the file, one full parse is simpler and as fast


def _parse(language: Language, source: bytes, near: Iterable[int] | None) -> Tree:
    ranges = _windows(source, near) if near is not None else None
    if ranges:
        tree = Parser(language, included_ranges=ranges).parse(source)
        if not tree.root_node.has_error:
            return tree
    return Parser(language).parse(source)


def _windows(source: bytes, near: Iterable[int]) -> list[Range] | None:
    """Byte ranges of the top-level blocks containing `near`; None when not worth it."""
    starts: list[tuple[int, int]] = []  # (1-based line, byte offset) of each top-level block
    line, prev, after_decorator = 1, 0, False
    for m in _TOP_LEVEL.finditer(source):
        offset = m.start()
        line += source.count(b"\n", prev, offset)
        prev = offset
        if not after_decorator:
            starts.append((line, offset))
        after_decorator = source[offset] == 0x40  # "@": the definition below belongs to it
    if len(starts) < 2:
        return None
    lines = [start for start, _ in starts]
    blocks = sorted({bisect.bisect_right(lines, n) - 1 for n in near})
    merged: list[tuple[int, int]] = []  # (first block, last block), inclusive
    for block in blocks:
        if merged and merged[-1][1] >= block - 1:
            merged[-1] = (merged[-1][0], block)
        else:
            merged.append((block, block))
    end_point = _end_point(source)
    ranges: list[Range] = []
    covered = 0
    for first, last in merged:
        start_line, start_byte = (1, 0) if first < 0 else starts[first]
        if last + 1 < len(starts):
            end_line, end_byte = starts[last + 1]
            stop = Point(end_line - 1, 0)
        else:
            end_byte, stop = len(source), end_point
        ranges.append(Range(Point(start_line - 1, 0), stop, start_byte, end_byte))
        covered += end_byte - start_byte
    if covered > _WINDOW_MAX_SHARE * len(source):
        return None
    return ranges


def _end_point(source: bytes) -> Point:
    row = source.count(b"\n")
    return Point(row, len(source) - (source.rfind(b"\n") + 1))


def names_for_lines(spans: Sequence[FunctionSpan], lines: Iterable[int]) -> dict[int, str | None]:
    """Innermost function name for each line (None = module level).

    Syntax-tree spans are nested or disjoint, so painting them outer-first leaves each line with
    its innermost function. The cost is the number of (span, line) hits, not spans × lines.
    """
    ordered = sorted(set(lines))
    result: dict[int, str | None] = dict.fromkeys(ordered)
    for span in spans:
        lo = bisect.bisect_left(ordered, span.start)
        hi = bisect.bisect_right(ordered, span.end)
        for line in ordered[lo:hi]:
            result[line] = span.name
    return result


def enclosing_functions(path: str, source: bytes, lines: Iterable[int]) -> list[str]:
    """Qualified names of the functions enclosing `lines`, in line order, without repeats."""
    wanted = list(lines)
    by_line = names_for_lines(function_spans(path, source, near=wanted), wanted)
    return list(dict.fromkeys(name for _, name in sorted(by_line.items()) if name))
