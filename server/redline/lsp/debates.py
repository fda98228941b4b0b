"""The debate's commands: start one, and steer the one running.

- `redline.debate {scope, base?, ref?, range?, pr?, rounds?, folder?}` starts a debate as a job
  like any review (jobs.py: progress, `redline/reviewState`, findings as diagnostics, the
  report) and returns `{taskId}` at once; its events stream as `redline/debate`
  notifications (debate_stream.py).
- `redline.debateInterject {taskId, text}` → `{queued}`: the user's words, added to the
  transcript before the next turn (false: the debate is already stopping).
- `redline.debateStop {taskId}` → `{stopping}`: end the debate now and go on to the
  summaries. (`redline.cancel` aborts it instead: no summaries, no findings.)

A task id that is not a running debate answers RequestFailed: the client's view of the debate
is out of date, the arguments themselves were fine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redline.debate.events import DebateControl
from redline.errors import UsageError
from redline.lsp.handlers import Handlers
from redline.lsp.jobs import start_review
from redline.lsp.reviews import EditorRequest, debate_command, only_arg

if TYPE_CHECKING:
    from redline.lsp.language_server import RedlineServer

HANDLERS = Handlers()


def _object(args: tuple[Any, ...], command: str) -> dict[str, Any]:
    first = only_arg(args)
    if not isinstance(first, dict):
        raise UsageError(f"{command} expects one object argument {{taskId, ...}}")
    return first


def _task_id(data: dict[str, Any]) -> str:
    value = data.get("taskId") or data.get("task_id")
    if not isinstance(value, str) or not value.strip():
        raise UsageError("which debate? pass {taskId} as redline.debate returned it")
    return value.strip()


@dataclass(frozen=True)
class Interjection:
    task_id: str
    text: str


def _interjection(args: tuple[Any, ...]) -> Interjection:
    data = _object(args, "redline.debateInterject")
    text = data.get("text")
    if not isinstance(text, str) or not text.strip():
        raise UsageError("an interjection needs text: what the debaters should hear")
    return Interjection(_task_id(data), text)


def _stop(args: tuple[Any, ...]) -> str:
    return _task_id(_object(args, "redline.debateStop"))


def _control(ls: RedlineServer, task_id: str) -> DebateControl:
    """The running debate's control; UsageError (RequestFailed) when there is none."""
    job = ls.registry.get(task_id)
    if job is None or job.cancelled:
        raise UsageError(f"no debate {task_id} is running (it ended or was cancelled)")
    if job.control is None:
        raise UsageError(f"task {task_id} is a review, not a debate")
    return job.control


@HANDLERS.command("redline.debate", lambda args: debate_command(only_arg(args)))
def cmd_debate(ls: RedlineServer, request: EditorRequest) -> dict[str, Any]:
    folder = ls.folder_for(request.folder)
    return {"taskId": start_review(ls, folder, request.request).task_id}


@HANDLERS.command("redline.debateInterject", _interjection)
def cmd_interject(ls: RedlineServer, interjection: Interjection) -> dict[str, Any]:
    queued = _control(ls, interjection.task_id).interject(interjection.text)
    return {"queued": queued}


@HANDLERS.command("redline.debateStop", _stop)
def cmd_stop(ls: RedlineServer, task_id: str) -> dict[str, Any]:
    _control(ls, task_id).stop("user")
    ls.log_message(f"Redline: stopping debate {task_id}; the summaries follow")
    return {"stopping": True}
