"""Learnings: what the team taught Redline, as short rules with a scope, in files people edit.

Two files hold them. `.redline/learnings.md` is committed and reviewed like code (the team's);
a private one per repository lives in the user's Redline data directory (`redline learn
--private`: the user's own, never shared). Both have the same format, Markdown a person reads
and edits in a pull request — one bullet per learning, its text on the bullet's line and its
id and scope on the indented line below::

    - We allow `assert` in tests.
      id: L-3f2a9c01 · paths: `tests/**` `conftest.py` · rules: S101
    - Prefer pathlib over os.path.
      id: L-77aa0012 · language: python

- `paths:` one or more globs in backticks (the excludes' rules: `*` crosses `/`, a glob
  without `/` also matches the file name, a trailing `/` means everything below), any of
  which may match; `language:` a language name as Redline names files (python, typescript,
  go, …). Both given: both must match. Neither: the whole repository.
- `rules:` analyzer rule ids (S101, B602, SC2164, …): within its scope the learning drops
  those analyzers' findings (counted in the report). Without it, a learning is guidance the
  model is shown for the files in its scope.
- `id:` short and stable (`redline learn --remove L-…`). A hand-written bullet without one
  gets an id from its text and scope; `redline learn` writes it out.

Parsing is lenient: headings, prose, HTML comments and code blocks are not learnings, and a
learning whose scope line cannot be read (an unknown key, a glob without backticks) is left out
— never widened to the whole repository — with a problem naming its line; every other learning
still applies. Rendering is canonical (`parse(render(x)) == x`).

Nothing here executes or configures anything: a learning is text for a model and a list of
rule ids to match against findings. Who may change which learnings a review uses is the
caller's business (review/learnings_use.py: the base revision's file for a review of
commits, never the change's own edit).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from redline.diff.functions import language_for
from redline.diff.rules import glob_matches
from redline.errors import UsageError

COMMITTED_FILE: Final = ".redline/learnings.md"
MAX_FILE_BYTES: Final = 256 * 1024
MAX_LEARNINGS: Final = 200
MAX_TEXT_CHARS: Final = 500
MAX_GLOBS: Final = 20
MAX_RULES: Final = 20

Source = Literal["committed", "private"]

HEADER: Final = """<!--
Redline learnings: what this team taught Redline, applied to later reviews.
One bullet per learning: its text on the bullet's line, then an indented line with
  id: L-xxxxxxxx · paths: `glob` `glob` · language: NAME · rules: RULE, RULE
paths and language are the scope (both: both must match; neither: the whole repository).
rules: analyzer rule ids whose findings the learning drops inside its scope.
Add with `redline learn "text" --path 'tests/**'`, list with `redline learn --list`,
remove with `redline learn --remove L-xxxxxxxx`, or edit this file by hand.
-->
# Redline learnings
"""

_ID = re.compile(r"L-[0-9a-f]{8}")
_LANGUAGE = re.compile(r"[a-z][a-z0-9+#._-]{0,31}")
_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}")
_BULLET = re.compile(r"^[-*][ \t]+(.*)$")
_META_KEY = re.compile(r"[ \t]*(id|paths?|language|rules?|scope)[ \t]*:[ \t]*", re.IGNORECASE)
_SEPARATORS = " \t·;|"
_GLOB_TOKEN = re.compile(r"`([^`\n]+)`")
_CANONICAL: Final = {"path": "paths", "rule": "rules"}


class LearningError(UsageError):
    """A learning that cannot be made as asked (empty text, a bad glob or rule id)."""


@dataclass(frozen=True)
class Learning:
    id: str
    text: str
    paths: tuple[str, ...] = ()
    language: str | None = None
    rules: tuple[str, ...] = ()

    @property
    def scope(self) -> str:
        """How the scope reads in a list: "paths tests/**, conftest.py · language python"."""
        parts = []
        if self.paths:
            parts.append("paths " + ", ".join(self.paths))
        if self.language:
            parts.append(f"language {self.language}")
        return " · ".join(parts) or "repository"

    def applies_to(self, path: str, language: str | Literal[False] | None = False) -> bool:
        """Whether `path` (repository-relative, `/`) is inside the learning's scope;
        `language`: the path's (`language_for`), when the caller has it already."""
        if self.paths and not any(glob_matches(path, g) for g in self.paths):
            return False
        if self.language is None:
            return True
        found = language_for(path) if language is False else language
        return found == self.language or (self.language == "typescript" and found == "tsx")


@dataclass
class Parsed:
    learnings: list[Learning] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "line 7: …", one per left-out line


# -- making ----------------------------------------------------------------------------------


def clean_text(text: str) -> str:
    """One line: whitespace runs (newlines, Unicode separators) as one space, control and
    format characters (bidi overrides, zero-width) dropped, ends stripped."""
    if text.isprintable():  # no control, format or separator but " ": the common case
        return " ".join(text.split())
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn")
    )
    return " ".join(kept.split())


def make_learning(
    text: str,
    paths: Iterable[str] = (),
    language: str | None = None,
    rules: Iterable[str] = (),
    *,
    ident: str | None = None,
) -> Learning:
    """A learning checked and normalised; its id from its content unless given. Raises
    LearningError with a one-line reason."""
    body = clean_text(text)
    if not body:
        raise LearningError("a learning needs some text")
    if len(body) > MAX_TEXT_CHARS:
        raise LearningError(
            f"a learning is at most {MAX_TEXT_CHARS} characters (this one has {len(body)})"
        )
    globs = _dedupe(_check_glob(g) for g in paths)
    if len(globs) > MAX_GLOBS:
        raise LearningError(f"a learning has at most {MAX_GLOBS} paths")
    lang = _check_language(language) if language is not None else None
    rule_ids = _dedupe(_check_rule(r) for r in rules)
    if len(rule_ids) > MAX_RULES:
        raise LearningError(f"a learning names at most {MAX_RULES} rules")
    ident = learning_id(body, globs, lang, rule_ids) if ident is None else normal_id(ident)
    if not _ID.fullmatch(ident):
        raise LearningError(f"{ident!r} is not a learning id (L- and 8 hexadecimal digits)")
    return Learning(ident, body, globs, lang, rule_ids)


def normal_id(ident: str) -> str:
    """An id as written by hand (`l-3F2A9C01`) in its one spelling (`L-3f2a9c01`)."""
    ident = ident.strip()
    return "L-" + ident[2:].lower() if ident[:2] in ("L-", "l-") else ident


def learning_id(text: str, paths: Sequence[str], language: str | None, rules: Sequence[str]) -> str:
    digest = hashlib.sha256(
        "\x00".join([text, "\x01".join(paths), language or "", "\x01".join(rules)]).encode()
    )
    return "L-" + digest.hexdigest()[:8]


def _check_glob(glob: str) -> str:
    g = glob.strip()
    while g.startswith("./"):
        g = g[2:]
    if not g:
        raise LearningError("an empty path glob")
    if "`" in g or any(unicodedata.category(c).startswith("C") for c in g):
        raise LearningError(f"path glob {g!r} holds a backtick or a control character")
    if g.startswith("/"):
        raise LearningError(f"path glob {g!r} must be relative to the repository root")
    return g


def _check_language(language: str) -> str:
    lang = language.strip().lower()
    if not _LANGUAGE.fullmatch(lang):
        raise LearningError(f"{language!r} is not a language name (e.g. python, typescript)")
    return lang


def _check_rule(rule: str) -> str:
    r = rule.strip()
    if not _RULE.fullmatch(r):
        raise LearningError(f"{rule!r} is not an analyzer rule id (e.g. S101, B602)")
    return r


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


# -- rendering -------------------------------------------------------------------------------


def render(learnings: Iterable[Learning]) -> str:
    """The canonical text of a learnings file."""
    body = "".join(f"- {item.text}\n  {meta_line(item)}\n" for item in learnings)
    return HEADER + ("\n" + body if body else "")


def meta_line(item: Learning) -> str:
    parts = [f"id: {item.id}"]
    if item.paths:
        parts.append("paths: " + " ".join(f"`{g}`" for g in item.paths))
    if item.language:
        parts.append(f"language: {item.language}")
    if item.rules:
        parts.append("rules: " + ", ".join(item.rules))
    return " · ".join(parts)


# -- parsing ---------------------------------------------------------------------------------


@dataclass
class _Pending:
    line: int
    text: list[str]
    meta: str | None = None
    meta_line: int = 0


def parse(text: str) -> Parsed:
    """The learnings of a file's text, in order, and a problem for each one left out."""
    parsed = Parsed()
    pending: _Pending | None = None
    in_comment = False
    fence: str | None = None
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if in_comment:
            in_comment = "-->" not in stripped
            continue
        if stripped.startswith(("```", "~~~")):
            _finish(pending, parsed)
            pending, fence = None, stripped[:3]
            continue
        if stripped.startswith("<!--"):
            _finish(pending, parsed)
            pending, in_comment = None, "-->" not in stripped[4:]
            continue
        bullet = _BULLET.match(line)
        if bullet:
            _finish(pending, parsed)
            pending = _Pending(number, [bullet.group(1)])
            continue
        if pending is not None and line[:1] in (" ", "\t") and stripped:
            if pending.meta is None and _META_KEY.match(stripped):
                pending.meta, pending.meta_line = stripped, number
            elif pending.meta is None:
                pending.text.append(stripped)  # a bullet wrapped by hand
            else:
                parsed.problems.append(f"line {number}: text after the id line is not read")
            continue
        _finish(pending, parsed)
        pending = None
    _finish(pending, parsed)
    if len(parsed.learnings) > MAX_LEARNINGS:
        parsed.problems.append(
            f"{len(parsed.learnings)} learnings: only the first {MAX_LEARNINGS} are used"
        )
        del parsed.learnings[MAX_LEARNINGS:]
    return parsed


def _finish(pending: _Pending | None, parsed: Parsed) -> None:
    if pending is None:
        return
    where = pending.meta_line or pending.line
    try:
        fields = _read_meta(pending.meta or "")
        item = make_learning(
            " ".join(pending.text),
            fields.get("paths", ()),
            _one(fields.get("language")),
            fields.get("rules", ()),
            ident=_one(fields.get("id")),
        )
    except LearningError as exc:
        parsed.problems.append(f"line {where}: {exc.message}; this learning is left out")
        return
    if any(known.id == item.id for known in parsed.learnings):
        parsed.problems.append(
            f"line {where}: id {item.id} is used twice; this learning is left out"
        )
        return
    parsed.learnings.append(item)


def _one(values: tuple[str, ...] | None) -> str | None:
    return values[0] if values else None


def _read_meta(line: str) -> dict[str, tuple[str, ...]]:
    """`id: … · paths: `a` `b` · language: … · rules: A, B` as fields; raises LearningError
    naming what cannot be read."""
    fields: dict[str, tuple[str, ...]] = {}
    pos = 0
    while True:
        while pos < len(line) and line[pos] in _SEPARATORS:
            pos += 1
        if pos >= len(line):
            return fields
        key_match = _META_KEY.match(line, pos)
        if key_match is None:
            raise LearningError(
                f"cannot read {line[pos:][:40]!r} (keys: id, paths, language, rules)"
            )
        key = _CANONICAL.get(key_match.group(1).lower(), key_match.group(1).lower())
        pos = key_match.end()
        if key in fields:
            raise LearningError(f"`{key}` is given twice")
        if key == "paths":
            globs: list[str] = []
            while (tok := _GLOB_TOKEN.match(line, pos)) is not None:
                globs.append(tok.group(1))
                pos = tok.end()
                while pos < len(line) and line[pos] in " \t,":
                    pos += 1
            if not globs:
                raise LearningError("paths must be globs in backticks: paths: `tests/**`")
            fields["paths"] = tuple(globs)
            continue
        end = pos
        while end < len(line) and line[end] not in "·;|":
            end += 1
        value = line[pos:end].strip()
        pos = end
        if key == "rules":
            fields["rules"] = tuple(v.strip() for v in value.split(",") if v.strip())
        elif key == "scope":
            if value.lower() not in ("repository", "repo", "all"):
                raise LearningError(f"scope {value!r}: write paths: or language: instead")
            fields["scope"] = ()
        else:
            if not value or " " in value:
                raise LearningError(f"`{key}` needs one value")
            fields[key] = (value,)
