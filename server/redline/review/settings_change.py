"""An edit to the repository's review settings, reported as findings on the edited lines.

A review of commits reads `.redline.toml` (or `[tool.redline]` in `pyproject.toml`) from its
base (review/ground.py), so a change's edit to it does not apply to the change itself; once
merged, it applies to every later review. A person should look at such an edit, so each one is
a finding on the settings file, category Security, source `redline:settings`:

- High: the edit loosens the review — more excludes, fewer ruff rules, a higher gate or severity
  floor. High is what CI gates on (`--fail-on high`, the shipped default): a change that makes
  every later review see less must not pass that gate unseen, even when its own code is clean.
- Medium: the edit sets keys a repository file may not set (they are ignored: config_repo), or
  makes the file invalid (every later review would stop with a configuration error). Neither
  loosens anything, but both are worth a look.
- Low: the edit only tightens (new ruff rules, a stricter gate, fewer excludes).

Uncommitted and staged edits are the user's own and apply to that review at once: the same
findings, Low at most (a pre-commit hook on `--fail-on high` must let the user commit them;
the review of the commit reports them again against its base).

These findings are added after the model stages, so no model answer can drop or soften them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from redline import config_repo
from redline.config_models import Settings
from redline.config_repo import PYPROJECT, REPO_FILE, REPO_SETTINGS, RepoLayer, show_value
from redline.errors import ConfigError, RedlineError
from redline.git import INDEX_REV, UNAVAILABLE_REV
from redline.git.repo import Repo
from redline.git.scopes import ScopeDiff
from redline.model import Category, Finding, Severity, finding_id
from redline.review.ground import Ground, revision_reader

SOURCE: Final = "redline:settings"
SETTINGS_FILES: Final = (REPO_FILE, PYPROJECT)


@dataclass(frozen=True)
class _Side:
    layer: RepoLayer | None
    text: str  # the file's text on this side ("" when absent or unreadable)
    error: str | None = None  # why the file is not valid on this side


def settings_findings(scope: ScopeDiff, ground: Ground, changed: Iterable[str]) -> list[Finding]:
    """Findings for the edits the change makes to the repository's settings; `changed` is
    every path the change touches."""
    touched = set(changed) & set(SETTINGS_FILES)
    if not touched:
        return []
    own = ground.kind == "worktree"
    if scope.new_rev == UNAVAILABLE_REV or scope.old_rev == UNAVAILABLE_REV:
        # Only the forge's diff text: a pyproject.toml edit counts when it names Redline.
        if REPO_FILE in touched:
            return [_not_compared(REPO_FILE, own)]
        if "redline" in _section(scope.diff_text, PYPROJECT).lower():
            return [_not_compared(PYPROJECT, own)]
        return []
    old = _side(_old_reader(scope), ground.origin)
    new = _side(_new_reader(scope, ground), lambda name: f"repository file {name} (this change)")
    if old.layer is None and new.layer is None and new.error is None:
        return []  # a pyproject.toml edit outside [tool.redline]
    findings = _compare(old, new)
    if own:
        findings = [_as_own(f) for f in findings]
    return findings


def _side(read: config_repo.Reader, origin: Callable[[str], str]) -> _Side:
    try:
        layer = config_repo.read_layer(read, origin)
    except ConfigError as exc:
        return _Side(None, _text(read), exc.message.replace("\n  ", "; "))
    if layer is not None and layer.notes:
        return _Side(None, "", "; ".join(layer.notes))
    return _Side(layer, _text(read, layer.file if layer is not None else REPO_FILE))


def _text(read: config_repo.Reader, name: str = REPO_FILE) -> str:
    try:
        data = read(name)
    except RedlineError:
        return ""
    return (data or b"").decode("utf-8", errors="replace")


def _old_reader(scope: ScopeDiff) -> config_repo.Reader:
    if scope.old_rev is None:
        return lambda _name: None
    return revision_reader(Repo(scope.repo_root, scope.runner), scope.old_rev)


def _new_reader(scope: ScopeDiff, ground: Ground) -> config_repo.Reader:
    if scope.new_rev is None:
        return ground.read  # the work tree, as the worktree ground reads it
    if scope.new_rev == INDEX_REV:
        return scope.read_new
    return revision_reader(Repo(scope.repo_root, scope.runner), scope.new_rev)


def _compare(old: _Side, new: _Side) -> list[Finding]:
    file = (
        new.layer.file
        if new.layer is not None
        else old.layer.file
        if old.layer is not None
        else REPO_FILE
    )
    text = new.text
    if new.error is not None:
        return [
            _finding(
                file, text, None, Severity.MEDIUM,
                f"This change makes {file} invalid: every later review stops",
                f"After this change {file} is not valid: {new.error}. Reviews of later changes "
                "would stop with a configuration error until it is fixed. Fix the file.",
                "invalid",
            )
        ]  # fmt: skip
    before = dict(old.layer.values) if old.layer is not None else {}
    after = dict(new.layer.values) if new.layer is not None else {}
    findings = []
    for key in REPO_SETTINGS:
        if before.get(key) == after.get(key):
            continue
        findings.append(_setting_finding(file, text, key, before.get(key), after.get(key)))
    old_ignored = dict(old.layer.ignored) if old.layer is not None else {}
    new_ignored = dict(new.layer.ignored) if new.layer is not None else {}
    set_now = [k for k, v in new_ignored.items() if k not in old_ignored or old_ignored[k] != v]
    if set_now:
        keys = ", ".join(set_now[:12]) + (" …" if len(set_now) > 12 else "")
        findings.append(
            _finding(
                file, text, set_now[0], Severity.MEDIUM,
                f"This change sets review settings a repository may not set: {keys}",
                f"{file} now sets {keys}. A repository's file may set only "
                f"{', '.join(REPO_SETTINGS)}; everything else — where code is sent, budgets, "
                "retries, the answer cache, which analyzers run, size limits — belongs to the "
                "person running the review, so these keys are ignored (with a warning on every "
                "review). Remove them; each user sets them in their own configuration.",
                "ignored",
            )
        )  # fmt: skip
    return findings


def _setting_finding(file: str, text: str, key: str, old: Any, new: Any) -> Finding:
    loosens = config_repo.looser(key, old, new)
    what = _what_changed(key, old, new)
    rule = REPO_SETTINGS[key]
    default = config_repo.value_at(Settings(), key)
    if rule.merge is config_repo.Merge.ADD and not rule.more_is_looser and not loosens:
        # A list a repository can only add to: leaving out what every review runs anyway is an
        # attempt to narrow it, which does nothing.
        kept = [x for x in default if x not in (new or ())]
        if kept:
            return _finding(
                file, text, key, Severity.MEDIUM,
                f"This change tries to narrow {key} (ignored): {what}",
                f"{file} sets {key} to {_shown(key, new)}, leaving out {show_value(kept)}. A "
                "repository's file can only add entries to each user's own selection, so "
                f"nothing is removed and {show_value(kept)} still run; the line only reads as "
                "if it narrowed the review. Keep only the entries you want to add.",
                key,
            )  # fmt: skip
    if loosens:
        return _finding(
            file, text, key, Severity.HIGH,
            f"This change loosens the review settings: {what}",
            f"{key} goes from {_shown(key, old)} to {_shown(key, new)} in {file}: once this "
            "change is merged, every later review of this repository sees less. This review "
            "read the settings of its base, so the change itself was reviewed without the "
            "edit. Make sure the loosening is intended, and keep it as narrow as it can be.",
            key,
        )  # fmt: skip
    return _finding(
        file, text, key, Severity.LOW,
        f"This change tightens the review settings: {what}",
        f"{key} goes from {_shown(key, old)} to {_shown(key, new)} in {file}: later reviews of "
        "this repository see more. This review read the settings of its base; the edit applies "
        "once the change is merged.",
        key,
    )  # fmt: skip


def _what_changed(key: str, old: Any, new: Any) -> str:
    if REPO_SETTINGS[key].merge is config_repo.Merge.ADD:
        added = [x for x in new or () if x not in (old or ())]
        removed = [x for x in old or () if x not in (new or ())]
        parts = []
        if added:
            parts.append(f"adds {show_value(added)}")
        if removed:
            parts.append(f"removes {show_value(removed)}")
        return f"{key} {' and '.join(parts)}"
    return f"{key} {_shown(key, old)} → {_shown(key, new)}"


def _shown(key: str, value: Any) -> str:
    return "unset" if value is None else show_value(value)


def _finding(
    file: str,
    text: str,
    key: str | None,
    severity: Severity,
    title: str,
    comment: str,
    kind: str,
) -> Finding:
    line, code = _key_line(text, key, file)
    return Finding(
        id=finding_id(file, code, Category.SECURITY, f"{SOURCE}:{kind}"),
        file=file,
        line=line,
        end_line=line,
        severity=severity,
        category=Category.SECURITY,
        title=config_repo.printable(title, 160),
        comment=comment,
        existing_code=code,
        confidence=1.0,
        sources=[SOURCE],
    )


def _as_own(finding: Finding) -> Finding:
    """An uncommitted or staged edit: the user's own, applied to this review already."""
    severity = Severity.LOW if finding.severity.rank >= Severity.LOW.rank else finding.severity
    comment = (
        f"{finding.comment} (An uncommitted or staged edit is yours and applies to this review "
        "already; a review of the commit reports it against its base.)"
    )
    return finding.model_copy(update={"severity": severity, "comment": comment})


def _not_compared(file: str, own: bool) -> Finding:
    finding = _finding(
        file, "", None, Severity.HIGH,
        "This change edits the review settings, which could not be compared",
        "The change touches the repository's review settings, but its base or head commit is "
        "not in the local repository, so the edit could not be read. This review used only "
        "your own settings. Fetch the commits and review again to see what the edit does.",
        "not-compared",
    )  # fmt: skip
    return _as_own(finding) if own else finding


def _section(diff_text: str, path: str) -> str:
    """The part of a diff that changes `path` ("" when none does)."""
    out: list[str] = []
    inside = False
    for line in diff_text.splitlines():
        if line.startswith("diff --git "):
            inside = line.endswith(f" b/{path}")
        if inside:
            out.append(line)
    return "\n".join(out)


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_ASSIGN = re.compile(r"^\s*([^=#]+?)\s*=")


def _key_line(text: str, key: str | None, file: str) -> tuple[int | None, str]:
    """The 1-based line that sets `key` in a settings file's text, and that line; the first
    line of its table, or line 1, when it cannot be told; (None, "") for no text."""
    lines = text.splitlines()
    if not lines:
        return None, ""
    prefix = ["tool", "redline"] if file == PYPROJECT else []
    want = [*prefix, *(key.split(".") if key else [])]
    table: list[str] = []
    table_line: int | None = None
    for number, line in enumerate(lines, 1):
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            if want[: len(table)] == table and table_line is None:
                table_line = number
            continue
        assign = _ASSIGN.match(line)
        if assign and [*table, *_parts(assign.group(1))] == want:
            return number, line
    number = table_line or 1
    return number, lines[number - 1]


def _parts(dotted: str) -> list[str]:
    return [p.strip().strip('"').strip("'") for p in dotted.split(".")]


__all__ = ["SOURCE", "settings_findings"]
