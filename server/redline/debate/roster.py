"""Who debates: the debaters and the summarizer, from the user's settings.

By default the three built-in roles (security, performance, code-quality), each with its
prompt in `prompts/debate/<name>.md` and the `debater` role's model; `[debate.reviewers.<name>]`
in the user's configuration replaces them (a model, and a prompt inline or in a file).
Settings never come from the reviewed repository (config.py refuses `debate.*` there).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from redline.agent.llm import LLMClient
from redline.config_models import (
    BUILTIN_DEBATERS,
    DebaterSettings,
    Settings,
    SummarizerSettings,
)
from redline.errors import ConfigError, UsageError
from redline.review.prompts import load_prompt

SUMMARIZER_ROLE = "debate-summarizer"
MAX_PROMPT_FILE_BYTES = 64 * 1024

NEEDS_MODEL = (
    "debate needs a model: set --model or REDLINE_MODEL (or [models] model, or a model per "
    "debater in [debate.reviewers.<name>] of the user config)"
)


@dataclass(frozen=True)
class Debater:
    name: str  # "security"
    label: str  # "Security"
    model: str
    api_base: str | None
    prompt: str  # the role prompt (Markdown)
    # Where the address is set, for the hint when its model cannot be reached: the debater's
    # own table, not `--api-base`, when that is what gave it ("" when it is the shared one).
    api_base_setting: str = ""

    @property
    def role(self) -> str:
        """The LLM client's role for this debater: its calls are counted under it."""
        return f"debater:{self.name}"


@dataclass(frozen=True)
class Roster:
    debaters: list[Debater]
    summarizer_model: str
    summarizer_api_base: str | None
    summarizer_api_base_setting: str = ""

    def assign(self, client: LLMClient) -> None:
        """Tell the client which model each debater (and the summarizer) calls."""
        for d in self.debaters:
            client.assign(d.role, d.model, d.api_base, d.api_base_setting)
        client.assign(
            SUMMARIZER_ROLE,
            self.summarizer_model,
            self.summarizer_api_base,
            self.summarizer_api_base_setting,
        )

    def scrub_terms(self) -> list[str]:
        """Names and model strings that would reveal a debater's identity."""
        terms: set[str] = set()
        for d in self.debaters:
            terms.update({d.name, d.label, d.model})
            tail = d.model.rsplit("/", 1)[-1]
            if len(tail) >= 4:
                terms.add(tail)
        return sorted(terms, key=len, reverse=True)


def label_for(name: str) -> str:
    return " ".join(part.capitalize() for part in name.replace("_", "-").split("-"))


def _prompt(name: str, cfg: DebaterSettings | None) -> str:
    if cfg is not None and cfg.prompt:
        return cfg.prompt
    if cfg is not None and cfg.prompt_file:
        path = Path(cfg.prompt_file).expanduser()
        try:
            data = path.read_bytes()[: MAX_PROMPT_FILE_BYTES + 1]
        except OSError as exc:
            raise ConfigError(
                f"debate.reviewers.{name}.prompt_file {path}: cannot read: {exc.strerror}"
            ) from None
        if len(data) > MAX_PROMPT_FILE_BYTES:
            raise ConfigError(
                f"debate.reviewers.{name}.prompt_file {path}: larger than "
                f"{MAX_PROMPT_FILE_BYTES // 1024} KiB"
            )
        return data.decode("utf-8", errors="replace")
    if name in BUILTIN_DEBATERS:
        return load_prompt(f"debate/{name}")
    raise ConfigError(f"debater {name}: needs prompt or prompt_file")


def build_roster(settings: Settings) -> Roster:
    """The debaters and the summarizer; UsageError when a model is missing."""
    default_model, default_base, _ = settings.models.for_role("debater")
    configured: dict[str, DebaterSettings | None] = dict(settings.debate.reviewers) or {
        name: None for name in BUILTIN_DEBATERS
    }
    debaters = []
    for name, cfg in configured.items():
        model = (cfg.model if cfg else None) or default_model
        if not model:
            raise UsageError(NEEDS_MODEL)
        api_base = (cfg.api_base if cfg else None) or (
            default_base if not (cfg and cfg.model) else None
        )
        label = (cfg.label if cfg and cfg.label else None) or label_for(name)
        debaters.append(
            Debater(
                name,
                label,
                model,
                api_base,
                _prompt(name, cfg),
                _base_setting(f"debate.reviewers.{name}", cfg, settings, "debater"),
            )
        )
    if len(debaters) < 2:
        raise UsageError("a debate needs at least two debaters")
    summ = settings.debate.summarizer
    s_model, s_base, _ = settings.models.for_role("summarizer")
    model = summ.model or s_model or debaters[0].model
    base = summ.api_base or (s_base if not summ.model else None)
    where = _base_setting("debate.summarizer", summ, settings, "summarizer")
    return Roster(debaters, model, base, where)


def _base_setting(
    table: str, cfg: DebaterSettings | SummarizerSettings | None, settings: Settings, role: str
) -> str:
    """The setting a debater's (or the summarizer's) api_base comes from, as `build_roster`
    resolves it: its own table's, the role's (`[models.roles.<role>]`), else "" — the shared
    `[models] api_base`, which the generic hint (`--api-base / REDLINE_API_BASE`) names."""
    if cfg is not None and cfg.api_base:
        return f"{table}.api_base"
    if cfg is not None and cfg.model:
        # Its own model without its own address: the shared one applies, its own would win.
        return f"{table}.api_base (else --api-base / REDLINE_API_BASE)"
    own = settings.models.roles.get(role)
    return f"models.roles.{role}.api_base" if own is not None and own.api_base else ""
