"""The context and keyword rules (redline.redaction.context_rules), rule by rule.

A secret found by where it stands: a URL's password, an `.env` value, a header's credential,
an auth tuple's password, a value assigned to a secret-named key. Each test states one rule a
mutant of context_rules.py broke, and asserts exactly what is masked and under which kind — with
Redline's own rules alone (`own_masks`: detect-secrets could mask the same value behind them)
and, where a user would see it, through the whole redactor (`masks`). Run by `make mutation`
for context_rules.py (scripts/mutation.toml).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from guard_redaction import GHP, RANDOM20, masks, own_masks
from redline.redaction.context_rules import context_rules, keyword_kind
from redline.redaction.detection import all_rules

# -- which rules exist, under which names ---------------------------------------------------------


@pytest.fixture(autouse=True)
def _fresh_rules() -> Iterator[None]:
    """The rules are compiled once per process (`detection.all_rules` is cached): each test
    compiles them afresh, so it checks the rules as they are built now, and a mutation run
    sees every test build them (not only the first)."""
    all_rules.cache_clear()
    yield
    all_rules.cache_clear()


def test_every_context_rule_masks_its_own_example_under_its_own_kind() -> None:
    examples = {
        "url-password": ("postgres://app:s3cretPw@db/x", "s3cretPw"),
        "env-secret": (f"APP_SETTING={RANDOM20}", RANDOM20),
        "kubeconfig-client-key": ("client-key-data: QUJDREVGR0hJSktMTU5PUA==", None),
        "authorization": ("Authorization: abc123def", "abc123def"),
        "bearer-token": (f'curl -H "Bearer {RANDOM20}"', RANDOM20),
        "api-key": ('headers = {"x-api-key": "Ab3dE5fG7h"}', "Ab3dE5fG7h"),
        "password": ('requests.get(u, auth=("user", "hunter2-fake"))', "hunter2-fake"),
    }
    for kind, (text, value) in examples.items():
        value = value or text.split(": ")[1]
        assert own_masks(text) == [(value, kind)], kind
    kinds = [r.kind for r in context_rules() if isinstance(r.kind, str)]
    assert sorted(kinds) == sorted(examples)


def test_only_the_rules_that_need_a_keyword_are_gated() -> None:
    gated = {
        (r.kind if isinstance(r.kind, str) else "keyword-assignment")
        for r in context_rules()
        if r.gated
    }
    assert gated == {
        "kubeconfig-client-key",
        "authorization",
        "bearer-token",
        "api-key",
        "password",
        "keyword-assignment",
    }


# -- URL passwords --------------------------------------------------------------------------------


def test_a_url_password_is_masked_and_the_user_and_host_stay() -> None:
    assert own_masks("postgres://app:s3cretPw@db.internal:5432/x") == [("s3cretPw", "url-password")]


def test_a_url_password_of_three_characters_is_masked_and_of_two_is_not() -> None:
    assert own_masks("redis://u:abc@h") == [("abc", "url-password")]
    assert own_masks("redis://u:ab@h") == []


@pytest.mark.parametrize(
    "password",
    ["None", "NULL", "Pass", "PWD", "changeme", "Example", "xxxx", "${DB_PASS}", "%PGPASS%"],
)
def test_a_url_password_that_is_a_placeholder_word_is_not_masked(password: str) -> None:
    assert own_masks(f"postgres://user:{password}@host/db") == []


def test_a_url_password_made_only_of_filler_characters_is_not_masked() -> None:
    assert own_masks("ftp://u:***@h") == []
    assert own_masks("ftp://u:*xX.#-_•?@h") == []  # every filler character at once
    assert own_masks("ftp://u:*x1@h") == [("*x1", "url-password")]


@pytest.mark.parametrize("password", ["$1abcd", "{abcd", "%abcx"])
def test_a_url_password_that_starts_like_a_template_is_not_masked(password: str) -> None:
    assert own_masks(f"postgres://user:{password}@host/db") == []


def test_a_provider_token_used_as_a_url_password_is_named_by_its_provider() -> None:
    text = f"https://u:{GHP}-suffix@github.com"
    assert own_masks(text) == [(f"{GHP}-suffix", "github-token")]


# -- .env values ----------------------------------------------------------------------------------


def test_a_random_env_value_is_masked_after_export_or_without() -> None:
    assert own_masks(f"APP_SETTING={RANDOM20}") == [(RANDOM20, "env-secret")]
    assert own_masks(f"export APP_SETTING={RANDOM20}\n") == [(RANDOM20, "env-secret")]


@pytest.mark.parametrize(
    "value",
    [
        "/usr/local/bin/something/long",
        "./relative/path/to/a/thing",
        "http://example.com/a/b/c/d",
        "$OTHER_VARIABLE_NAME_X",
        "${OTHER_VARIABLE_NAME}",
    ],
)
def test_an_env_value_that_is_a_path_url_or_reference_is_not_masked(value: str) -> None:
    assert own_masks(f"SOME_SETTING={value}") == []


@pytest.mark.parametrize("head", ["/", "./", "http://", "https://", "$1"])
def test_a_random_looking_env_value_that_is_a_path_url_or_reference_is_not_masked(
    head: str,
) -> None:
    assert own_masks(f"SOME_SETTING={head}{RANDOM20}") == []


def test_a_hex_env_value_is_masked_only_above_three_bits_of_entropy() -> None:
    assert own_masks("BUILD_ID=0123456789abcdef0123") == [("0123456789abcdef0123", "env-secret")]
    assert own_masks("BUILD_ID=0123456789ABCDEF0123") == [("0123456789ABCDEF0123", "env-secret")]
    assert own_masks("BUILD_ID=0123456701234567") == []  # exactly 3.0 bits
    assert own_masks("BUILD_ID=00000000aaaaaaaa") == []


def test_a_non_hex_env_value_must_look_random_with_four_bits_of_entropy() -> None:
    assert own_masks("BUILD_TAG=ABCDEFX0123456789ABCX") == []  # no lower case: a tag
    assert own_masks("APP_SETTING=ZZZZZZZZZZZZZZZZZZZZ") == []
    # 20 distinct characters: 4.32 bits.
    assert own_masks(f"APP_SETTING={RANDOM20}") == [(RANDOM20, "env-secret")]
    # 12 distinct characters (3.58 bits): not random enough.
    assert own_masks("APP_SETTING=zQ8sKV2n4wX6zQ8sKV2n") == []


def test_a_provider_token_in_an_env_file_is_named_by_its_provider() -> None:
    assert masks(f"export GH_TOKEN={GHP}\n") == [(GHP, "github-token")]
    assert own_masks(f"export GH_TOKEN={GHP}\n") == [(GHP, "github-token")]


# -- headers --------------------------------------------------------------------------------------


def test_a_credential_after_a_scheme_word_is_masked_even_when_dotted() -> None:
    assert own_masks("Authorization: Bearer abc.def") == [("abc.def", "authorization")]


@pytest.mark.parametrize(
    "code",
    [
        '"Authorization": "Bearer%20" + token',
        '"Authorization": "Basic+" + token',
        '"Authorization": "BEARER" + token',
        "Authorization: %AUTH_TOKEN%",
        "Authorization: Bearer your-api-token",
        "Authorization: ------",
        '"Authorization": self.auth_header',
        '"Authorization": auth_header',
        '"Authorization": authHeader',
        'headers = {"x-api-key": self.api_key}',
        'headers = {"x-api-key": "xxxxxxxxxx"}',
    ],
)
def test_a_header_holding_a_variable_scheme_or_example_stays_readable(code: str) -> None:
    assert own_masks(code) == []
    assert masks(code) == []


def test_a_header_value_with_a_digit_is_a_credential() -> None:
    assert own_masks("Authorization: abc123def") == [("abc123def", "authorization")]
    assert own_masks('"x-api-key": "ab3def9h"') == [("ab3def9h", "api-key")]


def test_a_provider_token_in_a_header_is_named_by_its_provider() -> None:
    assert own_masks(f"Authorization: token {GHP}") == [(GHP, "github-token")]
    # The header's value runs on past the token: still named by the provider.
    assert own_masks(f"Authorization: Bearer {GHP}-x") == [(f"{GHP}-x", "github-token")]


@pytest.mark.parametrize(
    "text",
    [
        f'curl -H "Bearer {GHP}-x"',
        f"x-api-key: {GHP}-x",
        f'auth=("user", "{GHP}-x")',
        f'token = "{GHP}-x"',
        f"postgres://u:{GHP}-x@db/x",
    ],
)
def test_a_provider_token_inside_a_longer_context_value_is_named_by_its_provider(text: str) -> None:
    """A context or keyword detection ranks below a provider's format, even when longer."""
    assert own_masks(text) == [(f"{GHP}-x", "github-token")]


@pytest.mark.parametrize("value", ["your-access-token", "xxxxxxxxxxxxxxxxxxxx"])
def test_a_bearer_token_that_is_an_example_is_not_masked(value: str) -> None:
    assert own_masks(f'curl -H "Bearer {value}"') == []


def test_a_bearer_token_anywhere_is_masked_but_not_a_call() -> None:
    assert own_masks(f'curl -H "Bearer {RANDOM20}"') == [(RANDOM20, "bearer-token")]
    assert own_masks("Bearer aaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbb(x)") == []


# -- auth tuples ----------------------------------------------------------------------------------


def test_the_password_of_an_auth_tuple_is_masked_and_the_user_stays() -> None:
    assert own_masks('r = get(u, auth=("user", "hunter2-fake"))') == [("hunter2-fake", "password")]
    assert own_masks("HTTPBasicAuth(user, 'hunter2-fake')") == [("hunter2-fake", "password")]


def test_an_auth_tuple_holding_a_template_or_placeholder_is_not_masked() -> None:
    assert own_masks('auth=("user", "${PW}")') == []
    assert own_masks('auth=("user", "pass")') == []
    assert own_masks('auth=("user", "xx")') == []


# -- keyword assignments --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ['db_password = "hunter2-fake"', "db_password = 'hunter2-fake'", "db_pwd = `hunter2-fake`"],
)
def test_a_quoted_password_is_masked_in_every_quoting(text: str) -> None:
    assert own_masks(text) == [("hunter2-fake", "password")]


def test_a_bare_password_is_masked_up_to_the_end_of_the_text() -> None:
    assert own_masks("db_password = hunter2x") == [("hunter2x", "password")]
    assert own_masks("db_password: hunter2x") == [("hunter2x", "password")]


def test_a_name_that_does_not_end_in_a_secret_word_is_not_masked() -> None:
    assert own_masks('password_hash = "abcdef123456"') == []
    assert own_masks('token_type = "Zq8sK2vN4wX6yB1c"') == []


def test_a_call_or_index_assigned_to_a_secret_name_is_code() -> None:
    assert own_masks("token = b64encode(data)") == []
    assert own_masks("secret = env2[name]") == []
    assert own_masks("token = b64encode") == [("b64encode", "token")]


def test_an_env_line_password_is_masked_on_any_line() -> None:
    assert own_masks("DB_PASSWORD=correcthorse") == [("correcthorse", "password")]
    assert own_masks("x = 1\nDB_PASSWORD=correcthorse\n") == [("correcthorse", "password")]


def test_a_yaml_password_word_is_masked_but_a_docstring_is_not() -> None:
    assert own_masks("pass: hunter") == [("hunter", "password")]
    assert own_masks("user: x\npass: hunter\n") == [("hunter", "password")]
    assert own_masks("token: abc123 the token to send") == []
    assert own_masks("x\ntoken: abc123 the token to send\ny") == []


# The keyword rules see only the keyword gate's lines, joined: the lines around an assignment
# below are keyword lines too, so they are what the rule could wrongly take for its line.


def test_a_password_followed_by_prose_on_its_own_line_is_a_docstring() -> None:
    assert own_masks("pwd_a = 1\npassword: abc123 the password to use\npwd_b = 2") == []
    assert own_masks("password: abc123 the password to use") == []


def test_only_the_assignments_own_line_decides_whether_it_is_an_env_line() -> None:
    assert own_masks("TOKEN_A=b\npassword = hunter") == []  # the line before is an .env line
    assert own_masks("a_token\nTOKEN_A=b\npassword = hunter") == []
    assert own_masks("DB_PASSWORD=correcthorse") == [("correcthorse", "password")]
    assert own_masks("A_PASSWORD=correcthorse") == [("correcthorse", "password")]
    assert own_masks("pwd = 1\nA_PASSWORD=correcthorse") == [("correcthorse", "password")]


def test_a_yaml_password_is_judged_by_what_follows_on_its_own_line() -> None:
    assert own_masks("pass: hunter\n) # token\n# token") == [("hunter", "password")]


def test_a_quoted_message_assigned_to_a_password_is_not_masked() -> None:
    assert own_masks('password = "Password is too short"') == []


def test_prose_on_another_line_does_not_unmask_a_yaml_password() -> None:
    assert own_masks("hunter is a name\npass: hunter") == [("hunter", "password")]


def test_the_name_is_read_back_from_the_keyword_to_its_start() -> None:
    # `key` alone is no secret name; `api_key` is, read back from the keyword.
    assert own_masks(f"signing_key = {RANDOM20}") == [(RANDOM20, "secret-key")]
    assert own_masks(f"cache_key = {RANDOM20}") == []
    assert own_masks('config["db_password"] = "hunter2-fake"') == [("hunter2-fake", "password")]


def test_the_name_is_read_back_at_most_64_characters() -> None:
    head = "signing" + "_" * 57  # 64 characters before the keyword: all of them read
    assert own_masks(f"{head}key = {RANDOM20}") == [(RANDOM20, "secret-key")]
    assert own_masks(f"x{head}key = {RANDOM20}") == [(RANDOM20, "secret-key")]
    # The owner word 65 characters back is not read: `key` alone is no secret name.
    assert own_masks(f"signing_{'_' * 57}key = {RANDOM20}") == []


def test_the_name_is_read_back_to_the_first_character_that_is_not_part_of_a_name() -> None:
    assert own_masks(f"x = 1\n  signing_key = {RANDOM20}") == [(RANDOM20, "secret-key")]


def test_a_name_at_the_start_of_a_text_ending_in_a_name_character_is_read_whole() -> None:
    assert own_masks("db_password: hunter2x") == [("hunter2x", "password")]
    assert own_masks("pwd_x = 1\ndb_password: hunter2x") == [("hunter2x", "password")]


# -- the kind a keyword assignment is masked as ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("db_password", "password"),
        ("passwords", "password"),
        ("passwd", "password"),
        ("PWD", "password"),
        ("pass", "password"),
        ("passphrase", "password"),
        ("pin", "password"),
        ("GITHUB_TOKEN", "token"),
        ("tokens", "token"),
        ("credential", "credential"),
        ("credentials", "credential"),
        ("client_secret", "secret"),
        ("secrets", "secret"),
        ("apikey", "api-key"),
        ("x_api", "api-key"),
        ("access_key", "secret-key"),
        ("signing_keys", "secret-key"),
        ("password_token", "token"),  # the last word names it
        ("token_password", "password"),
        ("token_secret", "secret"),
        ("password_secrets", "secret"),
        ("token_value", "token"),  # ... or the last word that says anything
        ("key_id", "secret"),
        ("other", "secret"),
        ("", "secret"),
    ],
)
def test_the_kind_is_named_by_the_last_word_that_says_what_it_holds(name: str, kind: str) -> None:
    assert keyword_kind(name) == kind


def test_the_placeholder_of_a_keyword_assignment_names_its_kind() -> None:
    assert own_masks(f'password_token = "{RANDOM20}"') == [(RANDOM20, "token")]
    assert own_masks(f'token_password = "{RANDOM20}"') == [(RANDOM20, "password")]
    assert masks(f'client_secret = "{RANDOM20}"') == [(RANDOM20, "secret")]


# -- known gap (reported, not fixed here: the redaction source belongs to another change) -------


_LONG = ("zQ8sKV2n4wX6yB1cD3fG" * 150)[:3000]


@pytest.mark.xfail(
    strict=True,
    reason="gated rules scan a line over 2048 characters only 256 characters after the keyword "
    "(spans.LineSet.select), so a longer value is masked only in part",
)
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"    client-key-data: {_LONG}\n", "kubeconfig-client-key"),
        (f"    Authorization: Basic {_LONG}\n", "authorization"),
        (f'curl -H "Bearer {_LONG}"\n', "bearer-token"),
        (f"    x-api-key: {_LONG}\n", "api-key"),
        (f'r = get(u, auth=("user", "{_LONG}"))\n', "password"),
        (f"db_password = {_LONG}\n", "password"),
    ],
)
def test_a_long_secret_on_a_very_long_line_is_masked_whole(text: str, kind: str) -> None:
    assert own_masks(text) == [(_LONG, kind)]


# -- a random user name in a URL -------------------------------------------------------------


def _url_token_finds(text: str) -> list[str]:
    from redline.redaction.detection import rule_spans

    (rule,) = [r for r in context_rules() if r.label == "url-token"]
    return [text[s.start : s.end] for s in rule_spans(rule, text)]


def test_a_hex_user_name_is_a_token_above_three_bits_in_either_case() -> None:
    upper = "0123456789ABCDEF0A1B"
    assert _url_token_finds(f"https://{upper}@o1.ingest.sentry.io/2") == [upper]
    flat = "0123456701234567"  # eight hex digits twice: exactly 3.0 bits
    assert _url_token_finds(f"https://{flat}@example.com/") == []


def test_a_user_name_with_a_letter_past_f_must_look_random() -> None:
    named = "abcdefabX0123456"  # a run of eight lower-case letters: not random
    assert _url_token_finds(f"https://{named}@example.com/") == []
