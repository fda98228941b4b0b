"""What a rule is: a pattern, the secret value inside its match, and how specific it is.

Rules live in provider_rules.py (key formats, fast) and context_rules.py (a secret found by
where it stands); detection.py runs them. Speed matters (a big diff is megabytes): every
ungated pattern starts with a literal, so the regex engine jumps from one occurrence of that
literal to the next; a word boundary before the literal would defeat that, so `boundary=True`
checks the preceding character in Python instead. Patterns without a literal, or
case-insensitive ones, are gated: they run only on the lines the keyword gate selects, or the
lines their own `gate` selects (a context word a value without any prefix needs, such as an
Azure DevOps token's `pat`).

A rule names the secret *value* (a group of the match); the key name around it stays, so the
reviewer still reads `password = "[REDACTED:password:…]"`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

# Ranks decide the kind shown when detections overlap: the lower, the more specific.
PROVIDER: Final = 0  # a provider's own key format, a private key block
CONTEXT: Final = 1  # a credential position: URL password, Authorization header, auth tuple
KEYWORD: Final = 2  # a value assigned to a secret-sounding name
ENTROPY: Final = 3  # a random-looking string

# The gate that selects lines for case-insensitive and keyword rules. It is applied to the
# lower-cased text and must be a necessary condition for every gated rule (context_rules.py,
# plugins.py): each of them needs one of these words on the line.
KEYWORD_GATE: Final = re.compile(
    r"key|pw|pass|token|secret|contrase|credential|auth|bearer|access|cloudant|softlayer"
)


@dataclass(frozen=True)
class Rule:
    """One pattern. `group` is the secret value inside the match (0: the whole match)."""

    kind: str | Callable[[re.Match[str]], str]
    pattern: re.Pattern[str]
    group: int | str = 0
    rank: int = PROVIDER
    boundary: bool = False  # the match must not directly follow a letter, digit or `_`
    check: Callable[[re.Match[str]], bool] | None = None  # False: not a secret after all
    gated: bool = False  # run on the keyword gate's lines only
    gate: re.Pattern[str] | None = None  # run on the lines this selects in the lower-cased text
    name: str = ""  # what tests and notes call it; the kind when empty

    @property
    def label(self) -> str:
        return self.name or (self.kind if isinstance(self.kind, str) else "")


def value_span(rule: Rule, m: re.Match[str]) -> tuple[int, int]:
    """Where the secret value of a match is."""
    if rule.group == "dqv":  # the value in whichever quoting the pattern names matched
        names = m.re.groupindex
        for g in ("dq", "sq", "bq", "bare"):
            if g in names and m.group(g) is not None:
                return m.span(g)
    return m.span(rule.group)
