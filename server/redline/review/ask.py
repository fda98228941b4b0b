"""`redline ask "<request>"`: one agent, all the tools, and `prompts/system.md`.

The model reads a free-form request ("review the current branch", "审查拉取请求 12"), makes
its own git/gh calls, and ends by calling `submit_review` with findings in the usual schema.
From there the findings go the way every review's do: anchored by their quoted code against
the file's current content, checked by the verifier, summarised and rendered.

A run always yields a Review. When the agent stops without submitting (out of steps, looping,
model failure, budget), the review failed: `Review.failure` and the first coverage note say
why (the report's headline says so, the CLI exits 2), and the task record is marked failed
with the reason; nothing the agent did before is lost from the record.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from redline.agent.llm import LLMClient, LLMNotConfigured
from redline.agent.loop import Agent, AgentResult
from redline.agent.toolkit import ToolError, ToolExecutor, ToolRegistry, ToolResult
from redline.config_models import Settings
from redline.diff.parse import parse_git_diff
from redline.errors import RedlineError
from redline.git.names import check_rel_path
from redline.git.process import strip_control
from redline.git.repo import Repo
from redline.git.runner import GitRunner
from redline.model import Coverage, DiffStats, Finding, Review
from redline.progress import CancelToken, NullProgress, Progress, Stage
from redline.requests import AskRequest
from redline.review.anchoring import anchor_finding
from redline.review.assemble import (
    build_review,
    close_record,
    fill_usage,
    open_record,
    record_update,
    recorded_run,
    report_done,
    verify_or_keep,
)
from redline.review.estimate import request_cap
from redline.review.pipeline import new_task_id
from redline.review.prompts import load_prompt
from redline.review.schemas import SubmittedReview
from redline.review.structured import extract_json
from redline.review.submission import (
    MAX_FINDINGS,
    MAX_SUMMARY_CHARS,
    SUBMIT_TOOL,
    parse_submission,
    submit_review_tool,
)
from redline.review.summary import render_summary
from redline.review.verifier import BATCH
from redline.store import TaskRecord, TaskStore
from redline.tools.names import is_secret_path
from redline.tools.registry import build_tool_registry
from redline.tools.sandbox import ToolContext, ToolLimits, make_visible

log = logging.getLogger(__name__)

ROLE: Final = "ask"
ASK_NEEDS_MODEL: Final = (
    "ask needs a model: set --model or REDLINE_MODEL (or [models] model in the user config)"
)
MAX_REQUEST_CHARS: Final = 4_000  # what the model gets; a request is a sentence, not a file
MAX_LABEL_CHARS: Final = 120
MAX_RECORDED_ARGUMENT_CHARS: Final = 1_000
MAX_RECORDED_ERROR_CHARS: Final = 300
MAX_NOTE_TOOLS: Final = 12  # distinct tool names listed in the coverage note

# Said to the model once when it answers in prose instead of calling submit_review. One
# sentence, so it stays here (like the truncation note in agent/llm.py) rather than in prompts/.
SUBMIT_NUDGE: Final = (
    "You answered without calling submit_review. Call submit_review now, exactly once, with "
    "your summary and findings (an empty findings list if you found nothing)."
)

_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")


# -- what the agent did ------------------------------------------------------------------------


@dataclass
class _CallLog:
    """Every tool call the agent makes, recorded as it happens (and in the task record)."""

    record: TaskRecord | None
    progress: Progress
    client: LLMClient
    known: frozenset[str]
    entries: list[dict[str, Any]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)  # tool outputs that carry a unified diff
    files_read: list[str] = field(default_factory=list)

    def add(self, name: str, arguments: str | dict[str, Any] | None, result: ToolResult) -> None:
        shown_name = name if name in self.known else _unknown_name(name)
        args = result.arguments or _loose_arguments(arguments)
        entry: dict[str, Any] = {
            "call": len(self.entries) + 1,
            "tool": shown_name,
            "arguments": _bounded_json(args),
            "ok": result.ok,
        }
        if not result.ok:
            entry["error"] = strip_control(result.content)[:MAX_RECORDED_ERROR_CHARS]
        self.entries.append(entry)
        self.names.append(shown_name if name in self.known else "unknown tool")
        if result.ok and name in ("git", "gh") and "diff --git " in result.content:
            self.diffs.append(result.content)
        if result.ok and name in ("read_file", "read_function"):
            path = args.get("path")
            if isinstance(path, str):
                self.files_read.append(path)
        text = f"agent: {shown_name} {_call_label(name, args)}".rstrip()
        self.progress.report(self.client.ledger.event(Stage.ASKING, text, len(self.entries)))
        record_update(self.record, "tool_calls", self.entries)


class _RecordingExecutor(ToolExecutor):
    """The executor the agent uses, reporting each call once it has run.

    The agent loop has no per-call hook; the executor is the one place every call the model
    makes passes through (unknown tools and invalid arguments included).
    """

    def __init__(self, registry: ToolRegistry, calls: _CallLog, cancel: CancelToken) -> None:
        super().__init__(registry)
        self.calls = calls
        self.cancel = cancel

    async def run(self, name: str, arguments: str | dict[str, Any] | None) -> ToolResult:
        self.cancel.check()
        result = await super().run(name, arguments)
        try:
            self.calls.add(name, arguments, result)
        except Exception:  # bookkeeping must never cost the model its tool result
            log.warning("could not record a tool call", exc_info=True)
        return result


def _unknown_name(name: str) -> str:
    # The name is the model's text (and so possibly the attacker's): keep it short and plain.
    cleaned = strip_control(name)[:64]
    return cleaned if _TOOL_NAME.fullmatch(cleaned) else "(invalid tool name)"


def _loose_arguments(arguments: str | dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "{}")
    except (ValueError, TypeError):
        return {"raw": str(arguments)[:MAX_RECORDED_ARGUMENT_CHARS]}
    return value if isinstance(value, dict) else {"raw": str(arguments)}


def _bounded_json(value: dict[str, Any]) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > MAX_RECORDED_ARGUMENT_CHARS:
        return text[:MAX_RECORDED_ARGUMENT_CHARS] + f"… [{len(text):,} characters]"
    return text


def _call_label(name: str, args: dict[str, Any]) -> str:
    if name == SUBMIT_TOOL:
        findings = args.get("findings")
        return f"({len(findings)} findings)" if isinstance(findings, list) else ""
    for key in ("command", "path", "symbol"):
        value = args.get(key)
        if isinstance(value, str):
            text = strip_control(value)
            return text if len(text) <= 80 else text[:79] + "…"
    return ""


def _tools_note(names: list[str], steps: int) -> str:
    counts = Counter(names)
    listed = [f"{n} ×{c}" for n, c in counts.most_common(MAX_NOTE_TOOLS)]
    if len(counts) > MAX_NOTE_TOOLS:
        listed.append(f"… {len(counts) - MAX_NOTE_TOOLS} more")
    used = ", ".join(listed) if listed else "none"
    return f"agent: {len(names)} tool calls in {steps} model steps ({used})"


# -- the diff the agent looked at ----------------------------------------------------------------


def _diff_files(texts: list[str]) -> tuple[list[str], DiffStats]:
    """Files and +/- lines of the diffs the agent saw (the last view of a file wins)."""
    per_file: dict[str, tuple[int, int]] = {}
    for text in texts:
        for fd in parse_git_diff(text):
            added = sum(len(h.added) for h in fd.hunks)
            per_file[strip_control(fd.path)] = (added, sum(h.removed for h in fd.hunks))
    stats = DiffStats(
        files=len(per_file),
        added=sum(a for a, _ in per_file.values()),
        removed=sum(r for _, r in per_file.values()),
    )
    return sorted(per_file), stats


# -- file contents for anchoring and the verifier -------------------------------------------------


class _CurrentText:
    """A file's current text: the working tree, else HEAD; None when neither has it.

    Paths come from the model. Repo.read_worktree refuses traversal, `.git` and symlinked
    directories; secret files are refused here, so their content never becomes a finding's
    quoted code in a report.
    """

    def __init__(self, root: Path, runner: GitRunner, max_bytes: int) -> None:
        self.repo = Repo(root, runner)
        self.max_bytes = max_bytes
        self._cache: dict[str, str | None] = {}

    def __call__(self, path: str) -> str | None:
        if path not in self._cache:
            self._cache[path] = self._read(path)
        return self._cache[path]

    def _read(self, path: str) -> str | None:
        try:
            if is_secret_path(check_rel_path(path)):
                return None
            data = self.repo.read_worktree(path, self.max_bytes)
            if data is None:
                data = self.repo.read_blob("HEAD", path, self.max_bytes)
        except RedlineError as exc:
            log.info("cannot read %r for anchoring: %s", strip_control(path)[:200], exc.message)
            return None
        return None if data is None else data.decode("utf-8", errors="replace")

    def normalize(self, path: str, root: Path) -> str:
        """The repository-relative form of a path as models write it (`./x`, `b/x`, absolute)."""
        p = path.strip().replace("\\", "/")
        if p.startswith("/"):
            try:
                p = Path(p).relative_to(root).as_posix()
            except ValueError:
                return p
        while p.startswith("./"):
            p = p[2:]
        if p[:2] in ("a/", "b/") and self(p) is None and self(p[2:]) is not None:
            p = p[2:]
        return p


# -- the run -------------------------------------------------------------------------------------


def scope_label(request: str) -> str:
    text = " ".join(strip_control(request).split())
    if len(text) > MAX_LABEL_CHARS:
        text = text[: MAX_LABEL_CHARS - 1] + "…"
    return f'ask: "{text}"'


def _stop_note(result: AgentResult, nudged: bool) -> str:
    error = strip_control(result.error or "")[:MAX_RECORDED_ERROR_CHARS]
    match result.stop_reason:
        case "max_steps":
            return f"the agent stopped after {result.steps} steps without submitting a review"
        case "loop":
            return (
                f"the agent was stopped for repeating a tool call ({error}) before submitting "
                "a review"
            )
        case "budget":
            return f"the model budget ran out before the agent submitted a review: {error}"
        case "request_cap":
            return f"the {error} before the agent submitted a review"
        case "error":
            return f"a model call failed before the agent submitted a review: {error}"
        case _:
            asked = ", even when asked to" if nudged else ""
            return (
                f"the agent answered without calling {SUBMIT_TOOL}{asked}; its answer is shown "
                "as the summary and no findings were submitted"
            )


def _json_submission(content: str | None) -> SubmittedReview | None:
    """A review the model wrote as a JSON answer instead of calling the tool, if it is one."""
    try:
        data = extract_json(content)
        if not isinstance(data, dict) or "findings" not in data:
            return None
        return parse_submission({"summary": "", **data})
    except (ValueError, ToolError):
        return None


def _answering_model(client: LLMClient) -> str:
    for rec in reversed(client.ledger.records):
        if rec.role == ROLE and rec.error is None:
            return rec.model
    models = client.models_for(ROLE)
    return models[0][0] if models else "unknown"


@dataclass
class _Outcome:
    result: AgentResult
    submitted: SubmittedReview | None
    nudged: bool = False
    steps: int = 0
    tool_calls: int = 0


async def _run_agent(agent: Agent, request: str, accepted: list[SubmittedReview]) -> _Outcome:
    result = await agent.run(request)
    outcome = _Outcome(result, None, steps=result.steps, tool_calls=result.tool_calls)
    if result.stop_reason == "submitted" and accepted:
        outcome.submitted = accepted[-1]
        return outcome
    if result.stop_reason != "final_answer":
        return outcome
    outcome.submitted = _json_submission(result.content)
    remaining = agent.max_steps - result.steps
    if outcome.submitted is not None or remaining < 1:
        return outcome
    # Once, and within the same step budget: the conversation so far plus the reminder.
    outcome.nudged = True
    again = await agent.run(
        [*result.messages, {"role": "user", "content": SUBMIT_NUDGE}], max_steps=remaining
    )
    outcome.result = again
    outcome.steps += again.steps
    outcome.tool_calls += again.tool_calls
    if again.stop_reason == "submitted" and accepted:
        outcome.submitted = accepted[-1]
    elif again.stop_reason == "final_answer":
        outcome.submitted = _json_submission(again.content)
    return outcome


async def run_ask(
    ask: AskRequest,
    repo: Path,
    settings: Settings,
    *,
    client: LLMClient | None = None,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    store: TaskStore | None = None,
    max_steps: int = 50,
) -> Review:
    """Review what `request` asks for, with one tool-using agent. Never raises for what the
    model does; raises RedlineError when no model is configured, the request is empty or the
    repository is unusable."""
    progress = progress or NullProgress()
    cancel = cancel or CancelToken()
    client = client or LLMClient(settings)
    if not client.is_configured(ROLE):
        raise LLMNotConfigured(ASK_NEEDS_MODEL)
    request = ask.check().request
    if client.max_requests is None:
        client.max_requests = request_cap(ask_planned_calls(max_steps), None)
    api_key = settings.models.api_key
    ctx = ToolContext(
        repo,
        runner=GitRunner(),
        extra_secrets=(api_key,) if api_key else (),
        limits=ToolLimits.from_settings(settings),
    )
    label = scope_label(request)
    task_id = new_task_id()
    content = {
        "request": request,
        "repo": str(ctx.root),
        "scope": "ask",
        "scope_label": label,  # what `redline history` lists
        "model": settings.models.for_role(ROLE)[0],
    }
    record = open_record(store, task_id, content)
    with recorded_run(record), cancel.attached(asyncio.get_running_loop()):
        return await _ask(
            request, ctx, label, task_id, settings, client, progress, cancel, record, max_steps
        )


def ask_planned_calls(max_steps: int) -> int:
    """An ask run's planned model calls: every agent step, and the verifier batches for the
    most findings a submission may hold."""
    return max(1, max_steps) + -(-MAX_FINDINGS // BATCH)


async def _ask(
    request: str,
    ctx: ToolContext,
    label: str,
    task_id: str,
    settings: Settings,
    client: LLMClient,
    progress: Progress,
    cancel: CancelToken,
    record: TaskRecord | None,
    max_steps: int,
) -> Review:
    accepted: list[SubmittedReview] = []
    registry = build_tool_registry(ctx)
    registry.register(submit_review_tool(accepted))
    calls = _CallLog(record, progress, client, frozenset(registry.names))
    executor = _RecordingExecutor(registry, calls, cancel)
    system = load_prompt("system")
    agent = Agent(client, ROLE, registry, system, max_steps=max(1, max_steps), executor=executor)

    cancel.check()
    progress.report(client.ledger.event(Stage.ASKING, f"asking the agent: {label}"))
    outcome = await _run_agent(agent, request[:MAX_REQUEST_CHARS], accepted)
    result, submitted = outcome.result, outcome.submitted

    coverage = Coverage()
    coverage.notes.append(_tools_note(calls.names, outcome.steps))
    if outcome.nudged:
        coverage.notes.append(f"the agent was reminded once to call {SUBMIT_TOOL}")
    stop_note = None if submitted is not None else _stop_note(result, outcome.nudged)
    if stop_note:
        coverage.notes.insert(0, stop_note)
    record_update(
        record,
        "submission",
        {
            "stop_reason": result.stop_reason,
            "error": result.error,
            "steps": outcome.steps,
            "tool_calls": outcome.tool_calls,
            "submitted": submitted.model_dump(mode="json") if submitted else None,
        },
    )

    read_text = _CurrentText(ctx.root, ctx.runner, settings.review.max_file_bytes)
    source = f"model:{_answering_model(client)}"
    findings: list[Finding] = []
    for mf in submitted.findings if submitted else []:
        mf = mf.model_copy(update={"file": read_text.normalize(mf.file, ctx.root)})
        findings.append(anchor_finding(mf, read_text(mf.file), source=source))

    cancel.check()
    if findings:
        progress.report(client.ledger.event(Stage.VERIFYING, f"verifying {len(findings)} findings"))
    checked = await verify_or_keep(client, findings, read_text, coverage.notes)
    kept, dropped, quality = checked.kept, checked.dropped, checked.quality_score
    record_update(
        record,
        "verification",
        {"quality_score": quality, "dropped": [f.model_dump(mode="json") for f in dropped]},
    )
    record_update(
        record,
        "attempts",
        [
            {
                "attempt": 1,
                "stop_reason": result.stop_reason,
                "steps": outcome.steps,
                "tool_calls": outcome.tool_calls,
                "submitted": len(findings),
                "kept": len(kept),
                "dropped": len(dropped),
                "quality_score": quality,
            }
        ],
    )

    diff_files, stats = _diff_files(calls.diffs)
    coverage.reviewed_files = diff_files or sorted(set(calls.files_read))
    coverage.notes.extend(ctx.writes.notes())
    coverage.notes.extend(ctx.runner.notes(ctx.root))  # objects not read (alternates), ...
    fill_usage(client, coverage)

    review = build_review(
        settings,
        task_id=task_id,
        scope="ask",
        scope_label=label,
        repo=ctx.root,
        findings=kept,
        coverage=coverage,
        read_text=read_text,
        stats=stats,
        quality_score=quality,
        attempts=1 if outcome.steps else 0,
        dropped=dropped,
        failure=stop_note,
    )
    agent_text = submitted.summary if submitted is not None else (result.content or "")
    agent_text = make_visible(agent_text).strip()[:MAX_SUMMARY_CHARS]
    review.summary = render_summary(review.findings, None) + (
        "\n\n" + agent_text if agent_text else ""
    )
    close_record(record, review, error=stop_note)
    done = (
        f"ask stopped: {stop_note}" if stop_note else f"ask done: {len(review.findings)} findings"
    )
    report_done(progress, review, done, model_ran=True)
    return review


__all__ = ["ASK_NEEDS_MODEL", "SUBMIT_NUDGE", "run_ask", "scope_label"]
