"""A raw JSON-RPC client for the language-server benchmarks: no client-library overhead inside
the timings. It answers the server's requests (progress tokens, registrations) with null, keeps
the diagnostics and review states it is sent, and the size of every `redline/findings`."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "redline.lsp"]


# -- a raw JSON-RPC client -----------------------------------------------------------------------


@dataclass
class Client:
    proc: asyncio.subprocess.Process
    pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    diagnostics: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    states: list[dict[str, Any]] = field(default_factory=list)
    # Every `redline/findings` received: (its body's bytes, whether it was a whole list).
    findings_sent: list[tuple[int, bool]] = field(default_factory=list)
    # When (time.perf_counter) each diagnostics publish and `redline/findings` arrived.
    landed_at: list[float] = field(default_factory=list)
    next_id: int = 0
    reader: asyncio.Task[None] | None = None

    @classmethod
    async def launch(
        cls, env: dict[str, str], log: Path, server: list[str] | None = None
    ) -> Client:
        with log.open("ab") as err:
            proc = await asyncio.create_subprocess_exec(
                *(server or SERVER),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                env=env,
            )
        client = cls(proc)
        client.reader = asyncio.create_task(client._read())
        return client

    async def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        body = json.dumps(message).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.proc.stdin.drain()

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        await self._write(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )
        return await future

    async def notify(self, method: str, params: Any) -> None:
        await self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = 0
            while (line := await stream.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if not line:
                break  # the server exited
            message = json.loads(await stream.readexactly(length))
            if message.get("method") in ("redline/findings", "textDocument/publishDiagnostics"):
                self.landed_at.append(time.perf_counter())
            if message.get("method") == "redline/findings":
                self.findings_sent.append((length, message["params"].get("full", True)))
            await self._dispatch(message)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the server closed its stdout"))

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            future = self.pending.pop(message["id"], None)
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(RuntimeError(str(message["error"])))
                else:
                    future.set_result(message.get("result"))
        elif "id" in message:
            # A server → client request (progress token, file-watcher registration): accept.
            await self._write({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "textDocument/publishDiagnostics":
            params = message["params"]
            self.diagnostics[params["uri"]] = params["diagnostics"]
        elif method == "redline/reviewState":
            self.states.append(message["params"])

    async def initialize(self, root: Path) -> Any:
        uri = root.as_uri()
        result = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": root.name}],
                "capabilities": CAPABILITIES,
            },
        )
        await self.notify("initialized", {})
        return result

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.request("shutdown", None), timeout=10)
            await self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), timeout=10)
        except (TimeoutError, ConnectionError, BrokenPipeError):
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()
        if self.reader is not None:
            await self.reader

    def ended(self, task_id: str) -> bool:
        return any(
            s.get("taskId") == task_id and s["state"] in ("finished", "cancelled", "failed")
            for s in self.states
        )


# What VS Code announces, as far as this benchmark's requests care.
CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-16"]},
    "window": {"workDoneProgress": True},
    "workspace": {"workspaceFolders": True, "workspaceEdit": {"documentChanges": True}},
    "textDocument": {
        "synchronization": {"didSave": True},
        "publishDiagnostics": {"relatedInformation": True, "versionSupport": False},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {"valueSet": ["", "quickfix", "refactor", "source"]}
            },
            "isPreferredSupport": True,
        },
    },
}


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100): with 300 samples, p99 is the 297th fastest."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(p / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]
