"""The package's import graph has no cycle and no module reaches into another's private names.

Counted: every `import` of a `redline` module anywhere in a file (at the top, inside functions,
under TYPE_CHECKING), and importing `a.b.c` also runs `a.b`'s `__init__`. A cycle makes the
modules in it one unit that cannot be read, tested or split apart; the next entry points
(the editor extension, debate) would build on it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "server"


def _modules() -> dict[str, Path]:
    found = {}
    for path in (SERVER / "redline").rglob("*.py"):
        parts = path.relative_to(SERVER).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(module imported, names taken from it) for every import of a redline module."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("redline"):
            yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("redline"):
                    yield alias.name, []


def _targets(importer: str, module: str, names: list[str]) -> set[str]:
    """The modules an import runs: the module, its packages' __init__, and submodules named
    in `from package import submodule`."""
    out = {module}
    for name in names:
        if f"{module}.{name}" in MODULES:
            out.add(f"{module}.{name}")
    for target in list(out):
        parts = target.split(".")
        out.update(".".join(parts[:i]) for i in range(2, len(parts)))
    # A module never depends on its own packages' __init__ (they are running already).
    return {t for t in out if t in MODULES and not importer.startswith(t + ".")}


def _graph() -> dict[str, set[str]]:
    return {
        name: {t for module, names in _imports(path) for t in _targets(name, module, names)}
        - {name}
        for name, path in MODULES.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_import_graph_has_no_cycle() -> None:
    assert _cycles(_graph()) == []


def test_the_check_finds_a_cycle_when_there_is_one() -> None:
    graph = _graph()
    graph["redline.errors"] = graph["redline.errors"] | {"redline.requests"}  # requests → errors
    assert ["redline.errors", "redline.requests"] in _cycles(graph)


def test_no_module_imports_another_modules_private_name() -> None:
    offenders = [
        f"{name} imports {module}.{imported}"
        for name, path in MODULES.items()
        for module, names in _imports(path)
        for imported in names
        if imported.startswith("_") and not imported.endswith("__") and module != name
    ]
    assert offenders == []
