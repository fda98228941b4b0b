"""The caller_contract operator (eval/mutate/ops_contract.py): a function's contract changed
where a caller in another file relies on it, and the oracle that finds such a bug only when
the caller's code is in what it was shown."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.eval.mutate import corpus_files, generate, redline_files
from redline.eval.mutate.base import Candidate
from redline.eval.mutate.generate import Pending, candidates
from redline.eval.oracle import Oracle, shows_call
from redline.eval.truth import OPERATORS, CallSite

CALLEE = "lib/core.py"
CALLER = "app/use.py"


@dataclass
class Fn:
    name: str
    tuple_return: bool
    defaults: list[tuple[str, str]]  # (parameter, literal)


_LITERAL = st.sampled_from(["True", "False", "3", "0", "2.5", "'abc'", '""', "-4"])


@st.composite
def projects(draw: st.DrawFn) -> tuple[list[Fn], str, str]:
    """A callee module of small functions and a caller module that imports and calls them."""
    fns: list[Fn] = []
    callee = ["import os", ""]
    for i in range(draw(st.integers(1, 3))):
        name = f"fn_{i}"
        defaults = [(f"opt{k}", draw(_LITERAL)) for k in range(draw(st.integers(0, 2)))]
        tuple_return = draw(st.booleans())
        params = ", ".join(["x", *(f"{p}={v}" for p, v in defaults)])
        callee.append(f"def {name}({params}):")
        if draw(st.booleans()):
            callee += [
                "    if x > 10:",
                "        return x - 1, x" if tuple_return else "        return [x]",
            ]
        callee.append("    return x, x + 1" if tuple_return else "    return {'x': x}")
        callee.append("")
        fns.append(Fn(name, tuple_return, defaults))
    via_module = draw(st.booleans())
    caller = [
        "import lib.core as core"
        if via_module
        else "from lib.core import " + ", ".join(f.name for f in fns),
        "",
    ]
    caller.append("def run(v):")
    for f in fns:
        call = ("core." if via_module else "") + f.name
        given = draw(st.integers(0, len(f.defaults)))
        args = ["v", *(v for _, v in f.defaults[:given])]
        if draw(st.booleans()) and f.defaults:
            args = ["v", f"{f.defaults[-1][0]}={f.defaults[-1][1]}"]
        text = f"{call}({', '.join(args)})"
        shape = draw(st.sampled_from(["unpack", "value", "statement", "try"]))
        if shape == "unpack":
            caller.append(f"    a, b = {text}")
        elif shape == "value":
            caller.append(f"    y = {text}")
        elif shape == "statement":
            caller.append(f"    {text}")
        else:
            caller += [
                "    try:",
                f"        z = {text}",
                "    except LookupError:",
                "        z = None",
            ]
    caller.append("    return v")
    return fns, "\n".join(callee) + "\n", "\n".join(caller) + "\n"


def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)


def _contract_changed(before: str, after: str, name: str) -> str | None:
    """How the function's contract changed (by comparing the two versions' syntax), or None."""
    old, new = _function(ast.parse(before), name), _function(ast.parse(after), name)
    old_defaults = [ast.literal_eval(d) for d in old.args.defaults]
    new_defaults = [ast.literal_eval(d) for d in new.args.defaults]
    if old_defaults != new_defaults and all(
        type(a) is type(b) for a, b in zip(old_defaults, new_defaults, strict=True)
    ):
        return "default"
    olds = [n for n in ast.walk(old) if isinstance(n, ast.Return)]
    news = [n for n in ast.walk(new) if isinstance(n, ast.Return | ast.Raise)]
    for a, b in zip(olds, news, strict=True):
        if isinstance(b, ast.Raise):
            return "raises"
        if isinstance(b.value, ast.Constant) and b.value.value is None:
            assert not (isinstance(a.value, ast.Constant) and a.value.value in (None, False, 0))
            return "none"
        if isinstance(a.value, ast.Tuple) and isinstance(b.value, ast.Tuple):
            ea = [ast.unparse(e) for e in a.value.elts]
            eb = [ast.unparse(e) for e in b.value.elts]
            if ea != eb and sorted(ea) == sorted(eb):
                return "order"
    return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(projects())
def test_every_mutation_changes_the_contract_a_caller_relies_on(
    project: tuple[list[Fn], str, str],
) -> None:
    fns, callee, caller = project
    files = [(CALLEE, callee), (CALLER, caller)]
    mutants = generate(files, seed=0, operators=["caller_contract"])
    caller_lines = caller.splitlines()
    for m in mutants:
        bug = m.bug
        # Only the callee changes; the caller's file comes with the case, unchanged.
        assert bug.file == CALLEE and bug.operator == "caller_contract"
        assert m.context == ((CALLER, caller),)
        ast.parse(m.source)  # parseable
        kind = _contract_changed(callee, m.source, bug.function)
        assert kind is not None, (bug.description, m.source)
        assert bug.callers, bug
        for site in bug.callers:
            assert site.path == CALLER and site.function == "run"
            assert caller_lines[site.line - 1].strip() == site.code
            if kind == "order":
                assert site.code.startswith("a, b = ")
            elif kind in ("none", "raises"):
                assert site.code.startswith(("a, b = ", "y = ", "z = "))
                assert kind == "none" or not site.code.startswith("z = ")  # try: handled
    # Completeness: a tuple returned to a caller that unpacks it is always a candidate.
    unpacked = [
        f for f in fns if f.tuple_return and f"a, b = {f.name}(" in caller.replace("core.", "")
    ]
    for f in unpacked:
        assert any(m.bug.function == f.name and "other order" in m.bug.description for m in mutants)


def test_nothing_without_a_caller_in_another_file() -> None:
    callee = "def pair(x):\n    return x, x + 1\n\ndef use(v):\n    a, b = pair(v)\n    return a\n"
    assert generate([(CALLEE, callee)], seed=0, operators=["caller_contract"]) == []
    # Not imported from the callee's module: another function of the same name.
    other = "from elsewhere import pair\n\ndef run(v):\n    a, b = pair(v)\n    return a\n"
    assert (
        generate([(CALLEE, callee), (CALLER, other)], seed=0, operators=["caller_contract"]) == []
    )


def test_redlines_own_sources_give_cases_and_single_file_operators_are_unchanged() -> None:
    files = redline_files()
    mutants = generate(files, seed=0, operators=["caller_contract"], limit=40)
    assert len(mutants) == 40
    assert all(m.bug.callers and m.context for m in mutants)
    # The other operators propose the same edits, and draw the same mutants, as before.
    corpus = [(p, t) for p, t in files if p.startswith("redline/diff/")]

    def keys(pending: list[Pending]) -> list[tuple[str, str, str, Candidate]]:
        return [(p.src.path, p.operator, p.function, p.cand) for p in pending]

    everything = keys(candidates(corpus))
    assert keys(candidates(corpus, list(OPERATORS))) == [
        k for k in everything if k[1] != "caller_contract"
    ]
    assert any(k[1] == "caller_contract" for k in everything)
    bundled = corpus_files()  # one file per language: no caller in another file
    assert generate(bundled, seed=5, limit=20) == generate(
        bundled, seed=5, limit=20, operators=list(OPERATORS)
    )


def _prompt(path: str, first: int, lines: list[str]) -> str:
    body = "\n".join(f"{n:>4}  | {line}" for n, line in enumerate(lines, first))
    title = f"{path} lines {first}-{first + len(lines) - 1}: caller of f"
    return f"### {title}\n\n```python\n{body}\n```\n"


def test_the_oracle_finds_a_contract_change_only_when_the_call_is_shown() -> None:
    site = CallSite(CALLER, 12, "a, b = pair(v)", "run")
    shown = _prompt(CALLER, 11, ["def run(v):", "    a, b = pair(v)", "    return a"])
    assert shows_call(shown, site)
    assert not shows_call(_prompt(CALLER, 10, ["def run(v):", "    a, b = pair(v)"]), site)
    assert not shows_call(_prompt("app/other.py", 11, ["def run(v):", "    a, b = pair(v)"]), site)
    assert not shows_call("a, b = pair(v)", site)  # a mention outside a numbered section
    mutants = generate(
        [
            (CALLEE, "def pair(x):\n    return x, x + 1\n"),
            (
                CALLER,
                "from lib.core import pair\n\ndef run(v):\n    a, b = pair(v)\n    return a\n",
            ),
        ],
        seed=0,
        operators=["caller_contract"],
    )
    (mutant,) = mutants
    oracle = Oracle([mutant])
    diff = f"# File under review: `{CALLEE}`\n\n### Diff\n\n```\n   2 +|     return x + 1, x\n```\n"
    assert oracle._findings(CALLEE, diff) == []
    with_caller = diff + _prompt(CALLER, 3, ["def run(v):", "    a, b = pair(v)", "    return a"])
    (finding,) = oracle._findings(CALLEE, with_caller)
    assert finding["line"] == 2
