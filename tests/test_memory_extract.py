"""memory/extract.py: the code graph of one file (symbols, calls, imports, references).

Per language, one file with a class, a method, a nested function, doc comments, calls, imports
and references, and the exact symbols and edges `redline memory` stores for it. Then the
properties: qualnames are function_spans' names, spans lie in the file, arbitrary bytes never
crash, caps hold, and generated Python programs give back every function and call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from redline.diff.functions import function_spans
from redline.memory.extract import extract
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
