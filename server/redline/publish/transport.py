"""How a request reaches the forge: `gh api` or `glab api`, through the hardened runner.

The runner's `run_gh_api`/`run_glab` give the forge CLI a clean environment (its own token,
nothing else) and refuse options that would point it at another repository. Endpoints are
built by github.py/gitlab.py from the origin's project, never taken from text. `--include`
puts the HTTP status line first, so a 422 is read as a status, not guessed from stderr.
`DryRun` sends reads (they change nothing and decide update-or-create) and prints every write.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from redline.git.process import ProcessResult, decode
from redline.git.runner import GitRunner
from redline.report.controls import escape_controls

Method = Literal["GET", "POST", "PATCH", "PUT"]
_STATUS_RE: Final = re.compile(r"HTTP/[0-9.]+ ([0-9]{3})")


@dataclass(frozen=True)
class ApiCall:
    method: Method
    endpoint: str  # relative to the API root: repos/OWNER/REPO/…, projects/ID/…
    body: dict[str, Any] | None = None


@dataclass(frozen=True)
class ApiResponse:
    status: int  # the HTTP status; 0 when no HTTP exchange happened (not logged in, offline)
    data: Any = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class Transport(Protocol):
    def send(self, call: ApiCall) -> ApiResponse: ...


class CliTransport:
    """`gh api` or `glab api` in the repository's directory."""

    def __init__(
        self, tool: Literal["gh", "glab"], runner: GitRunner, cwd: Path, hostname: str | None
    ) -> None:
        self.tool = tool
        self.runner = runner
        self.cwd = cwd
        self.hostname = hostname

    def send(self, call: ApiCall) -> ApiResponse:
        args = ["api", "--method", call.method, "--include"]
        if self.hostname:
            args += ["--hostname", self.hostname]
        payload: bytes | None = None
        if call.body is not None:
            args += ["--header", "Content-Type: application/json", "--input", "-"]
            payload = json.dumps(call.body).encode()
        args.append(call.endpoint)
        run = self.runner.run_gh_api if self.tool == "gh" else self.runner.run_glab
        result: ProcessResult = run(self.cwd, *args, input=payload)
        return parse_included(decode(result.stdout), result.error_text)


def parse_included(output: str, stderr: str) -> ApiResponse:
    """`--include` output: a status line, headers, a blank line, the body."""
    head, sep, body = output.replace("\r\n", "\n").partition("\n\n")
    match = _STATUS_RE.match(head)
    if match is None:
        # No HTTP exchange: the CLI failed before it (not logged in, no network).
        return ApiResponse(0, None, (stderr or output).strip()[:500])
    status = int(match.group(1))
    data: Any = None
    text = body if sep else ""
    if text.strip():
        try:
            data = json.loads(text)
        except ValueError:
            data = None
    error = "" if 200 <= status < 300 else _error_text(data, stderr, status)
    return ApiResponse(status, data, error)


def _error_text(data: Any, stderr: str, status: int) -> str:
    if isinstance(data, dict):
        message = data.get("message")
        if isinstance(message, str) and message:
            details = data.get("errors")
            return f"HTTP {status}: {message}" + (f" {json.dumps(details)}" if details else "")
    return f"HTTP {status}: {stderr.strip()[:300]}"


@dataclass
class DryRun:
    """Reads go to `reads` (when there is one); writes are shown by `show` and not sent."""

    reads: Transport | None
    show: Callable[[str], None]
    shown: list[ApiCall] = field(default_factory=list)
    _next_id: int = 0

    def send(self, call: ApiCall) -> ApiResponse:
        if call.method == "GET":
            if self.reads is None:
                return ApiResponse(0, None, "dry run without the forge CLI")
            return self.reads.send(call)
        self.shown.append(call)
        body = "" if call.body is None else json.dumps(call.body, indent=2, ensure_ascii=False)
        self.show(escape_controls(f"{call.method} {call.endpoint}\n{body}\n"))
        self._next_id += 1
        return ApiResponse(201, {"id": -self._next_id, "html_url": "", "web_url": ""})
