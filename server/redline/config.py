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
from redline.config_templates import REPO_TEMPLATE, USER_TEMPLATE, write_template
from redline.errors import ConfigError
from redline.memory.url import url_without_password
from redline.tool_paths import name_tools

__all__ = [
    "REPO_FILE",
    "REPO_TEMPLATE",
    "USER_TEMPLATE",
    "LoadedSettings",
    "load_settings",
    "load_user_settings",
    "write_template",
]

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
    "REDLINE_AST_GREP": "analyzers.ast_grep",
    "REDLINE_BANDIT_SCOPE": "analyzers.bandit_scope",
    "REDLINE_MAX_REQUESTS": "llm.max_requests",
    "REDLINE_MAX_WRITE_FILES": "tools.max_write_files",
    "REDLINE_MAX_WRITE_BYTES": "tools.max_write_total_bytes",
    "REDLINE_KEEP_RECORDS": "store.keep_records",
    "REDLINE_KEEP_DAYS": "store.keep_days",
    "REDLINE_MEMORY_URL": "memory.url",
}

SECRET_KEYS = {"models.api_key"}
URL_KEYS = {"memory.url"}  # shown without their password


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
    loaded = _merge(UserLayers(below, sources, above, tuple(files)), None)
    # The user's programs, for git/binaries.py: set from these layers only, never from a
    # repository's file (with_repository adds that layer later, and no tools.* key passes it).
    tools = loaded.settings.tools
    name_tools({"git": tools.git, "gh": tools.gh, "glab": tools.glab})
    return loaded


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
        elif key in URL_KEYS and value:
            value = url_without_password(value)
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
