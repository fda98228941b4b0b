"""Validated settings models. Loading and merging (user file, repo file, env, flags) is in
`config.py`; this module only says what a valid setting looks like."""

from __future__ import annotations

import os
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from redline.model import Severity

_RUFF_SELECTOR = re.compile(r"[A-Z]{1,8}[0-9]{0,4}")


class _Strict(BaseModel):
    # Unknown keys are errors: a typo in a config file must not be silently ignored.
    model_config = ConfigDict(extra="forbid")


class CustomAnalyzer(_Strict):
    """An extra analyzer: a command that writes SARIF 2.1.0 to stdout.

    `command` is an argv list; the placeholder "{files}" expands to the changed files that match
    `globs` (paths relative to the working directory the command runs in).
    """

    name: str
    command: list[str] = Field(min_length=1)
    globs: list[str] = Field(default_factory=lambda: ["*"])
    timeout: float = Field(default=120.0, gt=0)


class AnalyzerSettings(_Strict):
    ruff: bool = True
    bandit: bool = True
    # ast-grep with Redline's rule pack (Go, Java, Rust, TypeScript/JavaScript, Python).
    ast_grep: bool = True
    # Which Python files bandit runs on (ruff's S rules, which re-implement most of bandit's
    # checks at ~1/70 of its cost, check every file). "beyond_ruff": files whose added lines
    # hold what one of bandit's other checks looks for (SQL, `shell=`, `chmod`, `random`, ...);
    # "security_sensitive": files with a unit tagged so; "all": every changed Python file.
    bandit_scope: Literal["beyond_ruff", "security_sensitive", "all"] = "beyond_ruff"
    # Ruff rules Redline runs. The repository's own ruff config is deliberately not read: the
    # review should not depend on (or be silenced by) configuration the change itself controls.
    ruff_select: list[str] = Field(
        default_factory=lambda: ["F", "E9", "E722", "B", "S", "PLE", "RUF006", "UP031"]
    )
    # The native analyzers (issue 26), each on the changed files of its kind: JavaScript and
    # TypeScript, shell scripts, Dockerfiles, GitHub Actions workflows and actions.
    oxlint: bool = True
    shellcheck: bool = True
    hadolint: bool = True
    zizmor: bool = True
    custom: list[CustomAnalyzer] = Field(default_factory=list)
    timeout: float = Field(default=120.0, gt=0)

    @field_validator("ruff_select")
    @classmethod
    def _ruff_selectors(cls, v: list[str]) -> list[str]:
        # Rule codes and prefixes ("S", "PLE", "RUF006", "ALL"): anything else would make ruff
        # refuse the whole run, and with it every rule.
        bad = [s for s in v if not _RUFF_SELECTOR.fullmatch(s)]
        if bad:
            raise ValueError(f"not ruff rule selectors: {bad[:5]} (e.g. 'S', 'PLE', 'RUF006')")
        return v


class ReviewSettings(_Strict):
    fail_on: Severity | None = None
    min_severity: Severity = Severity.INFO
    max_file_bytes: int = Field(default=1_000_000, gt=0)
    large_unit_lines: int = Field(default=400, gt=0)
    exclude: list[str] = Field(default_factory=list)  # extra glob patterns to skip
    context_tokens: int = Field(default=6000, gt=0)  # context budget per review unit
    cache: bool = True  # reuse model answers for unchanged units and context

    @field_validator("fail_on", "min_severity", mode="before")
    @classmethod
    def _severity(cls, v: object) -> object:
        if isinstance(v, str):
            return Severity.parse(v)
        return v


def check_api_base(v: str | None) -> str | None:
    if v is None or v == "":
        return None
    if not (v.startswith("http://") or v.startswith("https://")):
        raise ValueError("api_base must be an http:// or https:// URL")
    return v.rstrip("/")


def check_model(v: str | None) -> str | None:
    if v is None or v == "":
        return None
    if any(c.isspace() for c in v) or len(v) > 200:
        raise ValueError("model must be a litellm model string such as 'gpt-4o-mini'")
    return v


class ModelSettings(_Strict):
    """Where code is sent. Only ever read from the user's file, the environment or flags."""

    model: str | None = None
    api_base: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    fallbacks: list[str] = Field(default_factory=list)
    roles: dict[str, RoleModel] = Field(default_factory=dict)

    @field_validator("roles")
    @classmethod
    def _roles(cls, v: dict[str, RoleModel]) -> dict[str, RoleModel]:
        unknown = sorted(set(v) - set(ROLES))
        if unknown:
            raise ValueError(f"unknown role(s) {unknown}; roles are {list(ROLES)}")
        return v

    def for_role(self, role: str) -> tuple[str | None, str | None, list[str]]:
        """(model, api_base, fallbacks) for a role, with the defaults filled in."""
        r = self.roles.get(role)
        model = (r.model if r and r.model else None) or self.model
        api_base = (r.api_base if r and r.api_base else None) or self.api_base
        fallbacks = r.fallbacks if r and r.fallbacks is not None else self.fallbacks
        return model, api_base, list(fallbacks)

    @field_validator("api_base")
    @classmethod
    def _api_base(cls, v: str | None) -> str | None:
        return check_api_base(v)

    @field_validator("model")
    @classmethod
    def _model(cls, v: str | None) -> str | None:
        return check_model(v)


ROLES = ("planner", "reviewer", "verifier", "summarizer", "ask", "debater")


class _ModelTarget(_Strict):
    """A model and where to reach it, both checked: a role's, a debater's, the summarizer's."""

    model: str | None = None
    api_base: str | None = None

    @field_validator("model")
    @classmethod
    def _model(cls, v: str | None) -> str | None:
        return check_model(v)

    @field_validator("api_base")
    @classmethod
    def _api_base(cls, v: str | None) -> str | None:
        return check_api_base(v)


class RoleModel(_ModelTarget):
    """A model for one role; unset fields fall back to the `[models]` defaults."""

    fallbacks: list[str] | None = None


class LLMSettings(_Strict):
    """How models are called: limits, retries and budget (safe to set anywhere but a repo
    file cannot choose *where* code goes — that is `[models]`)."""

    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    # Requests in flight at once, at most: 16 lets a 20-file change's reviewers run in about
    # one round (benchmarks/model_spend.py); a 429 halves it for the run (agent/limiter.py).
    max_concurrency: int = Field(default=16, ge=1, le=64)
    budget_tokens: int | None = Field(default=None, gt=0)
    budget_usd: float | None = Field(default=None, gt=0)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    # Hard ceiling on HTTP requests to models per review or ask run, retries and re-asks
    # included. None: derived from the plan (2 × planned calls + 20). Like the `[tools]` caps,
    # never taken from a repository file: the change under review decides how big the plan is.
    max_requests: int | None = Field(default=None, ge=1)
    # The most bytes one model request may carry (its messages and tools as JSON): a larger
    # one is not sent, and its unit is reported as not reviewed (agent/attempts.py). A
    # backstop behind the per-file diff cap and the context budget; user settings only, like
    # max_requests: a repository file must not lift it.
    max_request_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)


class ToolSettings(_Strict):
    """Per-run caps on what the model's tools may do (a run: one review or ask session).
    Only ever read from the user's file, the environment or flags."""

    max_write_files: int = Field(default=20, ge=0)  # write_file: distinct reports per run
    max_write_total_bytes: int = Field(default=10 * 1024 * 1024, ge=0)  # all writes of a run
    # The programs Redline runs, when the user names them (absolute, `~` expanded); unset:
    # looked up on PATH minus the reviewed repository and directories others can write
    # (git/binaries.py). User settings only: a repository file's value is ignored.
    git: str | None = None
    gh: str | None = None
    glab: str | None = None

    @field_validator("git", "gh", "glab")
    @classmethod
    def _absolute(cls, v: str | None) -> str | None:
        if v is None or v == "":
            return None
        path = os.path.expanduser(v)
        if not os.path.isabs(path):
            raise ValueError(f"must be an absolute path, got {v[:200]!r}")
        return path


DEBATER_NAME = r"^[a-z0-9][a-z0-9_-]{0,39}$"
BUILTIN_DEBATERS = ("security", "performance", "code-quality")  # prompts/debate/<name>.md


class DebaterSettings(_ModelTarget):
    """One debater: a model and a role prompt. A built-in name (security, performance,
    code-quality) may leave the prompt out; a new one needs `prompt` or `prompt_file`.
    No model: the `debater` role's ([models.roles.debater], else [models] model)."""

    prompt: str | None = None  # the role, inline Markdown
    prompt_file: str | None = None  # or a Markdown file (~ expanded)
    label: str | None = None  # how the transcript names it (default: from the name)


class SummarizerSettings(_ModelTarget):
    """The neutral summarizer; no model: the `summarizer` role's."""


class DebateSettings(_Strict):
    """`redline debate`: who argues, for how long, within how much text. Only ever read from
    the user's file, the environment or flags (models and prompts decide where code goes and
    what is asked of it)."""

    rounds: int = Field(default=3, ge=1, le=20)
    turn_steps: int = Field(default=6, ge=1, le=30)  # model calls per turn, tool steps included
    turn_tokens: int = Field(default=1500, gt=0)  # most output tokens of one turn
    # The transcript a debater is shown; older turns are summarized (by its own model) beyond it.
    transcript_tokens: int = Field(default=6000, gt=0)
    change_tokens: int = Field(default=12000, gt=0)  # the change shown to every debater
    reviewers: dict[str, DebaterSettings] = Field(default_factory=dict)  # empty: the built-ins
    summarizer: SummarizerSettings = Field(default_factory=SummarizerSettings)

    @field_validator("reviewers")
    @classmethod
    def _reviewers(cls, v: dict[str, DebaterSettings]) -> dict[str, DebaterSettings]:
        import re

        for name, d in v.items():
            if not re.match(DEBATER_NAME, name):
                raise ValueError(
                    f"debater name {name[:40]!r}: use lowercase letters, digits, - and _"
                )
            if d.prompt and d.prompt_file:
                raise ValueError(f"debater {name}: set prompt or prompt_file, not both")
            if not (d.prompt or d.prompt_file) and name not in BUILTIN_DEBATERS:
                raise ValueError(
                    f"debater {name}: needs prompt or prompt_file (built-in roles: "
                    f"{', '.join(BUILTIN_DEBATERS)})"
                )
        if len(v) == 1:
            raise ValueError("a debate needs at least two reviewers")
        return v


class StoreSettings(_Strict):
    """Task records (`redline history`): the newest `keep_records`, none older than `keep_days`
    (whichever keeps fewer); 0 turns that limit off."""

    keep_records: int = Field(default=200, ge=0)
    keep_days: float = Field(default=30.0, ge=0)


DEFAULT_MAX_WRITES = 50


class PublishSettings(_Strict):
    """`--post`: API writes (comments, reviews, edits) one run may make, at most; what the cap
    leaves out is listed in the summary comment. Only ever read from the user's file, the
    environment or flags: the change under review decides how many findings there are."""

    max_writes: int = Field(default=DEFAULT_MAX_WRITES, ge=1, le=10_000)


class MemorySettings(_Strict):
    """Project memory's store (issue 27): where the index goes and how large it may grow.
    Only ever read from the user's file, the environment or flags: a repository must not
    choose where its index is written (or sent) nor raise its own caps."""

    # A PostgreSQL URL (postgresql://user:password@host/db) for a team's shared index; unset:
    # one SQLite file per repository in Redline's cache. Never printed with its password
    # (memory/url.py); a password can also come from PGPASSWORD or ~/.pgpass instead.
    url: str | None = Field(default=None, repr=False)
    max_symbols: int = Field(default=200_000, ge=1)  # symbols stored, at most
    max_index_mb: int = Field(default=1024, ge=1)  # the store's size on disk (or in the database)
    connect_timeout: float = Field(default=10.0, gt=0, le=300)  # PostgreSQL connection, seconds

    @field_validator("url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is None or v.strip() == "":
            return None
        from redline.memory.url import check_url

        return check_url(v)


class Settings(_Strict):
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    analyzers: AnalyzerSettings = Field(default_factory=AnalyzerSettings)
    models: ModelSettings = Field(default_factory=ModelSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    debate: DebateSettings = Field(default_factory=DebateSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    publish: PublishSettings = Field(default_factory=PublishSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
