"""What every operator shares: a parsed file, the functions in it, and a candidate edit.

An operator is a function `(Source) -> list[Candidate]`: it walks the syntax tree, picks the
nodes it can mutate inside a function, and proposes one byte-range replacement per node. It never
checks whether the result parses or changes anything: the generator does that once for all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from tree_sitter import Node, Parser, Tree

from redline.diff.functions import function_spans, language_for, load_language, names_for_lines
from redline.eval.truth import CallSite

# Stands for the enclosing function's name in a candidate's description (the generator fills it).
FN = "\x00fn\x00"

# Extension kind (functions.language_for) → the eval's language name (truth.LANGUAGES).
KINDS: dict[str, str] = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "tsx": "typescript",
    "go": "go",
}

# Node types that open a function scope (named or not), per language family.
_FUNCTIONS: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "lambda"}),
    "javascript": frozenset(
        {
            "function_declaration",
            "generator_function_declaration",
            "function_expression",
            "function",
            "generator_function",
            "arrow_function",
            "method_definition",
        }
    ),
    "go": frozenset({"function_declaration", "method_declaration", "func_literal"}),
}


def family(language: str) -> str:
    """The grammar family: TypeScript shares JavaScript's node types for everything used here."""
    return "javascript" if language == "typescript" else language


@dataclass(frozen=True)
class Candidate:
    start: int  # byte offset of the replaced range in the original
    end: int
    new: str  # the text put in its place
    description: str  # one line, for PlantedBug.description
    # Shown as PlantedBug.original/mutated; default: the replaced bytes and `new`.
    shown: tuple[str, str] | None = None
    # A contract change: the calls in other files that rely on the old contract.
    callers: tuple[CallSite, ...] = ()


@cache
def parser(kind: str) -> Parser | None:
    language = load_language(kind)
    return Parser(language) if language is not None else None


class Source:
    """One file, parsed once: its text, bytes, tree, language and named functions."""

    def __init__(self, path: str, text: str, kind: str) -> None:
        self.path = path
        self.text = text
        self.kind = kind  # tree-sitter kind: python, javascript, typescript, tsx, go
        self.language = KINDS[kind]
        self.family = family(self.language)
        self.data = text.encode("utf-8", errors="surrogatepass")
        p = parser(kind)
        if p is None:
            raise ValueError(f"no grammar for {kind}")
        self.tree: Tree = p.parse(self.data)
        self._spans = function_spans(path, self.data)
        self._by_type: dict[str, list[Node]] | None = None
        # The other files of the corpus, for operators that look across files: an
        # ops_contract.Project, set by the generator when such an operator runs (typed Any:
        # ops_contract builds on this module, which must not import it back).
        self.project: Any = None

    @classmethod
    def load(cls, path: str, text: str) -> Source | None:
        kind = language_for(path)
        if kind not in KINDS or parser(kind) is None:
            return None
        return cls(path, text, kind)

    # -- text --------------------------------------------------------------------------------

    def text_of(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def line_start(self, offset: int) -> int:
        return self.data.rfind(b"\n", 0, offset) + 1

    def line_end(self, offset: int) -> int:
        """Offset just past the newline ending the line that contains `offset`."""
        end = self.data.find(b"\n", offset)
        return len(self.data) if end < 0 else end + 1

    def indent(self, node: Node) -> str | None:
        """The whitespace before `node` on its line, or None if other code precedes it."""
        start = self.line_start(node.start_byte)
        prefix = self.data[start : node.start_byte]
        return prefix.decode() if prefix.strip() == b"" else None

    def alone_on_lines(self, node: Node) -> bool:
        """Whether nothing but whitespace (and a trailing `;`) shares the node's lines."""
        if self.indent(node) is None:
            return False
        rest = self.data[node.end_byte : self.line_end(node.end_byte)]
        return rest.strip().lstrip(b";").strip() == b""

    def delete_lines(self, node: Node, description: str, new: str = "") -> Candidate | None:
        """Remove the lines a statement occupies (or put `new` lines in their place)."""
        if not self.alone_on_lines(node):
            return None
        start = self.line_start(node.start_byte)
        end = self.line_end(node.end_byte)
        original = self.text_of(node)
        return Candidate(start, end, new, description, (original, new.strip()))

    def insert_before(self, node: Node, code: str, description: str) -> Candidate:
        """Insert a statement before `node`, on its own line when `node` starts its line."""
        indent = self.indent(node)
        new = f"{code}\n{indent}" if indent is not None else f"{code} "
        return Candidate(node.start_byte, node.start_byte, new, description, ("", code))

    def replace(
        self, node: Node, new: str, description: str, callers: tuple[CallSite, ...] = ()
    ) -> Candidate:
        return Candidate(node.start_byte, node.end_byte, new, description, callers=callers)

    # -- structure ---------------------------------------------------------------------------

    def walk(self) -> Iterator[Node]:
        """Every node inside a function, in document order."""
        functions = _FUNCTIONS[self.family]
        stack: list[tuple[Node, bool]] = [(self.tree.root_node, False)]
        while stack:
            node, inside = stack.pop()
            if inside:
                yield node
            within = inside or node.type in functions
            stack.extend((c, within) for c in reversed(node.children))

    def function_node(self, node: Node) -> Node | None:
        """The innermost function (named or not) that strictly contains `node`."""
        functions = _FUNCTIONS[self.family]
        parent = node.parent
        while parent is not None:
            if parent.type in functions:
                return parent
            parent = parent.parent
        return None

    def function_name(self, offset: int) -> str | None:
        """The qualified name of the innermost named function around a byte offset."""
        line = self.data.count(b"\n", 0, offset) + 1
        return names_for_lines(self._spans, [line]).get(line)

    def of_type(self, *types: str) -> Iterator[Node]:
        """The nodes of these types inside functions, in document order."""
        if self._by_type is None:
            self._by_type = {}
            for node in self.walk():
                self._by_type.setdefault(node.type, []).append(node)
        found = [n for t in dict.fromkeys(types) for n in self._by_type.get(t, [])]
        if len(types) > 1:
            found.sort(key=lambda n: (n.start_byte, -n.end_byte))
        return iter(found)


Operator = Callable[[Source], list[Candidate]]


def descendants(node: Node) -> Iterator[Node]:
    """Every node under `node` (itself excluded), in document order."""
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def short(text: str, limit: int = 60) -> str:
    """A snippet for a one-line description."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def statements(block: Node) -> list[Node]:
    """The statements of a block (Go wraps them in a statement_list)."""
    inner = [c for c in block.named_children if c.type != "comment"]
    if len(inner) == 1 and inner[0].type == "statement_list":
        return [c for c in inner[0].named_children if c.type != "comment"]
    return inner
