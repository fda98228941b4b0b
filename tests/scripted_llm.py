"""A scripted OpenAI-compatible model server for tests and benchmarks.

It speaks `POST /v1/chat/completions` over real HTTP on 127.0.0.1 — non-streaming JSON and
`stream: true` as server-sent events — so the code under test goes through litellm's real
request path. What it answers comes from a queue of `Reply` objects and/or a handler callable;
every request body is recorded so tests can assert on exactly what was sent.

    with ScriptedLLM([Reply.text("hello")]) as llm:
        ...  # model "openai/scripted", api_base=llm.base_url, api_key "test-key"
        assert llm.requests[0]["messages"][-1]["content"] == "hi"

Standalone (benchmarks, manual runs):

    python tests/scripted_llm.py --port 8765 --script replies.json

where replies.json is a list of reply objects (see `Reply.from_dict`) or
`{"replies": [...], "default": {...}}`; `default` answers once the list is used up.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Reply", "ScriptedLLM"]


@dataclass
class Reply:
    """One scripted answer. Build with the class methods; fields can be combined."""

    content: str | None = None
    # Each call: {"name": str, "arguments": dict | str, "id": optional str}.
    tool_calls: list[dict[str, Any]] | None = None
    finish_reason: str | None = None  # default: "tool_calls" when there are calls, else "stop"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (timeouts, concurrency)
    raw_body: str | None = None  # sent verbatim instead of a JSON completion (garbage)
    # {"prompt_tokens": n, "completion_tokens": m}; default: a len/4 estimate.
    usage: dict[str, int] | None = None
    model: str | None = None  # default: the model named in the request

    # -- constructors ------------------------------------------------------------------------

    @classmethod
    def text(cls, content: str, **kw: Any) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def tool(cls, name: str, arguments: dict[str, Any] | str, **kw: Any) -> Reply:
        """A single tool call (use `tools` for several in one message)."""
        return cls(tool_calls=[{"name": name, "arguments": arguments}], **kw)

    @classmethod
    def tools(cls, *calls: tuple[str, dict[str, Any] | str], **kw: Any) -> Reply:
        return cls(tool_calls=[{"name": n, "arguments": a} for n, a in calls], **kw)

    @classmethod
    def truncated(cls, content: str = "partial answer that was cut o", **kw: Any) -> Reply:
        return cls(content=content, finish_reason="length", **kw)

    @classmethod
    def rate_limited(cls, retry_after: str | float | None = 1, **kw: Any) -> Reply:
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        return cls(status=429, headers=headers, **kw)

    @classmethod
    def error(cls, status: int = 500, message: str = "scripted server error", **kw: Any) -> Reply:
        body = json.dumps({"error": {"message": message, "type": "server_error", "code": status}})
        return cls(status=status, raw_body=body, **kw)

    @classmethod
    def slow(cls, delay: float, content: str = "slow answer", **kw: Any) -> Reply:
        return cls(content=content, delay=delay, **kw)

    @classmethod
    def garbage(cls, body: str = "<html>502 proxy says hello</html>{not json", **kw: Any) -> Reply:
        return cls(raw_body=body, **kw)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Reply:
        """A reply from JSON: the dataclass fields, plus `retry_after` as a shortcut."""
        d = dict(d)
        retry_after = d.pop("retry_after", None)
        reply = cls(**d)
        if retry_after is not None:
            reply.headers.setdefault("Retry-After", str(retry_after))
            if reply.status == 200:
                reply.status = 429
        return reply


Handler = Callable[[dict[str, Any]], "Reply | str | dict[str, Any] | None"]


def _as_reply(value: Reply | str | dict[str, Any]) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    return Reply.from_dict(value)


def _estimate_tokens(obj: Any) -> int:
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return max(1, len(text) // 4)


class ScriptedLLM:
    """The server. Replies come from the queue first, then `handler`, then `default`.

    When nothing is left it answers HTTP 400 "script exhausted" — a non-retryable error, so a
    test that makes more calls than it scripted fails fast and says why.
    """

    def __init__(
        self,
        replies: Iterable[Reply | str | dict[str, Any]] = (),
        *,
        handler: Handler | None = None,
        default: Reply | str | dict[str, Any] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._queue: deque[Reply] = deque(_as_reply(r) for r in replies)
        self.handler = handler
        self.default = None if default is None else _as_reply(default)
        self.requests: list[dict[str, Any]] = []  # every request body, in arrival order
        self.sizes: list[int] = []  # the bytes of each request body, in the same order
        self.headers: list[dict[str, str]] = []  # the matching request headers
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._host = host
        self._port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------------------------

    def push(self, *replies: Reply | str | dict[str, Any]) -> None:
        with self._lock:
            self._queue.extend(_as_reply(r) for r in replies)

    @property
    def pending(self) -> int:
        """Queued replies not yet served."""
        with self._lock:
            return len(self._queue)

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.handler is not None:
            value = self.handler(body)
            if value is not None:
                return _as_reply(value)
        if self.default is not None:
            return self.default
        return Reply.error(400, "ScriptedLLM: script exhausted (no reply left for this request)")

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    def start(self) -> ScriptedLLM:
        server = _Server((self._host, self._port), _make_handler(self))
        server.daemon_threads = True  # a handler stuck in a delay must not block shutdown
        self._server = server
        # A short poll interval: shutdown() waits up to one interval, once per test.
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()  # wakes handlers sleeping in a delay
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- building responses ------------------------------------------------------------------

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        calls = [
            {
                "id": c.get("id") or f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {
                    "name": c["name"],
                    "arguments": c["arguments"]
                    if isinstance(c["arguments"], str)
                    else json.dumps(c["arguments"]),
                },
            }
            for c in reply.tool_calls or []
        ]
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if calls:
            message["tool_calls"] = calls
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        usage = dict(reply.usage or {})
        usage.setdefault("prompt_tokens", _estimate_tokens(body.get("messages", [])))
        usage.setdefault(
            "completion_tokens", _estimate_tokens((reply.content or "") + json.dumps(calls))
        )
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }

    def _chunks(self, body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
        """The same completion as OpenAI-style stream chunks."""
        full = self._completion(body, reply)
        message = full["choices"][0]["message"]
        base = {k: full[k] for k in ("id", "created", "model")} | {
            "object": "chat.completion.chunk"
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        chunks = [chunk({"role": "assistant", "content": ""})]
        content = message.get("content") or ""
        step = max(1, len(content) // 3)  # a few pieces, so consumers see real increments
        for i in range(0, len(content), step):
            chunks.append(chunk({"content": content[i : i + step]}))
        for i, call in enumerate(message.get("tool_calls", [])):
            head = {"index": i, "id": call["id"], "type": "function"}
            head["function"] = {"name": call["function"]["name"], "arguments": ""}
            chunks.append(chunk({"tool_calls": [head]}))
            args = {"index": i, "function": {"arguments": call["function"]["arguments"]}}
            chunks.append(chunk({"tool_calls": [args]}))
        chunks.append(chunk({}, full["choices"][0]["finish_reason"]))
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append(base | {"choices": [], "usage": full["usage"]})
        return chunks


class _Server(ThreadingHTTPServer):
    # The default listen backlog (5) drops connections when twenty reviewers connect at once,
    # and the client then waits a full retry; a model server would not.
    request_queue_size = 256
    daemon_threads = True


def _make_handler(llm: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: one request per connection, so a stream ends when the connection closes
        # and no keep-alive state leaks between scripted replies.
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

        def _send(self, status: int, body: bytes, headers: dict[str, str], ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                data = {"object": "list", "data": [{"id": "scripted", "object": "model"}]}
                self._send(200, json.dumps(data).encode(), {}, "application/json")
            else:
                self._send(404, b'{"error": {"message": "not found"}}', {}, "application/json")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_unparsed": raw.decode("utf-8", "replace")}
            with llm._lock:
                llm.requests.append(body)
                llm.sizes.append(len(raw))
                llm.headers.append({k.lower(): v for k, v in self.headers.items()})
                llm.in_flight += 1
                llm.max_in_flight = max(llm.max_in_flight, llm.in_flight)
            try:
                self._answer(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout): nothing to answer
            finally:
                with llm._lock:
                    llm.in_flight -= 1

        def _answer(self, body: dict[str, Any]) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, b'{"error": {"message": "not found"}}', {}, "application/json")
                return
            reply = llm._next_reply(body)
            if reply.delay and llm._closing.wait(reply.delay):
                return
            if reply.status != 200 or reply.raw_body is not None:
                text = reply.raw_body
                if text is None:
                    msg = "rate limited" if reply.status == 429 else f"HTTP {reply.status}"
                    text = json.dumps({"error": {"message": msg, "code": reply.status}})
                ctype = "application/json" if reply.status != 200 else "text/html"
                self._send(reply.status, text.encode(), reply.headers, ctype)
                return
            if body.get("stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                for c in llm._chunks(body, reply):
                    self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                return
            data = json.dumps(llm._completion(body, reply)).encode()
            self._send(200, data, reply.headers, "application/json")

    return _Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible model server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--script", help="JSON: a list of replies or {replies, default}")
    args = parser.parse_args(argv)
    replies: list[dict[str, Any]] = []
    default: dict[str, Any] | None = {"content": "ok"}
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, list):
            replies, default = data, None
        else:
            replies, default = data.get("replies", []), data.get("default")
    llm = ScriptedLLM(replies, default=default, host=args.host, port=args.port)
    llm.start()
    print(f"scripted model server on {llm.base_url} (Ctrl-C to stop)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        llm.close()


if __name__ == "__main__":
    main()
