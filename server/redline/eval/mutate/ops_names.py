"""wrong_variable: a read of a local replaced by another local of the same kind, in scope.

"The same kind" is decided in this order, so the swap is one a programmer could make by mistake
and a type checker would not always catch:
1. the declared type, when both names have one (Python annotations, TypeScript annotations, Go
   parameter and `var` types), compared as text;
2. else the type of the literal that initialises them (`i = 0`, `let n = 0`, `k := ""`);
3. else how the function uses them: both only ever indexed/iterated/measured with len() or
   `.length` (containers), or both only ever in arithmetic or comparisons (scalars).
Names whose kind cannot be told are never used. The replacement must be declared earlier in the
same function (a parameter or an earlier assignment), so it is in scope at the read.
"""

from __future__ import annotations

from tree_sitter import Node

from redline.eval.mutate.base import FN, Candidate, Source, descendants

_FUNCTIONS = {
    "python": ("function_definition",),
    "javascript": (
        "function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "method_definition",
    ),
    "go": ("function_declaration", "method_declaration", "func_literal"),
}
_LITERALS = {
    "integer": "int",
    "float": "float",
    "string": "str",
    "number": "number",
    "template_string": "string",
    "int_literal": "int",
    "float_literal": "float64",
    "interpreted_string_literal": "string",
    "raw_string_literal": "string",
}
_SKIP = frozenset({"self", "cls", "this", "_", "err", "ctx"})
_ARITH = frozenset(
    {"+", "-", "*", "/", "//", "%", "<", "<=", ">", ">=", "+=", "-=", "*=", "/=", "%="}
)


def _names(node: Node | None) -> list[Node]:
    """The identifiers a declaration target binds (a name, or a tuple/list of names)."""
    if node is None:
        return []
    if node.type == "identifier":
        return [node]
    if node.type in ("pattern_list", "tuple_pattern", "expression_list", "as_pattern_target"):
        return [c for c in node.named_children if c.type == "identifier"]
    return []


def _literal_type(value: Node | None) -> str | None:
    if value is None:
        return None
    if value.type == "expression_list" and value.named_child_count == 1:
        value = value.named_children[0]
    return _LITERALS.get(value.type)


def _declarations(src: Source, fn: Node) -> list[tuple[Node, str | None]]:
    """(name node, declared or literal type) for each parameter and local binding of `fn`."""
    out: list[tuple[Node, str | None]] = []
    params = fn.child_by_field_name("parameters")
    if params is None and fn.type == "arrow_function":
        params = fn.child_by_field_name("parameter")
    for p in params.named_children if params is not None else []:
        if p.type == "identifier":
            out.append((p, None))
            continue
        type_node = p.child_by_field_name("type")
        type_text = src.text_of(type_node).lstrip(":").strip() if type_node else None
        if p.type == "parameter_declaration":  # Go: a, b int
            out.extend((n, type_text) for n in p.children_by_field_name("name"))
            continue
        name = p.child_by_field_name("name") or p.child_by_field_name("pattern")
        if name is None and p.type == "typed_parameter":
            name = next((c for c in p.named_children if c.type == "identifier"), None)
        if name is not None and name.type == "identifier":
            out.append((name, type_text))
    for node in descendants(fn):
        if not _is(src.function_node(node), fn):
            continue
        if node.type == "assignment":  # Python, annotated or not
            type_node = node.child_by_field_name("type")
            typ = src.text_of(type_node) if type_node else None
            typ = typ or _literal_type(node.child_by_field_name("right"))
            out.extend((n, typ) for n in _names(node.child_by_field_name("left")))
        elif node.type == "variable_declarator":  # JS/TS
            type_node = node.child_by_field_name("type")
            typ = src.text_of(type_node).lstrip(":").strip() if type_node else None
            typ = typ or _literal_type(node.child_by_field_name("value"))
            out.extend((n, typ) for n in _names(node.child_by_field_name("name")))
        elif node.type == "short_var_declaration":  # Go
            left = _names(node.child_by_field_name("left"))
            typ = _literal_type(node.child_by_field_name("right")) if len(left) == 1 else None
            out.extend((n, typ) for n in left)
        elif node.type == "var_spec":
            type_node = node.child_by_field_name("type")
            typ = src.text_of(type_node) if type_node else None
            typ = typ or _literal_type(node.child_by_field_name("value"))
            out.extend((n, typ) for n in node.children_by_field_name("name"))
        elif node.type in ("for_statement", "for_in_statement", "range_clause"):
            target = node.child_by_field_name("left")
            out.extend((n, None) for n in _names(target))
    return out


def _is_read(node: Node) -> bool:
    """Whether an identifier is read here (not a callee, attribute name, keyword or target)."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "keyword_argument":
        return _is(parent.child_by_field_name("value"), node)
    if _is(parent.child_by_field_name("attribute"), node):
        return False
    if _is(parent.child_by_field_name("function"), node):
        return False
    holder = parent.parent if parent.type in ("pattern_list", "expression_list") else None
    target = holder if holder is not None else parent
    if target.type in ("assignment", "assignment_statement", "short_var_declaration"):
        return not _is(target.child_by_field_name("left"), parent if holder else node)
    return True


def _is(a: Node | None, b: Node) -> bool:
    return a is not None and a.id == b.id


def _usage(src: Source, node: Node) -> str | None:
    parent = node.parent
    if parent is None:
        return None
    if parent.type in ("subscript", "subscript_expression", "index_expression", "slice_expression"):
        first = parent.named_children[0] if parent.named_children else None
        if _is(first, node):
            return "container"
    if parent.type in ("binary_expression", "comparison_operator", "augmented_assignment"):
        op = parent.child_by_field_name("operator")
        text = src.text_of(op) if op is not None else ""
        if not text:
            text = next((src.text_of(c) for c in parent.children if not c.is_named), "")
        if text in _ARITH:
            return "scalar"
    if parent.type in ("argument_list", "arguments") and parent.parent is not None:
        fn = parent.parent.child_by_field_name("function")
        if fn is not None and src.text_of(fn) == "len":
            return "container"
    if parent.type == "member_expression" and _is(parent.child_by_field_name("object"), node):
        prop = parent.child_by_field_name("property")
        if prop is not None and src.text_of(prop) == "length":
            return "container"
    if parent.type in ("for_statement", "for_in_statement", "range_clause"):
        right = parent.child_by_field_name("right")
        if _is(right, node):
            return "container"
    return None


def wrong_variable(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    wanted = _FUNCTIONS[src.family]
    for fn in (n for n in descendants(src.tree.root_node) if n.type in wanted):
        decls = _declarations(src, fn)
        if len(decls) < 2:
            continue
        first: dict[str, int] = {}
        declared: dict[str, str | None] = {}
        decl_ids = {n.id for n, _ in decls}
        for node, typ in sorted(decls, key=lambda d: d[0].start_byte):
            name = src.text_of(node)
            if name in _SKIP:
                continue
            first.setdefault(name, node.start_byte)
            if declared.get(name) is None:
                declared[name] = typ
        reads: list[Node] = []
        usages: dict[str, set[str]] = {name: set() for name in first}
        for node in descendants(fn):
            if node.type != "identifier" or node.id in decl_ids:
                continue
            name = src.text_of(node)
            if name not in first or node.start_byte <= first[name] or not _is_read(node):
                continue
            reads.append(node)
            usage = _usage(src, node)
            if usage:
                usages[name].add(usage)

        keys = {name: _key(declared.get(name), usages[name]) for name in first}
        for node in reads:
            name = src.text_of(node)
            k = keys[name]
            if k is None:
                continue
            others = sorted(
                (first[o], o)
                for o in first
                if o != name and keys[o] == k and first[o] < node.start_byte
            )
            for _, other in others:
                kind = k.split(":", 1)[1]
                out.append(
                    src.replace(
                        node,
                        other,
                        f"`{other}` instead of `{name}` in `{FN}` (both {kind}): the wrong "
                        "variable is used",
                    )
                )
    return out


def _key(declared: str | None, usages: set[str]) -> str | None:
    """A name's kind: its declared (or literal) type, else its one kind of use, else None."""
    if declared:
        return "type:" + " ".join(declared.split())
    return "use:" + next(iter(usages)) if len(usages) == 1 else None
