"""The repository layer of the settings: the few keys a repository's own file may set.

A repository's `.redline.toml` (or `[tool.redline]` in its `pyproject.toml`) is written by
whoever writes the repository, and in a review that may be the author of the change under
review. So this layer is an allowlist, `REPO_SETTINGS`: the one list of what the file may hold,
with how each key merges with the user's own settings. Everything else — where code is sent,
what runs on this machine, how much a run may read, send, spend or retry, the answer cache,
which analyzers run and for how long — is the user's (user file, `REDLINE_*`, flags); a
repository file that sets it has that key ignored with a warning naming the key and the file,
and the rest of the file still applies.

The allowed keys can only make a review see more, never less, than the user asked for — except
`review.exclude`, which is why a review of commits reads this file from its base revision and
reports an edit to it as a finding (review/ground.py, review/settings_change.py):
- `review.exclude` adds globs (generated code, fixtures, vendored trees) to the user's;
- `analyzers.ruff_select` adds ruff rules to the user's (or the default) selection, never
  removing one;
- `review.fail_on` and `review.min_severity` apply only where stricter than the user's file
  (gate on more, show more).

This module reads and filters; config.py merges the layer in place (user file < repository <
environment < flags).
"""

from __future__ import annotations

import os
import stat
import tomllib
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from pydantic import ValidationError

from redline.config_models import Settings
from redline.errors import ConfigError, RedlineError
from redline.model import Severity

REPO_FILE: Final = ".redline.toml"
PYPROJECT: Final = "pyproject.toml"
PYPROJECT_SECTION: Final = ("tool", "redline")
# A settings file is a few lines; a larger one is not read (pyproject.toml files of 100 kB exist).
MAX_REPO_FILE_BYTES: Final = 1024 * 1024

# Reads a repository file as one version of the repository has it: bytes, or None when absent.
# Raises RedlineError when the file is there but may not be read (a link, a device, too large).
Reader = Callable[[str], bytes | None]


class Merge(StrEnum):
    ADD = "add"  # a list: the repository's entries are added to the user's, none removed
    TIGHTEN = "tighten"  # a severity: the repository's applies where stricter than the user's


@dataclass(frozen=True)
class RepoSetting:
    merge: Merge
    why: str  # why a repository may set it (docs, `config show`)
    # ADD only: whether more entries review less (exclude) or more (ruff_select).
    more_is_looser: bool = False


# The one list of what a repository file may set. A key not here is the user's.
REPO_SETTINGS: Final[Mapping[str, RepoSetting]] = MappingProxyType(
    {
        "review.exclude": RepoSetting(
            Merge.ADD,
            "the repository's generated, vendored or fixture files, added to your excludes",
            more_is_looser=True,
        ),
        "analyzers.ruff_select": RepoSetting(
            Merge.ADD, "more ruff rules for the repository's code, added to your selection"
        ),
        "review.fail_on": RepoSetting(
            Merge.TIGHTEN, "the repository's gate, where it is stricter than yours"
        ),
        "review.min_severity": RepoSetting(
            Merge.TIGHTEN, "a lower severity floor (more findings shown), never a higher one"
        ),
    }
)

# Why a key outside REPO_SETTINGS is the user's: the first prefix that matches, for the warning.
_USERS: Final = (
    ("models", "where your code is sent is yours"),
    ("llm", "what a run may spend, retry and wait for is yours"),
    ("tools", "which git, gh and glab run and what the model's tools may write is yours"),
    ("debate", "the debaters, their models and prompts are yours"),
    ("store", "how long your review records are kept is yours"),
    ("publish", "how many writes a posting run may make is yours"),
    ("memory", "where project memory is stored and how large it may grow is yours"),
    ("analyzers.custom", "commands run on your machine only from your own config"),
    ("analyzers", "which analyzers run, on which files and for how long is yours"),
    ("review.cache", "reusing model answers (what a run spends) is yours"),
    ("review", "how much of a change is read and sent to a model is yours"),
)


@dataclass(frozen=True)
class RepoLayer:
    """One repository file's settings, filtered: `values` holds only REPO_SETTINGS keys
    (validated), `ignored` every other key it set with its raw value."""

    origin: str  # "repository file .redline.toml at 1a2b3c4", for provenance and warnings
    file: str  # the repository-relative name it was read from
    values: Mapping[str, Any] = field(default_factory=dict)
    ignored: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # why nothing was read (a link, too large)

    @property
    def warnings(self) -> list[str]:
        out = [f"{self.origin}: {note}" for note in self.notes]
        for key in self.ignored:
            out.append(f"{self.origin}: ignored {key}: {why_users(key)}")
        return out

    def describe(self) -> str:
        """The settings this layer sets, for a coverage note ("nothing" when none)."""
        if not self.values:
            return "nothing a repository may set"
        return ", ".join(f"{k} = {show_value(v)}" for k, v in sorted(self.values.items()))


def why_users(key: str) -> str:
    """The warning for a key a repository file may not set."""
    parts = key.split(".")
    if len(parts) < 2 or _dotted(parts[:2]) not in _settings_keys():
        allowed = ", ".join(REPO_SETTINGS)
        return f"not a setting a repository file may hold (it may set {allowed})"
    for prefix, why in _USERS:
        if key == prefix or key.startswith(prefix + "."):
            return f"{why}: set it in your user file, a REDLINE_* variable or a flag"
    return "yours to set, not the repository's"


def filter_table(table: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(kept, ignored): the table's REPO_SETTINGS keys and their raw values, and every other
    key it sets (dotted, made printable) with its value. A key is kept only by its exact
    path of plain names: `review.exclude`, never a quoted `"review.exclude"` or a deeper table."""
    kept: dict[str, Any] = {}
    ignored: dict[str, Any] = {}
    for path, value in _leaves(table, ()):
        dotted = _dotted(path)
        if all(_plain(p) for p in path) and dotted in REPO_SETTINGS:
            kept[dotted] = value
        else:
            ignored[dotted] = value
    return kept, ignored


def parse_layer(data: bytes, file: str, origin: str) -> RepoLayer:
    """A repository settings file's bytes → its layer. Raises ConfigError (naming `origin`)
    for a file that is not TOML or an allowed key with an invalid value; a `pyproject.toml`
    that is not TOML, or has no `[tool.redline]`, is no layer (the project's business)."""
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        if file == PYPROJECT:
            return RepoLayer(origin, file)
        raise ConfigError(f"{origin}: not valid TOML: {exc}") from None
    table: Any = document
    if file == PYPROJECT:
        for part in PYPROJECT_SECTION:
            table = table.get(part) if isinstance(table, dict) else None
        if not isinstance(table, dict):
            return RepoLayer(origin, file)
    kept, ignored = filter_table(table)
    return RepoLayer(origin, file, validate(kept, origin), ignored)


def validate(kept: Mapping[str, Any], origin: str) -> dict[str, Any]:
    """The allowed keys' values as the settings model reads them (a severity parsed); raises
    ConfigError naming the file and each bad key."""
    try:
        settings = Settings.model_validate(_nest(kept))
    except ValidationError as exc:
        problems = [
            f"{origin}: {'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            for err in exc.errors()
        ]
        raise ConfigError("invalid configuration\n  " + "\n  ".join(problems)) from None
    return {key: value_at(settings, key) for key in kept}


def read_layer(read: Reader, origin_of: Callable[[str], str]) -> RepoLayer | None:
    """The repository layer as `read` sees the repository: `.redline.toml`, else
    `[tool.redline]` in `pyproject.toml`; None when neither is there. A file that may not be
    read (a symbolic link, a device, over MAX_REPO_FILE_BYTES) gives an empty layer with a
    note; one that is not valid gives ConfigError."""
    for file in (REPO_FILE, PYPROJECT):
        try:
            data = read(file)
        except RedlineError as exc:
            return RepoLayer(origin_of(file), file, notes=(f"not read: {exc.message}",))
        if data is None:
            continue
        layer = parse_layer(data, file, origin_of(file))
        if file == REPO_FILE or layer.values or layer.ignored:
            return layer
    return None


def worktree_reader(root: Path) -> Reader:
    """Read a settings file from the work tree: a regular file of the repository only (never
    through a symbolic link, never a FIFO or device, never a hard link to a file outside)."""
    from redline.git.worktree import read_worktree_file

    def read(name: str) -> bytes | None:
        try:
            st = os.lstat(root / name)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not stat.S_ISREG(st.st_mode):
            kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            raise ConfigError(f"{kind}: make it a regular file in the repository")
        return read_worktree_file(root, name, MAX_REPO_FILE_BYTES)

    return read


# -- merging (config.py calls these, key by key) ---------------------------------------------


def merge_value(key: str, below: Any, repo: Any) -> tuple[Any, str | None]:
    """The value of `key` once the repository's `repo` meets `below` (the default or the
    user file's), and a note when part of `repo` did not apply."""
    rule = REPO_SETTINGS[key]
    if rule.merge is Merge.ADD:
        merged = list(below) + [x for x in repo if x not in below]
        kept = [x for x in below if x not in repo]
        note = None
        if kept and not rule.more_is_looser:
            note = (
                f"{key}: a repository file adds entries, it cannot remove them: "
                f"{show_value(kept)} still apply"
            )
        return merged, note
    if strictness(key, repo) > strictness(key, below):
        return repo, None
    if repo == below:
        return below, None
    return below, f"{key} = {show_value(repo)} not applied: yours ({show_value(below)}) is stricter"


def strictness(key: str, value: Any) -> int:
    """How strict a TIGHTEN value is: a lower threshold gates on (or shows) more; no gate at
    all is the least strict."""
    if value is None:
        return -1
    return 5 - Severity(value).rank


def looser(key: str, old: Any, new: Any) -> bool:
    """Whether changing `key` from `old` to `new` (None: unset) makes the review see less."""
    rule = REPO_SETTINGS[key]
    if rule.merge is Merge.ADD:
        before, after = set(old or ()), set(new or ())
        grown, shrunk = bool(after - before), bool(before - after)
        return grown if rule.more_is_looser else shrunk
    default = value_at(Settings(), key)
    return strictness(key, default if new is None else new) < strictness(
        key, default if old is None else old
    )


# -- small helpers -----------------------------------------------------------------------


def value_at(settings: Settings, key: str) -> Any:
    section, name = key.split(".")
    return getattr(getattr(settings, section), name)


def show_value(value: Any) -> str:
    """A value for a message: JSON-like, control and invisible characters escaped, bounded."""
    if isinstance(value, Severity):
        value = value.value.lower()
    text = repr(value) if not isinstance(value, list) else "[" + ", ".join(map(repr, value)) + "]"
    return printable(text, 160)


def printable(text: str, limit: int = 120) -> str:
    """Attacker text made safe for a terminal line: every control, format or separator
    character (escape sequences, bidi overrides, zero-width) as \\uXXXX, then cut."""
    out = "".join(
        c if c == " " or unicodedata.category(c)[0] not in "CZ" else f"\\u{ord(c):04x}"
        for c in text
    )
    return out if len(out) <= limit else out[: limit - 1] + "…"


def _leaves(
    node: Mapping[str, Any], path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], Any]]:
    for key, value in node.items():
        here = (*path, str(key))
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, here)
        elif not isinstance(value, Mapping):
            yield here, value


def _plain(part: str) -> bool:
    return part.replace("_", "").isalnum() and part.isascii()


def _dotted(path: tuple[str, ...] | list[str]) -> str:
    return printable(".".join(p if _plain(p) else '"' + p + '"' for p in path))


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        section, name = dotted.split(".")
        nested.setdefault(section, {})[name] = value
    return nested


def _settings_keys() -> frozenset[str]:
    return frozenset(
        f"{section}.{name}" for section, values in _DEFAULTS.items() for name in values
    )


_DEFAULTS: Final[dict[str, dict[str, Any]]] = Settings().model_dump()


__all__ = [
    "MAX_REPO_FILE_BYTES",
    "PYPROJECT",
    "REPO_FILE",
    "REPO_SETTINGS",
    "Merge",
    "Reader",
    "RepoLayer",
    "RepoSetting",
    "filter_table",
    "looser",
    "merge_value",
    "parse_layer",
    "printable",
    "read_layer",
    "show_value",
    "why_users",
    "worktree_reader",
]
