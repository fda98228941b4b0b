"""A raw JSON-RPC client over a subprocess's pipes: Content-Length framing and nothing else.

pytest-lsp's client validates what it sends and answers the server's requests itself; the
protocol tests need a client that can send anything (params of the wrong shape, requests out of
order), answer nothing, and see every byte the server writes.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "redline.lsp"]
Message = dict[str, Any]


def frame(message: Message) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class RawClient:
    """One server process; a thread reads its stdout into `messages` (every one, in order)."""

    def __init__(
        self,
        env: dict[str, str],
        cwd: Path,
        command: list[str] | None = None,
        answer: Callable[[Message], Any] | None = None,
    ) -> None:
        """`command` runs instead of SERVER; `answer`, when given, answers each request the
        server sends (its return value is the result), as an editor does."""
        self._answer = answer
        self._write_lock = threading.Lock()  # the reader thread answers requests too
        self.proc = subprocess.Popen(
            command or SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self.messages: list[Message] = []
        self._arrived: queue.Queue[None] = queue.Queue()
        self._lock = threading.Lock()
        self._next_id = 1000
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr: list[bytes] = []
        self._err_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._err_reader.start()

    # -- the wire ------------------------------------------------------------------------------

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            header = out.readline()
            if not header:
                return
            length = 0
            while header.strip():
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
                header = out.readline()
            body = out.read(length)
            message = json.loads(body)
            with self._lock:
                self.messages.append(message)
            if self._answer is not None and "method" in message and "id" in message:
                result = self._answer(message)
                with contextlib.suppress(OSError, ValueError):  # stdin closed: the end
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            self._arrived.put(None)

    def _drain_stderr(self) -> None:
        err = self.proc.stderr
        assert err is not None
        for line in iter(err.readline, b""):
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def send(self, message: Message) -> None:
        self.send_bytes(frame(message))

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    # -- requests and what came back -------------------------------------------------------------

    def request(self, method: str, params: Any = None, *, timeout: float = 10.0) -> Message:
        """Send a request; its response (result or error), or AssertionError after `timeout`."""
        self._next_id += 1
        msg_id = self._next_id
        message: Message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def notify(self, method: str, params: Any = None) -> None:
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def wait_for(self, match: Callable[[Message], bool], timeout: float = 10.0) -> Message:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            with self._lock:
                current = list(self.messages)
            for message in current[seen:]:
                if match(message):
                    return message
            seen = len(current)
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message in {timeout} s; got {current[-5:]}")
            with contextlib.suppress(queue.Empty):
                self._arrived.get(timeout=min(left, 0.05))

    def initialize(self, root: Path, capabilities: Message | None = None) -> Message:
        response = self.request(
            "initialize",
            {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities or {}},
        )
        self.notify("initialized", {})
        return response

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin and wait for the process (killed if it will not go); its exit code."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        finally:
            self._reader.join(timeout=5)
            self._err_reader.join(timeout=5)
            for pipe in (self.proc.stdout, self.proc.stderr):
                if pipe is not None:
                    pipe.close()


def review_uncommitted(client: RawClient) -> dict[str, Any]:
    """Run an uncommitted review through executeCommand; its finished reviewState params."""
    answer = client.request(
        "workspace/executeCommand",
        {"command": "redline.review", "arguments": [{"scope": "uncommitted"}]},
    )
    task_id = answer["result"]["taskId"]
    done = client.wait_for(
        lambda m: (
            m.get("method") == "redline/reviewState"
            and m["params"].get("taskId") == task_id
            and m["params"]["state"] in ("finished", "failed", "cancelled")
        ),
        timeout=60,
    )
    params: dict[str, Any] = done["params"]
    assert params["state"] == "finished", params
    return params
