"""Detection, in one pass over a text (each stage's speed notes are in rule.py / plugins.py):

1. Redline's own patterns (provider_rules.py, context_rules.py): provider key formats, whole
   private-key blocks, URL passwords, a bare AWS secret, `.env` values, and — on the keyword
   gate's lines only — Authorization headers, `auth=(user, pw)` tuples and secret-named
   assignments;
2. detect-secrets' regex plugins, keyword detector and entropy detectors (plugins.py).

The secrets already found are searched for again by the redactor (redactor.py).
"""

from __future__ import annotations

import functools
from typing import Any

from redline.redaction.context_rules import context_rules
from redline.redaction.file_rules import file_rules
from redline.redaction.literals import split_spans
from redline.redaction.provider_rules import MARKER, material_end, provider_rules
from redline.redaction.rule import (
    CONTEXT,
    ENTROPY,
    KEYWORD,
    KEYWORD_GATE,
    PROVIDER,
    Rule,
    value_span,
)
from redline.redaction.spans import LineSet, Span, covered


@functools.cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, compiled on first use (importing this module must stay cheap: the language
    server's log filter imports it at start-up)."""
    return provider_rules() + context_rules() + file_rules()


def detect(text: str, plugins: Any) -> list[Span]:
    """Every detection in `text` (overlapping, unmerged): the own rules, then detect-secrets'
    plugins (`plugins`: a `DetectSecrets`, or None when it is unavailable)."""
    spans: list[Span] = []
    rules_ = all_rules()
    own_lines: dict[str, LineSet | None] = {}
    for rule in rules_:
        if rule.gate is not None:
            if rule.gate.pattern not in own_lines:
                own_lines[rule.gate.pattern] = LineSet.select(text, rule.gate, lower=True)
            subset = own_lines[rule.gate.pattern]
            if subset is not None:
                spans += subset.map(rule_spans(rule, subset.text))
        elif not rule.gated:
            spans += rule_spans(rule, text)
    key_blocks(text, spans)
    lines = LineSet.select(text, KEYWORD_GATE, lower=True)
    if lines is not None:
        for rule in rules_:
            if rule.gated:
                spans += lines.map(rule_spans(rule, lines.text))
    spans += split_key_spans(text, plugins)
    if plugins is None:
        return spans
    rank = CONTEXT
    other_lines: dict[str, LineSet | None] = {}
    for plugin in plugins.regex_plugins:
        if plugin.gate is None:
            spans += [Span(s, e, plugin.kind, rank) for s, e in plugin.spans(text)]
            continue
        if plugin.gate == "keyword":
            subset = lines
        else:
            pattern = plugin.gate.pattern
            if pattern not in other_lines:
                other_lines[pattern] = LineSet.select(text, plugin.gate)
            subset = other_lines[pattern]
        if subset is not None:
            spans += subset.map(Span(s, e, plugin.kind, rank) for s, e in plugin.spans(subset.text))
    if lines is not None:
        for origin, line in lines.lines():
            spans += [
                Span(origin + s, origin + e, kind, KEYWORD)
                for s, e, kind in plugins.keyword_spans(line)
            ]
    spans += [Span(s, e, "high-entropy-string", ENTROPY) for s, e in plugins.entropy_spans(text)]
    for marker in plugins.private_key_markers:
        for m in marker.finditer(text):
            if not covered(spans, m.end()):
                spans.append(Span(m.end(), material_end(text, m.end()), "private-key", PROVIDER))
    return spans


def split_key_spans(text: str, plugins: Any) -> list[Span]:
    """Provider keys split across adjacent string literals (literals.py)."""
    if '"' not in text and "'" not in text:
        return []
    return split_spans(text, lambda joined: provider_spans(joined, plugins))


def provider_spans(text: str, plugins: Any) -> list[Span]:
    """What the key-format rules alone find: Redline's provider rules and detect-secrets'
    ungated regex plugins (no keyword, context or entropy rule: pieces of ordinary strings
    joined together are not a setting)."""
    spans: list[Span] = []
    for rule in all_rules():
        if rule.rank == PROVIDER and not rule.gated and rule.gate is None:
            spans += rule_spans(rule, text)
    if plugins is not None:
        for plugin in plugins.regex_plugins:
            if plugin.gate is None:
                spans += [Span(s, e, plugin.kind, PROVIDER) for s, e in plugin.spans(text)]
    return spans


def key_blocks(text: str, spans: list[Span]) -> None:
    """A key header whose block was not matched whole (no END line: cut, or a string with
    `\\n` escapes): mask the key material that follows it."""
    if "PRIVATE KEY" not in text and "Private-Lines" not in text:
        return
    for m in MARKER.finditer(text):
        if not covered(spans, m.end()):
            spans.append(Span(m.end(), material_end(text, m.end()), "private-key", 0))


def rule_spans(rule: Rule, text: str) -> list[Span]:
    out = []
    for m in rule.pattern.finditer(text):
        start = m.start()
        if rule.boundary and start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue
        if rule.check is not None and not rule.check(m):
            continue
        s, e = value_span(rule, m)
        kind = rule.kind if isinstance(rule.kind, str) else rule.kind(m)
        out.append(Span(s, e, kind, rule.rank))
    return out
