"""diff/functions.py: enclosing functions from tree-sitter, per language."""

from __future__ import annotations

import pytest

from redline.diff import enclosing_functions, language_for
from redline.diff.functions import (
    MAX_DEFINITION_DEPTH,
    function_spans,
    has_grammar,
    names_for_lines,
)

PYTHON = b'''\
import os


@decorator
async def top(a):
    def inner():
        return 1
    return inner


class Outer:
    x = 1

    class Inner:
        @property
        def method(self):
            return lambda: 2

    @staticmethod
    @other(
        arg=1,
    )
    def static():
        pass


TEXT = """
not_a_def = 1
def fake():
"""


def last():
    return TEXT
'''


def line_of(source: bytes, needle: bytes) -> int:
    return source[: source.index(needle)].count(b"\n") + 1


def test_python_nested_classes_decorators_async() -> None:
    def at(needle: bytes) -> list[str]:
        return enclosing_functions("m.py", PYTHON, [line_of(PYTHON, needle)])

    assert at(b"@decorator") == ["top"]
    assert at(b"async def top") == ["top"]
    assert at(b"return 1") == ["top.inner"]
    assert at(b"return inner") == ["top"]
    assert at(b"return lambda") == ["Outer.Inner.method"]
    assert at(b"@property") == ["Outer.Inner.method"]
    assert at(b"arg=1") == ["Outer.static"]
    assert at(b"x = 1") == []  # class body, not a function
    assert at(b"import os") == []
    assert at(b"def fake") == []  # inside a string
    assert at(b"return TEXT") == ["last"]


def test_order_and_dedup() -> None:
    lines = [line_of(PYTHON, b"return TEXT"), line_of(PYTHON, b"return 1")]
    assert enclosing_functions("m.py", PYTHON, lines * 2) == ["top.inner", "last"]


def test_windowed_parse_matches_full_parse() -> None:
    every_line = range(1, PYTHON.count(b"\n") + 2)
    full = names_for_lines(function_spans("m.py", PYTHON), every_line)
    for line in every_line:
        windowed = names_for_lines(function_spans("m.py", PYTHON, near=[line]), [line])
        assert windowed[line] == full[line], line


JS = b"""\
class Widget {
  render() {
    return 1;
  }
  static async *items() {
    yield 2;
  }
  handler = () => {
    return 3;
  };
}

function plain() {
  [1].map((x) => {
    return x + 4;
  });
}

const arrow = async () => {
  return 5;
};

module.exports.exported = function () {
  return 6;
};
"""


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        (b"return 1", ["Widget.render"]),
        (b"yield 2", ["Widget.items"]),
        (b"return 3", ["Widget.handler"]),
        (b"return x + 4", ["plain"]),  # anonymous callbacks are transparent
        (b"return 5", ["arrow"]),
        (b"return 6", ["exported"]),
    ],
)
def test_javascript(needle: bytes, expected: list[str]) -> None:
    assert enclosing_functions("w.js", JS, [line_of(JS, needle)]) == expected


TS = b"""\
export abstract class Repo<T> {
  @cached()
  private find(id: number): T | undefined {
    return undefined;
  }
  abstract save(item: T): void;
}

export function helper<T>(value: T): T {
  return value;
}

export const Component = (props: { a: number }) => <div>{props.a}</div>;
"""


def test_typescript_and_tsx() -> None:
    assert enclosing_functions("r.ts", TS, [line_of(TS, b"@cached")]) == ["Repo.find"]
    assert enclosing_functions("r.ts", TS, [line_of(TS, b"return undefined")]) == ["Repo.find"]
    assert enclosing_functions("r.ts", TS, [line_of(TS, b"return value")]) == ["helper"]
    assert enclosing_functions("c.tsx", TS, [line_of(TS, b"<div>")]) == ["Component"]


GO = b"""\
package p

type Recv[T any] struct{}

func (r *Recv[T]) Method() int {
\treturn 1
}

func (v Value) Plain() {
\tf := func() {
\t\t_ = 2
\t}
\tf()
}

func Top() {}
"""


def test_go_methods_and_closures() -> None:
    assert enclosing_functions("p.go", GO, [line_of(GO, b"return 1")]) == ["Recv.Method"]
    assert enclosing_functions("p.go", GO, [line_of(GO, b"_ = 2")]) == ["Value.Plain"]
    assert enclosing_functions("p.go", GO, [line_of(GO, b"func Top")]) == ["Top"]
    assert enclosing_functions("p.go", GO, [line_of(GO, b"type Recv")]) == []


def test_unknown_language_and_garbage() -> None:
    assert enclosing_functions("x.kt", b"fun main() {}\n", [1]) == []
    assert enclosing_functions("README", b"def f():\n  pass\n", [2]) == []
    assert enclosing_functions("x.py", b"\xff\xfe def (((\n", [1, 99]) == []
    assert not has_grammar("x.kt") and has_grammar("x.tsx") and has_grammar("x.rs")


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("x.pyi", "python"),
        ("web/App.JSX", "javascript"),
        ("a.mjs", "javascript"),
        ("a.ts", "typescript"),
        ("a.tsx", "tsx"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("Dockerfile", "dockerfile"),
        ("Makefile", "makefile"),
        ("conf.yml", "yaml"),
        ("LICENSE", None),
        ("archive.tar.gz", None),
    ],
)
def test_language_for(path: str, language: str | None) -> None:
    assert language_for(path) == language


def test_functions_nested_absurdly_deep_are_not_named() -> None:
    # Naming walks ancestors and tree-sitter finds each parent from the root: 600 nested
    # functions (8 KB of a hostile file) took ~15 s; below MAX_DEFINITION_DEPTH none is named.
    spans = function_spans("deep.js", b"function f(){" * 600 + b"}" * 600)
    assert len(spans) == MAX_DEFINITION_DEPTH // 2
