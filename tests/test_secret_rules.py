"""Each rule of the redactor, by name (`Rule.label`), against its cases (secret_rules_cases.py):
the rule alone finds exactly the secret — not one character more or less — the redactor masks
exactly that under the rule's kind (its rank decides the kind when a less specific detector
sees the same value), its near misses stay readable, and its rank and gate are the ones the
rule is meant to have. A rule added without cases fails here.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from redline.redaction import Redactor
from redline.redaction.detection import all_rules, rule_spans
from redline.redaction.rule import KEYWORD_GATE, Rule
from redline.redaction.spans import LineSet
from secret_rules_cases import CASES, Case

KEY = b"r" * 32
LABELS = sorted({r.label for r in all_rules()})


@pytest.fixture(autouse=True)
def _fresh_rules() -> Iterator[None]:
    """The rules are compiled once per process (`detection.all_rules` is cached): each test
    compiles them afresh (~4 ms), so a mutation run of a rule module sees every test build
    the rules it checks, not only the first."""
    all_rules.cache_clear()
    yield
    all_rules.cache_clear()


def rules_named(label: str) -> list[Rule]:
    return [r for r in all_rules() if r.label == label]


def found_by(rule: Rule, text: str) -> list[str]:
    """What `rule` alone finds in `text`, run the way detection.py runs it."""
    if rule.gate is not None:
        lines = LineSet.select(text, rule.gate, lower=True)
    elif rule.gated:
        lines = LineSet.select(text, KEYWORD_GATE, lower=True)
    else:
        return [text[s.start : s.end] for s in rule_spans(rule, text)]
    if lines is None:
        return []
    return [text[s.start : s.end] for s in lines.map(rule_spans(rule, lines.text))]


def test_every_rule_has_a_name_and_cases() -> None:
    assert all(LABELS), "a rule without a name"
    assert sorted(CASES) == LABELS


@pytest.mark.parametrize("label", LABELS)
def test_the_rule_has_its_rank_and_gate(label: str) -> None:
    case = CASES[label]
    for rule in rules_named(label):
        assert rule.rank == case.rank, label
        assert rule.gated is case.gated, label


CASE_HITS = [
    pytest.param(label, text, secret, kind, id=f"{label}-{i}")
    for label, case in sorted(CASES.items())
    for i, (text, secret, kind) in enumerate(case.hits)
]


@pytest.mark.parametrize(("label", "text", "secret", "kind"), CASE_HITS)
def test_the_rule_alone_finds_exactly_the_secret(
    label: str, text: str, secret: str, kind: str
) -> None:
    found = [f for rule in rules_named(label) for f in found_by(rule, text)]
    assert secret in found, (label, found)


@pytest.mark.parametrize(("label", "text", "secret", "kind"), CASE_HITS)
def test_the_redactor_masks_exactly_the_secret_under_the_rules_kind(
    label: str, text: str, secret: str, kind: str
) -> None:
    r = Redactor(key=KEY, environment=False)
    out = r.redact(text)
    if CASES[label].multiline:
        for line in secret.strip().splitlines():
            assert line not in out, (label, out)
        assert f"[REDACTED:{kind}:" in out, out
        return
    assert out == text.replace(secret, r.placeholder(secret, kind)), (label, out)


CASE_NEAR = [
    pytest.param(label, text, id=f"{label}-{i}")
    for label, case in sorted(CASES.items())
    for i, text in enumerate(case.near)
]


@pytest.mark.parametrize(("label", "text"), CASE_NEAR)
def test_a_near_miss_stays_readable(label: str, text: str) -> None:
    assert Redactor(key=KEY, environment=False).redact(text) == text
    assert not [f for rule in rules_named(label) for f in found_by(rule, text)], label


def test_case_table_is_well_formed() -> None:
    for label, case in CASES.items():
        assert case.hits and case.near, label
        for text, secret, _ in case.hits:
            assert secret and secret in text, label
        assert isinstance(case, Case)
