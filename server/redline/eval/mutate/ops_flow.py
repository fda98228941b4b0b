"""Control-flow operators: guards, `await`, `return`, loop exits, error handling, resources.

Which languages each applies to (see APPLIES in registry.py):
- removed_null_check: Python (`if x is None` / `== None` guards), JS/TS (`== null`, `=== null`,
  `=== undefined`, `!x` guards, and `a?.b` → `a.b`), Go (`x == nil` / `x != nil` guards other
  than `err`, whose removal is swallowed_exception's business).
- removed_await: Python, JS/TS (Go has no `await`).
- missing_return: Python/JS/TS `return expr` → `expr`; Go: an early `return` in a nested block
  deleted (a Go function must still end in a return, so the last one is kept).
- early_break: all four; a `break` after a loop body's first statement, a `continue` before its
  last.
- swallowed_exception: Python `except` body → `pass`; JS/TS `catch` body → `{}`; Go an
  `if err != nil { ... }` body → `_ = err` (the error ignored, execution goes on).
- resource_not_closed: Python `with open(...) as f:` → `f = open(...)` and `x.close()` removed;
  JS/TS `x.close()`/`end()`/`release()`/`destroy()` removed; Go `defer x.Close()` removed.
"""

from __future__ import annotations

from tree_sitter import Node

from redline.eval.mutate.base import FN, Candidate, Source, short, statements
from redline.eval.mutate.ops_expr import binary

_EXITS = frozenset({"return_statement", "raise_statement", "throw_statement", "continue_statement"})


def _guard_body_exits(src: Source, if_node: Node) -> bool:
    body = if_node.child_by_field_name("consequence")
    if body is None:
        return False
    first = statements(body)[:1] if body.type in ("block", "statement_block") else [body]
    return bool(first) and first[0].type in _EXITS


def _has_alternative(node: Node) -> bool:
    if node.child_by_field_name("alternative") is not None:
        return True
    return any(c.type in ("else_clause", "elif_clause") for c in node.children)


def _null_compare(src: Source, cond: Node) -> str | None:
    """The tested name when `cond` compares something with None/null/undefined/nil."""
    parts = binary(src, cond)
    if parts is None:
        return None
    left, op, right, _, _ = parts
    nulls = {"python": ("None",), "javascript": ("null", "undefined"), "go": ("nil",)}
    ops = {"python": ("is", "=="), "javascript": ("==", "==="), "go": ("==", "!=")}
    if op not in ops[src.family]:
        return None
    if src.text_of(right) in nulls[src.family]:
        return src.text_of(left)
    if src.text_of(left) in nulls[src.family]:
        return src.text_of(right)
    return None


def removed_null_check(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    for node in src.of_type("if_statement"):
        cond = node.child_by_field_name("condition")
        if cond is None or _has_alternative(node) or node.child_by_field_name("initializer"):
            continue
        if cond.type == "parenthesized_expression" and cond.named_child_count == 1:
            cond = cond.named_children[0]
        name = _null_compare(src, cond)
        if name is None and src.family == "javascript" and cond.type == "unary_expression":
            arg = cond.child_by_field_name("argument")
            negated = src.text_of(cond).startswith("!")
            if negated and arg is not None and arg.type in ("identifier", "member_expression"):
                name = src.text_of(arg)
        if name is None or (src.family == "go" and name.endswith("err")):
            continue
        if src.family != "go" and not _guard_body_exits(src, node):
            continue
        cand = src.delete_lines(
            node,
            f"the check `{short(src.text_of(cond))}` in `{FN}` is removed: `{short(name, 30)}` "
            "is used even when it is missing",
        )
        if cand is not None:
            out.append(cand)
    if src.family == "javascript":
        for node in src.of_type("optional_chain"):
            parent = node.parent
            owner = src.text_of(parent) if parent is not None else "?."
            out.append(
                Candidate(
                    node.start_byte,
                    node.end_byte,
                    ".",
                    f"`?.` replaced by `.` in `{short(owner)}` in `{FN}`: throws when the "
                    "object is null or undefined",
                    (owner, owner.replace("?.", ".", 1)),
                )
            )
    return out


def removed_await(src: Source) -> list[Candidate]:
    if src.family == "go":
        return []
    out: list[Candidate] = []
    for node in src.of_type("await", "await_expression"):
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            continue
        new = src.text_of(inner[0])
        out.append(
            src.replace(
                node,
                new,
                f"`await` dropped before `{short(new, 40)}` in `{FN}`: the code gets a "
                "pending coroutine/promise instead of its result",
            )
        )
    return out


def missing_return(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    for node in src.of_type("return_statement"):
        values = [c for c in node.named_children if c.type != "comment"]
        if not values:
            continue
        if src.family == "go":
            block = node.parent.parent if node.parent is not None else None
            if block is None or block.parent is None or block.parent.type != "if_statement":
                continue  # only an early return in an `if`: the function still ends in one
            cand = src.delete_lines(
                node,
                f"the early `{short(src.text_of(node))}` in `{FN}` is missing: execution "
                "falls through to the code after the `if`",
            )
            if cand is not None:
                out.append(cand)
            continue
        value = src.data[values[0].start_byte : values[-1].end_byte].decode()
        semicolon = ";" if src.text_of(node).rstrip().endswith(";") else ""
        out.append(
            src.replace(
                node,
                value + semicolon,
                f"`return` missing before `{short(value, 40)}` in `{FN}`: the value is "
                "computed and dropped, the function returns nothing",
            )
        )
    return out


_LOOPS = ("for_statement", "for_in_statement", "while_statement", "do_statement")


def early_break(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    semicolon = ";" if src.family == "javascript" else ""
    for loop in src.of_type(*_LOOPS):
        body = loop.child_by_field_name("body")
        if body is None or body.type not in ("block", "statement_block"):
            continue
        stmts = statements(body)
        if len(stmts) < 2:
            continue
        out.append(
            src.insert_before(
                stmts[1],
                f"break{semicolon}",
                f"a `break` after `{short(src.text_of(stmts[0]), 40)}` in the loop of `{FN}`: "
                "the loop stops after its first iteration",
            )
        )
        out.append(
            src.insert_before(
                stmts[-1],
                f"continue{semicolon}",
                f"a `continue` before `{short(src.text_of(stmts[-1]), 40)}` in the loop of "
                f"`{FN}`: that statement never runs",
            )
        )
    return out


def swallowed_exception(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    if src.family == "python":
        for clause in src.of_type("except_clause"):
            blocks = [c for c in clause.named_children if c.type == "block"]
            if not blocks:
                continue
            handler = statements(blocks[-1])
            if not handler:
                continue
            caught = src.text_of(clause).split(":", 1)[0]
            # From the first statement to the end of the last: a block's own range can reach
            # into the comments and indentation after it.
            out.append(
                Candidate(
                    handler[0].start_byte,
                    handler[-1].end_byte,
                    "pass",
                    f"`{short(caught, 40)}` in `{FN}` swallows the error: its handler is "
                    "replaced by `pass`",
                )
            )
    elif src.family == "javascript":
        for clause in src.of_type("catch_clause"):
            body = clause.child_by_field_name("body")
            if body is not None:
                out.append(
                    src.replace(
                        body,
                        "{}",
                        f"the `catch` in `{FN}` swallows the error: its body is emptied",
                    )
                )
    else:
        for node in src.of_type("if_statement"):
            cond = node.child_by_field_name("condition")
            body = node.child_by_field_name("consequence")
            parts = binary(src, cond) if cond is not None else None
            if parts is None or body is None or _has_alternative(node):
                continue
            left, op, right, _, _ = parts
            name = src.text_of(left)
            if op != "!=" or src.text_of(right) != "nil" or not name.lower().endswith("err"):
                continue
            indent = src.indent(node)
            if indent is None:
                continue
            new = f"{{\n{indent}\t_ = {name}\n{indent}}}"
            out.append(
                src.replace(
                    body,
                    new,
                    f"the error `{name}` in `{FN}` is ignored (`_ = {name}`): execution goes "
                    "on as if the call had succeeded",
                )
            )
    return out


_CLOSERS = frozenset({"close", "Close", "end", "release", "destroy", "closeSync"})


def _close_call(src: Source, stmt: Node) -> str | None:
    """The receiver when `stmt` is `x.close()` (possibly awaited or deferred)."""
    inner = [c for c in stmt.named_children if c.type != "comment"]
    if len(inner) != 1:
        return None
    call = inner[0]
    if call.type in ("await", "await_expression"):
        call = call.named_children[0] if call.named_child_count else call
    if call.type not in ("call", "call_expression"):
        return None
    fn = call.child_by_field_name("function")
    if fn is None or fn.type not in ("attribute", "member_expression", "selector_expression"):
        return None
    attr = (
        fn.child_by_field_name("attribute")
        or fn.child_by_field_name("property")
        or fn.child_by_field_name("field")
    )
    obj = fn.child_by_field_name("object") or fn.child_by_field_name("operand")
    if attr is None or obj is None or src.text_of(attr) not in _CLOSERS:
        return None
    return src.text_of(obj)


def resource_not_closed(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    for stmt in src.of_type("expression_statement", "defer_statement"):
        receiver = _close_call(src, stmt)
        if receiver is None:
            continue
        cand = src.delete_lines(
            stmt,
            f"`{short(src.text_of(stmt), 40)}` removed from `{FN}`: `{short(receiver, 30)}` "
            "is never closed",
        )
        if cand is not None:
            out.append(cand)
    if src.family == "python":
        out.extend(c for c in map(lambda n: _unwith(src, n), src.of_type("with_statement")) if c)
    return out


def _unwith(src: Source, node: Node) -> Candidate | None:
    """`with open(p) as f:` + body → `f = open(p)` + the body one level out."""
    clause = next((c for c in node.named_children if c.type == "with_clause"), None)
    body = node.child_by_field_name("body")
    indent = src.indent(node)
    if clause is None or body is None or indent is None or clause.named_child_count != 1:
        return None
    value = clause.named_children[0].child_by_field_name("value")
    if value is None or value.type != "as_pattern":
        return None
    call = value.named_children[0] if value.named_children else None
    alias = value.child_by_field_name("alias")
    if call is None or call.type != "call" or alias is None:
        return None
    inner = src.indent(body)
    if inner is None or not inner.startswith(indent) or inner == indent:
        return None
    lines = src.data[src.line_start(body.start_byte) : src.line_end(node.end_byte)].decode()
    dedented = "".join(
        indent + line[len(inner) :] if line.startswith(inner) else line
        for line in lines.splitlines(keepends=True)
    )
    header = f"{indent}{src.text_of(alias)} = {src.text_of(call)}\n"
    start = src.line_start(node.start_byte)
    end = src.line_end(node.end_byte)
    return Candidate(
        start,
        end,
        header + dedented,
        f"`{short(src.text_of(call), 40)}` in `{FN}` is no longer in a `with`: "
        f"`{src.text_of(alias)}` is never closed",
        (src.text_of(node), header.strip()),
    )
