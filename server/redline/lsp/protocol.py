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

A frame pygls cannot read (its body not JSON, not UTF-8, nested too deep) is JSON-RPC's Parse
error, and JSON that is no message object (a number, an array, an object without `jsonrpc`)
its Invalid Request, both answered with id null. pygls would show the user "Error in server" and
shut its thread pool down (which also reads stdin); the connection stays as it was instead.
Kate 22.12 sends `shutdown` as a notification (no id): it is taken as one, quietly.

Routine protocol events are logged at INFO (`RoutineAtInfo`): editors show a server's stderr
(Kate 22.12 puts every line in its output pane), and Kate asks for `textDocument/documentSymbol`
after every change whatever the server advertises; its MethodNotFound answer is enough.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger("redline.lsp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = types.ErrorCodes.ServerNotInitialized.value


@dataclass(frozen=True)
class Malformed:
    """A message whose params (or envelope) did not fit its type."""

    jsonrpc: str
    id: Any  # None for a notification
    method: str | None
    problem: str


# `shutdown` sent as a notification (Kate 22.12 does so).
_SHUTDOWN_NOTIFIED = object()


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
        if data.get("method") == types.SHUTDOWN and "id" not in data:
            return _SHUTDOWN_NOTIFIED
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
        if message is _SHUTDOWN_NOTIFIED:
            self._shut_down_quietly()
            return
        if isinstance(message, Malformed):
            self._answer_malformed(message)
            return
        if not hasattr(message, "jsonrpc"):  # valid JSON, but no message: 5, [..], {"id": 1}
            log.warning("ignored JSON that is not a JSON-RPC message (%s)", type(message).__name__)
            self._error(None, INVALID_REQUEST, "not a JSON-RPC message object")
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

    def _shut_down_quietly(self) -> None:
        # pygls's `shutdown` (LanguageServerProtocol.lsp_shutdown), without an answer: run as a
        # notification it would cancel its own future and log a traceback.
        handler = self.fm.features.get(types.SHUTDOWN)
        if handler is not None:
            handler(None)
        for future in list(self._request_futures.values()):
            if not future.done():
                future.cancel()
        self._shutdown = True

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

    def answer_unreadable(self, error: Exception) -> None:
        """Answer a frame whose body could not be read as a message (pygls' read loop caught
        `error`): Parse error for bytes that are not JSON, else an internal error; both id null,
        since no id could be read."""
        if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError, RecursionError)):
            # The problem's position, never the body (it can hold the user's code).
            problem = error.msg if isinstance(error, json.JSONDecodeError) else type(error).__name__
            log.warning("an unreadable frame: %s", problem)
            text = f"Parse error: the message is not valid JSON ({problem})"
            self._error(None, PARSE_ERROR, text)
            return
        log.error("could not handle a message: %r", error)
        self._error(None, INTERNAL_ERROR, f"could not handle the message: {type(error).__name__}")

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


# pygls's messages (pygls/protocol/json_rpc.py) for a method the server does not have, and for
# a `$/cancelRequest` of a request already answered (clients cancel as the cursor moves on).
_ROUTINE = (
    "Failed to handle request %r, unknown method %r",
    "Ignoring notification for unknown method %r",
    'Cancel notification for unknown message id "%s"',
)


class RoutineAtInfo(logging.Filter):
    """For pygls' protocol logger: a request or notification for a method the server does not
    have (the client got its MethodNotFound answer), or a late cancel, is routine: logged at
    INFO, not WARNING."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg not in _ROUTINE:
            return True
        record.levelno, record.levelname = logging.INFO, "INFO"
        # The record was made at WARNING: pass it on only if the log takes INFO.
        return logging.getLogger().isEnabledFor(logging.INFO)
