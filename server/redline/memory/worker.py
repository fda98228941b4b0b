"""`redline memory worker`: the language server's long-lived builder for one repository.

A refresh after a one-file save must take a fraction of a second as the user sees it; a fresh
`redline memory build` process per refresh spends ~1.4 s importing and ~0.6 s loading the
embedding model before it reads the file. This worker pays that once: it reads one JSON line
per request on stdin, refreshes in this process — the embedding model, the git runner (its
private repository view), the store and the in-process vector cache kept between requests —
and answers one JSON line on stdout. It exits when stdin closes.

    request:  {"paths": ["pkg/a.py", ...]}   a refresh of those repository paths
              {"paths": null}                the whole tree (incremental by blob)
    answer:   {"ok": true, "summary": "memory: ...", "seconds": 0.12, "embedded": 1}
              {"ok": false, "error": "redline: error: ..."}   the build's own reason

A request that is not such a line, or a build's RedlineError (a busy lock, a full disk, a
store that cannot be opened), is an answer with "ok": false and the worker goes on; anything
else is a bug: the worker dies with its traceback on stderr, and the language server starts
another one for the next refresh. How it is started (lowest CPU and I/O priority, a death
signal, its own process group, `python -P` so the repository is never on sys.path) is
lsp/memory_process.py's; the builder is the same hardened one as `redline memory build`.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from redline.errors import RedlineError

if TYPE_CHECKING:
    from redline.config_models import Settings
    from redline.git.runner import GitRunner
    from redline.memory.embed import Embedder
    from redline.memory.model import MemoryStore

MAX_REQUEST_BYTES = 1 << 20  # one request line; the server sends paths only
MAX_PATHS = 10_000
_TOO_LONG = "redline: error: memory worker: request too long"


class Worker:
    """One repository's refreshes, with what they share kept between them."""

    def __init__(self, repo: Path, settings: Settings) -> None:
        from redline.git.runner import GitRunner

        self.repo = repo
        self.settings = settings
        self.runner: GitRunner = GitRunner()
        self.embedder: Embedder | None = None
        self.store: MemoryStore | None = None

    def handle(self, line: str) -> dict[str, Any]:
        try:
            paths = parse_request(line)
            return self._build(paths)
        except RedlineError as exc:
            from redline.redaction import redact

            self._drop_store()  # reopened next time: an error may have left it unusable
            return {"ok": False, "error": f"redline: error: {redact(str(exc))}"}

    def _build(self, paths: list[str] | None) -> dict[str, Any]:
        from redline.memory.build import build_memory
        from redline.memory.store import open_store

        if self.embedder is None:
            from redline.memory.embed import load_embedder

            self.embedder = load_embedder()
        if self.store is None:
            self.store = open_store(self.repo, self.settings)
        report = build_memory(
            self.repo,
            self.settings,
            paths=paths,
            embedder=self.embedder,
            runner=self.runner,
            store=self.store,
        )
        return {
            "ok": True,
            "summary": report.summary(),
            "seconds": round(report.seconds, 4),
            "embedded": report.embedded,
        }

    def _drop_store(self) -> None:
        if self.store is not None:
            store, self.store = self.store, None
            with contextlib.suppress(Exception):  # already broken: nothing more to do
                store.close()

    def close(self) -> None:
        self._drop_store()
        self.runner.close()


def parse_request(line: str) -> list[str] | None:
    """The paths of one request line (None: the whole tree); RedlineError for anything else."""
    try:
        data = json.loads(line)
    except ValueError:
        raise RedlineError("memory worker: a request is one JSON object per line") from None
    if not isinstance(data, dict) or "paths" not in data:
        raise RedlineError('memory worker: a request is {"paths": [...]} or {"paths": null}')
    paths = data["paths"]
    if paths is None:
        return None
    if (
        not isinstance(paths, list)
        or len(paths) > MAX_PATHS
        or not all(isinstance(p, str) and p for p in paths)
    ):
        raise RedlineError("memory worker: paths must be a list of repository paths")
    return list(paths)


def serve(repo: Path, settings: Settings, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Answer requests until stdin closes."""
    worker = Worker(repo, settings)
    try:
        while True:
            raw = stdin.readline(MAX_REQUEST_BYTES + 1)
            if not raw:
                return 0
            if len(raw) > MAX_REQUEST_BYTES and not raw.endswith(b"\n"):
                stdin.readline()  # the rest of the oversized line
                answer: dict[str, Any] = {"ok": False, "error": _TOO_LONG}
            elif not raw.strip():
                continue
            else:
                answer = worker.handle(raw.decode("utf-8", "replace"))
            stdout.write(json.dumps(answer).encode() + b"\n")
            stdout.flush()
    finally:
        worker.close()


def run_worker(repo: Path, settings: Settings) -> int:
    return serve(repo, settings, sys.stdin.buffer, sys.stdout.buffer)


__all__ = ["Worker", "parse_request", "run_worker", "serve"]
