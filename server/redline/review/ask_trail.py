"""What an `ask` agent did and looked at, for its review: the log of its tool calls (recorded
by an executor wrapped around the real one, bounded, for the task record and the coverage
note), the files of the diffs it read, and the current text of the files it names (for
anchoring its findings and for the verifier).
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from redline.agent.llm import LLMClient
from redline.agent.toolkit import ToolExecutor, ToolRegistry, ToolResult
from redline.diff.parse import parse_git_diff
from redline.encoding import decode_text
from redline.errors import RedlineError
from redline.git.names import check_rel_path
from redline.git.process import strip_control
from redline.git.repo import Repo
from redline.git.runner import GitRunner
from redline.json_bounds import loads as bounded_loads
from redline.model import DiffStats
from redline.plural import plural
from redline.progress import CancelToken, Progress, Stage
from redline.redaction import redact, redact_data
from redline.review.assemble import (
    record_update,
)
from redline.review.submission import (
    SUBMIT_TOOL,
)
from redline.store import TaskRecord
from redline.tools.names import is_secret_path

log = logging.getLogger("redline.review.ask")  # the same logger as the run it is part of

MAX_RECORDED_ARGUMENT_CHARS: Final = 1_000
MAX_RECORDED_ERROR_CHARS: Final = 300
MAX_NOTE_TOOLS: Final = 12  # distinct tool names listed in the coverage note
_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")


# -- what the agent did ------------------------------------------------------------------------


@dataclass
class CallLog:
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
        # Redacted before they are cut to size (a key cut in half is no longer recognised)
        # for the record and the progress line; `args` itself still names the files read.
        shown = redact_data(args)
        entry: dict[str, Any] = {
            "call": len(self.entries) + 1,
            "tool": shown_name,
            "arguments": _bounded_json(shown),
            "ok": result.ok,
        }
        if not result.ok:
            error = redact(strip_control(result.content))
            entry["error"] = error[:MAX_RECORDED_ERROR_CHARS]
        self.entries.append(entry)
        self.names.append(shown_name if name in self.known else "unknown tool")
        if result.ok and name in ("git", "gh") and "diff --git " in result.content:
            self.diffs.append(result.content)
        if result.ok and name in ("read_file", "read_function"):
            path = args.get("path")
            if isinstance(path, str):
                self.files_read.append(path)
        text = f"agent: {shown_name} {_call_label(name, shown)}".rstrip()
        self.progress.report(self.client.ledger.event(Stage.ASKING, text, len(self.entries)))
        record_update(self.record, "tool_calls", self.entries)


class RecordingExecutor(ToolExecutor):
    """The executor the agent uses, reporting each call once it has run.

    The agent loop has no per-call hook; the executor is the one place every call the model
    makes passes through (unknown tools and invalid arguments included).
    """

    def __init__(self, registry: ToolRegistry, calls: CallLog, cancel: CancelToken) -> None:
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
        value = bounded_loads(arguments or "{}")
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
        return f"({plural(len(findings), 'finding')})" if isinstance(findings, list) else ""
    for key in ("command", "path", "symbol"):
        value = args.get(key)
        if isinstance(value, str):
            text = strip_control(value)
            return text if len(text) <= 80 else text[:79] + "…"
    return ""


def tools_note(names: list[str], steps: int) -> str:
    counts = Counter(names)
    listed = [f"{n} ×{c}" for n, c in counts.most_common(MAX_NOTE_TOOLS)]
    if len(counts) > MAX_NOTE_TOOLS:
        listed.append(f"… {len(counts) - MAX_NOTE_TOOLS} more")
    used = ", ".join(listed) if listed else "none"
    return f"agent: {len(names)} tool calls in {steps} model steps ({used})"


# -- the diff the agent looked at ----------------------------------------------------------------


def diff_files(texts: list[str]) -> tuple[list[str], DiffStats]:
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


class CurrentText:
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
        return None if data is None else decode_text(data)[0]

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
