"""caller_contract: a function's contract changed where a caller in ANOTHER file relies on it.

The diff touches only the callee, and each edit is plausible on its own; the bug shows only
with the caller's code: a returned tuple's order swapped where a caller unpacks it, a path
that now returns None or raises where a caller uses the value, a default changed where a
caller leaves the argument out. A reviewer that sees only the changed function cannot tell.

Python only: callers are found through imports (`from pkg.mod import f [as g]` then `g(...)`,
`import pkg.mod [as m]` then `m.f(...)`), so a call is the callee's for sure, not another
function of the same name; methods (called through objects of unknown type) are left out.
The corpus's other files come from `Project`, which the generator builds once per run.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from redline.eval.mutate.base import FN, Candidate, Source, short
from redline.eval.truth import CallSite

MAX_CALLERS = 5  # call sites recorded per planted bug
_BUILTINS = frozenset(dir(builtins))
_LITERALS = frozenset({"integer", "float", "true", "false", "string"})
# Values a caller testing the result for truth cannot tell from None: not a contract change.
_FALSY = frozenset({"None", "False", "0", "''", '""', "[]", "{}", "()"})


@dataclass(frozen=True)
class Use:
    """One call of a callee in another file, and how the caller relies on its result."""

    site: CallSite
    unpacks: int  # the number of names the result is unpacked into (0: not unpacked)
    uses_value: bool  # the result is used (assigned, unpacked, indexed, passed on, ...)
    in_try: bool  # the call is inside a try block (an exception would be handled)
    positional: int  # positional arguments given
    keywords: frozenset[str]  # keyword arguments given
    splat: bool  # *args or **kwargs given: which parameters are covered is unknown


@dataclass
class Project:
    """Every Python file of a corpus: where each module's top-level functions are called from
    other files (through imports), with how each call relies on the result."""

    texts: dict[str, str] = field(default_factory=dict)
    uses: dict[tuple[str, str], list[Use]] = field(default_factory=dict)  # (path, name) → uses

    @classmethod
    def of(cls, sources: Iterable[Source]) -> Project:
        python = [s for s in sources if s.family == "python"]
        project = cls(texts={s.path: s.text for s in python})
        modules = {_module(s.path): s.path for s in python}
        for src in python:
            for module, name, call in _imported_calls(src):
                callee = _resolve(modules, module)
                if callee is None or callee == src.path or name in _BUILTINS:
                    continue
                project.uses.setdefault((callee, name), []).append(_use(src, call))
        return project

    def callers(self, path: str, name: str) -> list[Use]:
        return self.uses.get((path, name), [])


def _module(path: str) -> str:
    dotted = path.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def _resolve(modules: dict[str, str], module: str) -> str | None:
    """The corpus file a module name (as imported: absolute, or relative with dots) names."""
    bare = module.lstrip(".")
    if not bare:
        return None
    if bare in modules:
        return modules[bare]
    found = [p for m, p in modules.items() if m.endswith("." + bare)]
    return found[0] if len(found) == 1 else None


def _aliased(src: Source, item: Node) -> tuple[str, str] | None:
    """(real name, local alias) of an `x as y` import item."""
    real, alias = item.child_by_field_name("name"), item.child_by_field_name("alias")
    if real is None or alias is None:
        return None
    return src.text_of(real), src.text_of(alias)


def _imported_calls(src: Source) -> Iterator[tuple[str, str, Node]]:
    """(module, function name, call node) of every call in `src` of a function it imported."""
    names: dict[str, tuple[str, str]] = {}  # local name → (module, function)
    aliases: dict[str, str] = {}  # local module name → module
    root = src.tree.root_node
    for node in root.children:
        if node.type == "import_from_statement":
            mod = node.child_by_field_name("module_name")
            if mod is None:
                continue
            module = src.text_of(mod)
            for item in node.children_by_field_name("name"):
                if item.type == "aliased_import":
                    pair = _aliased(src, item)
                    if pair is not None:
                        names[pair[1]] = (module, pair[0])
                else:
                    names[src.text_of(item)] = (module, src.text_of(item))
        elif node.type == "import_statement":
            for item in node.children_by_field_name("name"):
                if item.type == "aliased_import":
                    pair = _aliased(src, item)
                    if pair is not None:
                        aliases[pair[1]] = pair[0]
                else:
                    aliases[src.text_of(item)] = src.text_of(item)
    for call in src.of_type("call"):
        fn = call.child_by_field_name("function")
        if fn is None:
            continue
        if fn.type == "identifier" and src.text_of(fn) in names:
            module, name = names[src.text_of(fn)]
            yield module, name, call
        elif fn.type == "attribute":
            obj, attr = fn.child_by_field_name("object"), fn.child_by_field_name("attribute")
            if obj is not None and attr is not None and src.text_of(obj) in aliases:
                yield aliases[src.text_of(obj)], src.text_of(attr), call


def _use(src: Source, call: Node) -> Use:
    line = call.start_point[0] + 1
    code = src.text.splitlines()[line - 1].strip() if src.text else ""
    site = CallSite(src.path, line, code, src.function_name(call.start_byte) or "")
    parent = call.parent
    unpacks = 0
    uses_value = parent is not None and parent.type not in ("expression_statement",)
    if parent is not None and parent.type == "assignment":
        left = parent.child_by_field_name("left")
        if left is not None and left.type in ("pattern_list", "tuple_pattern"):
            unpacks = len([c for c in left.named_children if c.type == "identifier"])
            if unpacks != left.named_child_count:
                unpacks = 0  # a starred or nested target: the shape is not simply n names
    in_try = False
    node = call.parent
    while node is not None and node.type not in ("function_definition", "module"):
        if node.type == "block" and node.parent is not None and node.parent.type == "try_statement":
            in_try = True
        node = node.parent
    positional = 0
    keywords: set[str] = set()
    splat = False
    args = call.child_by_field_name("arguments")
    for arg in args.named_children if args is not None else []:
        if arg.type == "keyword_argument":
            name = arg.child_by_field_name("name")
            if name is not None:
                keywords.add(src.text_of(name))
        elif arg.type in ("list_splat", "dictionary_splat"):
            splat = True
        elif arg.type != "comment":
            positional += 1
    return Use(site, unpacks, uses_value, in_try, positional, frozenset(keywords), splat)


def _sites(uses: Iterable[Use]) -> tuple[CallSite, ...]:
    return tuple(u.site for u in uses)[:MAX_CALLERS]


def _where(sites: tuple[CallSite, ...]) -> str:
    first = sites[0]
    return f"`{short(first.code, 50)}` in {first.path}:{first.line}"


def caller_contract(src: Source) -> list[Candidate]:
    project: Project | None = src.project
    if src.family != "python" or project is None:
        return []
    out: list[Candidate] = []
    for fn in src.tree.root_node.children:
        node = fn
        if node.type == "decorated_definition":
            inner = node.child_by_field_name("definition")
            node = inner if inner is not None else node
        if node.type != "function_definition":
            continue
        name_node = node.child_by_field_name("name")
        if name_node is None:
            continue
        uses = project.callers(src.path, src.text_of(name_node))
        if uses:
            out += _swapped_tuple(src, node, uses)
            out += _value_path(src, node, uses)
            out += _changed_default(src, node, uses)
    return out


def _returns(node: Node) -> Iterator[Node]:
    """The function's own return statements (not those of nested functions or lambdas)."""
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        if current.type in ("function_definition", "lambda", "class_definition"):
            continue
        if current.type == "return_statement":
            yield current
        stack.extend(reversed(current.children))


def _swapped_tuple(src: Source, fn: Node, uses: list[Use]) -> list[Candidate]:
    out = []
    for ret in _returns(fn):
        value = ret.named_children[0] if ret.named_children else None
        if value is None or value.type not in ("expression_list", "tuple"):
            continue
        items = [c for c in value.named_children if c.type != "comment"]
        relying = [u for u in uses if u.unpacks == len(items) >= 2]
        if not relying or len(items) < 2:
            continue
        first, second = items[0], items[1]
        a, b = src.text_of(first), src.text_of(second)
        if a == b or any(c.type in ("list_splat", "parenthesized_list_splat") for c in items):
            continue
        between = src.data[first.end_byte : second.start_byte].decode("utf-8", errors="replace")
        sites = _sites(relying)
        out.append(
            Candidate(
                first.start_byte,
                second.end_byte,
                b + between + a,
                f"`{FN}` now returns `{short(b, 20)}` and `{short(a, 20)}` in the other order: "
                f"its callers unpack the result in the old order ({_where(sites)})",
                callers=sites,
            )
        )
    return out


def _value_path(src: Source, fn: Node, uses: list[Use]) -> list[Candidate]:
    """A return inside a branch now returns None, or raises; a caller uses the value."""
    relying = [u for u in uses if u.uses_value]
    if not relying:
        return []
    out = []
    for ret in _returns(fn):
        value = ret.named_children[0] if ret.named_children else None
        if value is None or src.text_of(value) == "None" or not _in_branch(ret, fn):
            continue
        sites = _sites(relying)
        if src.text_of(value) not in _FALSY:
            out.append(
                src.replace(
                    ret,
                    "return None",
                    f"`{FN}` now returns None instead of `{short(src.text_of(value), 30)}` on "
                    f"one path: its callers use the value ({_where(sites)})",
                    callers=sites,
                )
            )
        unguarded = [u for u in relying if not u.in_try]
        if unguarded:
            sites = _sites(unguarded)
            message = f"{short(src.text_of(value), 30)} is not available"
            out.append(
                src.replace(
                    ret,
                    f"raise LookupError({message!r})",
                    f"`{FN}` now raises LookupError where it returned "
                    f"`{short(src.text_of(value), 30)}`: its callers do not handle it "
                    f"({_where(sites)})",
                    callers=sites,
                )
            )
    return out[:4]


def _in_branch(ret: Node, fn: Node) -> bool:
    node = ret.parent
    while node is not None and node != fn:
        if node.type in ("if_statement", "elif_clause", "else_clause", "for_statement"):
            return True
        node = node.parent
    return False


def _changed_default(src: Source, fn: Node, uses: list[Use]) -> list[Candidate]:
    params = fn.child_by_field_name("parameters")
    if params is None:
        return []
    out = []
    position = 0
    keyword_only = False
    for param in params.named_children:
        if param.type in ("keyword_separator", "list_splat_pattern"):
            keyword_only = True
            continue
        if param.type in ("dictionary_splat_pattern", "positional_separator", "comment"):
            continue
        index, position = position, position + 1
        if param.type not in ("default_parameter", "typed_default_parameter"):
            continue
        name_node, value = param.child_by_field_name("name"), param.child_by_field_name("value")
        if name_node is None or value is None or value.type not in _LITERALS:
            continue
        name = src.text_of(name_node)
        if index == 0 and name in ("self", "cls"):
            continue
        relying = [
            u
            for u in uses
            if not u.splat and name not in u.keywords and (keyword_only or u.positional <= index)
        ]
        new = _other_literal(src.text_of(value), value.type)
        if not relying or new is None:
            continue
        sites = _sites(relying)
        out.append(
            src.replace(
                value,
                new,
                f"the default of `{name}` in `{FN}` changed from `{short(src.text_of(value), 20)}` "
                f"to `{short(new, 20)}`: callers that leave it out get the new behaviour "
                f"({_where(sites)})",
                callers=sites,
            )
        )
    return out


def _other_literal(text: str, kind: str) -> str | None:
    if kind == "true":
        return "False"
    if kind == "false":
        return "True"
    if kind == "integer":
        try:
            n = int(text, 0)
        except ValueError:
            return None
        return str(n * 2) if n else "1"
    if kind == "float":
        try:
            x = float(text)
        except ValueError:
            return None
        return repr(x * 2) if x else "1.0"
    if kind == "string":
        if text[:1] in "rRbBuUfF" or text.startswith(('"""', "'''")):
            return None  # prefixes and docstring-like literals: left alone
        quote = text[0]
        body = text[1:-1]
        return f"{quote}{quote}" if body else f"{quote}default{quote}"
    return None


__all__ = ["MAX_CALLERS", "Project", "Use", "caller_contract"]
