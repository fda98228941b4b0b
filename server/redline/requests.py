"""What a caller asks the engine for: the scope kinds, and one request type per entry point.

Every entry point (the command line, the language server, and next the debate mode) builds
one of these and hands it to the engine, so a scope is spelled one way everywhere and a bad
request is refused with the same message wherever it came from:

- `ReviewRequest`: review a scope (`redline review`, the editor's review commands);
- `AskRequest`: a free-form request read by one agent (`redline ask`, the editor's Ask);
- `DebateRequest`: several debaters argue over a scope for some rounds (`redline debate`,
  the editor's Start Debate).

Pydantic-free and cheap to import: the language server parses requests before it has loaded
the engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

from redline.errors import UsageError

MAX_ARG_CHARS = 80  # of a user's argument quoted back in an error message

_FULL_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


class ScopeKind(StrEnum):
    """Which diff a review looks at; `ScopeRequest.arg` says what the kind needs."""

    UNCOMMITTED = "uncommitted"  # staged + unstaged + untracked against HEAD; no argument
    STAGED = "staged"  # the index against HEAD; no argument
    BRANCH = "branch"  # HEAD against its merge-base with a base (None: the default base)
    COMMIT = "commit"  # one commit against its first parent; a revision
    SINCE = "since"  # REF..HEAD; a revision
    RANGE = "range"  # 'A..B', or 'A...B' from the merge-base
    PR = "pr"  # a pull request (number or URL) or a GitLab merge request (!N or URL)

    @classmethod
    def parse(cls, text: object) -> ScopeKind:
        """A kind from what a user or client sent; UsageError lists the kinds."""
        value = str(text).strip().lower()
        try:
            return cls(value)
        except ValueError:
            raise UsageError(
                f"unknown scope {_shown(value)[:40]!r}", hint=f"use one of: {', '.join(cls)}"
            ) from None

    @property
    def takes_arg(self) -> bool:
        return self not in (ScopeKind.UNCOMMITTED, ScopeKind.STAGED)

    @property
    def needs_arg(self) -> bool:
        """False for the kinds whose argument is optional or absent (branch: a default base)."""
        return self.takes_arg and self is not ScopeKind.BRANCH


_NEEDS = {  # what the kind's argument is, and an example
    ScopeKind.COMMIT: ("a revision", "e.g. commit HEAD~1"),
    ScopeKind.SINCE: ("a revision", "e.g. since v1.0"),
    ScopeKind.RANGE: ("a range", "use A..B or A...B"),
    ScopeKind.PR: ("a pull request", "a number or URL, e.g. pr 12 (GitLab: pr !7)"),
}


def _shown(text: str) -> str:
    """A user's text quoted back in a message: printable and short."""
    return "".join(c for c in text if c.isprintable())[:MAX_ARG_CHARS]


@dataclass(frozen=True)
class ScopeRequest:
    """A scope to review. A plain string kind is accepted and checked (JSON, tests)."""

    kind: ScopeKind = ScopeKind.UNCOMMITTED
    # base for branch, REF for commit/since, 'A..B' or 'A...B' for range, N or URL for pr
    arg: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ScopeKind):
            object.__setattr__(self, "kind", ScopeKind.parse(self.kind))

    def check(self) -> ScopeRequest:
        """Raise UsageError when the argument does not fit the kind; returns self."""
        kind, arg = self.kind, self.arg
        if kind.needs_arg and not arg:
            what, hint = _NEEDS[kind]
            raise UsageError(f"the {kind} scope needs {what}", hint=hint)
        if not kind.takes_arg and arg:
            raise UsageError(f"the {kind} scope takes no argument (got {_shown(arg)!r})")
        if kind is ScopeKind.RANGE and ".." not in (arg or ""):
            raise UsageError(f"invalid range {_shown(arg or '')!r}", hint="use A..B or A...B")
        return self

    def describe(self) -> str:
        if not self.arg:
            return str(self.kind)
        # A commit picked from a list arrives as its full id (SHA-1 or SHA-256): people read the
        # short one. (Not git.names: the git package imports this module.)
        full_id = _FULL_OID.fullmatch(self.arg) is not None
        return f"{self.kind} {self.arg[:7] if full_id else self.arg}"


@dataclass(frozen=True)
class ReviewRequest:
    """Review one scope with the pipeline (analyzers, and the model stages when configured)."""

    scope: ScopeRequest

    @property
    def kind(self) -> str:
        """What the editor's sidebar shows as the review's scope."""
        return str(self.scope.kind)

    def check(self) -> ReviewRequest:
        self.scope.check()
        return self

    def describe(self) -> str:
        return self.scope.describe()


@dataclass(frozen=True)
class AskRequest:
    """A free-form request ("review PR 12") read by one agent with the read-only tools."""

    request: str

    @property
    def kind(self) -> str:
        return "ask"

    def check(self) -> AskRequest:
        if not self.request.strip():
            raise UsageError(
                "ask needs a request: what to review, in words",
                hint='e.g. "review the current branch"',
            )
        return self

    def describe(self) -> str:
        text = " ".join(self.request.split())
        return f"ask {text[:60]}…" if len(text) > 60 else f"ask {text}"


MAX_ROUNDS = 20


@dataclass(frozen=True)
class DebateRequest:
    """Debate a scope: the debaters take turns for `rounds` rounds (None: the user's
    `debate.rounds`), then a neutral summarizer sums up (`redline/debate/`)."""

    scope: ScopeRequest
    rounds: int | None = None

    @property
    def kind(self) -> str:
        return "debate"

    def check(self) -> DebateRequest:
        self.scope.check()
        if self.rounds is not None and not (
            isinstance(self.rounds, int)
            and not isinstance(self.rounds, bool)
            and 1 <= self.rounds <= MAX_ROUNDS
        ):
            raise UsageError(
                f"rounds must be a whole number from 1 to {MAX_ROUNDS} "
                f"(got {_shown(str(self.rounds))!r})"
            )
        return self

    def describe(self) -> str:
        return f"debate {self.scope.describe()}"


EngineRequest: TypeAlias = ReviewRequest | AskRequest | DebateRequest
