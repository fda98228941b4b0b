"""The texts that describe a definition: its signature (the head, up to its body) and its
documentation (a Python docstring; elsewhere the doc comment right above it, cleaned of its
comment markers). Pure functions of syntax nodes; nothing here reads files.
"""

from __future__ import annotations

import inspect
import re

from tree_sitter import Node

# Nodes a definition can sit inside while its doc comment sits above the outer one:
# `/** doc */ export function f`, `/** doc */ const f = () => ...`, `// doc\ntype T struct`.
_WRAPPERS = frozenset(
    {
        "export_statement",
        "variable_declarator",
        "lexical_declaration",
        "variable_declaration",
        "public_field_definition",
        "field_definition",
        "pair",
        "assignment_expression",
        "expression_statement",
        "type_declaration",
    }
)
# Siblings between a doc comment and its definition: decorators (TS), attributes (Rust).
_BETWEEN = frozenset({"decorator", "attribute_item"})
_COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
# Where an anonymous function's name is written: its signature starts there.
_NAMING_PARENTS = frozenset(
    {
        "variable_declarator",
        "pair",
        "public_field_definition",
        "field_definition",
        "assignment_expression",
    }
)
_STRING_PREFIX = re.compile(r"^[rRbBuUfFtT]*('''|\"\"\"|'|\")")
_WHITESPACE = re.compile(r"\s+")


def node_text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def signature(node: Node, data: bytes, limit: int) -> str:
    """The definition's head, whitespace collapsed: `def f(a, b) -> int:`,
    `func (s *Server) Run(x Reader) error`, `const h = async (p: P) =>`."""
    start = head_start(node)
    end = _body_start(node)
    # Read a bounded slice: a head longer than a few times the cap is cut anyway.
    head = data[start : min(end, start + 4 * limit + 64)].decode("utf-8", errors="replace")
    return capped(_WHITESPACE.sub(" ", head).strip(), limit)


def head_start(node: Node) -> int:
    """Where a definition's text starts: with the name an anonymous function is bound to
    (`const f = () => ...`), with `type` for a lone Go type spec."""
    parent = node.parent
    if parent is not None:
        if node.child_by_field_name("name") is None and parent.type in _NAMING_PARENTS:
            return parent.start_byte
        if parent.type == "type_declaration" and parent.named_child_count == 1:
            return parent.start_byte  # Go: `type T struct`, not `T struct`
    return node.start_byte


def _body_start(node: Node) -> int:
    body = node.child_by_field_name("body")
    if body is None and node.type == "type_spec":  # Go: type T struct { ... }
        kind = node.child_by_field_name("type")
        if kind is not None:
            for child in kind.children:
                if child.type in ("field_declaration_list", "{"):
                    return child.start_byte
    if body is None:
        return node.end_byte
    return body.start_byte


def docstring(node: Node, style: str, limit: int) -> str:
    """The documentation of a definition, or "" when it has none."""
    text = _python_docstring(node) if style == "python" else _doc_comment(node, style)
    return capped(text, limit)


def _python_docstring(node: Node) -> str:
    body = node.child_by_field_name("body")
    first = body.named_children[0] if body is not None and body.named_child_count else None
    if first is None or first.type != "expression_statement" or not first.named_child_count:
        return ""
    string = first.named_children[0]
    if string.type == "concatenated_string" and string.named_child_count:
        string = string.named_children[0]
    if string.type != "string":
        return ""
    raw = node_text(string)
    match = _STRING_PREFIX.match(raw)
    if match is None:
        return ""
    quote = match.group(1)
    inner = raw[match.end() :]
    if inner.endswith(quote):
        inner = inner[: -len(quote)]
    return inspect.cleandoc(inner)


def _doc_comment(node: Node, style: str) -> str:
    target: Node | None = node
    while target is not None:
        found = _comments_above(target, style)
        if found:
            return found
        parent = target.parent
        if parent is None or parent.type not in _WRAPPERS:
            return ""
        target = parent
    return ""


def _last_row(comment: Node) -> int:
    # A Rust `///` comment node ends at column 0 of the next line (it holds the newline).
    row, column = comment.end_point
    return row - 1 if column == 0 and row > comment.start_point[0] else row


def _comments_above(target: Node, style: str) -> str:
    top = target.start_point[0]
    sibling = target.prev_sibling
    while sibling is not None and sibling.type in _BETWEEN:
        top = sibling.start_point[0]
        sibling = sibling.prev_sibling
    lines: list[str] = []
    while sibling is not None and sibling.type in _COMMENTS and top - 1 <= _last_row(sibling):
        text = node_text(sibling)
        if style == "block" or text.startswith("/**"):
            # JSDoc / Javadoc (and Rust's /** */): the one block right above.
            return _clean_block(text) if text.startswith("/**") and not lines else ""
        if style == "go" and text.startswith("//"):
            if not text.startswith("//go:") and not text.startswith("//nolint"):
                lines.append(text[2:].removeprefix(" ").rstrip())
        elif style == "rust" and text.startswith("///") and not text.startswith("////"):
            lines.append(text[3:].removeprefix(" ").rstrip())
        else:
            break
        top = sibling.start_point[0]
        sibling = sibling.prev_sibling
    return "\n".join(reversed(lines)).strip()


def _clean_block(text: str) -> str:
    inner = text[3:]
    if inner.endswith("*/"):
        inner = inner[:-2]
    lines = []
    for line in inner.splitlines():
        stripped = line.strip()
        if stripped.startswith("*"):
            stripped = stripped[1:].removeprefix(" ")
        lines.append(stripped.rstrip())
    return "\n".join(lines).strip()
