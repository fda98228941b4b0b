"""Settings: defaults < user file < repository file < environment < flags.

Each layer is validated on its own before merging, so an error names the file (or variable)
and the key that is wrong. The repository layer is an allowlist (config_repo.REPO_SETTINGS):
a repository's file may add excludes and ruff rules and make the gate and the severity floor
stricter, nothing else; every other key it sets is ignored with a warning. Settings that decide
where code is sent, what runs on this machine or how much a run may read, spend or retry are
the user's alone: the author of the change controls the repository's files.

`load_user_settings` gives the user's layers; a review adds the repository layer of its base
revision (`LoadedSettings.with_repository`, from review/ground.py), never the work tree's for
a review of commits. `load_settings(repo)` adds the work tree's (what `config show` and a review
of uncommitted changes use).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from platformdirs import user_config_path
from pydantic import ValidationError

from redline import config_repo
from redline.config_models import Settings
from redline.config_repo import REPO_FILE, RepoLayer
from redline.errors import ConfigError

__all__ = ["REPO_FILE", "LoadedSettings", "load_settings", "load_user_settings"]

# Environment variables → dotted keys. Explicit, so `config show` can name the variable.
ENV_KEYS: dict[str, str] = {
    "REDLINE_MODEL": "models.model",
    "REDLINE_API_BASE": "models.api_base",
    "REDLINE_API_KEY": "models.api_key",
    "REDLINE_FAIL_ON": "review.fail_on",
    "REDLINE_MIN_SEVERITY": "review.min_severity",
    "REDLINE_MAX_FILE_BYTES": "review.max_file_bytes",
    "REDLINE_RUFF": "analyzers.ruff",
    "REDLINE_BANDIT": "analyzers.bandit",
    "REDLINE_BANDIT_SCOPE": "analyzers.bandit_scope",
    "REDLINE_MAX_REQUESTS": "llm.max_requests",
    "REDLINE_MAX_WRITE_FILES": "tools.max_write_files",
    "REDLINE_MAX_WRITE_BYTES": "tools.max_write_total_bytes",
    "REDLINE_KEEP_RECORDS": "store.keep_records",
    "REDLINE_KEEP_DAYS": "store.keep_days",
}

SECRET_KEYS = {"models.api_key"}


def user_config_file() -> Path:
    override = os.environ.get("REDLINE_CONFIG")
    if override:
        return Path(override).expanduser()
    return user_config_path("redline", appauthor=False, roaming=False) / "config.toml"


@dataclass(frozen=True)
class UserLayers:
    """The user's layers of one load, kept so a repository layer can be put in its place
    later: below it the defaults and the user file, above it the environment and flags."""

    below: Mapping[str, Any] = field(default_factory=dict)
    below_sources: Mapping[str, str] = field(default_factory=dict)
    above: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    files: tuple[Path, ...] = ()


@dataclass
class LoadedSettings:
    settings: Settings
    sources: dict[str, str]  # dotted key → where its value came from
    warnings: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    layers: UserLayers = field(default_factory=UserLayers, repr=False)
    repository: RepoLayer | None = None  # the repository layer merged in, if any

    @classmethod
    def of(cls, settings: Settings) -> LoadedSettings:
        """Settings made in code (tests, embedders): all of it counts as the user's own."""
        flat = _flatten(settings.model_dump())
        given = {k: "given" for k in flat}
        return cls(settings, dict(given), layers=UserLayers(flat, given))

    def with_repository(self, layer: RepoLayer | None) -> LoadedSettings:
        """The user's layers with `layer` merged in its place (user file < repository <
        environment < flags), key by key as config_repo.merge_value says."""
        return _merge(self.layers, layer)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _unflatten(flat: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        node = nested
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return nested


def _validate_layer(flat: Mapping[str, Any], origin: str) -> None:
    try:
        Settings.model_validate(_unflatten(flat))
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            problems.append(f"{origin}: {key}: {err['msg']}")
        raise ConfigError("invalid configuration\n  " + "\n  ".join(problems)) from None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def _env_layer(environ: Mapping[str, str]) -> dict[str, tuple[Any, str]]:
    out: dict[str, tuple[Any, str]] = {}
    for var, key in ENV_KEYS.items():
        raw = environ.get(var)
        if raw is None or raw == "":
            continue
        value: Any = raw
        if key in ("analyzers.ruff", "analyzers.bandit"):
            value = raw.strip().lower() in ("1", "true", "yes", "on")
        out[key] = (value, f"environment {var}")
    return out


def load_user_settings(
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    user_file: Path | None = None,
) -> LoadedSettings:
    """The user's layers — defaults, the user file, REDLINE_* variables, then `flags` (dotted
    keys for options the user passed explicitly) — without any repository's file."""
    environ = os.environ if environ is None else environ
    below: dict[str, Any] = _flatten(Settings().model_dump())
    sources: dict[str, str] = {k: "default" for k in below}
    files: list[Path] = []

    user_path = user_file or user_config_file()
    if user_file is None and environ.get("REDLINE_CONFIG") and not user_path.exists():
        # Named on purpose: silently using the defaults instead would drop the user's model,
        # caps and keys without a word. (REDLINE_CONFIG=/dev/null means "no user file".)
        raise ConfigError(
            f"REDLINE_CONFIG names {user_path}, which does not exist",
            "create it (`redline init` writes one there), or unset REDLINE_CONFIG",
        )
    if user_path.is_file():
        flat = _flatten(_read_toml(user_path))
        _validate_layer(flat, str(user_path))
        below.update(flat)
        sources.update({k: f"user file {user_path}" for k in flat})
        files.append(user_path)
        # As the model reads them ("low" → Severity.LOW): the repository layer merges with these.
        below = _flatten(Settings.model_validate(_unflatten(below)).model_dump())

    above: dict[str, tuple[Any, str]] = {}
    for key, (value, origin) in _env_layer(environ).items():
        _validate_layer({key: value}, origin)
        above[key] = (value, origin)
    for key, value in (flags or {}).items():
        if value is None:
            continue
        origin = f"flag --{key.split('.')[-1].replace('_', '-')}"
        _validate_layer({key: value}, origin)
        above[key] = (value, origin)
    return _merge(UserLayers(below, sources, above, tuple(files)), None)


def _merge(layers: UserLayers, layer: RepoLayer | None) -> LoadedSettings:
    merged = dict(layers.below)
    sources = dict(layers.below_sources)
    warnings: list[str] = []
    files = list(layers.files)
    if layer is not None:
        for key, value in layer.values.items():
            result, note = config_repo.merge_value(key, merged.get(key), value)
            if result != merged.get(key):
                previous = sources.get(key, "default")
                added = config_repo.REPO_SETTINGS[key].merge is config_repo.Merge.ADD
                sources[key] = f"{previous} + {layer.origin}" if added else layer.origin
                merged[key] = result
            if note:
                warnings.append(f"{layer.origin}: {note}")
        warnings.extend(layer.warnings)
    for key, (value, origin) in layers.above.items():
        merged[key] = value
        sources[key] = origin
    settings = Settings.model_validate(_unflatten(merged))
    return LoadedSettings(settings, sources, warnings, files, layers, layer)


def load_settings(
    repo: Path | None,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    user_file: Path | None = None,
) -> LoadedSettings:
    """The user's layers and, with `repo`, the repository layer of its work tree (what a
    review of uncommitted changes uses, and `config show`). A review of commits uses its base
    revision's instead (review/ground.py)."""
    loaded = load_user_settings(flags, environ, user_file)
    if repo is None:
        return loaded
    layer = config_repo.read_layer(
        config_repo.worktree_reader(repo), lambda name: f"repository file {repo / name}"
    )
    merged = loaded.with_repository(layer)
    if layer is not None:
        merged.files.append(repo / layer.file)
    return merged


def idle_settings(loaded: LoadedSettings) -> list[str]:
    """Warnings for settings the user passed (flag or environment) that a review without a
    model ignores: an API base or a request cap with no model to use them. Values from the
    user file are left alone: that file serves every command (a debate's debaters use its
    API base)."""
    settings = loaded.settings
    if settings.models.model is not None:  # (the review's model stages need the default model)
        return []
    passed = ("flag ", "environment ")
    out = []
    for key, what in (
        ("models.api_base", "an API base"),
        ("llm.max_requests", "a model request cap"),
    ):
        source = loaded.sources.get(key, "default")
        if source.startswith(passed):
            out.append(
                f"{source} sets {what} but no model is configured, so it does nothing: "
                "the review runs offline (set --model or REDLINE_MODEL)"
            )
    return out


def describe(loaded: LoadedSettings) -> str:
    """Human listing of every effective setting and where it came from (secrets masked)."""
    flat = _flatten(loaded.settings.model_dump(mode="json"))
    width = max(len(k) for k in flat)
    lines = []
    for key in sorted(flat):
        value = flat[key]
        if key in SECRET_KEYS and value:
            value = "***"
        lines.append(f"{key:<{width}} = {value!r:<30} # {loaded.sources.get(key, 'default')}")
    for w in loaded.warnings:
        lines.append(f"# warning: {w}")
    if loaded.repository is not None:
        lines.append(
            f"# {loaded.repository.file} as the work tree has it: what a review of uncommitted "
            "or staged changes uses. A review of commits (branch, commit, since, range, PR) "
            "reads it from its base revision instead."
        )
    return "\n".join(lines) + "\n"


# `redline init` writes these. Every section the README's Configuration documents is here with
# its defaults, commented out; tests/test_config.py checks the file parses, loads as the
# defaults, and has every section the README shows.
_HEADER = """\
# Redline configuration.
# Layers, lowest to highest: the user file (~/.config/redline/config.toml, or $REDLINE_CONFIG),
# the repository's .redline.toml (or [tool.redline] in pyproject.toml), REDLINE_* environment
# variables, flags. `redline config show` prints the merged result and where each value came
# from; `redline config validate` checks the files.
"""

_REVIEW = """
[review]
# Exit with code 1 when a finding at or above this severity is found (critical|high|medium|low).
# fail_on = "high"
# Hide findings below this severity (critical, high, medium, low, info).
# min_severity = "info"
# Files larger than this many bytes are listed as skipped, not reviewed.
# max_file_bytes = 1000000
# A review unit with more changed lines than this is tagged `large`.
# large_unit_lines = 400
# Extra glob patterns to skip (generated code, fixtures, ...).
# exclude = ["docs/generated/*"]
# Context (surrounding code) a model is shown per review unit, in tokens.
# context_tokens = 6000
# Reuse model answers for unchanged code (answers are cached by content).
# cache = true
"""

_ANALYZERS = """
[analyzers]
# ruff = true
# bandit = true
# Files bandit runs on (ruff's S rules check every file): "beyond_ruff" (files whose added lines
# hold what bandit's checks that ruff lacks look for), "security_sensitive" (files with
# security-relevant changes) or "all" (every changed Python file, slowest).
# bandit_scope = "beyond_ruff"
# Ruff rules to run (the reviewed repository's own ruff config is not used).
# ruff_select = ["F", "E9", "E722", "B", "S", "PLE", "RUF006", "UP031"]
# Seconds an analyzer may run.
# timeout = 120
"""

_CUSTOM = """
# Extra analyzers: any command that prints SARIF 2.1.0; "{files}" expands to the changed files.
# Only honoured from this user file, never from a repository file.
# [[analyzers.custom]]
# name = "eslint"
# command = ["npx", "eslint", "--format", "@microsoft/eslint-formatter-sarif", "{files}"]
# globs = ["*.js", "*.ts"]
"""

_USER_ONLY = """
[models]
# Where code is sent. Only read from this user file, the environment or flags; never from the
# reviewed repository. Any litellm model string: "gpt-4o-mini", "anthropic/claude-...",
# "ollama/qwen2.5-coder", or "openai/<name>" with api_base for an OpenAI-compatible server.
# Without a model, reviews run the static analyzers only.
# model = "ollama/qwen2.5-coder"
# api_base = "http://127.0.0.1:11434"
# Models tried in turn when the model fails.
# fallbacks = ["anthropic/claude-3-5-haiku-latest"]
# The key is better kept in the environment (REDLINE_API_KEY or the provider's own variable).

# A model per role (planner, reviewer, verifier, summarizer, ask, debater); unset fields fall
# back to [models].
# [models.roles.verifier]
# model = "gpt-4o"

[llm]
# Seconds per model request, and retries of a failed one.
# timeout = 120
# max_retries = 3
# Requests in flight at once; halved for the run on each 429, raised again as calls succeed.
# max_concurrency = 16
# A budget per run, in tokens or dollars; what was skipped is reported.
# budget_tokens = 400000
# budget_usd = 0.50
# temperature = 0.0
# Model requests per run, retries included (default: 2 × the planned calls + 20).
# Like [tools], never read from a repository file.
# max_requests = 200

[tools]
# write_file (`redline ask`): at most this many reports, and this many bytes, per run.
# max_write_files = 20
# max_write_total_bytes = 10485760

[debate]
# `redline debate`: rounds of turns, model calls per turn (tool steps included), and the
# transcript size beyond which older turns are summarized.
# rounds = 3
# turn_steps = 6
# turn_tokens = 1500
# transcript_tokens = 6000
# change_tokens = 12000
# Without [debate.reviewers], the built-in roles (security, performance, code-quality) debate
# with the `debater` role's model. A debate needs at least two reviewers.
# [debate.reviewers.security]
# model = "anthropic/claude-3-5-sonnet-latest"
# [debate.reviewers.perf]
# model = "ollama/qwen2.5-coder"
# api_base = "http://127.0.0.1:11434"
# prompt_file = "~/.config/redline/perf-debater.md"
# [debate.summarizer]
# model = "gpt-4o"

[store]
# Review records (`redline history`): the newest keep_records, none older than keep_days,
# whichever keeps fewer (0: no limit of that kind). A running review's record is never removed;
# `redline history --prune` applies this now.
# keep_records = 200
# keep_days = 30
"""

# What a repository file may set (config_repo.REPO_SETTINGS, nothing else: any other key would
# be ignored with a warning). tests/test_config.py checks the two lists agree.
_REPO = """
# What a repository may set: excludes and ruff rules are added to each user's own; the gate and
# the severity floor apply where they are stricter than the user's. A review of commits (branch,
# commit, range, PR) reads this file from its base revision, so a change to it applies once
# merged, and the review of the change reports it. Everything else is each user's own setting.

[review]
# Exit with code 1 when a finding at or above this severity is found (critical|high|medium|low).
# fail_on = "high"
# Show findings from this severity up (a user's lower floor wins).
# min_severity = "info"
# Glob patterns of files not to review (generated code, fixtures, vendored trees).
# exclude = ["docs/generated/*"]

[analyzers]
# Ruff rules to run in addition to each user's selection (the repository's own ruff config is
# not used).
# ruff_select = ["PL", "SIM"]
"""

REPO_TEMPLATE = _HEADER + _REPO
USER_TEMPLATE = _HEADER + _REVIEW + _ANALYZERS + _CUSTOM + _USER_ONLY


def write_template(path: Path, *, include_models: bool, force: bool = False) -> Path:
    if path.exists() and not force:
        raise ConfigError(f"{path} already exists (use --force to overwrite)")
    path.parent.mkdir(parents=True, exist_ok=True)
    text = USER_TEMPLATE if include_models else REPO_TEMPLATE
    path.write_text(text, encoding="utf-8")
    return path
