"""The `workspace/executeCommand` commands: what an editor (or a user's keymap) can ask for.

`redline.review {scope, base?, ref?, range?, pr?, folder?}` and `redline.ask {request,
folder?}` start a review and return its task id at once; `redline.rerun`, `redline.cancel
{taskId?}`, `redline.clear`, `redline.showRuns {runs: [kind…] | "all"}` (which runs' findings
are shown: review, debate, ask), `redline.dismiss {id | ids, reason, all?, learn?}` (`learn`:
true, or {paths?, private?}: the reason also becomes a learning, memory/learnings.py),
`redline.export {format, path?}`; and the commands code actions carry (`fixes.py`: a fix
applied, dismiss a finding (or all like it) or a file, show the suggested code) with positional
`[uri, id]` arguments. Each parses its arguments first; see `handlers.py` for the errors a
client gets back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from redline.errors import UsageError
from redline.lsp import diagnostics, dismissals, fixes, sidebar, uris
from redline.lsp.folders import RUN_KINDS
from redline.lsp.handlers import Handlers
from redline.lsp.jobs import start_review
from redline.lsp.reviews import EditorRequest, ask_command, only_arg, review_command

if TYPE_CHECKING:
    from redline.lsp.language_server import RedlineServer

HANDLERS = Handlers()
EXPORT_FORMATS = ("markdown", "json", "json-simple", "sarif")


# -- arguments ---------------------------------------------------------------------------------


def object_arg(args: tuple[Any, ...]) -> dict[str, Any]:
    """Commands take one object argument; clients that send none get {}; a bare string is
    `{value}` (Helix and some keymaps pass one)."""
    first = only_arg(args)
    if first is None:
        return {}
    if isinstance(first, dict):
        return first
    if isinstance(first, str):
        return {"value": first}
    raise UsageError("expected one object argument")


def finding_id_arg(args: tuple[Any, ...]) -> str:
    """A finding id from `{id}` or from fixes.py's positional `[uri, id]`."""
    if len(args) == 2 and all(isinstance(a, str) for a in args):
        return str(args[1])
    data = object_arg(args)
    value = _string(data, "id") or _string(data, "findingId") or _string(data, "value")
    if not value:
        raise UsageError("which finding? pass {id: 'RL-...'}")
    return value


def _string(data: dict[str, Any], key: str) -> str | None:
    """`data[key]`, a string when present (a number or a list there is the client's mistake)."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{key} must be a string, not {type(value).__name__}")
    return value.strip() or None


def _folder_hint(data: dict[str, Any]) -> str | None:
    return _string(data, "folder") or _string(data, "uri")


# -- reviews -----------------------------------------------------------------------------------


def _start(ls: RedlineServer, request: EditorRequest) -> dict[str, Any]:
    folder = ls.folder_for(request.folder)
    return {"taskId": start_review(ls, folder, request.request).task_id}


@HANDLERS.command("redline.review", lambda args: review_command(only_arg(args)))
def cmd_review(ls: RedlineServer, request: EditorRequest) -> dict[str, Any]:
    return _start(ls, request)


@HANDLERS.command("redline.ask", lambda args: ask_command(only_arg(args)))
def cmd_ask(ls: RedlineServer, request: EditorRequest) -> dict[str, Any]:
    return _start(ls, request)


@HANDLERS.command("redline.rerun", lambda args: _folder_hint(object_arg(args)))
def cmd_rerun(ls: RedlineServer, hint: str | None) -> dict[str, Any]:
    folder = ls.folder_for(hint)
    if folder.last_request is None:
        raise UsageError("nothing to re-run yet: start a review first (redline.review)")
    return {"taskId": start_review(ls, folder, folder.last_request).task_id}


def _task_id(args: tuple[Any, ...]) -> str | None:
    data = object_arg(args)
    return _string(data, "taskId") or _string(data, "task_id") or _string(data, "value")


@HANDLERS.command("redline.cancel", _task_id)
def cmd_cancel(ls: RedlineServer, task_id: str | None) -> dict[str, Any]:
    if task_id:
        jobs = [j for j in [ls.registry.get(task_id)] if j is not None]
    else:
        jobs = ls.registry.running()
    for job in jobs:
        job.cancel("cancelled by the user")
        what = "debate" if job.request.kind == "debate" else "review"
        ls.log_message(f"Redline: cancelling {what} {job.task_id}")
    return {"cancelled": [j.task_id for j in jobs]}


@HANDLERS.command("redline.clear", object_arg)
def cmd_clear(ls: RedlineServer, data: dict[str, Any]) -> dict[str, Any]:
    for folder in ls.folders.values():
        diagnostics.clear_folder(ls, folder)
    ls.tracker.clear()
    return {"cleared": True}


def _runs_arg(args: tuple[Any, ...]) -> tuple[tuple[str, ...] | None, str | None]:
    """`{runs: ["review", "debate"] | "all", folder?}`: which kinds of run to show."""
    data = object_arg(args)
    value = data.get("runs", data.get("value"))
    if value in (None, "all"):
        return None, _folder_hint(data)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError('runs must be "all" or a list of run kinds')
    unknown = sorted(set(value) - set(RUN_KINDS))
    if unknown or not value:
        raise UsageError(
            f"unknown run kind {', '.join(map(repr, unknown))}" if unknown else "no run kind",
            hint=f"one or more of {', '.join(RUN_KINDS)}, or all",
        )
    return tuple(k for k in RUN_KINDS if k in value), _folder_hint(data)


@HANDLERS.command("redline.showRuns", _runs_arg)
def cmd_show_runs(
    ls: RedlineServer, arg: tuple[tuple[str, ...] | None, str | None]
) -> dict[str, Any]:
    """Show the findings of some kinds of run only (or all): diagnostics and the sidebar's
    list follow. The runs themselves are kept; `all` shows every one again."""
    runs, hint = arg
    targets = [ls.folder_for(hint)] if hint else list(ls.folders.values())
    for folder in targets:
        folder.shown_runs = runs
        diagnostics.republish_folder(ls, folder)
    return {"shownRuns": list(runs) if runs is not None else None}


# -- findings ----------------------------------------------------------------------------------


@HANDLERS.command(fixes.FIX_APPLIED, finding_id_arg)
def cmd_fix_applied(ls: RedlineServer, finding_id: str) -> dict[str, Any]:
    """Run by the client right after it applied a quick fix: the finding is done with."""
    dismissals.forget(ls, finding_id)
    return {"closed": finding_id}


@dataclass(frozen=True)
class Dismissal:
    ids: list[str]
    reason: str
    all_like_this: bool = False  # `all: true`: every identical finding, not only this one
    learn: dismissals.Learn | None = None  # `learn`: the reason becomes a learning too


def _dismissal(args: tuple[Any, ...]) -> Dismissal:
    data = object_arg(args)
    ids = data.get("ids")
    if ids is not None and not (isinstance(ids, list) and ids):
        raise UsageError("ids must be a non-empty list of finding ids")
    if ids is not None and not all(isinstance(i, str) for i in ids):
        raise UsageError("ids must be a non-empty list of finding ids")
    every = data.get("all", False)
    if not isinstance(every, bool):
        raise UsageError(f"all must be true or false, not {type(every).__name__}")
    learn = _learn(data.get("learn", False))
    reason = _string(data, "reason") or ""
    return Dismissal(ids if ids else [finding_id_arg(args)], reason, every, learn)


def _learn(value: Any) -> dismissals.Learn | None:
    if value is False or value is None:
        return None
    if value is True:
        return dismissals.Learn()
    if not isinstance(value, dict):
        raise UsageError("learn must be true or an object {paths?, private?}")
    paths = value.get("paths", [])
    private = value.get("private", False)
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise UsageError("learn.paths must be a list of path globs")
    if not isinstance(private, bool):
        raise UsageError("learn.private must be true or false")
    return dismissals.Learn(tuple(paths), private)


@HANDLERS.command("redline.dismiss", _dismissal)
def cmd_dismiss(ls: RedlineServer, dismissal: Dismissal) -> dict[str, Any]:
    """Dismiss findings: each one only, or with `all: true` every finding like it (the same
    code, category and rule in its file: its other occurrences, and future ones). With
    `learn`, the reason is also kept as a learning for later reviews (checked first: a reason
    that cannot be a learning dismisses nothing)."""
    learned = dismissals.check_learning(ls, dismissal.ids, dismissal.reason, dismissal.learn)
    findings = [
        dismissals.dismiss(ls, i, dismissal.reason, all_like_this=dismissal.all_like_this)
        for i in dismissal.ids
    ]
    answer: dict[str, Any] = {"dismissed": [f.id for f in findings]}
    if dismissal.all_like_this:
        answer["all"] = True
    if learned is not None:
        answer["learned"] = dismissals.learn(learned, dismissal.learn)
    return answer


@HANDLERS.command(fixes.DISMISS, finding_id_arg)
def cmd_dismiss_finding(ls: RedlineServer, finding_id: str) -> dict[str, Any]:
    finding = dismissals.dismiss(ls, finding_id, "dismissed in the editor")
    return {"dismissed": [finding.id]}


@HANDLERS.command(fixes.DISMISS_ALL, finding_id_arg)
def cmd_dismiss_all_like(ls: RedlineServer, finding_id: str) -> dict[str, Any]:
    """The code action's "all like this": every occurrence of the finding's base id."""
    finding = dismissals.dismiss(
        ls, finding_id, "dismissed in the editor (all like this)", all_like_this=True
    )
    return {"dismissed": [finding.id], "all": True}


def _uri_arg(args: tuple[Any, ...]) -> str:
    first = only_arg(args)
    uri = first if isinstance(first, str) else _string(object_arg(args), "uri")
    if not uri:
        raise UsageError("which file? pass [uri]")
    return uri


@HANDLERS.command(fixes.DISMISS_FILE, _uri_arg)
def cmd_dismiss_file(ls: RedlineServer, uri: str) -> dict[str, Any]:
    reason = "dismissed in the editor (all findings in the file)"
    ids = [t.id for t in ls.tracker.visible(uris.key(uri), "mark")]
    return {"dismissed": [dismissals.dismiss(ls, i, reason).id for i in ids]}


@HANDLERS.command(fixes.SHOW_SUGGESTED, finding_id_arg)
def cmd_show_suggested(ls: RedlineServer, finding_id: str) -> dict[str, Any]:
    found = dismissals.find_finding(ls, finding_id)
    if found is None:
        raise UsageError("that finding is no longer current")
    finding = found[2]
    code = finding.improved_code or ""
    ls.show_message(
        f"Redline suggests for {finding.file}: {finding.title}\n\n{code}", types.MessageType.Info
    )
    return {"id": finding.id, "improvedCode": code}


# -- export ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Export:
    format: str
    folder: str | None
    path: str | None


def _export(args: tuple[Any, ...]) -> Export:
    data = object_arg(args)
    fmt = (_string(data, "format") or "markdown").lower()
    if fmt not in EXPORT_FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; use {', '.join(EXPORT_FORMATS)}")
    return Export(fmt, _string(data, "folder"), _string(data, "path"))


@HANDLERS.command("redline.export", _export)
def cmd_export(ls: RedlineServer, export: Export) -> dict[str, Any]:
    from redline.report import render

    folder = ls.folder_for(export.folder)
    shown = sidebar.shown_review(ls, folder)
    if shown is None:
        raise UsageError("nothing to export yet: run a review first")
    text = render(shown, export.format)
    if export.path is None:
        return {"format": export.format, "content": text}
    target = Path(export.path).expanduser()
    if not target.is_absolute():
        target = (folder.root or folder.path) / target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    return {"format": export.format, "path": str(target), "findings": len(shown.findings)}
