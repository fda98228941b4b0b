"""Java and Rust changes get function-level units and metrics (tree-sitter-java/-rust), from
diffs of real git repositories, like Python, JavaScript/TypeScript and Go."""

from __future__ import annotations

from redline.diff import build_units
from redline.diff.functions import enclosing_functions, has_grammar
from redline.model import ReviewUnit
from redline.review.fix_check import fixed_text_parses

from gitrepo import GitRepo

JAVA = """package app;

import java.util.List;

@Service
public class Orders {
    private final List<String> items;

    public Orders(List<String> items) {
        this.items = items;
    }

    @Override
    public String first(int n) {
        Runnable r = () -> {
            System.out.println(n);
        };
        return items.get(n);
    }

    interface Listener {
        default void changed(String item) {
            log(item);
        }
    }

    enum Kind {
        A, B;

        boolean big() {
            return this == B;
        }
    }
}
"""

RUST = """use std::fmt;

pub struct Stack<T> {
    items: Vec<T>,
}

impl<T: Clone> Stack<T> {
    pub fn push(&mut self, item: T) {
        let f = |x: &T| x.clone();
        self.items.push(f(&item));
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

trait Shape {
    fn area(&self) -> f64 {
        0.0
    }
}

pub fn total(xs: &[u32]) -> u32 {
    xs.iter().sum()
}

#[cfg(test)]
mod tests {
    #[test]
    fn it_works() {
        assert_eq!(2 + 2, 4);
    }
}
"""


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def units_after(repo: GitRepo, path: str, before: str, after: str) -> list[ReviewUnit]:
    repo.write(path, before)
    repo.commit("base")
    repo.write(path, after)
    repo.git("add", "-A")
    diff = repo.git("diff", "--cached")

    def read(rel: str) -> bytes | None:
        target = repo.root / rel
        return target.read_bytes() if target.is_file() else None

    return build_units(diff, read)


def test_java_names() -> None:
    source = JAVA.encode()

    def at(needle: str) -> list[str]:
        return enclosing_functions("src/Orders.java", source, [line_of(JAVA, needle)])

    assert has_grammar("src/Orders.java")
    assert at("this.items = items") == ["Orders.Orders"]
    assert at("System.out.println(n)") == ["Orders.first"]  # the lambda is transparent
    assert at("@Override") == ["Orders.first"]  # annotations belong to the method
    assert at("log(item)") == ["Orders.Listener.changed"]
    assert at("return this == B") == ["Orders.Kind.big"]
    assert at("private final") == []


def test_rust_names() -> None:
    source = RUST.encode()

    def at(needle: str) -> list[str]:
        return enclosing_functions("src/lib.rs", source, [line_of(RUST, needle)])

    assert has_grammar("src/lib.rs")
    assert at("self.items.push") == ["Stack.push"]  # generics dropped, closure transparent
    assert at("write!(f,") == ["Point.fmt"]
    assert at("0.0") == ["Shape.area"]
    assert at("xs.iter().sum()") == ["total"]
    assert at("assert_eq!") == ["tests.it_works"]
    assert at("items: Vec<T>") == []


def test_java_method_changed_gets_a_unit_named_after_it(repo: GitRepo) -> None:
    after = JAVA.replace(
        "return items.get(n);", "int i = Math.max(0, n);\n        return items.get(i);"
    )
    (unit,) = units_after(repo, "src/main/java/app/Orders.java", JAVA, after)
    assert unit.language == "java"
    assert unit.metrics.functions == ["Orders.first"]
    assert unit.metrics.single_function


def test_rust_fn_changed_gets_a_unit_named_after_it(repo: GitRepo) -> None:
    after = RUST.replace("xs.iter().sum()", "xs.iter().copied().sum()")
    (unit,) = units_after(repo, "src/lib.rs", RUST, after)
    assert unit.language == "rust"
    assert unit.metrics.functions == ["total"]
    assert unit.metrics.single_function


def test_rust_impl_method_changed_gets_its_type_name(repo: GitRepo) -> None:
    after = RUST.replace(
        "self.items.push(f(&item));", "let copy = f(&item);\n        self.items.push(copy);"
    )
    (unit,) = units_after(repo, "src/lib.rs", RUST, after)
    assert unit.metrics.functions == ["Stack.push"]


def test_fixes_in_java_and_rust_get_a_parse_verdict() -> None:
    assert fixed_text_parses("A.java", "class A { void f() { g(); } }") is True
    assert fixed_text_parses("A.java", "class A { void f() { g(; } }") is False
    assert fixed_text_parses("a.rs", "fn f() { g(); }") is True
    assert fixed_text_parses("a.rs", "fn f() { g(; }") is False


def test_java_and_rust_types_are_classes_for_the_code_tools() -> None:
    from redline.tools.code_tools import class_spans

    assert [d.name for d in class_spans("A.java", JAVA.encode())] == [
        "Orders",
        "Orders.Listener",
        "Orders.Kind",
    ]
    assert [d.name for d in class_spans("lib.rs", RUST.encode())] == ["Stack", "Shape"]
