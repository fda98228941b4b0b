"""What a finding's title and shown body say twice (issue 25's `yaml.load` message): shared by
the wording tests of ruff/bandit rules and of ast-grep's rule pack."""

from __future__ import annotations

import re
from itertools import combinations

from redline.model import Finding

_STOP_WORDS = (
    "a an and are as at be by can for from has have in into is it its may of on or so that the "
    "their them then this to use used using was with without not"
)
_STOP = frozenset(_STOP_WORDS.split())


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.;!?])\s+", text.strip()) if s]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_=.]+[a-z0-9_=]|[a-z0-9]", text.casefold().replace("`", " "))


def _trigrams(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    grams = {tuple(words[i : i + 3]) for i in range(len(words) - 2)}
    return {g for g in grams if not set(g) <= _STOP}


def repeats(finding: Finding) -> list[str]:
    """What the finding's title and shown body say twice: three words in a row in two of its
    sentences, the title inside the body, a code name in two sentences of the body."""
    body = finding.comment.split("\n\n")[0]
    sentences = [finding.title, *_sentences(body)]
    found = []
    for a, b in combinations(sentences, 2):
        shared = _trigrams(a) & _trigrams(b)
        if shared:
            found.append(f"{' '.join(sorted(shared)[0])!r} in {a!r} and {b!r}")
    if " ".join(_words(finding.title.removesuffix("…"))) in " ".join(_words(body)):
        found.append(f"the title {finding.title!r} in the body")
    names: dict[str, str] = {}
    for sentence in _sentences(body):
        for name in set(re.findall(r"`([^`]+)`", sentence)):
            if name in names:
                found.append(f"`{name}` in {names[name]!r} and {sentence!r}")
            names[name] = sentence
    return found
