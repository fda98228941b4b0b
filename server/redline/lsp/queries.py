"""Requests an editor's views ask (custom JSON-RPC requests), so a client never runs git or
reads Redline's files itself:

- `redline/report {folder?}` → `{taskId, scopeLabel, markdown, running}`: the last finished
  review of the folder as the Markdown report (without the findings fixed or dismissed since),
  for a report view; `markdown` is null before the first review.
- `redline/refs {folder?, limit?}` → `{current, defaultBase, branches: [{name, remote,
  current}], commits: [{sha, short, subject, author, date}]}`: what the "Review Branch
  Against…" and "Review Commit…" pickers offer.
- `redline/userConfig {create?}` → `{path, exists, created}`: the user configuration file (the
  only place a model and keys are set); `create` writes the commented template `redline init`
  writes.

Every answer passes the redactor, like the notifications.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from redline.errors import UsageError
from redline.lsp import sidebar
from redline.lsp.handlers import Handlers
from redline.redaction import redact_data

if TYPE_CHECKING:
    from redline.git.refs import Refs
    from redline.lsp.language_server import RedlineServer

HANDLERS = Handlers()
REPORT = "redline/report"
REFS = "redline/refs"
USER_CONFIG = "redline/userConfig"
MAX_REFS = 500


def _object(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise UsageError("expected an object of parameters")
    return params


def _folder(params: Any) -> str | None:
    value = _object(params).get("folder")
    if value is not None and not isinstance(value, str):
        raise UsageError("folder must be a folder URI (a string)")
    return value or None


# -- the report --------------------------------------------------------------------------------


@HANDLERS.request(REPORT, _folder)
async def report(ls: RedlineServer, folder_hint: str | None) -> dict[str, Any]:
    from redline.report import render

    folder = ls.folder_for(folder_hint)
    shown = sidebar.shown_review(ls, folder)
    running = ls.registry.current(folder.uri) is not None
    if shown is None:
        return {"taskId": None, "scopeLabel": None, "markdown": None, "running": running}
    markdown = await asyncio.to_thread(render, shown, "markdown")
    return redact_data(
        {
            "taskId": shown.task_id,
            "scopeLabel": shown.scope_label,
            "markdown": markdown,
            "running": running,
        }
    )


# -- branches and commits ----------------------------------------------------------------------


@dataclass(frozen=True)
class RefsQuery:
    folder: str | None
    limit: int


def _refs_query(params: Any) -> RefsQuery:
    limit = _object(params).get("limit", 50)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_REFS:
        raise UsageError(f"limit must be a whole number from 1 to {MAX_REFS}")
    return RefsQuery(_folder(params), limit)


@HANDLERS.request(REFS, _refs_query)
async def refs(ls: RedlineServer, query: RefsQuery) -> dict[str, Any]:
    folder = ls.folder_for(query.folder)
    found = await asyncio.to_thread(_read_refs, folder.root or folder.path, query.limit)
    return redact_data(
        {
            "current": found.current,
            "defaultBase": found.default_base,
            "branches": [
                {"name": b.name, "remote": b.remote, "current": b.current} for b in found.branches
            ],
            "commits": [
                {
                    "sha": c.sha,
                    "short": c.short,
                    "subject": c.subject,
                    "author": c.author,
                    "date": c.date,
                }
                for c in found.commits
            ],
        }
    )


def _read_refs(path: Path, limit: int) -> Refs:
    # In a worker thread: git may take a while on a large repository.
    from redline.git.refs import list_refs
    from redline.git.repo import Repo
    from redline.git.runner import GitRunner

    runner = GitRunner()
    try:
        repo = Repo(runner.find_repo_root(path), runner)
        return list_refs(repo, branch_limit=limit * 4, commit_limit=limit)
    finally:
        runner.close()


# -- the user configuration --------------------------------------------------------------------


def _create_flag(params: Any) -> bool:
    value = _object(params).get("create", False)
    if not isinstance(value, bool):
        raise UsageError("create must be true or false")
    return value


@HANDLERS.request(USER_CONFIG, _create_flag)
async def user_config(ls: RedlineServer, create: bool) -> dict[str, Any]:
    from redline import config

    path = config.user_config_file()
    created = False
    if create and not path.exists():
        try:
            config.write_template(path, include_models=True)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
        created = True
    return {"path": str(path), "exists": path.exists(), "created": created}
