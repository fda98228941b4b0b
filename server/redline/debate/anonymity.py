"""Final positions without their authors: identifying terms stripped, order shuffled, letters.

The summarizer must judge what was said, not who (or which model) said it. Every term that
would identify a debater — its name, its label, its model string and the model's tail — is
removed from its position, and from every other position (debaters name each other).

The built-in role names (security, performance, code-quality) are ordinary words in a code
review ("a security problem", "the performance cost"): removing them everywhere would garble
the positions. For those only identity phrases go — "as the security reviewer", "security
expert/debater/perspective", "[Security]", "Security:" opening a line. Any other name ("alice",
a custom label, a model) goes wherever it stands as a whole word, case-insensitively.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from string import ascii_uppercase

from redline.config_models import BUILTIN_DEBATERS
from redline.debate.roster import Debater, Roster

REMOVED = "[redacted]"

# The nouns that turn a role word into a self-description ("the security reviewer").
_ROLE_NOUNS = (
    r"(?:reviewers?|debaters?|experts?|specialists?|perspectives?|advocates?|analysts?|"
    r"engineers?|auditors?|hats?|lens|roles?|voices?|participants?|minded|focused)"
)


def _loose(word: str) -> str:
    """A role word's pattern: "code-quality" also as "code quality", "Code_Quality"."""
    parts = re.split(r"[\s_-]+", word.strip())
    return r"[\s_-]*".join(re.escape(p) for p in parts if p)


def _ordinary(term: str) -> bool:
    """A built-in role name, however it is spelled (name or its default label)."""
    key = re.sub(r"[\s_-]+", "-", term.strip().lower())
    return key in BUILTIN_DEBATERS


def _identity_patterns(word: str) -> list[tuple[re.Pattern[str], str]]:
    """(pattern, replacement) for a role word's identity phrases. Phrases that only introduce
    the speaker vanish; a description inside a sentence leaves a placeholder so it still
    reads."""
    w = _loose(word)
    flags = re.IGNORECASE | re.MULTILINE
    return [
        # "As the security reviewer, I ..." / "speaking as a security expert:" → gone.
        (
            re.compile(
                rf"\b(?:speaking\s+)?as\s+(?:the|a|an|your|this)\s+{w}(?:[\s-]+{_ROLE_NOUNS})+"
                r"\s*[,:;]?[ \t]*",
                flags,
            ),
            "",
        ),
        # "I am the security expert", "from my security perspective" → a placeholder.
        (re.compile(rf"\b(?:the\s+|a\s+|an\s+)?{w}(?:[\s-]+{_ROLE_NOUNS})+\b", flags), REMOVED),
        # "[Security]", "(Security)" as a tag → gone.
        (re.compile(rf"[\[(][ \t]*{w}[ \t]*[\])][ \t]*", flags), ""),
        # "Security:", "**Security**:" or "## Security" opening a line (a speaker header).
        (
            re.compile(
                rf"^([ \t>]*)(?:#+[ \t]*)?(?:\*\*)?{w}(?:\*\*)?[ \t]*(?::(?:\*\*)?|(?=\n)|$)[ \t]*",
                flags,
            ),
            r"\1",
        ),
    ]


def _word_pattern(term: str) -> re.Pattern[str]:
    # Whole word, including terms with "/" or "." in them (model strings).
    return re.compile(rf"(?<![\w]){re.escape(term)}(?![\w])", re.IGNORECASE)


@dataclass(frozen=True)
class Scrubber:
    """Removes every identifying term of a roster from a text."""

    rules: tuple[tuple[re.Pattern[str], str], ...]

    @classmethod
    def for_roster(cls, roster: Roster) -> Scrubber:
        identity: list[tuple[re.Pattern[str], str]] = []
        words: list[tuple[re.Pattern[str], str]] = []
        seen: set[str] = set()
        for term in roster.scrub_terms():  # longest first: a model before its tail
            key = term.strip().lower()
            if not key or key in seen:
                continue
            seen.add(key)
            if _ordinary(term):
                identity.extend(_identity_patterns(term))
            else:
                words.append((_word_pattern(term.strip()), REMOVED))
        # Identity phrases first: "as the alice reviewer" never reaches them, but a custom
        # label could sit inside one ("Security Alice").
        return cls((*identity, *words))

    def __call__(self, text: str) -> str:
        for pattern, replacement in self.rules:
            text = pattern.sub(replacement, text)
        return text


@dataclass(frozen=True)
class AnonymousPosition:
    label: str  # "Debater A"
    text: str  # scrubbed
    debater: Debater  # who said it: never shown to the summarizer


def letter_label(index: int) -> str:
    """ "Debater A" … "Debater Z", then "Debater AA" (more than 26 debaters is unusual)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = ascii_uppercase[rest] + letters
    return f"Debater {letters}"


def anonymize(
    positions: Iterable[tuple[Debater, str]], roster: Roster, rng: random.Random
) -> list[AnonymousPosition]:
    """The positions scrubbed, shuffled with `rng` and labelled in their new order."""
    scrub = Scrubber.for_roster(roster)
    items = list(positions)
    rng.shuffle(items)
    return [
        AnonymousPosition(letter_label(i), scrub(text).strip(), debater)
        for i, (debater, text) in enumerate(items)
    ]


def names_for(labels: Sequence[str], positions: Sequence[AnonymousPosition]) -> list[str]:
    """The debaters behind the labels the summarizer cited, in position order; labels that
    were never given out are ignored ("Debater a", "debater  a" are read as "Debater A")."""
    wanted = {" ".join(label.split()).lower() for label in labels}
    return [p.debater.name for p in positions if p.label.lower() in wanted]
