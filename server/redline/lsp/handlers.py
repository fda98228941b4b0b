"""Handlers declared where they live, registered on the server in one place.

Each module of the language server (commands.py, jobs.py, actions.py, documents.py) declares
its LSP features and commands on a module-level `Handlers`; `server.py` registers them all on
the one server object. So a feature is found in the module of its job, and the server is built
without import-time side effects between modules.

Commands (`Handlers.command`) and custom requests (`Handlers.request`) share one contract: the
client's arguments are parsed first; a `RedlineError` while parsing is the client's mistake and
answers a JSON-RPC `InvalidParams` error, one in the body answers `RequestFailed`; both carry
the message. The error answer is the one thing sent: the client that asked shows it (Neovim,
Emacs, Kate and Helix show an error answer; the VS Code extension shows it from `client.command`,
and VS Code itself from a code action's command). A `window/showMessage` on top of it showed
every command error twice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from redline.errors import RedlineError
from redline.redaction import redact

if TYPE_CHECKING:
    from redline.lsp.language_server import RedlineServer

log = logging.getLogger("redline.lsp")

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
    logged in one line by the command."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, CommandError)


def _parse(name: str, parse: Callable[[Any], Parsed], raw: Any) -> Parsed:
    try:
        return parse(raw)
    except RedlineError as exc:
        raise InvalidArguments(_answered(name, exc)) from None


def _failed(name: str, exc: RedlineError) -> RequestFailed:
    return RequestFailed(_answered(name, exc))


def _answered(name: str, exc: RedlineError) -> str:
    """The error answer's message (redacted: it can quote a path or the user's input), logged
    in one line as the server's record of it (at INFO: the client shows the answer; a warning
    on stderr would show it again in editors that print the server's stderr)."""
    text = redact(f"{name}: {exc}")
    log.info("%s", text)
    return text


@dataclass
class Command(Generic[Parsed]):
    name: str
    parse: Callable[[tuple[Any, ...]], Parsed]
    body: Callable[[RedlineServer, Parsed], Any]

    def __call__(self, ls: Any, *args: Any) -> Any:
        # The annotations here are what pygls reads to structure the arguments: Any, so the
        # client's JSON reaches `parse` as it was sent.
        parsed = _parse(self.name, self.parse, args)
        try:
            return self.body(ls, parsed)
        except RedlineError as exc:
            raise _failed(self.name, exc) from None


@dataclass
class Request(Generic[Parsed]):
    """A custom request (`redline/report`, ...) under the commands' error contract. Its params
    arrive as pygls' namedtuples; `parse` gets them as plain JSON (a dict, or None)."""

    name: str
    parse: Callable[[Any], Parsed]
    body: Callable[[RedlineServer, Parsed], Awaitable[Any]]

    async def __call__(self, ls: Any, params: Any) -> Any:
        parsed = _parse(self.name, self.parse, plain_json(params))
        try:
            return await self.body(ls, parsed)
        except RedlineError as exc:
            raise _failed(self.name, exc) from None


def plain_json(value: Any) -> Any:
    """pygls' params of a method lsprotocol does not know (namedtuples, recursively) as JSON."""
    if hasattr(value, "_asdict"):
        return {k: plain_json(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    return value


@dataclass
class Handlers:
    features: list[tuple[str, Any, Handler]] = field(default_factory=list)
    commands: list[Command[Any]] = field(default_factory=list)
    requests: list[Request[Any]] = field(default_factory=list)

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

    def request(
        self, name: str, parse: Callable[[Any], Parsed]
    ) -> Callable[
        [Callable[[RedlineServer, Parsed], Awaitable[Any]]],
        Callable[[RedlineServer, Parsed], Awaitable[Any]],
    ]:
        """A custom request `name` (async body), with the same contract as `command`."""

        def declare(
            body: Callable[[RedlineServer, Parsed], Awaitable[Any]],
        ) -> Callable[[RedlineServer, Parsed], Awaitable[Any]]:
            self.requests.append(Request(name, parse, body))
            return body

        return declare

    def register(self, server: RedlineServer) -> None:
        for method, options, fn in self.features:
            server.feature(method, options)(fn)
        for request in self.requests:
            server.feature(request.name)(_bound_request(request))
        for command in self.commands:
            server.command(command.name)(_bound(command))


def _bound(command: Command[Any]) -> Handler:
    # pygls inspects the handler's signature (the `ls` parameter, *args): a plain function.
    def handler(ls: Any, *args: Any) -> Any:
        return command(ls, *args)

    handler.__name__ = handler.__qualname__ = command.name.replace(".", "_")
    return handler


def _bound_request(request: Request[Any]) -> Handler:
    async def handler(ls: Any, params: Any) -> Any:
        return await request(ls, params)

    handler.__name__ = handler.__qualname__ = request.name.replace("/", "_")
    return handler
