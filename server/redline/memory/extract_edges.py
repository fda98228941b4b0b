"""From the query's captures to uses: calls, imports and references, each as
(node where it is, kind, target, text). extract.py adds the enclosing symbol, de-duplicates
and caps them.

`target` is the last identifier of what is used (`send` for `self.client.send(x)`, `HashMap`
for `use std::collections::HashMap`, the module's last segment for `import os.path`), `text`
how it was written: the callee expression, or the module path of an import (for Java and
Rust, whose imports name an item, the item's whole path).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from redline.memory.extract_docs import node_text
from redline.memory.extract_rules import DECLARING_PARENTS, TYPE_PARAMETERS, Rules
from redline.memory.model import EdgeKind

Use = tuple[Node, EdgeKind, str, str]  # (where, kind, target, text)

# The identifier a callee expression ends in, by the callee's node type: the field that holds
# the last segment (`a.b.c` → c, `Vec::new` → new). Other callees (`f()()`, `a[0]()`) name
# nothing and make no edge.
_CALLEE_LAST = {
    "attribute": "attribute",  # Python
    "member_expression": "property",  # JS/TS
    "selector_expression": "field",  # Go
    "field_expression": "field",  # Rust
    "scoped_identifier": "name",  # Rust
}
_NAMES = frozenset(
    {
        "identifier",
        "property_identifier",
        "field_identifier",
        "type_identifier",
        "private_property_identifier",
    }
)
# Types written with their package or module: the reference's text is the whole name.
_QUALIFIED = frozenset(
    {
        "qualified_type",
        "scoped_type_identifier",
        "nested_type_identifier",
        "attribute",
        "member_expression",
    }
)
_JS_EXTENSIONS = re.compile(r"\.(?:[cm]?[jt]sx?|json|s?css|vue|svelte)$")
_GO_MAJOR = re.compile(r"^v\d+$")
_MAX_USE_DEPTH = 16  # real use trees nest 2-3 deep
_PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def callee_target(node: Node) -> str | None:
    """The last identifier of a callee expression, or None when it has none."""
    for _ in range(4):  # unwrap `generic_function` (Rust `f::<T>()`) and the like
        if node.type in _NAMES:
            return node_text(node)
        field = _CALLEE_LAST.get(node.type)
        inner = node.child_by_field_name(field or "function")
        if inner is None:
            return None
        node = inner
    return None


def spelled(data: bytes, start: int, end: int, limit: int) -> str:
    """Source text between two offsets, whitespace collapsed, at most `limit` characters.
    Reads a bounded slice: a chain of n calls must not cost n times its whole text."""
    text = data[start : min(end, start + 4 * limit + 16)].decode("utf-8", errors="replace")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def uses(
    language: str, rules: Rules, captures: dict[str, list[Node]], data: bytes, limit: int
) -> Iterator[Use]:
    """Every use the captures describe, in no particular order; texts at most `limit`."""
    for node in captures.get("call", ()):
        target = callee_target(node)
        if target:
            yield node, "call", target, spelled(data, node.start_byte, node.end_byte, limit)
    for node in captures.get("call_java", ()):
        name = node.child_by_field_name("name")
        args = node.child_by_field_name("arguments")
        if name is not None and args is not None:
            text = spelled(data, node.start_byte, args.start_byte, limit)
            yield node, "call", node_text(name), text
    for node in captures.get("new", ()):
        target = callee_target(node) or _last_type_name(node)
        if target:
            text = spelled(data, node.start_byte, node.end_byte, limit - 4)
            yield node, "reference", target, "new " + text
    yield from _imports(language, captures)
    for node in captures.get("require", ()):
        yield from _required(node)
    for node in captures.get("ref", ()):
        parent = node.parent
        if parent is not None and _declares(parent, node):
            continue
        yield node, "reference", node_text(node), _qualified_text(node, data, limit)
    for node in captures.get("strref", ()):
        text = node_text(node)
        if _PLAIN_NAME.match(text):
            yield node, "reference", text.rsplit(".", 1)[-1], text
    for node in captures.get("cap", ()):
        parent = node.parent
        if parent is not None and (
            parent.type in rules.cap_skip
            or (parent.type in rules.cap_skip_first and parent.start_byte == node.start_byte)
        ):
            continue
        yield node, "reference", node_text(node), _qualified_text(node, data, limit)


def _qualified_text(node: Node, data: bytes, limit: int) -> str:
    """How a name is written: with its package or module (`http.Client`, `errors.Invalid`)."""
    parent = node.parent
    if parent is not None and parent.type in _QUALIFIED and parent.start_byte < node.start_byte:
        return spelled(data, parent.start_byte, node.end_byte, limit)
    return node_text(node)


def _declares(parent: Node, node: Node) -> bool:
    if parent.type in TYPE_PARAMETERS:
        return True
    if parent.type not in DECLARING_PARENTS:
        return False
    name = parent.child_by_field_name("name")
    return name is not None and name.start_byte == node.start_byte


def _last_type_name(node: Node) -> str | None:
    """`new a.b.C<T>()` → C (Java generic_type / scoped_type_identifier, TS the same)."""
    for _ in range(4):
        if node.type in _NAMES:
            return node_text(node)
        named = node.named_children
        if not named:
            return None
        node = named[0] if node.type == "generic_type" else named[-1]
    return None


def _imports(language: str, captures: dict[str, list[Node]]) -> Iterator[Use]:
    for node in captures.get("import", ()):
        if language == "python":
            found = _python_import(node)
        elif language == "go":
            found = _go_import(node)
        elif language == "java":
            found = _java_import(node)
        elif language == "rust":
            found = list(_rust_use(node, "", 0))
        else:
            found = _js_import(node)
        for target, text in found:
            if target and target not in ("self", "super", "crate"):
                yield node, "import", target, text


def _python_import(node: Node) -> list[tuple[str, str]]:
    found = []
    if node.type == "import_statement":
        for name in node.children_by_field_name("name"):
            dotted = name.child_by_field_name("name") if name.type == "aliased_import" else name
            text = node_text(dotted)
            found.append((text.rsplit(".", 1)[-1], text))
        return found
    module = node_text(node.child_by_field_name("module_name"))
    for name in node.children_by_field_name("name"):
        dotted = name.child_by_field_name("name") if name.type == "aliased_import" else name
        found.append((node_text(dotted).rsplit(".", 1)[-1], module))
    if any(child.type == "wildcard_import" for child in node.children):
        found.append((module.rsplit(".", 1)[-1], module))
    return found


def _module_name(spec: str) -> str:
    """The name a JS module is known by: "./util/http.js" → "http", "@scope/pkg" → "pkg"."""
    last = spec.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]  # "node:path" → "path"
    return _JS_EXTENSIONS.sub("", last) if last not in (".", "..") else ""


def _unquote(node: Node | None) -> str:
    return node_text(node).strip("'\"`")


def _js_import(node: Node) -> list[tuple[str, str]]:
    module = _unquote(node.child_by_field_name("source"))
    found = []
    for child in node.named_children:
        if child.type == "import_clause":
            for part in child.named_children:
                if part.type == "identifier":  # default import
                    found.append((node_text(part), module))
                elif part.type == "namespace_import":
                    found.append((_module_name(module), module))
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        name = spec.child_by_field_name("name")
                        if name is not None:
                            found.append((node_text(name).strip("'\""), module))
        elif child.type == "export_clause":
            for spec in child.named_children:
                name = spec.child_by_field_name("name")
                if name is not None:
                    found.append((node_text(name), module))
    return found or [(_module_name(module), module)]


def _required(string: Node) -> Iterator[Use]:
    """`require("x")`: the destructured names (`const {a, b} = require("x")`), or the module."""
    module = _unquote(string)
    call = string.parent.parent if string.parent is not None else None
    holder = call.parent if call is not None else None
    pattern = holder.child_by_field_name("name") if holder is not None else None
    names: list[str] = []
    if holder is not None and holder.type == "variable_declarator" and pattern is not None:
        for part in pattern.named_children if pattern.type == "object_pattern" else ():
            if part.type == "shorthand_property_identifier_pattern":
                names.append(node_text(part))
            elif part.type == "pair_pattern":
                names.append(node_text(part.child_by_field_name("key")))
    for name in names or [_module_name(module)]:
        if name:
            yield string, "import", name, module


def _go_import(node: Node) -> list[tuple[str, str]]:
    path = _unquote(node.child_by_field_name("path"))
    parts = [p for p in path.split("/") if p]
    if len(parts) > 1 and _GO_MAJOR.match(parts[-1]):  # example.com/mod/v2 is package "mod"
        parts.pop()
    return [(parts[-1] if parts else "", path)]


def _java_import(node: Node) -> list[tuple[str, str]]:
    path = next((c for c in node.named_children if c.type != "asterisk"), None)
    if path is None:
        return []
    text = node_text(path)
    wildcard = any(c.type == "asterisk" for c in node.children)
    return [(text.rsplit(".", 1)[-1], text + ".*" if wildcard else text)]


def _rust_use(node: Node, prefix: str, depth: int) -> Iterator[tuple[str, str]]:
    """Flatten a use tree: `use a::{b, c::D as E}` → (b, a::b), (D, a::c::D)."""
    kind = node.type
    if depth > _MAX_USE_DEPTH:  # a hostile file nests braces thousands deep
        return
    if kind == "use_as_clause":
        aliased = node.child_by_field_name("path")
        if aliased is not None:
            yield from _rust_use(aliased, prefix, depth + 1)
    elif kind == "scoped_use_list":
        path = node_text(node.child_by_field_name("path"))
        inner = node.child_by_field_name("list")
        if inner is not None:
            yield from _rust_use(inner, f"{prefix}{path}::" if path else prefix, depth + 1)
    elif kind == "use_list":
        for child in node.named_children:
            yield from _rust_use(child, prefix, depth + 1)
    elif kind == "use_wildcard":
        path = node_text(node.named_children[0]) if node.named_child_count else ""
        full = prefix + path
        yield full.rsplit("::", 1)[-1], full + "::*"
    else:  # identifier, scoped_identifier, self, crate, super
        full = prefix + node_text(node)
        last = full.rsplit("::", 1)[-1]
        if last == "self":  # `use a::b::{self}` imports b
            full = full.removesuffix("::self")
            last = full.rsplit("::", 1)[-1]
        yield last, full
