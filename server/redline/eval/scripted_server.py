"""A minimal OpenAI-compatible chat-completions server on 127.0.0.1 for scripted models.

`redline eval`'s self-check (the oracle, `eval/oracle.py`) runs the real pipeline — litellm's
real request path included — against a model whose answers a Python callable computes. The
tests' `tests/scripted_llm.py` does the same with fault injection (status codes, delays,
garbage bodies, tool calls); this is the package's minimal version, so the eval does not depend
on the test tree: `POST /v1/chat/completions`, a JSON completion with `usage`, or the same
answer as server-sent events when the request asks for `stream: true`.

The handler gets the request body and returns the answer's text, or a `(text, finish_reason)`
pair. An exception in the handler is answered with HTTP 400 (not retried by the client), so a
broken script fails fast and says why.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = str | tuple[str, str]
ChatHandler = Callable[[dict[str, Any]], Answer]

__all__ = ["Answer", "ChatHandler", "ScriptedServer"]


def _tokens(obj: Any) -> int:
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return max(1, len(text) // 4)


def completion(body: dict[str, Any], content: str, finish: str = "stop") -> dict[str, Any]:
    """An OpenAI chat completion for `content` (usage estimated at 4 characters a token)."""
    prompt, answer = _tokens(body.get("messages", [])), _tokens(content)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "scripted"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": answer,
            "total_tokens": prompt + answer,
        },
    }


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many reviewers connect at once; the default 5 drops some
    daemon_threads = True


class ScriptedServer:
    """`with ScriptedServer(handler) as s:` — model "openai/<anything>", api_base=s.base_url."""

    def __init__(self, handler: ChatHandler, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.handler = handler
        self.requests = 0
        self._lock = threading.Lock()
        self._server = _Server((host, port), _make_handler(self))
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ScriptedServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _make_handler(owner: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection: no keep-alive state

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, b'{"error": {"message": "not found"}}')
                return
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with owner._lock:
                owner.requests += 1
            try:
                body = json.loads(raw or b"{}")
                answer = owner.handler(body)
            except Exception as exc:  # a broken script: a non-retryable error that says why
                message = f"scripted handler failed: {type(exc).__name__}: {exc}"
                self._send(400, json.dumps({"error": {"message": message}}).encode())
                return
            content, finish = (answer, "stop") if isinstance(answer, str) else answer
            data = completion(body, content, finish)
            try:
                if body.get("stream"):
                    self._stream(data)
                else:
                    self._send(200, json.dumps(data).encode())
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up

        def _stream(self, data: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            base = {k: data[k] for k in ("id", "created", "model")}
            base["object"] = "chat.completion.chunk"
            choice = data["choices"][0]
            deltas = [
                {"index": 0, "delta": choice["message"], "finish_reason": None},
                {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]},
            ]
            for delta in deltas:
                self.wfile.write(f"data: {json.dumps(base | {'choices': [delta]})}\n\n".encode())
            usage = base | {"choices": [], "usage": data["usage"]}
            self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
            self.wfile.flush()

    return _Handler
