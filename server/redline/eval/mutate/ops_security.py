"""injection: a parameterised query or an argument-vector command turned into one string built
from the values, so a parameter can inject SQL or shell syntax.

- SQL, every language: `cursor.execute(sql, (x,))` / `db.query(sql, [x])` /
  `db.QueryRow(sql, x)` → the placeholders (`?`, `%s`, `$1`) replaced by the values, by
  concatenation (Python, Go) or a template literal (JS/TS).
- Shell: Python `subprocess.run([...])` → `subprocess.run("cmd " + x, shell=True)`; JS/TS
  `execFile(cmd, [...])` → `exec(`cmd ${x}`)`; Go `exec.Command("ls", dir)` →
  `exec.Command("sh", "-c", "ls " + dir)`.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from redline.eval.mutate.base import FN, Candidate, Source, short

_PLACEHOLDER = re.compile(r"\?|%s|\$\d+")
_SQL_METHODS = {
    "python": ("execute", "executemany"),
    "javascript": ("query", "execute", "run", "all", "get"),
    "go": ("Query", "QueryRow", "Exec", "QueryContext", "QueryRowContext", "ExecContext"),
}
_SUBPROCESS = ("run", "call", "check_call", "check_output", "Popen")
_EXEC_FILE = {"execFile": "exec", "execFileSync": "execSync"}


def _literal(src: Source, node: Node) -> tuple[str, str] | None:
    """(quote, content) of a plain one-line string literal (no prefix, no interpolation)."""
    text = src.text_of(node)
    if node.type not in ("string", "interpreted_string_literal") or "\n" in text:
        return None
    if len(text) < 2 or text[0] not in "\"'" or text[-1] != text[0] or text[:3] == text[0] * 3:
        return None
    if node.type == "string" and any(c.type == "interpolation" for c in node.named_children):
        return None
    return text[0], text[1:-1]


def _concat(pieces: list[tuple[bool, str]], quote: str, to_str: str) -> str:
    """`"lit" + expr + "lit"` from (is_literal, text) pieces; `to_str` wraps non-names."""
    merged: list[tuple[bool, str]] = []
    for is_lit, text in pieces:
        if is_lit and merged and merged[-1][0]:
            merged[-1] = (True, merged[-1][1] + text)
        elif not is_lit or text:
            merged.append((is_lit, text))
    parts = []
    for is_lit, text in merged:
        if is_lit:
            parts.append(f"{quote}{text}{quote}")
        else:
            parts.append(text if text.isidentifier() or not to_str else f"{to_str}({text})")
    return " + ".join(parts)


def _template(pieces: list[tuple[bool, str]]) -> str:
    body = "".join(t.replace("`", "\\`") if lit else "${" + t + "}" for lit, t in pieces)
    return f"`{body}`"


def _callee(src: Source, call: Node) -> tuple[str, str] | None:
    """(object text, method name) of `obj.method(...)`, or ("", name) for a plain call."""
    fn = call.child_by_field_name("function")
    if fn is None:
        return None
    if fn.type == "identifier":
        return "", src.text_of(fn)
    attr = (
        fn.child_by_field_name("attribute")
        or fn.child_by_field_name("property")
        or fn.child_by_field_name("field")
    )
    obj = fn.child_by_field_name("object") or fn.child_by_field_name("operand")
    if attr is None or obj is None:
        return None
    return src.text_of(obj), src.text_of(attr)


def _args(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    return [a for a in args.named_children if a.type != "comment"] if args is not None else []


def _string_params(src: Source, call: Node) -> set[str]:
    """Go: names declared `string` in the enclosing function's parameters."""
    fn = src.function_node(call)
    params = fn.child_by_field_name("parameters") if fn is not None else None
    out: set[str] = set()
    for p in params.named_children if params is not None else []:
        type_node = p.child_by_field_name("type")
        if type_node is not None and src.text_of(type_node) == "string":
            out.update(src.text_of(n) for n in p.children_by_field_name("name"))
    return out


def _sql(src: Source, call: Node, callee: tuple[str, str]) -> Candidate | None:
    args = _args(call)
    if callee[1] not in _SQL_METHODS[src.family] or not callee[0] or len(args) < 2:
        return None
    if src.family == "go":
        first = 1 if callee[1].endswith("Context") else 0
        if len(args) < first + 2 or any(a.type == "variadic_argument" for a in args):
            return None
        sql, values = args[first], args[first + 1 :]
        replaced_end = args[-1].end_byte
    else:
        sql, container = args[0], args[1]
        if container.type not in ("tuple", "list", "array") or len(args) != 2:
            return None
        values = [v for v in container.named_children if v.type != "comment"]
        replaced_end = container.end_byte
    lit = _literal(src, sql)
    texts = [src.text_of(v) for v in values]
    if not texts:
        return None
    if lit is not None:
        quote, content = lit
        chunks = _PLACEHOLDER.split(content)
        if len(chunks) != len(texts) + 1:
            return None
        pieces: list[tuple[bool, str]] = [(True, chunks[0])]
        for value, chunk in zip(texts, chunks[1:], strict=True):
            pieces += [(False, value), (True, chunk)]
    elif len(texts) == 1:
        quote, pieces = '"', [(False, src.text_of(sql)), (False, texts[0])]
    else:
        return None
    if src.family == "javascript":
        new = _template(pieces) if lit is not None else " + ".join(t for _, t in pieces)
    elif src.family == "go":
        strings = _string_params(src, call)
        pieces = [(lit_, t if lit_ or t in strings else f"fmt.Sprint({t})") for lit_, t in pieces]
        new = _concat(pieces, quote, "")
    else:
        new = _concat(pieces, quote, "str")
    return Candidate(
        sql.start_byte,
        replaced_end,
        new,
        f"the query in `{FN}` is built from `{short(', '.join(texts), 30)}` by string "
        f"concatenation instead of parameters: SQL injection",
    )


def _shell_pieces(src: Source, args: list[Node]) -> list[tuple[bool, str]] | None:
    pieces: list[tuple[bool, str]] = []
    for i, arg in enumerate(args):
        sep = " " if i else ""
        lit = _literal(src, arg)
        if lit is not None:
            if "\\" in lit[1] or "'" in lit[1] or '"' in lit[1]:
                return None
            pieces.append((True, sep + lit[1]))
        elif arg.type in ("spread_element", "list_splat", "variadic_argument"):
            return None
        else:
            pieces += [(True, sep), (False, src.text_of(arg))]
    return pieces if any(not lit for lit, _ in pieces) else None


def _shell(src: Source, call: Node, callee: tuple[str, str]) -> Candidate | None:
    args = _args(call)
    if not args:
        return None
    describe = (
        f"the command in `{FN}` is one shell string built by concatenation from "
        "its arguments: shell injection"
    )
    if src.family == "python" and callee in (("subprocess", n) for n in _SUBPROCESS):
        if args[0].type != "list" or "shell=" in src.text_of(call):
            return None
        pieces = _shell_pieces(src, [a for a in args[0].named_children if a.type != "comment"])
        if pieces is None:
            return None
        new = _concat(pieces, '"', "str") + ", shell=True"
        return Candidate(args[0].start_byte, args[0].end_byte, new, describe)
    if src.family == "javascript" and callee[1] in _EXEC_FILE and len(args) >= 2:
        if args[1].type != "array":
            return None
        items = [a for a in args[1].named_children if a.type != "comment"]
        pieces = _shell_pieces(src, [args[0], *items])
        if pieces is None:
            return None
        fn = call.child_by_field_name("function")
        assert fn is not None
        name_end = fn.end_byte
        between = src.data[name_end : args[0].start_byte].decode()
        prefix = f"{callee[0]}." if callee[0] else ""
        new = f"{prefix}{_EXEC_FILE[callee[1]]}{between}{_template(pieces)}"
        return Candidate(fn.start_byte, args[1].end_byte, new, describe)
    if src.family == "go" and callee == ("exec", "Command") and len(args) >= 2:
        if _literal(src, args[0]) is None:
            return None
        pieces = _shell_pieces(src, args)
        if pieces is None:
            return None
        new = '"sh", "-c", ' + _concat(pieces, '"', "")
        return Candidate(args[0].start_byte, args[-1].end_byte, new, describe)
    return None


def injection(src: Source) -> list[Candidate]:
    out: list[Candidate] = []
    for call in src.of_type("call", "call_expression"):
        callee = _callee(src, call)
        if callee is None:
            continue
        cand = _sql(src, call, callee) or _shell(src, call, callee)
        if cand is not None:
            out.append(cand)
    return out
