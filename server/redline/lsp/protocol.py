"""The JSON-RPC rules pygls 2.1.1 leaves unkept: every request gets an answer.

pygls structures each message while the JSON is parsed; when a request's params do not fit its
lsprotocol type (`textDocument/hover {}`, a position with `line: "x"`) it raises inside its read
loop, which logs the error and drops the message: the client waits for ever. Here such a
message becomes a `Malformed` value that `handle_message` answers with InvalidParams — for
every method, since it happens before any handler is looked up.

The lifecycle, as LSP 3.17 says: a request before `initialize` answers ServerNotInitialized
(pygls answers it with null), notifications then are dropped; a request after `shutdown`
answers InvalidRequest (pygls ignores it); `exit` sets the exit code, 0 after `shutdown` and 1
without (pygls computes it, then the SystemExit carrying it is swallowed by its own runner).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger("redline.lsp")

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = types.ErrorCodes.ServerNotInitialized.value


@dataclass(frozen=True)
class Malformed:
    """A message whose params (or envelope) did not fit its type."""

    jsonrpc: str
    id: Any  # None for a notification
    method: str | None
    problem: str


def _describe(exc: BaseException) -> str:
    # cattrs names the failing field in the chained exceptions; the values never (they can be
    # the user's code).
    cause = exc.__cause__
    if cause is not None and hasattr(cause, "exceptions"):
        notes = [str(e) for e in cause.exceptions]
        return "; ".join(n for n in notes if n) or type(cause).__name__
    return str(cause or exc) or type(exc).__name__


def _valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


class RedlineProtocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initialize_received = False
        self.exit_code: int | None = None  # set by `exit`

    @property
    def shut_down(self) -> bool:
        return bool(self._shutdown)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            method = data.get("method")
            return Malformed(
                jsonrpc=self.VERSION,
                id=data.get("id") if "method" in data else None,
                method=method if isinstance(method, str) else None,
                problem=_describe(exc),
            )

    def handle_message(self, message: Any) -> None:
        if isinstance(message, Malformed):
            self._answer_malformed(message)
            return
        method = getattr(message, "method", None)
        is_request = method is not None and hasattr(message, "id")
        if is_request and not _valid_id(message.id):
            self._error(
                None, INVALID_REQUEST, f"{method}: the request id must be a string or number"
            )
            return
        if method == types.EXIT:
            self.exit_code = 0 if self.shut_down else 1
        elif is_request and self.shut_down:
            self._error(message.id, INVALID_REQUEST, f"{method}: the server is shutting down")
            return
        elif method == types.INITIALIZE:
            if self.initialize_received:
                self._error(message.id, INVALID_REQUEST, "initialize: sent twice")
                return
            self.initialize_received = True
        elif method is not None and not self.initialize_received:
            if is_request:
                self._error(message.id, SERVER_NOT_INITIALIZED, f"{method}: send initialize first")
            return  # notifications before initialize are dropped (exit aside)
        super().handle_message(message)

    def _answer_malformed(self, message: Malformed) -> None:
        if message.method is None and message.id is None:
            log.warning("ignored an unreadable message: %s", message.problem)
            return
        if message.id is None:  # a notification: nobody to answer
            log.warning("ignored %s with invalid params: %s", message.method, message.problem)
            return
        if not _valid_id(message.id):
            self._error(None, INVALID_REQUEST, f"invalid request id: {message.problem}")
            return
        log.warning("%s: invalid params: %s", message.method, message.problem)
        self._error(
            message.id, INVALID_PARAMS, f"{message.method}: invalid params: {message.problem}"
        )

    def _error(self, msg_id: Any, code: int, text: str) -> None:
        # A plain dict: ResponseErrorMessage's id cannot be null (the spec's answer to a request
        # whose id is unreadable).
        self._send_data(
            {"jsonrpc": self.VERSION, "id": msg_id, "error": {"code": code, "message": text}}
        )

    def notify_json(self, method: str, params: dict[str, Any]) -> None:
        """A notification whose params are JSON-like already (dicts, lists, strings, numbers):
        written as they are, where `notify` first walks them with cattrs (a review's whole
        `redline/findings` list: 1,200 rows, ~30 ms of the event loop)."""
        self._send_data({"jsonrpc": self.VERSION, "method": method, "params": params})

    def write_json_text(self, body: str) -> None:
        """A message serialized already (ASCII JSON, so characters are bytes): framed and
        written as `_send_data` writes one (sidebar.send_whole makes a big one off the loop)."""
        if self.writer is None:
            return
        header = (
            f"Content-Length: {len(body)}\r\n"
            f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        )
        # stdio, the only transport `redline lsp` serves: a synchronous writer, as for
        # `_send_data`, so frames go out in the order they are written.
        self.writer.write((header + body).encode(self.CHARSET))
