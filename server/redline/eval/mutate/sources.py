"""Files to mutate: the bundled corpus, and Redline's own Python sources."""

from __future__ import annotations

from pathlib import Path

import redline

_CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".go")


def corpus_files() -> list[tuple[str, str]]:
    """The bundled programs as (path relative to the corpus directory, text), sorted."""
    return _read(_CORPUS, "", _SUFFIXES, skip=("__init__.py",))


def redline_files() -> list[tuple[str, str]]:
    """The installed `redline` package's .py files as ("redline/...", text), sorted; the
    bundled corpus is not part of it."""
    root = Path(redline.__file__).resolve().parent
    files = _read(root, "redline/", (".py",), skip=())
    return [(p, t) for p, t in files if not p.startswith("redline/eval/corpus/")]


def _read(
    root: Path, prefix: str, suffixes: tuple[str, ...], skip: tuple[str, ...]
) -> list[tuple[str, str]]:
    out = []
    for path in sorted(root.rglob("*")):
        if path.suffix in suffixes and path.name not in skip and path.is_file():
            rel = path.relative_to(root).as_posix()
            out.append((prefix + rel, path.read_text(encoding="utf-8")))
    return out
