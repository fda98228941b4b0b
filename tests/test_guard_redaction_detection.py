"""Detection in one pass (redline.redaction.detection), rule by rule: which stage runs on which
part of the text, what a detect-secrets plugin's finding is ranked and named, where a key block
cut before its END line is masked, and when a provider prefix counts as the start of a token.

Each test states one rule a mutant of detection.py broke and asserts exactly what is found.
Run by `make mutation` for detection.py (scripts/mutation.toml).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from guard_redaction import GHP, masks, own_masks, redactor
from redline.redaction.detection import (
    all_rules,
    detect,
    key_blocks,
    provider_spans,
    rule_spans,
    split_key_spans,
)
from redline.redaction.plugins import DetectSecrets
from redline.redaction.rule import CONTEXT, ENTROPY, KEYWORD, PROVIDER, Rule
from redline.redaction.spans import Span

TWILIO = "SK0123456789abcdef0123456789abcdef"
MAILCHIMP = "0123456789abcdef0123456789abcdef-us12"
ENTROPY_STRING = "aB3dE5fG7hI9jK1lM3nO5pQ7rS9t"
BODY = ["MIIEowIBAAKCAQEAx4F2b3c5", "Qk9Zq8sK2vN4wX6yB1cD3fG"]
CUT_PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(BODY) + "\n"


@pytest.fixture(autouse=True)
def _fresh_rules() -> Iterator[None]:
    """The rules are compiled once per process (`detection.all_rules` is cached): each test
    compiles them afresh, so it checks the rules as they are built now, and a mutation run
    sees every test build them (not only the first)."""
    all_rules.cache_clear()
    yield
    all_rules.cache_clear()


def _plugins() -> DetectSecrets:
    return DetectSecrets()


def found(text: str) -> list[tuple[str, str, int]]:
    """Every detection, unmerged: (value, kind, rank), sorted."""
    return sorted((text[s.start : s.end], s.kind, s.rank) for s in detect(text, _plugins()))


# -- the stages -----------------------------------------------------------------------------------


def test_all_rules_are_the_provider_rules_then_the_context_rules() -> None:
    kinds = [r.kind for r in all_rules()]
    assert kinds[0] == "private-key" and "url-password" in kinds and "github-token" in kinds
    assert all_rules() is all_rules()  # compiled once


def test_ungated_rules_run_on_every_line() -> None:
    assert own_masks(f"x = 1\ny = {GHP}\n") == [(GHP, "github-token")]
    assert own_masks("postgres://app:s3cretPw@db/x") == [("s3cretPw", "url-password")]


def test_gated_rules_run_on_the_lines_naming_a_keyword_in_any_case() -> None:
    assert own_masks('x = 1\nDB_PASSWORD = "hunter2-fake"\n') == [("hunter2-fake", "password")]
    assert own_masks("x = 1\nAuthorization: abc123def\n") == [("abc123def", "authorization")]


def test_without_detect_secrets_only_the_own_rules_find_anything() -> None:
    assert detect(f'twilio = "{TWILIO}"', None) == []
    assert own_masks(f"token {GHP}") == [(GHP, "github-token")]


def test_a_regex_plugin_finding_is_ranked_as_a_context_detection() -> None:
    assert found(f'twilio = "{TWILIO}"') == [(TWILIO, "twilio-key", CONTEXT)]
    assert masks(f'twilio = "{TWILIO}"') == [(TWILIO, "twilio-key")]


def test_a_plugin_behind_its_own_gate_runs_on_the_lines_the_gate_selects() -> None:
    text = f'x = 1\nmc = "{MAILCHIMP}"\ny = 2\n'
    assert found(text) == [(MAILCHIMP, "mailchimp-key", CONTEXT)]
    # The same gate's lines are selected once and reused by the plugins sharing it.
    text = f'a = "{MAILCHIMP}"\nb = "{MAILCHIMP[:-1]}3"\n'
    assert [v for v, _ in masks(text)] == [MAILCHIMP, MAILCHIMP[:-1] + "3"]


def test_a_plugin_behind_the_keyword_gate_runs_on_the_keyword_lines() -> None:
    value = "abcdef0123456789" * 4
    text = f'x = 1\nsoftlayer_api_key = "{value}"\n'
    assert (value, "softlayer-key", CONTEXT) in found(text)
    assert masks(text) == [(value, "softlayer-key")]


def test_a_plugin_behind_a_gate_that_selects_nothing_finds_nothing() -> None:
    assert found('x = "0123456789abcdef0123456789abcdef-uk12"\n') == []


def test_the_keyword_detector_finds_its_value_on_the_keyword_line_exactly() -> None:
    text = 'x = 1\ny = 2\nDB_PASSWORD = "hunter2-fake"\n'
    assert {(v, k, r) for v, k, r in found(text)} == {("hunter2-fake", "password", KEYWORD)}


def test_a_quoted_random_string_is_an_entropy_detection() -> None:
    text = f'x = "{ENTROPY_STRING}"'
    assert found(text) == [(ENTROPY_STRING, "high-entropy-string", ENTROPY)]
    assert masks(text) == [(ENTROPY_STRING, "high-entropy-string")]


def test_every_stage_keeps_what_the_stages_before_it_found() -> None:
    """Own rules, a plugin behind its own gate, the keyword gate's rules and plugins, the
    ungated plugins, the keyword detector and the entropy detector: all of them count."""
    text = (
        f"t = {GHP}\n"
        f'mc = "{MAILCHIMP}"\n'
        'db_password = "hunter2-fake"\n'
        f'x = "{ENTROPY_STRING}"\n'
        f'twilio = "{TWILIO}"\n'
    )
    assert masks(text) == [
        (GHP, "github-token"),
        (MAILCHIMP, "mailchimp-key"),
        ("hunter2-fake", "password"),
        (ENTROPY_STRING, "high-entropy-string"),
        (TWILIO, "twilio-key"),
    ]


# -- key blocks cut before their END line ---------------------------------------------------------


def test_a_key_block_without_its_end_line_is_masked_from_its_header_on() -> None:
    assert own_masks(CUT_PEM) == [("\n".join(BODY), "private-key")]
    out = redactor().redact(CUT_PEM)
    assert out.startswith("-----BEGIN RSA PRIVATE KEY-----\n[REDACTED:private-key:")
    assert all(line not in out for line in BODY)


def test_a_whole_key_block_is_masked_once_not_again_from_its_header() -> None:
    text = CUT_PEM + "-----END RSA PRIVATE KEY-----\n"
    spans = detect(text, None)
    assert [(text[s.start : s.end].strip(), s.kind) for s in spans] == [
        ("\n".join(BODY), "private-key")
    ]


def test_a_putty_key_without_its_mac_is_masked_from_its_private_lines() -> None:
    text = (
        "Public-Lines: 1\nAAAAB3NzaC1yc2EAAAA\n"
        "Private-Lines: 2\nAAABAQCvH3Zq8sK2vN\nD3fGaB3dE5fG7hI9j\n"
    )
    assert own_masks(text) == [("AAABAQCvH3Zq8sK2vN\nD3fGaB3dE5fG7hI9j", "private-key")]


def test_key_blocks_adds_nothing_to_a_text_without_a_key_header() -> None:
    spans: list[Span] = []
    key_blocks("AAABAQCvH3Zq8sK2vN\nD3fGaB3dE5fG7hI9j\n", spans)
    assert spans == []


def test_key_blocks_masks_every_cut_block_once_with_the_provider_rank() -> None:
    spans: list[Span] = []
    key_blocks(CUT_PEM, spans)
    assert spans == [Span(31, len(CUT_PEM) - 1, "private-key", PROVIDER)]
    key_blocks(CUT_PEM, spans)  # already covered: nothing added
    assert len(spans) == 1


def test_a_header_that_detect_secrets_knows_but_redline_does_not_is_masked_from_it() -> None:
    text = "PuTTY-User-Key-File-2: ssh-rsa\nAAAAB3NzaC1yc2EAAAABJQ\n"
    assert found(text) == [(": ssh-rsa\nAAAAB3NzaC1yc2EAAAABJQ", "private-key", PROVIDER)]


# -- a provider prefix starts a token only at a word boundary ------------------------------------


@pytest.mark.parametrize("before", ["", " ", "-", ":", '"', "\n"])
def test_a_provider_token_after_a_non_word_character_is_masked(before: str) -> None:
    assert own_masks(f"{before}{GHP} x") == [(GHP, "github-token")]


def test_a_refused_prefix_does_not_stop_the_search_for_later_tokens() -> None:
    other = "ghp_" + "Zz9" * 12
    assert own_masks(f"x{GHP} {other}") == [(other, "github-token")]


@pytest.mark.parametrize("before", ["x", "9", "_"])
def test_a_provider_prefix_inside_a_longer_word_is_not_a_token(before: str) -> None:
    assert own_masks(f"{before}{GHP}") == []


def test_rule_spans_use_the_rules_kind_rank_group_and_check() -> None:
    import re

    rule = Rule("demo", re.compile(r"id=(?P<v>\w+)"), group="v", rank=KEYWORD)
    assert rule_spans(rule, "a id=abc b id=de") == [
        Span(5, 8, "demo", KEYWORD),
        Span(14, 16, "demo", KEYWORD),
    ]
    named = Rule(
        lambda m: "kind-" + m.group("v"),
        rule.pattern,
        group="v",
        check=lambda m: m.group("v") != "de",
    )
    assert rule_spans(named, "a id=abc b id=de") == [Span(5, 8, "kind-abc", PROVIDER)]


# -- keys split across literals: the key-format rules alone ---------------------------------------

STRIPE = "sk_live_" + "aB3dE5fG7hI9jK1lM3nO5pQ7"
AWS40 = "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7b"
TWILIO = "SK0123456789abcdef0123456789abcdef"


def test_the_key_format_rules_are_redlines_ungated_provider_rules() -> None:
    text = f"k = {GHP}\ns = {STRIPE}\n{AWS40}\npassword = hunter2-fake\n"
    assert sorted(provider_spans(text, None)) == [
        Span(4, 4 + len(GHP), "github-token", PROVIDER),
        Span(len(GHP) + 9, len(GHP) + 9 + len(STRIPE), "stripe-key", PROVIDER),
    ]


def test_the_key_format_rules_take_detect_secrets_ungated_plugins_when_it_is_there() -> None:
    text = f'twilio = "{TWILIO}"  # ibm_api_key = "{AWS40}xyzw"\n'
    assert provider_spans(text, _plugins()) == [Span(10, 10 + len(TWILIO), "twilio-key", PROVIDER)]
    assert provider_spans(text, None) == []


def test_a_key_split_across_literals_of_either_quote_is_found() -> None:
    for q in ('"', "'"):
        text = f"k = {q}sk_live_{q} {q}{STRIPE[8:]}{q}\n"
        assert [text[s.start : s.end] for s in split_key_spans(text, None)] == [
            "sk_live_",
            STRIPE[8:],
        ], q
    assert split_key_spans("k = sk_live_ + x\n", None) == []


def test_a_key_only_detect_secrets_knows_is_found_split_across_literals() -> None:
    text = f'k = "{TWILIO[:18]}" "{TWILIO[18:]}"\n'
    found = [s for s in detect(text, _plugins()) if s.kind == "twilio-key"]
    assert [text[s.start : s.end] for s in found] == [TWILIO[:18], TWILIO[18:]]
