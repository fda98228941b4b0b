"""Expression operators: bounds, comparisons, boolean operators, conditions, constants and
argument order. All four languages (Python, JavaScript, TypeScript, Go).

Descriptions name the enclosing function with `FN`, filled in by the generator.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

from tree_sitter import Node

from redline.eval.mutate.base import FN, Candidate, Source, short

_RELATIONAL = ("<", "<=", ">", ">=")
_STRICTNESS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
_FLIPPED = {
    "<": ">",
    ">": "<",
    "<=": ">=",
    ">=": "<=",
    "==": "!=",
    "!=": "==",
    "===": "!==",
    "!==": "===",
    "is": "is not",
    "is not": "is",
    "in": "not in",
    "not in": "in",
}
# Operands that need no parentheses under a prefix `not`/`!` or before `+ 1`.
_ATOMS = frozenset(
    {
        "identifier",
        "call",
        "call_expression",
        "attribute",
        "member_expression",
        "selector_expression",
        "subscript",
        "subscript_expression",
        "index_expression",
        "parenthesized_expression",
        "integer",
        "number",
        "int_literal",
        "true",
        "false",
        "none",
        "null",
    }
)


def binary(src: Source, node: Node) -> tuple[Node, str, Node, int, int] | None:
    """(left, operator text, right, operator start, operator end) of a two-operand comparison,
    boolean or binary node; None for anything else (chained comparisons included)."""
    if node.type not in ("comparison_operator", "boolean_operator", "binary_expression"):
        return None
    operands = [c for c in node.named_children if c.type != "comment"]
    if len(operands) != 2:
        return None
    left, right = operands
    op = src.data[left.end_byte : right.start_byte].decode().strip()
    if not op:
        return None
    start = src.data.index(op.split()[0].encode(), left.end_byte)
    return left, " ".join(op.split()), right, start, start + len(op)


def _swap_op(src: Source, node: Node, table: dict[str, str]) -> tuple[str, str, str] | None:
    parts = binary(src, node)
    if parts is None or parts[1] not in table:
        return None
    _, op, _, start, end = parts
    if src.family != "python" and op[0].isalpha():
        return None  # `in`/`is`/`and`/`or` are Python's; JS's `in`/`instanceof` stay
    new_op = table[op]
    text = src.text_of(node)
    rel = start - node.start_byte
    new = text[:rel] + new_op + text[rel + (end - start) :]
    return op, new_op, new


def _plus_one(src: Source, node: Node, spaced: bool = True) -> str:
    text = src.text_of(node)
    if node.type in ("integer", "number", "int_literal") and text.isdigit():
        return str(int(text) + 1)
    parts = binary(src, node) if node.type == "binary_expression" else None
    additive = parts is not None and parts[1] in ("+", "-")
    inner = text if node.type in _ATOMS or additive else f"({text})"
    return f"{inner} + 1" if spaced else f"{inner}+1"


def _comparisons(src: Source) -> list[Node]:
    return [
        n
        for n in src.of_type("comparison_operator", "binary_expression")
        if binary(src, n) is not None
    ]


def _swaps(src: Source, nodes: Iterable[Node], table: dict[str, str], why: str) -> list[Candidate]:
    """One candidate per node whose operator `table` swaps: "`new` instead of `old` …: why"."""
    out: list[Candidate] = []
    for node in nodes:
        swapped = _swap_op(src, node, table)
        if swapped is not None:
            op, new_op, new = swapped
            where = f"`{short(src.text_of(node))}` in `{FN}`"
            out.append(src.replace(node, new, f"`{new_op}` instead of `{op}` in {where}: {why}"))
    return out


def off_by_one(src: Source) -> list[Candidate]:
    out = _swaps(src, _comparisons(src), _STRICTNESS, "the bound is off by one")
    out.extend(_slice_ends(src))
    return out


def _slice_ends(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    ends: list[tuple[Node, str]] = []
    if src.family == "python":
        for node in src.of_type("slice"):
            colons = [c for c in node.children if c.type == ":"]
            after = [c for c in node.named_children if colons and c.start_byte > colons[0].end_byte]
            if after and (len(colons) < 2 or after[0].end_byte <= colons[1].start_byte):
                ends.append((after[0], "slice end"))
        for node in src.of_type("call"):
            args = node.child_by_field_name("arguments")
            if src.text_of(node.child_by_field_name("function") or node) != "range" or not args:
                continue
            positional = [a for a in args.named_children if a.type != "comment"]
            if 1 <= len(positional) <= 2 and all(a.type not in _KEYWORDS for a in positional):
                ends.append((positional[-1], "range() stop"))
    elif src.family == "javascript":
        for node in src.of_type("call_expression"):
            fn = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if fn is None or args is None or fn.type != "member_expression":
                continue
            if src.text_of(fn.child_by_field_name("property") or fn) in ("slice", "substring"):
                positional = [a for a in args.named_children if a.type != "comment"]
                if len(positional) == 2:
                    ends.append((positional[1], "slice end"))
    elif src.family == "go":
        for node in src.of_type("slice_expression"):
            end = node.child_by_field_name("end")
            if end is not None:
                ends.append((end, "slice end"))
    for end, what in ends:
        new = _plus_one(src, end, spaced=src.family != "go")
        out.append(
            src.replace(
                end,
                new,
                f"{what} `{short(src.text_of(end))}` moved to `{new}` in `{FN}`: "
                "takes one element too many",
            )
        )
    return out


_KEYWORDS = ("keyword_argument", "list_splat", "dictionary_splat", "spread_element")


def flipped_comparison(src: Source) -> list[Candidate]:
    return _swaps(src, _comparisons(src), _FLIPPED, "the comparison is reversed")


def and_or_swap(src: Source) -> list[Candidate]:
    table = {"and": "or", "or": "and", "&&": "||", "||": "&&"}
    nodes = src.of_type("boolean_operator", "binary_expression")
    return _swaps(src, nodes, table, "the condition combines its parts the wrong way")


def _negation(src: Source, cond: Node) -> str:
    text = src.text_of(cond)
    if src.family == "python":
        if cond.type == "not_operator" and (arg := cond.child_by_field_name("argument")):
            return src.text_of(arg)
        return f"not {text}" if cond.type in _ATOMS else f"not ({text})"
    if cond.type == "unary_expression" and src.text_of(cond).startswith("!"):
        arg = cond.child_by_field_name("argument") or cond.child_by_field_name("operand")
        if arg is not None:
            return src.text_of(arg)
    return f"!{text}" if cond.type in _ATOMS else f"!({text})"


def negated_condition(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    for node in src.of_type("if_statement", "elif_clause", "while_statement"):
        cond = node.child_by_field_name("condition")
        if cond is None:
            continue
        if cond.type == "parenthesized_expression" and src.family == "javascript":
            inner = [c for c in cond.named_children if c.type != "comment"]
            if len(inner) != 1:
                continue
            cond = inner[0]
        new = _negation(src, cond)
        keyword = "while" if node.type == "while_statement" else "if"
        out.append(
            src.replace(
                cond,
                new,
                f"the `{keyword}` condition `{short(src.text_of(cond))}` in `{FN}` is negated "
                f"(`{short(new)}`): the branch runs exactly when it should not",
            )
        )
    return out


_NUMBERS = ("integer", "float", "number", "int_literal", "float_literal")
_BOOLEANS = {"True": "False", "False": "True", "true": "false", "false": "true"}


def _changed_number(text: str) -> str | None:
    plain = text.replace("_", "")
    if plain.isdigit():
        n = int(plain)
        return str(n + 1) if n < 10 else str(n * 10)
    try:
        value = float(plain)
    except ValueError:
        return None
    return repr(value * 10) if value else "1.0"


def wrong_constant(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    for node in src.of_type(*_NUMBERS, "true", "false"):
        text = src.text_of(node)
        new = _BOOLEANS.get(text) if node.type in ("true", "false") else _changed_number(text)
        if new is None:
            continue
        out.append(
            src.replace(
                node, new, f"the constant `{text}` changed to `{new}` in `{FN}`: a wrong value"
            )
        )
    return out


# Calls whose argument order does not matter (or that only print): swapping is no bug.
_COMMUTATIVE = frozenset(
    {
        "print",
        "min",
        "max",
        "Math.min",
        "Math.max",
        "console.log",
        "console.error",
        "fmt.Println",
        "fmt.Print",
        "log.Println",
        "append",
        "set",
        "zip",
    }
)


def swapped_arguments(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    for node in src.of_type("call", "call_expression"):
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is None or args is None or src.text_of(fn) in _COMMUTATIVE:
            continue
        positional = []
        for arg in args.named_children:
            if arg.type in _KEYWORDS or arg.type == "variadic_argument":
                break
            if arg.type != "comment":
                positional.append(arg)
        for a, b in pairwise(positional):
            ta, tb = src.text_of(a), src.text_of(b)
            if ta == tb:
                continue
            between = src.data[a.end_byte : b.start_byte].decode()
            new = tb + between + ta
            out.append(
                Candidate(
                    a.start_byte,
                    b.end_byte,
                    new,
                    f"the arguments `{short(ta, 30)}` and `{short(tb, 30)}` of "
                    f"`{short(src.text_of(fn), 40)}` are swapped in `{FN}`",
                )
            )
    return out
