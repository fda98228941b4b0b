"""The redactor (redline.redaction.redactor), rule by rule: how a found secret is replaced
(one placeholder, per line for a key block, each line's prefix kept), which secrets are
remembered and masked wherever they appear again (and which are not), the user's own keys from
the environment, texts redacted together, the result cache, and a broken detect-secrets.

Each test states one rule a mutant of redactor.py broke and asserts exactly what is masked.
Run by `make mutation` for redactor.py (scripts/mutation.toml).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest

import redline.redaction.redactor as redactor_module
from guard_redaction import GHP, KEY, RANDOM20, masks, redactor
from redline.redaction import PLACEHOLDER, Redactor, get_redactor
from redline.redaction.redactor import _SEP
from redline.redaction.spans import Span

PASSWORD = "hunter2-fake"
BODY = ["MIIEowIBAAKCAQEAx4F2b3c5", "Qk9Zq8sK2vN4wX6yB1cD3fG"]


def ph(r: Redactor, value: str, kind: str) -> str:
    return r.placeholder(value, kind)


# -- replacing ------------------------------------------------------------------------------------


def test_a_secret_is_replaced_by_its_placeholder_and_nothing_else_changes() -> None:
    r = redactor()
    text = f'a = 1\ntoken = "{GHP}"  # ci\n'
    assert r.redact(text) == f'a = 1\ntoken = "{ph(r, GHP, "github-token")}"  # ci\n'


def test_two_secrets_on_a_line_get_their_own_placeholders() -> None:
    r = redactor()
    other = "ghp_" + "Zz9" * 12
    out = r.redact(f"{GHP} and {other}.")
    assert out == f"{ph(r, GHP, 'github-token')} and {ph(r, other, 'github-token')}."


def test_a_text_without_secrets_comes_back_unchanged() -> None:
    r = redactor()
    assert r.redact("") == ""
    assert r.redact("x = 1") == "x = 1"
    long = "plain words only, " * 10
    assert r.redact(long) == long


def test_a_key_block_gets_one_placeholder_per_line_and_keeps_its_lines() -> None:
    r = redactor()
    text = (
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(BODY) + "\n-----END RSA PRIVATE KEY-----\n"
    )
    p = ph(r, "\n".join(BODY), "private-key")
    assert r.redact(text) == (
        f"-----BEGIN RSA PRIVATE KEY-----\n{p}\n{p}\n-----END RSA PRIVATE KEY-----\n"
    )


def test_a_key_block_in_the_reviewer_format_keeps_each_lines_number_and_marker() -> None:
    r = redactor()
    text = (
        "  41 +| -----BEGIN RSA PRIVATE KEY-----\n"
        f"  42 +| {BODY[0]}\n"
        "  43 +| \n"
        f"  44 +| {BODY[1]}\n"
        "  45 +| -----END RSA PRIVATE KEY-----\n"
    )
    out = r.redact(text)
    lines = out.splitlines()
    assert [line[:8] for line in lines] == [
        "  41 +| ",
        "  42 +| ",
        "  43 +| ",
        "  44 +| ",
        "  45 +| ",
    ]
    assert lines[2] == "  43 +| "  # an empty line stays empty
    assert PLACEHOLDER.fullmatch(lines[1][8:]) and lines[1][8:] == lines[3][8:]
    assert all(b not in out for b in BODY)


def test_a_key_block_starting_its_line_keeps_that_lines_diff_marker() -> None:
    r = redactor()
    text = "+Private-Lines: 2\n+AAABAQCvH3Zq8sK2vN\n+D3fGaB3dE5fG7hI9j\n+Private-MAC: 0a1b2c3d\n"
    out = r.redact(text)
    lines = out.splitlines()
    assert lines[0] == "+Private-Lines: 2"
    assert [line[0] for line in lines[1:]] == ["+", "+", "+"]
    assert all(PLACEHOLDER.fullmatch(line[1:]) for line in lines[1:])
    assert len(set(lines[1:])) == 1


def test_a_key_block_after_text_on_its_first_line_keeps_that_text() -> None:
    r = redactor()
    text = (
        f'k = "-----BEGIN RSA PRIVATE KEY-----{BODY[0]}\n{BODY[1]}\n-----END RSA PRIVATE KEY-----"'
    )
    p = ph(r, f"{BODY[0]}\n{BODY[1]}", "private-key")
    assert (
        r.redact(text)
        == f'k = "-----BEGIN RSA PRIVATE KEY-----{p}\n{p}\n-----END RSA PRIVATE KEY-----"'
    )


# -- remembering what was found -------------------------------------------------------------------


def test_a_secret_found_once_is_masked_where_no_detector_finds_it() -> None:
    r = redactor()
    r.redact(f'db_password = "{PASSWORD}"')
    assert r.redact(f"echo {PASSWORD} | login") == f"echo {ph(r, PASSWORD, 'password')} | login"


def test_every_occurrence_of_a_known_secret_is_masked() -> None:
    r = redactor()
    r.register(RANDOM20, "api-key")
    p = ph(r, RANDOM20, "api-key")
    assert r.redact(f"{RANDOM20} {RANDOM20},{RANDOM20}") == f"{p} {p},{p}"


def test_a_secret_keeps_the_kind_it_was_first_found_as() -> None:
    r = redactor()
    r.register(PASSWORD, "api-key")
    assert masks(f'db_password = "{PASSWORD}"', r) == [(PASSWORD, "api-key")]


def test_a_plain_word_found_as_a_secret_is_not_searched_for_elsewhere() -> None:
    r = redactor()
    assert masks("pass: hunter", r) == [("hunter", "password")]  # a YAML password, a plain word
    assert r.redact("the hunter went home") == "the hunter went home"
    r.redact("db_password = hunter_two")  # an identifier
    assert r.redact("call hunter_two()") == "call hunter_two()"


def test_a_known_secret_is_never_searched_for_inside_a_placeholder() -> None:
    r = redactor()
    once = r.redact(f'db_password = "{PASSWORD}"')
    r.register("REDACTED:password")
    assert r.redact(once) == once


def test_registered_values_of_six_characters_are_masked_and_shorter_ones_are_not() -> None:
    r = redactor()
    r.register("Ab3dE5")
    r.register("Zy9xW")
    r.register("")
    assert r.redact("x Ab3dE5 y Zy9xW z") == f"x {ph(r, 'Ab3dE5', 'secret')} y Zy9xW z"


def test_a_registered_value_is_named_by_the_kind_given_or_secret() -> None:
    r = redactor()
    r.register("cfg-" + RANDOM20, "api-key")
    r.register("own-" + RANDOM20)
    assert masks(f"cfg-{RANDOM20} own-{RANDOM20}", r) == [
        (f"cfg-{RANDOM20}", "api-key"),
        (f"own-{RANDOM20}", "secret"),
    ]


def test_a_secret_registered_after_a_text_was_redacted_is_masked_in_it_next_time() -> None:
    r = redactor()
    text = f"deploy with {RANDOM20} now " * 4  # long enough to be cached
    assert r.redact(text) == text
    r.register(RANDOM20)
    assert RANDOM20 not in r.redact(text)


def test_when_too_many_secrets_are_known_the_older_half_is_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(redactor_module, "_MAX_KNOWN", 4)
    r = redactor()
    values = [f"v{i}-{RANDOM20}" for i in range(5)]
    for v in values:
        r.register(v)
    out = r.redact(" ".join(values))
    assert out.split() == values[:2] + [ph(r, v, "secret") for v in values[2:]]


def test_a_known_secret_is_masked_once_even_when_a_detector_finds_it_too() -> None:
    r = redactor()
    r.register(GHP, "token")
    assert r.redact(f"use {GHP}") == f"use {ph(r, GHP, 'token')}"


# -- the user's own secrets from the environment ---------------------------------------------------


@pytest.fixture
def env_secret(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    value = "own-" + RANDOM20
    monkeypatch.setenv("FAKE_SERVICE_API_KEY", value)
    yield value


def test_a_secret_named_environment_variable_is_masked_under_its_names_kind(
    env_secret: str,
) -> None:
    r = Redactor(key=KEY)
    assert masks(f"error 401 for {env_secret}", r) == [(env_secret, "api-key")]


def test_the_environment_is_read_only_when_asked_to(env_secret: str) -> None:
    r = Redactor(key=KEY, environment=False)
    assert r.redact(f"x {env_secret}") == f"x {env_secret}"


def test_the_environment_is_read_once_at_the_first_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    r = Redactor(key=KEY)
    r.redact("x")
    later = "late-" + RANDOM20
    monkeypatch.setenv("LATE_TOKEN", later)
    assert r.redact(f"x {later}") == f"x {later}"


@pytest.mark.parametrize(
    ("name", "value", "is_masked"),
    [
        ("MY_TOKEN", "Abcdefg1", True),  # eight characters
        ("MY_TOKEN", "Abcdef1", False),  # seven
        ("MY_TOKEN", "123456789", False),  # digits only: a port, a count
        ("MY_SETTING", "Abcdefg1xyz", False),  # not a secret's name
        ("DB_PASSWD", "Abcdefg1xyz", True),
        ("SSH_PRIVATE_KEY", "Abcdefg1xyz", True),
        ("CREDENTIAL_X", "Abcdefg1xyz", True),
        ("AWS_ACCESS_KEY", "Abcdefg1xyz", True),
    ],
)
def test_which_environment_values_are_masked(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, is_masked: bool
) -> None:
    monkeypatch.setenv(name, value)
    r = Redactor(key=KEY)
    assert (value not in r.redact(f"x {value} y")) is is_masked


# -- texts redacted together -------------------------------------------------------------------


def test_texts_redacted_together_are_each_redacted_as_alone() -> None:
    r = redactor()
    texts = [f"token {GHP}", "", "plain", f'db_password = "{PASSWORD}"', f"again {GHP}"]
    assert r.redact_many(texts) == [redactor().redact(t) for t in texts]


def test_a_text_holding_the_separator_is_redacted_on_its_own() -> None:
    r = redactor()
    odd = f"a{_SEP}token {GHP}"
    out = r.redact_many([odd, f"b {GHP}"])
    p = ph(r, GHP, "github-token")
    assert out == [f"a{_SEP}token {p}", f"b {p}"]
    assert r.redact_many([odd]) == [f"a{_SEP}token {p}"]


def test_texts_without_secrets_come_back_as_they_are() -> None:
    r = redactor()
    assert r.redact_many(["a", "", "b c"]) == ["a", "", "b c"]
    assert r.redact_many(["", ""]) == ["", ""]
    assert r.redact_many([]) == []


def test_a_secret_ending_one_text_is_not_joined_to_the_next() -> None:
    r = redactor()
    out = r.redact_many([f"x {GHP}", "y"])
    assert out == [f"x {ph(r, GHP, 'github-token')}", "y"]


# -- the cache ------------------------------------------------------------------------------------


def _counting(r: Redactor, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    find = r.find

    def counted(text: str) -> list[Span]:
        calls.append(text)
        return find(text)

    monkeypatch.setattr(r, "find", counted)
    return calls


def test_a_text_of_64_characters_or_more_is_scanned_once_and_shorter_ones_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    r = redactor()
    calls = _counting(r, monkeypatch)
    long = f"token {GHP}".ljust(64)
    short = long[:63]
    first = r.redact(long)
    assert r.redact(long) == first and calls == [long]
    r.redact(short)
    r.redact(short)
    assert calls == [long, short, short]


def test_the_cache_starts_again_when_it_would_hold_too_many_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(redactor_module, "_CACHE_CHARS", 200)
    r = redactor()
    calls = _counting(r, monkeypatch)
    a, b, c = ("a" * 100, "b" * 100, "c" * 100)
    for text in (a, b, a, b):  # 200 characters fit: both cached
        r.redact(text)
    assert calls == [a, b]
    r.redact(c)  # 300 would not: the cache starts again with c alone
    r.redact(c)
    r.redact(a)  # 200: exactly full, both kept
    r.redact(c)
    assert calls == [a, b, c, a]
    r.redact(b)  # 300: starts again with b alone
    r.redact(a)
    assert calls == [a, b, c, a, b, a]


def test_a_cache_emptied_by_a_new_secret_is_counted_from_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(redactor_module, "_CACHE_CHARS", 200)
    r = redactor()
    r.register("new-" + RANDOM20)  # empties the cache
    calls = _counting(r, monkeypatch)
    a, b = "a" * 100, "b" * 100
    for text in (a, b, a, b):
        r.redact(text)
    assert calls == [a, b]


def _file_prompt(i: int) -> str:
    """~100 KB of one file's code: nothing secret, seen once (as a file's prompt is)."""
    return f"# File under review: `pkg/mod_{i}.py`\n" + "".join(
        f"def f_{j}(x):\n    return x * {j} + {i}\n\n" for j in range(2500)
    )


def _refs(texts: list[str], i: int) -> int:
    return sys.getrefcount(texts[i])


def test_texts_redacted_once_are_not_kept_alive_past_a_few_megabytes() -> None:
    # A review of thousands of files redacts every file's prompt once; the cache's keys must not
    # keep tens of megabytes of finished files' prompts in memory (issue 23). Which texts the
    # cache still holds shows in their reference counts: one more (its key) than a text never
    # given to the redactor.
    r = redactor()
    texts = [_file_prompt(i) for i in range(60)]  # ~6 MB
    for text in texts:
        r.redact(text)
    control = [_file_prompt(0)]
    alone = _refs(control, 0)
    kept = sum(len(texts[i]) for i in range(len(texts)) if _refs(texts, i) > alone)
    assert kept <= 2_000_000, f"{kept / 1e6:.1f} M characters of one-shot texts kept alive"


def test_a_text_longer_than_the_whole_cache_is_scanned_each_time_and_not_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(redactor_module, "_CACHE_CHARS", 200)
    r = redactor()
    calls = _counting(r, monkeypatch)
    a, big = "a" * 100, "b" * 201
    r.redact(a)
    r.redact(big)
    r.redact(big)
    r.redact(a)  # still cached: the big text emptied nothing
    assert calls == [a, big, big]


# -- detect-secrets ----------------------------------------------------------------------------


def test_a_secret_only_detect_secrets_knows_is_masked() -> None:
    twilio = "SK0123456789abcdef0123456789abcdef"
    assert masks(f'twilio = "{twilio}"') == [(twilio, "twilio-key")]


def test_a_broken_detect_secrets_leaves_the_own_rules_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import redline.redaction.plugins as plugins

    def broken(**_: object) -> None:
        raise RuntimeError("no detect-secrets here")

    monkeypatch.setattr(plugins, "DetectSecrets", broken)
    r = redactor()
    with caplog.at_level(logging.ERROR, logger="redline.redaction.redactor"):
        assert masks(f"token {GHP}", r) == [(GHP, "github-token")]
        assert masks('twilio = "SK0123456789abcdef0123456789abcdef"', r) == []
    errors = [rec for rec in caplog.records if "detect-secrets is unavailable" in rec.getMessage()]
    assert len(errors) == 1 and "no detect-secrets here" in errors[0].getMessage()


def test_plugins_load_once_and_can_be_loaded_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    import redline.redaction.plugins as plugins

    made: list[bool] = []
    real = plugins.DetectSecrets

    def counted(*, without_requests: bool = False) -> plugins.DetectSecrets:
        made.append(without_requests)
        return real(without_requests=without_requests)

    monkeypatch.setattr(plugins, "DetectSecrets", counted)
    r = redactor()
    r.load_plugins(without_requests=True)
    r.redact(f'twilio = "SK0123456789abcdef0123456789abcdef" {GHP}')
    r.load_plugins()
    assert made == [True]


# -- the key and the shared redactor -------------------------------------------------------------


def test_a_redactor_given_a_key_digests_with_that_key() -> None:
    from redline.redaction.placeholder import keyed_placeholder

    r = Redactor(key=KEY, environment=False)
    assert r.placeholder(GHP, "github-token") == keyed_placeholder(KEY, GHP, "github-token")
    assert r.redact(f"t {GHP}") == f"t {keyed_placeholder(KEY, GHP, 'github-token')}"


def test_a_redactor_without_a_key_uses_the_stored_key(monkeypatch: pytest.MonkeyPatch) -> None:
    stored = b"s" * 32
    monkeypatch.setattr(redactor_module, "stored_key", lambda: stored)
    r = Redactor(environment=False)
    assert r.placeholder(GHP, "github-token") == Redactor(
        key=stored, environment=False
    ).placeholder(GHP, "github-token")


def test_there_is_one_shared_redactor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redactor_module, "_default", None)
    first = get_redactor()
    assert isinstance(first, Redactor) and get_redactor() is first


# -- known gap (reported, not fixed here: the redaction source belongs to another change) -------


@pytest.mark.xfail(
    strict=True,
    reason="_apply keeps each key line's `_LINE_PREFIX` (meant for `  42 +| ` and a diff's `+`), "
    "which also matches a key line's own leading digits: `12345Qk9...` becomes `12345[REDACTED]`",
)
def test_no_character_of_a_key_line_is_kept_as_its_prefix() -> None:
    r = redactor()
    text = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        f"{BODY[0]}\n12345{BODY[1]}\n-----END RSA PRIVATE KEY-----\n"
    )
    assert "12345" not in r.redact(text)


# -- the last survivors of the first mutation run ------------------------------------------------


def test_a_multi_line_secret_starting_mid_line_keeps_no_line_prefix() -> None:
    r = redactor()
    value = "  abcdef\n  xyz123"  # an indented block, registered whole
    r.register(value)
    p = ph(r, value, "secret")
    assert r.redact(f"pw: {value}") == f"pw: {p}\n  {p}"  # text before it: nothing read
    assert r.redact(f"x\n:{value}") == f"x\n:{p}\n  {p}"  # one character before it
    # Starting its line (after other lines): its first line's indentation stays too.
    assert r.redact(f"x\ny\n{value}") == f"x\ny\n  {p}\n  {p}"
    assert r.redact(f"x\n{value}") == f"x\n  {p}\n  {p}"


def test_a_known_secret_a_detector_finds_inside_a_word_keeps_its_first_kind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The value is not searched for again there (it is not word-bounded), so the kind it was
    # first found as must come from the detector's span itself.
    value = "123secretXYZ"
    text = f"abc{value}9"
    monkeypatch.setattr(
        redactor_module, "detect", lambda t, _plugins: [Span(3, 3 + len(value), "found", 0)]
    )
    r = redactor()
    r.register(value, "mine")
    assert masks(text, r) == [(value, "mine")]


def test_detect_secrets_loads_with_the_real_requests_unless_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import redline.redaction.plugins as plugins

    made: list[bool] = []
    real = plugins.DetectSecrets

    def counted(*, without_requests: bool) -> plugins.DetectSecrets:
        made.append(without_requests)
        return real(without_requests=without_requests)

    monkeypatch.setattr(plugins, "DetectSecrets", counted)
    redactor().redact(f"token {GHP}")  # loaded on the first scan that needs it
    redactor().load_plugins()  # loaded ahead
    assert made == [False, False]


def test_a_broken_detect_secrets_is_reported_in_one_plain_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import redline.redaction.plugins as plugins

    def broken(**_: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(plugins, "DetectSecrets", broken)
    with caplog.at_level(logging.ERROR, logger="redline.redaction.redactor"):
        redactor().load_plugins()
    assert [rec.getMessage() for rec in caplog.records] == [
        "detect-secrets is unavailable (boom): own patterns only"
    ]


def test_texts_redacted_together_are_scanned_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    r = redactor()
    calls = _counting(r, monkeypatch)
    out = r.redact_many(["a", f"token {GHP}", "", "b c"])
    assert out == ["a", f"token {ph(r, GHP, 'github-token')}", "", "b c"]
    assert len(calls) == 1
    calls.clear()
    odd = f"x{_SEP}y"  # holds the separator: scanned on its own, the rest together
    assert r.redact_many(["a", odd, f"token {GHP}"])[1] == odd
    assert sorted(calls) == sorted(["a" + _SEP + f"token {GHP}", odd])


def test_texts_redacted_together_keep_their_leading_and_inner_whitespace() -> None:
    r = redactor()
    p = ph(r, GHP, "github-token")
    assert r.redact_many([f"  {GHP}"]) == [f"  {p}"]
    assert r.redact_many([f"\t{GHP}\n", " x "]) == [f"\t{p}\n", " x "]


def test_a_word_with_a_digit_found_by_a_format_aware_rule_is_masked_elsewhere_too() -> None:
    r = redactor()
    assert masks("git clone https://deploy:hunter2x@example.com/r.git", r) == [
        ("hunter2x", "url-password")
    ]
    assert masks("the password hunter2x again", r) == [("hunter2x", "url-password")]


def test_a_text_as_long_as_the_whole_cache_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound is inclusive: a text of exactly _CACHE_CHARS fills the cache, and is not
    # scanned again.
    monkeypatch.setattr(redactor_module, "_CACHE_CHARS", 200)
    r = redactor()
    calls = _counting(r, monkeypatch)
    whole = "c" * 200
    r.redact(whole)
    r.redact(whole)
    assert calls == [whole]
