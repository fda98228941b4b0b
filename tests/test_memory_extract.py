"""memory/extract.py: the code graph of one file (symbols, calls, imports, references).

Per language, one file with a class, a method, a nested function, doc comments, calls, imports
and references, and the exact symbols and edges `redline memory` stores for it. Then the
properties: qualnames are function_spans' names, spans lie in the file, arbitrary bytes never
crash, caps hold, and generated Python programs give back every function and call.
"""

from __future__ import annotations

import builtins
import keyword
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.diff.functions import MAX_DEFINITION_DEPTH, function_spans, has_grammar
from redline.memory.extract import (
    MAX_BODY_CHARS,
    MAX_DOC_CHARS,
    MAX_EDGE_TEXT_CHARS,
    MAX_EDGES_PER_FILE,
    MAX_FILE_BYTES,
    MAX_SIGNATURE_CHARS,
    MAX_SYMBOLS_PER_FILE,
    extract,
)
from redline.memory.model import FileGraph


@dataclass(frozen=True)
class Case:
    path: str
    source: bytes
    symbols: list[tuple[str, str, int, int]]  # (kind, qualname, start, end)
    edges: list[tuple[int, str, str, str, str]]  # (line, kind, source, target, text)
    described: dict[str, tuple[str, str]] = field(default_factory=dict)  # signature, doc


PYTHON = Case(
    "src/client.py",
    b'''\
"""HTTP client."""

import os.path
from redline.net import Transport as T, retry
from . import errors


@retry(times=3)
class Client(BaseClient, mixins.Closing):
    """Sends requests."""

    timeout: Timeout | None = None

    def send(self, request: Request) -> "Response":
        """Send one request.

        Retries on failure.
        """

        def attempt() -> Response:
            return self.transport.send(request)

        try:
            return attempt()
        except errors.NetworkError:
            log(os.path.join("a", "b"))
            raise


def main() -> None:
    Client().send(Request("GET"))
''',
    symbols=[
        ("class", "Client", 8, 27),
        ("method", "Client.send", 14, 27),
        ("function", "Client.send.attempt", 20, 21),
        ("function", "main", 30, 31),
    ],
    edges=[
        (3, "import", "", "path", "os.path"),
        (4, "import", "", "Transport", "redline.net"),
        (4, "import", "", "retry", "redline.net"),
        (5, "import", "", "errors", "."),
        (8, "call", "Client", "retry", "retry"),
        (9, "reference", "Client", "BaseClient", "BaseClient"),
        (9, "reference", "Client", "Closing", "mixins.Closing"),
        (12, "reference", "Client", "Timeout", "Timeout"),
        (14, "reference", "Client.send", "Request", "Request"),
        (14, "reference", "Client.send", "Response", "Response"),
        (20, "reference", "Client.send.attempt", "Response", "Response"),
        (21, "call", "Client.send.attempt", "send", "self.transport.send"),
        (24, "call", "Client.send", "attempt", "attempt"),
        (25, "reference", "Client.send", "NetworkError", "errors.NetworkError"),
        (26, "call", "Client.send", "log", "log"),
        (26, "call", "Client.send", "join", "os.path.join"),
        (31, "call", "main", "send", "Client().send"),
        (31, "call", "main", "Client", "Client"),
        (31, "call", "main", "Request", "Request"),
    ],
    described={
        "Client": ("class Client(BaseClient, mixins.Closing):", "Sends requests."),
        "Client.send": (
            'def send(self, request: Request) -> "Response":',
            "Send one request.\n\nRetries on failure.",
        ),
    },
)

TYPESCRIPT = Case(
    "web/client.ts",
    b"""\
import { Transport, retry as withRetry } from "./transport";
import * as path from "node:path";
const { readFile } = require("fs");

/** Something that sends. */
export interface Sender extends Closable {
  send(request: Request): Promise<Response>;
}

/**
 * Sends requests.
 * @public
 */
export class Client extends BaseClient implements Sender {
  constructor(private transport: Transport) {
    super();
  }

  /** Send one request. */
  async send(request: Request): Promise<Response> {
    const attempt = () => this.transport.send(request);
    return withRetry(attempt);
  }
}

export const main = async () => {
  await new Client(new HttpTransport()).send(path.join("a", "b"));
};
""",
    symbols=[
        ("class", "Sender", 6, 8),
        ("class", "Client", 14, 24),
        ("method", "Client.constructor", 15, 17),
        ("method", "Client.send", 20, 23),
        ("function", "Client.send.attempt", 21, 21),
        ("function", "main", 26, 28),
    ],
    edges=[
        (1, "import", "", "Transport", "./transport"),
        (1, "import", "", "retry", "./transport"),
        (2, "import", "", "path", "node:path"),
        (3, "call", "", "require", "require"),
        (3, "import", "", "readFile", "fs"),
        (6, "reference", "Sender", "Closable", "Closable"),
        (7, "reference", "Sender", "Request", "Request"),
        (7, "reference", "Sender", "Response", "Response"),
        (14, "reference", "Client", "BaseClient", "BaseClient"),
        (14, "reference", "Client", "Sender", "Sender"),
        (15, "reference", "Client.constructor", "Transport", "Transport"),
        (20, "reference", "Client.send", "Request", "Request"),
        (20, "reference", "Client.send", "Response", "Response"),
        (21, "call", "Client.send.attempt", "send", "this.transport.send"),
        (22, "call", "Client.send", "withRetry", "withRetry"),
        (27, "call", "main", "send", "new Client(new HttpTransport()).send"),
        (27, "reference", "main", "Client", "new Client"),
        (27, "reference", "main", "HttpTransport", "new HttpTransport"),
        (27, "call", "main", "join", "path.join"),
    ],
    described={
        "Sender": ("interface Sender extends Closable", "Something that sends."),
        "Client": ("class Client extends BaseClient implements Sender", "Sends requests.\n@public"),
        "Client.send": ("async send(request: Request): Promise<Response>", "Send one request."),
    },
)

JAVASCRIPT = Case(
    "web/client.js",
    b"""\
const path = require("path");
import Transport from "./transport.js";

/** Sends requests. */
class Client extends Base {
  /** Send one request. */
  send(request) {
    function attempt() {
      return this.transport.send(request);
    }
    return attempt();
  }
}

module.exports.make = function () {
  return new Client(path.join("a"));
};
""",
    symbols=[
        ("class", "Client", 5, 13),
        ("method", "Client.send", 7, 12),
        ("function", "Client.send.attempt", 8, 10),
        ("function", "make", 15, 17),
    ],
    edges=[
        (1, "call", "", "require", "require"),
        (1, "import", "", "path", "path"),
        (2, "import", "", "Transport", "./transport.js"),
        (5, "reference", "Client", "Base", "Base"),
        (9, "call", "Client.send.attempt", "send", "this.transport.send"),
        (11, "call", "Client.send", "attempt", "attempt"),
        (16, "reference", "make", "Client", "new Client"),
        (16, "call", "make", "join", "path.join"),
    ],
    described={
        "Client": ("class Client extends Base", "Sends requests."),
        "Client.send": ("send(request)", "Send one request."),
    },
)

GO = Case(
    "pkg/client.go",
    b"""\
package client

import (
	"fmt"
	nethttp "net/http"
	"example.com/retry/v2"
)

// Sender sends requests.
type Sender interface {
	Send(req *Request) (*Response, error)
}

// Client sends requests
// over a transport.
type Client struct {
	transport *nethttp.Client
}

// Send sends one request.
func (c *Client) Send(req *Request) (*Response, error) {
	attempt := func() (*Response, error) {
		return c.transport.Do(req)
	}
	return retry.Do(attempt)
}

func main() {
	fmt.Println(NewClient().Send(&Request{}))
}
""",
    symbols=[
        ("class", "Sender", 10, 12),
        ("class", "Client", 16, 18),
        ("method", "Client.Send", 21, 26),
        ("function", "main", 28, 30),
    ],
    edges=[
        (4, "import", "", "fmt", "fmt"),
        (5, "import", "", "http", "net/http"),
        (6, "import", "", "retry", "example.com/retry/v2"),
        (11, "reference", "Sender", "Request", "Request"),
        (11, "reference", "Sender", "Response", "Response"),
        (17, "reference", "Client", "Client", "nethttp.Client"),
        (21, "reference", "Client.Send", "Client", "Client"),
        (21, "reference", "Client.Send", "Request", "Request"),
        (21, "reference", "Client.Send", "Response", "Response"),
        (23, "call", "Client.Send", "Do", "c.transport.Do"),
        (25, "call", "Client.Send", "Do", "retry.Do"),
        (29, "call", "main", "Println", "fmt.Println"),
        (29, "call", "main", "Send", "NewClient().Send"),
        (29, "call", "main", "NewClient", "NewClient"),
        (29, "reference", "main", "Request", "Request"),
    ],
    described={
        "Sender": ("type Sender interface", "Sender sends requests."),
        "Client": ("type Client struct", "Client sends requests\nover a transport."),
        "Client.Send": (
            "func (c *Client) Send(req *Request) (*Response, error)",
            "Send sends one request.",
        ),
    },
)

JAVA = Case(
    "src/net/Client.java",
    b"""\
package net.client;

import java.util.List;
import net.client.transport.*;

/** Sends requests. */
public class Client extends BaseClient implements Sender {
    private final Transport transport;

    /**
     * Send one request.
     * @param request what to send
     */
    @Override
    public Response send(Request request) {
        Runnable attempt = () -> transport.send(request);
        return Retry.run(attempt);
    }

    static class Builder {
        Client build() { return new Client(); }
    }
}
""",
    symbols=[
        ("class", "Client", 7, 23),
        ("method", "Client.send", 14, 18),
        ("class", "Client.Builder", 20, 22),
        ("method", "Client.Builder.build", 21, 21),
    ],
    edges=[
        (3, "import", "", "List", "java.util.List"),
        (4, "import", "", "transport", "net.client.transport.*"),
        (7, "reference", "Client", "BaseClient", "BaseClient"),
        (7, "reference", "Client", "Sender", "Sender"),
        (8, "reference", "Client", "Transport", "Transport"),
        (15, "reference", "Client.send", "Response", "Response"),
        (15, "reference", "Client.send", "Request", "Request"),
        (16, "reference", "Client.send", "Runnable", "Runnable"),
        (16, "call", "Client.send", "send", "transport.send"),
        (17, "call", "Client.send", "run", "Retry.run"),
        (17, "reference", "Client.send", "Retry", "Retry"),
        (21, "reference", "Client.Builder.build", "Client", "Client"),
    ],
    described={
        "Client": ("public class Client extends BaseClient implements Sender", "Sends requests."),
        "Client.send": (
            "@Override public Response send(Request request)",
            "Send one request.\n@param request what to send",
        ),
    },
)

RUST = Case(
    "src/client.rs",
    b"""\
use std::collections::HashMap;
use crate::transport::{Transport, retry::{self, Policy as P}};

/// Sends requests
/// over a transport.
#[derive(Debug)]
pub struct Client<T: Transport> {
    transport: T,
}

/// Something that sends.
pub trait Sender {
    fn send(&self, request: Request) -> Response;
}

impl<T: Transport> Sender for Client<T> {
    /// Send one request.
    fn send(&self, request: Request) -> Response {
        fn attempt(t: &impl Transport, r: Request) -> Response {
            t.send(r)
        }
        retry::run(|| attempt(&self.transport, request))
    }
}

fn main() {
    let c = Client::new(HttpTransport::default());
    c.send(Request::get("/"));
}
""",
    symbols=[
        ("class", "Client", 7, 9),
        ("class", "Sender", 12, 14),
        ("method", "Client.send", 18, 23),
        ("function", "Client.send.attempt", 19, 21),
        ("function", "main", 26, 29),
    ],
    edges=[
        (1, "import", "", "HashMap", "std::collections::HashMap"),
        (2, "import", "", "Transport", "crate::transport::Transport"),
        (2, "import", "", "retry", "crate::transport::retry"),
        (2, "import", "", "Policy", "crate::transport::retry::Policy"),
        (7, "reference", "Client", "Transport", "Transport"),
        (13, "reference", "Sender", "Request", "Request"),
        (13, "reference", "Sender", "Response", "Response"),
        (16, "reference", "", "Transport", "Transport"),
        (16, "reference", "", "Sender", "Sender"),
        (16, "reference", "", "Client", "Client"),
        (18, "reference", "Client.send", "Request", "Request"),
        (18, "reference", "Client.send", "Response", "Response"),
        (19, "reference", "Client.send.attempt", "Transport", "Transport"),
        (19, "reference", "Client.send.attempt", "Request", "Request"),
        (19, "reference", "Client.send.attempt", "Response", "Response"),
        (20, "call", "Client.send.attempt", "send", "t.send"),
        (22, "call", "Client.send", "run", "retry::run"),
        (22, "call", "Client.send", "attempt", "attempt"),
        (27, "call", "main", "new", "Client::new"),
        (27, "reference", "main", "Client", "Client"),
        (27, "call", "main", "default", "HttpTransport::default"),
        (27, "reference", "main", "HttpTransport", "HttpTransport"),
        (28, "call", "main", "send", "c.send"),
        (28, "call", "main", "get", "Request::get"),
        (28, "reference", "main", "Request", "Request"),
    ],
    described={
        "Client": ("pub struct Client<T: Transport>", "Sends requests\nover a transport."),
        "Sender": ("pub trait Sender", "Something that sends."),
        "Client.send": ("fn send(&self, request: Request) -> Response", "Send one request."),
    },
)

CASES = [PYTHON, TYPESCRIPT, JAVASCRIPT, GO, JAVA, RUST]


def _graph(case: Case) -> FileGraph:
    graph = extract(case.path, case.source)
    assert graph is not None
    return graph


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_symbols_are_every_function_method_and_class_with_their_spans(case: Case) -> None:
    graph = _graph(case)
    assert [(s.kind, s.qualname, s.start, s.end) for s in graph.symbols] == case.symbols
    assert {s.path for s in graph.symbols} == {case.path}
    assert not graph.truncated


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_edges_are_the_calls_imports_and_references_from_their_enclosing_symbol(
    case: Case,
) -> None:
    graph = _graph(case)
    assert [(e.line, e.kind, e.source, e.target, e.text) for e in graph.edges] == case.edges
    assert {e.path for e in graph.edges} == {case.path}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_signature_and_documentation_are_cleaned_of_comment_markers(case: Case) -> None:
    symbols = {s.qualname: s for s in _graph(case).symbols}
    got = {q: (s.signature, s.docstring) for q, s in symbols.items() if s.docstring}
    assert got == case.described


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_body_is_the_definitions_text(case: Case) -> None:
    lines = case.source.decode().splitlines()
    for symbol in _graph(case).symbols:
        # From its head (`export` and `const` are not part of a definition) to its end.
        assert symbol.body.splitlines()[0] in lines[symbol.start - 1], symbol.qualname
        assert symbol.body.splitlines()[-1] in lines[symbol.end - 1], symbol.qualname


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_function_qualnames_are_function_spans_names(case: Case) -> None:
    functions = [s for s in _graph(case).symbols if s.kind != "class"]
    spans = function_spans(case.path, case.source)
    assert sorted((s.start, s.end, s.qualname) for s in functions) == sorted(
        (s.start, s.end, s.name) for s in spans
    )


def test_a_language_without_a_grammar_gives_none() -> None:
    assert extract("notes.md", b"# def f(): pass\n") is None
    assert extract("main.c", b"int main(void) { return 0; }\n") is None
    assert extract("Makefile", b"all:\n\techo hi\n") is None


# -- caps ----------------------------------------------------------------------------------------


def test_a_file_over_the_byte_cap_gives_an_empty_graph_that_says_so() -> None:
    data = b"def f():\n    g()\n" * (MAX_FILE_BYTES // 16 + 1)
    assert len(data) > MAX_FILE_BYTES
    graph = extract("big.py", data)
    assert graph == FileGraph("big.py", "python", (), (), truncated=True)


def test_symbol_and_edge_caps_keep_the_first_ones_in_file_order_and_say_so() -> None:
    count = MAX_SYMBOLS_PER_FILE + 50
    data = "".join(f"def f{i}():\n    g{i}()\n" for i in range(count)).encode()
    graph = extract("many.py", data)
    assert graph is not None and graph.truncated
    assert [s.qualname for s in graph.symbols] == [f"f{i}" for i in range(MAX_SYMBOLS_PER_FILE)]
    # Every call is kept (under the edge cap), the dropped symbols' calls keep their source.
    assert len(graph.edges) == count and graph.edges[-1].source == f"f{count - 1}"

    calls = MAX_EDGES_PER_FILE + 10
    data = b"def main():\n" + b"".join(b"    call_%d()\n" % i for i in range(calls))
    graph = extract("calls.py", data)
    assert graph is not None and graph.truncated
    assert len(graph.edges) == MAX_EDGES_PER_FILE
    assert [e.target for e in graph.edges[:2]] == ["call_0", "call_1"]
    assert graph.edges[-1].line == MAX_EDGES_PER_FILE + 1


def test_texts_are_capped() -> None:
    params = ", ".join(f"parameter_{i}" for i in range(200))
    doc = "word " * 2000
    body = "".join(f"    x = call_{i}(x)\n" for i in range(1000))
    callee = ".".join(f"attr_{i}" for i in range(100))
    data = f'def f({params}):\n    """{doc}"""\n{body}    {callee}()\n'.encode()
    graph = extract("long.py", data)
    assert graph is not None and not graph.truncated
    (symbol,) = graph.symbols
    assert len(symbol.signature) == MAX_SIGNATURE_CHARS and symbol.signature.endswith("…")
    assert len(symbol.docstring) == MAX_DOC_CHARS
    assert len(symbol.body) == MAX_BODY_CHARS and symbol.body.startswith("def f(")
    assert graph.edges[-1].target == "attr_99"
    assert len(graph.edges[-1].text) == MAX_EDGE_TEXT_CHARS


def test_definitions_nested_absurdly_deep_are_not_looked_at() -> None:
    # Naming a definition walks its ancestors, and tree-sitter finds each parent from the
    # root: d² steps for one d deep. 600 nested functions (8 KB) took ~15 s to name; below
    # MAX_DEFINITION_DEPTH syntax levels (two per JavaScript function here) none is looked at.
    data = b"function f(){" * 600 + b"}" * 600
    graph = extract("deep.js", data)
    assert graph is not None
    assert len(graph.symbols) == MAX_DEFINITION_DEPTH // 2
    assert graph.symbols[-1].qualname == ".".join(["f"] * (MAX_DEFINITION_DEPTH // 2))


def test_extraction_reads_no_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def on_disk():\n    pass\n")
    monkeypatch.chdir(tmp_path)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("extract opened a file")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(os, "open", refuse)
    graph = extract("m.py", b"def in_memory():\n    pass\n")
    assert graph is not None and [s.qualname for s in graph.symbols] == ["in_memory"]


# -- properties ----------------------------------------------------------------------------------

_PATHS = [
    "a.py",
    "a.js",
    "a.ts",
    "a.tsx",
    "a.go",
    "A.java",
    "a.rs",
]
# Pieces of every grammar's syntax, so that random text makes real, nested, broken trees.
_TOKENS = [
    "def ", "class ", "function ", "func ", "fn ", "impl ", "struct ", "interface ", "type ",
    "import ", "from ", "use ", "new ", "extends ", "return ", "async ", "=> ", "::", ".",
    "(", ")", "{", "}", "[", "]", "<", ">", ":", ";", ",", "=", "@", "#", "'", '"', '"""',
    "/**", "*/", "//", "///", "\n", "\n    ", "\t", " ", "Foo", "bar", "x", "é", "\u2028",
    "\x00", "\r", "Self", "self", "this", "require(", "package ", "pub ",
]  # fmt: skip


def _check_invariants(path: str, data: bytes, graph: FileGraph | None) -> None:
    assert graph is not None
    lines = data.count(b"\n") + 1
    assert len(graph.symbols) <= MAX_SYMBOLS_PER_FILE
    assert len(graph.edges) <= MAX_EDGES_PER_FILE
    for symbol in graph.symbols:
        assert 1 <= symbol.start <= symbol.end <= lines
        assert symbol.qualname and symbol.path == path
        assert symbol.kind in ("function", "method", "class")
        assert len(symbol.body) <= MAX_BODY_CHARS
        assert len(symbol.docstring) <= MAX_DOC_CHARS
        assert len(symbol.signature) <= MAX_SIGNATURE_CHARS
    names = {s.qualname for s in graph.symbols}
    for edge in graph.edges:
        assert 1 <= edge.line <= lines
        assert edge.target and edge.kind in ("call", "import", "reference")
        assert edge.source == "" or edge.source in names or graph.truncated
        assert len(edge.text) <= MAX_EDGE_TEXT_CHARS


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_PATHS), st.binary(max_size=3000))
def test_arbitrary_bytes_never_crash_and_spans_lie_in_the_file(path: str, data: bytes) -> None:
    _check_invariants(path, data, extract(path, data))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_PATHS), st.lists(st.sampled_from(_TOKENS) | st.text(max_size=5)))
def test_arbitrary_code_like_text_never_crashes(path: str, tokens: list[str]) -> None:
    data = "".join(tokens).encode("utf-8", errors="surrogatepass")
    _check_invariants(path, data, extract(path, data))


# -- generated Python programs -------------------------------------------------------------------

_SOFT_KEYWORDS = {"match", "case", "type", "_", "print"}
_IDENTIFIERS = st.from_regex(r"[a-z_][a-z0-9_]{0,7}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name) and name not in _SOFT_KEYWORDS
)


@dataclass
class _Program:
    lines: list[str] = field(default_factory=list)
    definitions: list[tuple[int, str, str]] = field(default_factory=list)  # line, qualname, kind
    # (line, source, target, text) of every call
    calls: list[tuple[int, str, str, str]] = field(default_factory=list)
    docs: list[tuple[int, str]] = field(default_factory=list)  # definition's line, docstring


def _block(
    draw: st.DrawFn, out: _Program, indent: str, scope: list[str], in_class: bool, depth: int
) -> None:
    """Statements of one block: calls, and (while not too deep) nested functions and classes,
    some async, some decorated, some documented."""
    items = draw(st.lists(st.sampled_from(["call", "method_call", "def", "class"]), max_size=4))
    if depth >= 4:
        items = [item for item in items if item in ("call", "method_call")]
    if not items:
        items.append("call")
    for item in items:
        source = ".".join(scope)
        line = len(out.lines) + 1
        if item == "call":
            name = draw(_IDENTIFIERS)
            out.lines.append(f"{indent}{name}(1, k=2)")
            out.calls.append((line, source, name, name))
        elif item == "method_call":
            obj, attr, name = draw(_IDENTIFIERS), draw(_IDENTIFIERS), draw(_IDENTIFIERS)
            out.lines.append(f"{indent}{obj}.{attr}.{name}()")
            out.calls.append((line, source, name, f"{obj}.{attr}.{name}"))
        else:
            name = draw(_IDENTIFIERS)
            qualname = ".".join([*scope, name])
            if draw(st.booleans()):  # a bare decorator: called with the definition
                decorator = draw(_IDENTIFIERS)
                out.lines.append(f"{indent}@{decorator}")
                out.calls.append((line, qualname, decorator, decorator))
            if item == "class":
                out.lines.append(f"{indent}class {name}:")
            else:
                prefix = "async def" if draw(st.booleans()) else "def"
                out.lines.append(f"{indent}{prefix} {name}(self, *args):")
            kind = "class" if item == "class" else ("method" if in_class else "function")
            out.definitions.append((line, qualname, kind))
            if draw(st.booleans()):
                out.lines.append(f'{indent}    """Doc of {name}."""')
                out.docs.append((line, f"Doc of {name}."))
            _block(draw, out, indent + "    ", [*scope, name], item == "class", depth + 1)


@st.composite
def _programs(draw: st.DrawFn) -> _Program:
    out = _Program()
    if draw(st.booleans()):
        out.lines.append("import os.path")
    _block(draw, out, "", [], False, 0)
    return out


@settings(max_examples=200, deadline=None)
@given(_programs())
def test_generated_python_gives_back_every_function_and_call(program: _Program) -> None:
    data = ("\n".join(program.lines) + "\n").encode()
    graph = extract("gen.py", data)
    assert graph is not None and not graph.truncated
    assert [(s.start, s.qualname, s.kind) for s in graph.symbols] == program.definitions
    assert [(s.start, s.docstring) for s in graph.symbols if s.docstring] == program.docs
    calls = [(e.line, e.source, e.target, e.text) for e in graph.edges if e.kind == "call"]
    assert calls == program.calls
    assert [e.target for e in graph.edges if e.kind == "import"] == (
        ["path"] if program.lines[0] == "import os.path" else []
    )
    assert sorted(s.qualname for s in graph.symbols if s.kind != "class") == sorted(
        s.name for s in function_spans("gen.py", data)
    )


# -- idioms: what each language spells differently ------------------------------------------------

IDIOMS = [
    (
        "app/handler.py",
        b"""\
@property
@pytest.mark.slow
def handler(request: "web.Request") -> web.Response:
    if isinstance(request, HttpRequest):
        raise errors.BadRequest()
    return Handler.build(request)
""",
        [
            # A bare decorator is called with the function: a call from the decorated one.
            (1, "call", "handler", "property", "property"),
            (2, "call", "handler", "slow", "pytest.mark.slow"),
            # String annotations name types too; attribute types keep their module.
            (3, "reference", "handler", "Request", "web.Request"),
            (3, "reference", "handler", "Response", "web.Response"),
            (4, "call", "handler", "isinstance", "isinstance"),
            # A class named as a value (isinstance, a static call's receiver) is a use.
            (4, "reference", "handler", "HttpRequest", "HttpRequest"),
            # Constructing a class is a call, not also a reference.
            (5, "call", "handler", "BadRequest", "errors.BadRequest"),
            (6, "call", "handler", "build", "Handler.build"),
            (6, "reference", "handler", "Handler", "Handler"),
        ],
    ),
    (
        "web/view.tsx",
        b"""\
export { helper, other as renamed } from "./helpers";
@Injectable
export class View extends React.Component<Props> {
  render() {
    return <Panel title={this.props.title} />;
  }
}
const lazy = () => import("./lazy.js");
""",
        [
            # A re-export imports the names it re-exports.
            (1, "import", "", "helper", "./helpers"),
            (1, "import", "", "other", "./helpers"),
            (2, "call", "View", "Injectable", "Injectable"),
            (3, "reference", "View", "React", "React"),
            (3, "reference", "View", "Component", "React.Component"),
            (3, "reference", "View", "Props", "Props"),
            # A JSX element is a use of its component.
            (5, "reference", "View.render", "Panel", "Panel"),
            # A dynamic import is an import, from where it is written.
            (8, "import", "lazy", "lazy", "./lazy.js"),
        ],
    ),
    (
        "src/fmt.rs",
        b"""\
use super::*;
impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, "x") }
}
""",
        [
            # `use super::*` names no item; an impl block is not a symbol: its header's
            # references are the module's.
            (2, "reference", "", "Display", "fmt::Display"),
            (2, "reference", "", "Stack", "Stack"),
            (3, "reference", "Stack.fmt", "Formatter", "fmt::Formatter"),
        ],
    ),
]


@pytest.mark.parametrize(("path", "source", "edges"), IDIOMS, ids=[i[0] for i in IDIOMS])
def test_idioms(path: str, source: bytes, edges: list[tuple[int, str, str, str, str]]) -> None:
    graph = extract(path, source)
    assert graph is not None
    assert [(e.line, e.kind, e.source, e.target, e.text) for e in graph.edges] == edges


def test_go_grouped_type_declarations_each_have_their_doc_comment() -> None:
    source = b"""\
package a

type (
\t// Reader reads.
\tReader interface{ Read() }
\t// Writer writes.
\tWriter interface{ Write() }
)
"""
    graph = extract("a.go", source)
    assert graph is not None
    assert [(s.qualname, s.start, s.signature, s.docstring) for s in graph.symbols] == [
        ("Reader", 5, "Reader interface", "Reader reads."),
        ("Writer", 7, "Writer interface", "Writer writes."),
    ]


def test_on_redlines_own_files_function_qualnames_are_function_spans_names() -> None:
    # Real code, every grammar the repository has: a deterministic fifth of its tracked files.
    root = Path(__file__).resolve().parents[1]
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    paths = sorted(p for p in listed.split("\0") if p and has_grammar(p))[::5]
    assert len(paths) > 50
    for path in paths:
        data = (root / path).read_bytes()
        graph = extract(path, data)
        assert graph is not None and not graph.truncated, path
        got = sorted((s.start, s.end, s.qualname) for s in graph.symbols if s.kind != "class")
        want = sorted((s.start, s.end, s.name) for s in function_spans(path, data))
        assert got == want, path
