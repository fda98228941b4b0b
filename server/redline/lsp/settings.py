"""Editor-side settings of the language server: what `initializationOptions` and
`workspace/configuration` (section `redline`) may change.

Only presentation and scheduling live here. Where code is sent (model, API base, keys) is never
read from the editor: a workspace's `.vscode/settings.json` is written by whoever wrote the
repository, so those keys are refused with a warning, exactly like a repository's
`.redline.toml` (see config.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from redline.enums import Severity

StaleDisplay = Literal["withdraw", "mark"]

# Keys a workspace may not set, whatever their spelling (`apiKey`, `api_key`, `models.model`).
_FORBIDDEN = ("model", "models", "apibase", "api_base", "apikey", "api_key", "fallbacks")

_ALIASES = {
    "minseverity": "min_severity",
    "min_severity": "min_severity",
    "basebranch": "base_branch",
    "base_branch": "base_branch",
    "autoreviewonsave": "auto_review_on_save",
    "auto_review_on_save": "auto_review_on_save",
    "stale": "stale_display",
    "staledisplay": "stale_display",
    "stale_display": "stale_display",
    "concurrency": "concurrency",
    "savedebounce": "save_debounce",
    "save_debounce": "save_debounce",
    "hoverbesidediagnostic": "hover_beside_diagnostic",
    "hover_beside_diagnostic": "hover_beside_diagnostic",
    "clientshowsoutcome": "client_shows_outcome",
    "client_shows_outcome": "client_shows_outcome",
    "memoryrefresh": "memory_refresh",
    "memory_refresh": "memory_refresh",
    "memoryidledelay": "memory_idle_delay",
    "memory_idle_delay": "memory_idle_delay",
}


@dataclass(frozen=True)
class LspSettings:
    min_severity: Severity = Severity.INFO  # diagnostics below this are not shown
    base_branch: str | None = None  # default base of the `branch` scope
    auto_review_on_save: bool = False
    stale_display: StaleDisplay = "withdraw"  # a finding whose code was edited: hide or mark
    concurrency: int | None = None  # parallel model calls (llm.max_concurrency)
    save_debounce: float = 1.5  # seconds of quiet after a save before auto-review starts
    # The client shows a diagnostic's message in the hover above Redline's (VS Code; its
    # extension says so in initializationOptions): the hover leaves the message out.
    hover_beside_diagnostic: bool = False
    # The client shows how each review ended itself (the VS Code extension: its status bar and
    # sidebar say "no findings"); other clients are told an empty review's outcome in a message.
    client_shows_outcome: bool = False
    # Project memory refreshed in the background (memory_refresh.py): on save, and a whole-tree
    # build once the user has been idle this many seconds (no edit, no save).
    memory_refresh: bool = True
    memory_idle_delay: float = 60.0
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def engine_flags(self) -> dict[str, Any]:
        """Dotted keys for `config.load_settings(flags=...)`: the highest layer, as a flag."""
        return {"llm.max_concurrency": self.concurrency}


def _flatten_section(data: Mapping[str, Any]) -> dict[str, Any]:
    # Clients send either {"redline": {...}}, {...} or dotted keys {"redline.minSeverity": ...}.
    inner = data.get("redline")
    if isinstance(inner, Mapping):
        data = inner
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = str(key)
        if name.startswith("redline."):
            name = name[len("redline.") :]
        flat[name] = value
    return flat


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def merge_settings(base: LspSettings, data: Any) -> LspSettings:
    """`base` updated with what `data` (a client's JSON object) sets. Invalid values are skipped
    with a warning rather than failing: a typo in the editor must not stop reviews."""
    if not isinstance(data, Mapping):
        return base
    changes: dict[str, Any] = {}
    warnings: list[str] = list(base.warnings)
    for raw_key, value in _flatten_section(data).items():
        norm = raw_key.replace("-", "").replace(".", "").lower()
        if norm in _FORBIDDEN or raw_key.split(".")[0].lower() == "models":
            warnings.append(
                f"ignored editor setting {raw_key!r}: the model, API base and keys come only "
                "from your own Redline config or environment"
            )
            continue
        target = _ALIASES.get(norm) or _ALIASES.get(raw_key)
        if target is None or value is None:
            continue
        try:
            changes[target] = _convert(target, value)
        except (TypeError, ValueError) as exc:
            warnings.append(f"ignored editor setting {raw_key!r}: {exc}")
    return replace(base, **changes, warnings=tuple(dict.fromkeys(warnings)))


def _convert(target: str, value: Any) -> Any:
    if target == "min_severity":
        return Severity.parse(str(value))
    if target == "base_branch":
        text = str(value).strip()
        return text or None
    if target in (
        "auto_review_on_save",
        "hover_beside_diagnostic",
        "client_shows_outcome",
        "memory_refresh",
    ):
        return _as_bool(value)
    if target == "stale_display":
        text = str(value).strip().lower()
        if text in ("withdraw", "hide", "remove"):
            return "withdraw"
        if text in ("mark", "stale", "may be stale", "maybestale"):
            return "mark"
        raise ValueError("expected 'withdraw' or 'mark'")
    if target == "concurrency":
        number = int(value)
        if not 1 <= number <= 64:
            raise ValueError("expected a number from 1 to 64")
        return number
    if target == "save_debounce":
        seconds = float(value)
        if not 0 <= seconds <= 60:
            raise ValueError("expected seconds from 0 to 60")
        return seconds
    if target == "memory_idle_delay":
        seconds = float(value)
        if not 0.1 <= seconds <= 86400:
            raise ValueError("expected seconds from 0.1 to 86400")
        return seconds
    raise ValueError(f"unknown setting {target}")
