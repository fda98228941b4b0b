"""Dismissed findings that stay dismissed: `.redline/dismissed.toml`, read and written.

A finding's id is a fingerprint of its file, code, category and rule (`model.finding_id`), not
of its line, so a dismissal holds for every later review of the same code and lapses when the
code changes (then it is a different finding and deserves a fresh look). Identical findings in
one file (the same line twice) get distinct ids, numbered in line order
(`model.number_occurrences`): the first keeps the plain fingerprint (its *base id*), the n-th
gets an occurrence id. A dismissal names one occurrence; one with `all = true` names a base id
and dismisses every occurrence of it ("dismiss all like this"), today's and future ones.

`.redline/dismissed.toml` is meant to be committed: an auditable list, one table per dismissal,
with who and why::

    [[dismissed]]
    id = "RL-0123456789ab"
    file = "app/views.py"
    title = "SQL built with string formatting"
    reason = "input is an enum, never user text"
    when = 2026-01-01T12:00:00Z
    by = "alice"
    rule = "S608"  # the analyzer rule, when an analyzer found it
    all = true  # optional: every identical finding in the file, not only this one

An entry without `all` (every entry written before ids were made unique) dismisses that one
id: the first occurrence, for a base id. Such an entry used to hide every identical line of its
file, including ones added later; those now show again, once, to be dismissed on their own or
with "all like this" (a dismissal must not hide new code).

Inline `redline: ignore[<id>]` markers, and applying both to a review's findings, are in
dismissal_matching.py.

The file is read with tomllib and written by the small writer in toml_writer.py (no
TOML-writing dependency); rewriting keeps every dismissal and any extra scalar keys a team
added, but not hand-written comments. A hand-edited file with a syntax error raises
`DismissalError` naming the file and line; the review pipeline reports it as a coverage note
and carries on.

`.redline` is a path in the repository, so its author's: it may be a symbolic link to any
directory on the machine (an autostart folder, another repository's `.git`), and
`dismissed.toml` a link to any file. The file is therefore read and written only as a regular
file inside the work tree, every level below the repository root opened without following a
link (nofollow.py), and replaced atomically inside that same directory; a link, a FIFO or a
directory in its way is a DismissalError and nothing is read or written.
"""

from __future__ import annotations

import builtins
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path

from redline.errors import RedlineError
from redline.files import DISMISSED_FILE
from redline.model import Finding
from redline.nofollow import NoFollowError, read_file, replace_file
from redline.store.toml_writer import (
    Scalar,
    toml_datetime,
    toml_key,
    toml_string,
    toml_value,
)

DISMISSED_PATH = Path(DISMISSED_FILE)
_PARTS = tuple(DISMISSED_FILE.split("/"))
_MAX_BYTES = 16 * 1024 * 1024
_HEADER = (
    "# Findings dismissed in Redline reviews. Commit this file so the team shares it.\n"
    "# A finding's id changes when its code changes, so a dismissal never hides new code.\n"
    "# `all = true`: every identical finding in the file (same code, category and rule).\n"
)
_FIELDS = ("id", "file", "title", "reason", "when", "by", "all", "rule")


class DismissalError(RedlineError):
    """`.redline/dismissed.toml` cannot be read or written."""


@dataclass(frozen=True)
class Dismissal:
    id: str
    file: str = ""
    title: str = ""
    reason: str = ""
    when: str = ""  # ISO 8601, UTC
    by: str | None = None
    extra: dict[str, Scalar | list[Scalar]] = field(default_factory=dict, compare=False)
    # `all = true`: `id` is a base id and every occurrence of it is dismissed.
    all_like_this: bool = False
    rule: str | None = None  # the analyzer rule of the finding (memory/dismissal_learnings.py)


@dataclass(frozen=True)
class Dismissed:
    """The ids dismissed.toml dismisses: single findings (`one`), and base ids every
    occurrence of which is dismissed (`every`)."""

    one: frozenset[str] = frozenset()
    every: frozenset[str] = frozenset()

    @classmethod
    def of(cls, entries: Iterable[Dismissal]) -> Dismissed:
        entries = builtins.list(entries)
        return cls(
            one=frozenset(d.id for d in entries if not d.all_like_this),
            every=frozenset(d.id for d in entries if d.all_like_this),
        )

    def covers(self, finding: Finding) -> bool:
        return finding.id in self.one or finding.family_id in self.every


class DismissalStore:
    """The dismissals of one repository, in `<repo_root>/.redline/dismissed.toml`.

    Every call reads the file afresh (it is small, and a teammate's `git pull` may have changed
    it); `add` and `remove` rewrite it atomically."""

    def __init__(self, repo_root: Path) -> None:
        self.repo_root = Path(repo_root)
        self.path = self.repo_root / DISMISSED_PATH

    def list(self) -> builtins.list[Dismissal]:
        """Every dismissal in file order; [] when the file does not exist."""
        try:
            data = read_file(self.repo_root, _PARTS, _MAX_BYTES)
        except NoFollowError as exc:
            raise _refused(exc, "read") from None
        except OSError as exc:
            raise DismissalError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        return [] if data is None else _parse(data, self.path)

    def ids(self) -> set[str]:
        """Every id the file names (one occurrence's, or a base id with `all = true`)."""
        return {d.id for d in self.list()}

    def dismissed(self) -> Dismissed:
        return Dismissed.of(self.list())

    def is_dismissed(self, finding: Finding | str) -> bool:
        """Whether the file dismisses `finding` (an id alone counts as its own base id)."""
        stored = self.dismissed()
        if isinstance(finding, str):
            return finding in stored.one or finding in stored.every
        return stored.covers(finding)

    def add(
        self,
        finding: Finding,
        reason: str,
        *,
        by: str | None = None,
        when: datetime | None = None,
        all_like_this: bool = False,
    ) -> Dismissal:
        """Dismiss `finding`, that occurrence only; with `all_like_this`, every occurrence of
        its base id (identical code, category and rule in its file), now and later. Replaces an
        earlier dismissal of the same id."""
        moment = (when or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
        ident = finding.family_id if all_like_this else finding.id
        entry = Dismissal(
            id=ident,
            file=finding.file,
            title=finding.title,
            reason=reason,
            when=moment.isoformat().replace("+00:00", "Z"),
            by=by,
            all_like_this=all_like_this,
            rule=finding.rule_id,
        )
        entries = [d for d in self.list() if d.id != ident]
        entries.append(entry)
        self._write(entries)
        return entry

    def remove(self, finding_id: str) -> bool:
        """Un-dismiss; False when the id was not dismissed."""
        entries = self.list()
        kept = [d for d in entries if d.id != finding_id]
        if len(kept) == len(entries):
            return False
        self._write(kept)
        return True

    def _write(self, entries: Iterable[Dismissal]) -> None:
        # Shared through git, so not private: it keeps the mode it had, or gets 0644.
        try:
            replace_file(self.repo_root, _PARTS, dumps(entries).encode("utf-8"), mode=0o644)
        except NoFollowError as exc:
            raise _refused(exc, "write") from None
        except OSError as exc:
            raise DismissalError(f"cannot write {self.path}: {exc.strerror or exc}") from exc


def _refused(exc: NoFollowError, doing: str) -> DismissalError:
    return DismissalError(
        f"refusing to {doing} dismissals: {exc.message}",
        hint=f"Redline keeps dismissals only in a regular file {DISMISSED_FILE} inside the "
        "repository, never through a symbolic link; replace the link with a directory",
    )


# -- reading ---------------------------------------------------------------------------------


def _parse(data: bytes, path: Path) -> list[Dismissal]:
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DismissalError(f"{path} is not UTF-8 text (byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise DismissalError(
            f"{path} is not valid TOML: {exc}",
            hint="fix or delete the file; dismissals in it are ignored until then",
        ) from exc
    entries = doc.get("dismissed", [])
    if not isinstance(entries, list):
        raise DismissalError(f"{path}: `dismissed` must be an array of tables ([[dismissed]])")
    out: list[Dismissal] = []
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise DismissalError(f"{path}: dismissal #{n} is not a table")
        ident = entry.get("id")
        if not isinstance(ident, str) or not ident.strip():
            raise DismissalError(f"{path}: dismissal #{n} has no `id`")
        by = entry.get("by")
        every = entry.get("all", False)
        if not isinstance(every, bool):
            raise DismissalError(f"{path}: dismissal #{n}: `all` must be true or false")
        out.append(
            Dismissal(
                id=ident.strip(),
                file=_text(entry.get("file")),
                title=_text(entry.get("title")),
                reason=_text(entry.get("reason")),
                when=_text(entry.get("when")),
                by=_text(by) if by is not None else None,
                extra={k: v for k, v in entry.items() if k not in _FIELDS and _writable(v)},
                all_like_this=every,
                rule=_text(entry.get("rule")) or None,
            )
        )
    return out


def parse_dismissed(data: bytes, label: str) -> Dismissed:
    """What a dismissed.toml's bytes dismiss (one version of it: a base revision's); raises
    DismissalError naming `label` when they are not a valid file."""
    return Dismissed.of(_parse(data, Path(label)))


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC)
            return value.isoformat().replace("+00:00", "Z")
        return value.isoformat()
    if isinstance(value, date | time):
        return value.isoformat()
    return str(value)


def _writable(value: object) -> bool:
    if isinstance(value, list):
        return all(_writable(v) and not isinstance(v, list) for v in value)
    return isinstance(value, str | int | float | bool | datetime | date | time)


# -- writing ---------------------------------------------------------------------------------


def dumps(entries: Iterable[Dismissal]) -> str:
    """The TOML text of `entries` (what `.redline/dismissed.toml` holds)."""
    out = [_HEADER]
    for d in entries:
        out.append("\n[[dismissed]]\n")
        out.append(f"id = {toml_string(d.id)}\n")
        out.append(f"file = {toml_string(d.file)}\n")
        out.append(f"title = {toml_string(d.title)}\n")
        out.append(f"reason = {toml_string(d.reason)}\n")
        out.append(f"when = {toml_datetime(d.when)}\n")
        if d.by is not None:
            out.append(f"by = {toml_string(d.by)}\n")
        if d.rule:
            out.append(f"rule = {toml_string(d.rule)}\n")
        if d.all_like_this:
            out.append("all = true\n")
        for key, value in d.extra.items():
            out.append(f"{toml_key(key)} = {toml_value(value)}\n")
    return "".join(out)
