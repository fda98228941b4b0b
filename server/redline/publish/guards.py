"""What every write to a forge passes on its way out (publish/post.py wraps the transport):
its text made inert of control characters, and a cap on how many writes one run makes.

- `InertBodies`: every `body` in a request (a comment, a review, a note) goes through
  `escape_controls`, so an escape sequence from a file name or a model's text reaches neither
  the forge nor the dry run's printout. Other fields (paths, commit ids, positions) are data
  the forge matches, not text it shows: they go as they are.
- `WriteCap`: at most `limit` writes (POST, PATCH, PUT) per run. A forge that refuses a batch
  makes Redline post comments one by one; with 300 findings that was hundreds of writes (an
  attack run counted 1,423). github.py and gitlab.py ask `left` before each inline comment and
  keep one write for the summary, which lists what was not posted; the cap itself refuses a
  write past the limit, so a mistake in that bookkeeping fails loudly instead of flooding.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from redline.publish.common import PostError
from redline.publish.transport import ApiCall, ApiResponse, Transport
from redline.report.controls import escape_controls


@dataclass
class InertBodies:
    inner: Transport

    def send(self, call: ApiCall) -> ApiResponse:
        if call.body is None:
            return self.inner.send(call)
        return self.inner.send(replace(call, body=_inert(call.body)))


def _inert(data: Any, key: str = "") -> Any:
    if isinstance(data, dict):
        return {k: _inert(v, k) for k, v in data.items()}
    if isinstance(data, list):
        return [_inert(item, key) for item in data]
    if key == "body" and isinstance(data, str):
        return escape_controls(data)
    return data


@dataclass
class WriteCap:
    inner: Transport
    limit: int
    writes: int = field(default=0, init=False)

    @property
    def left(self) -> int:
        return self.limit - self.writes

    def send(self, call: ApiCall) -> ApiResponse:
        if call.method != "GET":
            if self.writes >= self.limit:
                raise PostError(
                    f"write cap of {self.limit} reached (publish.max_writes): not sending "
                    f"{call.method} {call.endpoint}"
                )
            self.writes += 1
        return self.inner.send(call)
