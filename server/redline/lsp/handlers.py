"""Handlers declared where they live, registered on the server in one place.

Each module of the language server (commands.py, jobs.py, actions.py, documents.py) declares
its LSP features and commands on a module-level `Handlers`; `server.py` registers them all on
the one server object. So a feature is found in the module of its job, and the server is built
without import-time side effects between modules.

Commands share one contract (`Handlers.command`): the client's arguments are parsed first; a
`RedlineError` while parsing is the client's mistake and answers a JSON-RPC `InvalidParams`
error, one in the body answers `RequestFailed`; both carry the message, which is also shown
with `window/showMessage` for clients that do not surface command errors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from redline.errors import RedlineError

if TYPE_CHECKING:
    from redline.lsp.language_server import RedlineServer

Parsed = TypeVar("Parsed")
Handler = Callable[..., Any]

REQUEST_FAILED = types.LSPErrorCodes.RequestFailed.value


class CommandError(JsonRpcException):
    """An error a command answers on purpose: its message is the answer (and was shown)."""


class InvalidArguments(CommandError, JsonRpcInvalidParams):
    """JSON-RPC InvalidParams: the client's arguments are wrong."""


class RequestFailed(CommandError):
    """LSP 3.17's RequestFailed: the request was well-formed but could not be done."""

    CODE = REQUEST_FAILED
    MESSAGE = "Request failed"


class QuietCommandErrors(logging.Filter):
    """For pygls' protocol logger: it logs every error answer with a traceback, as if the
    server had crashed; a command's own answer is the user's mistake, already in the reply,
    shown and logged in one line by the command."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, CommandError)


@dataclass
class Command(Generic[Parsed]):
    name: str
    parse: Callable[[tuple[Any, ...]], Parsed]
    body: Callable[[RedlineServer, Parsed], Any]

    def __call__(self, ls: Any, *args: Any) -> Any:
        # The annotations here are what pygls reads to structure the arguments: Any, so the
        # client's JSON reaches `parse` as it was sent.
        try:
            parsed = self.parse(args)
        except RedlineError as exc:
            ls.show_message(f"Redline: {exc}")
            raise InvalidArguments(f"{self.name}: {exc}") from None
        try:
            return self.body(ls, parsed)
        except RedlineError as exc:
            ls.show_message(f"Redline: {exc}")
            raise RequestFailed(f"{self.name}: {exc}") from None


@dataclass
class Handlers:
    features: list[tuple[str, Any, Handler]] = field(default_factory=list)
    commands: list[Command[Any]] = field(default_factory=list)

    def feature(self, method: str, options: Any = None) -> Callable[[Handler], Handler]:
        def declare(fn: Handler) -> Handler:
            self.features.append((method, options, fn))
            return fn

        return declare

    def command(
        self, name: str, parse: Callable[[tuple[Any, ...]], Parsed]
    ) -> Callable[[Callable[[RedlineServer, Parsed], Any]], Callable[[RedlineServer, Parsed], Any]]:
        """`workspace/executeCommand` `name`: `parse` turns the arguments into what the body
        takes (see the module docstring for errors)."""

        def declare(
            body: Callable[[RedlineServer, Parsed], Any],
        ) -> Callable[[RedlineServer, Parsed], Any]:
            self.commands.append(Command(name, parse, body))
            return body

        return declare

    def register(self, server: RedlineServer) -> None:
        for method, options, fn in self.features:
            server.feature(method, options)(fn)
        for command in self.commands:
            server.command(command.name)(_bound(command))


def _bound(command: Command[Any]) -> Handler:
    # pygls inspects the handler's signature (the `ls` parameter, *args): a plain function.
    def handler(ls: Any, *args: Any) -> Any:
        return command(ls, *args)

    handler.__name__ = handler.__qualname__ = command.name.replace(".", "_")
    return handler
