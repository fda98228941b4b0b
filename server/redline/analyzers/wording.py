"""An analyzer result's title and body, each thing said once.

A tool's message is one or more sentences ("Probable use of unsafe `yaml.load`. Allows
instantiation of arbitrary objects. Consider `yaml.safe_load`."); Redline's rule table adds its
own advice ("`yaml.load` can construct arbitrary objects from untrusted input; use
`yaml.safe_load`."). Put side by side they repeat each other, and every editor shows the title
and the body's first paragraph together. So:

- the title is the rule's template (written to replace the tool's wording) or else the message's
  first sentence;
- the body is what the title and the advice do not already say: with a template, nothing of the
  message (its specific name is in the template); without one, the message's other sentences
  (the first too, when the title had to cut it) minus those the advice restates — a sentence
  whose code names all appear in the advice and half of whose words do; then the advice.
"""

from __future__ import annotations

import re

from redline.shorten import shorten

TITLE_LIMIT = 100
_BACKTICKED = re.compile(r"`([^`]+)`")
_DOUBLE_QUOTED = re.compile(r'"([^"\n]+)"')
# A sentence ends at ". ", "! " or "? " before a capital, a backtick or a quote; never inside
# a backticked span (`raise ... from err`).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"])")
# A placeholder with the words that only make sense with a name: "Unused import `{0}`".
_PLACEHOLDER = re.compile(r"\s*(?:\b(?:in|of|for|to)\s+)?`?\{0\}`?")
_WORD = re.compile(r"[a-z0-9_][a-z0-9_.=]*")
_STOP_WORDS = (
    "a an and are as at be by can for from has have in into is it its may of on or so that the "
    "their them then this to use used using was with without"
)
_STOP = frozenset(_STOP_WORDS.split())


def split_sentences(text: str) -> list[str]:
    """`text`'s sentences, whitespace folded, each without its final period. A period inside
    backticks never ends one."""
    text = " ".join(text.split())
    if not text:
        return []
    # Hide the spans' inner spaces so no boundary is found inside one.
    masked = _BACKTICKED.sub(lambda m: "`" + m.group(1).replace(" ", "\0") + "`", text)
    parts = _SENTENCE_END.split(masked)
    return [p.replace("\0", " ").rstrip(".").strip() for p in parts if p.strip(" .")]


def title_of(template: str | None, message: str) -> str:
    """The finding's title: the template with the message's first named thing (a backticked
    name, else a double-quoted one, as ruff quotes a variable), or the template without the
    placeholder when there is none; without a template, the message's first sentence."""
    if template:
        if "{0}" not in template:
            return template
        names = _BACKTICKED.findall(message) or _DOUBLE_QUOTED.findall(message)
        if names:
            return template.replace("{0}", names[0])
        return _PLACEHOLDER.sub("", template).strip()
    sentences = split_sentences(message)
    first = sentences[0] if sentences else ""
    first = first[:1].upper() + first[1:] if first[:1].isalpha() else first
    return shorten(first, TITLE_LIMIT) or "Analyzer finding"


def body_of(template: str | None, message: str, title: str, advice: str) -> list[str]:
    """The body's sentences before the advice (each ends with its punctuation): what of the
    tool's message the title and the advice do not already say."""
    if template:
        return []
    sentences = split_sentences(message)
    if sentences and _plain(sentences[0]) == _plain(title):
        sentences = sentences[1:]  # the title says it whole
    kept = [s for s in sentences if not (advice and _restates(s, advice))]
    return [s + ("" if s.endswith(("!", "?", "…")) else ".") for s in kept]


def _restates(sentence: str, advice: str) -> bool:
    """Whether `advice` says what `sentence` says: every code name of the sentence is in the
    advice, and at least half of its words are."""
    names = {_code(n) for n in _BACKTICKED.findall(sentence)}
    advice_names = {_code(n) for n in _BACKTICKED.findall(advice)}
    if not names <= advice_names | _words(advice):
        return False
    words = _words(sentence)
    if not words:
        return True
    return len(words & (_words(advice) | advice_names)) * 2 >= len(words)


def _code(name: str) -> str:
    return name.strip().rstrip("()").casefold()


def _words(text: str) -> set[str]:
    found = {w.rstrip(".()=").removesuffix("()") for w in _WORD.findall(text.casefold())}
    return {w for w in found if w and w not in _STOP}


def _plain(text: str) -> str:
    return " ".join(text.split()).rstrip(".!?…").casefold()
