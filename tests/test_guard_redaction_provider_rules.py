"""The provider key formats and key blocks (redline.redaction.provider_rules), rule by rule:
every prefix Redline knows is masked as its provider's kind, a key block is masked between its
header and END line (the lines themselves stay), a base64-wrapped PEM only when it is a private
key, a bare AWS secret only when it stands alone and looks random, and a cut key block up to
the last line of key material.

Each test states one rule a mutant of provider_rules.py broke and asserts exactly what is
masked by Redline's own rules (`own_masks`). Run by `make mutation` for provider_rules.py
(scripts/mutation.toml).
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Iterator

import pytest

from guard_redaction import own_masks, redactor
from redline.redaction.detection import all_rules
from redline.redaction.provider_rules import material_end, provider_rules

_R = random.Random(23)
ALNUM = string.ascii_letters + string.digits


@pytest.fixture(autouse=True)
def _fresh_rules() -> Iterator[None]:
    """The rules are compiled once per process (`detection.all_rules` is cached): each test
    compiles them afresh, so it checks the rules as they are built now, and a mutation run
    sees every test build them (not only the first)."""
    all_rules.cache_clear()
    yield
    all_rules.cache_clear()


def rand(n: int, alphabet: str) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


def key(n: int, alphabet: str = ALNUM) -> str:
    """Random characters with upper, lower and digits and no lower-case run: a generated key."""
    while True:
        v = "".join(_R.choice(alphabet) for _ in range(n))
        if (
            any(c.isupper() for c in v)
            and any(c.islower() for c in v)
            and any(c.isdigit() for c in v)
            and not any(v[i : i + 6].islower() for i in range(len(v) - 5))
        ):
            return v


UPPER = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"


def _tokens() -> list[tuple[str, str, str]]:
    """(kind, text, the masked value): one example per prefix and format."""
    out: list[tuple[str, str, str]] = []

    def add(kind: str, value: str, before: str = "k = ", masked: str | None = None) -> None:
        out.append((kind, f"{before}{value}\n", masked or value))

    for p in ("AKIA", "ABIA", "ACCA", "A3T"):
        add("aws-access-key-id", p + "ABCDEFGHIJ234567")
    add("aws-access-key-id", "ASIAABCDEFGHIJ2345678")  # seventeen after the prefix
    for p in ("sk_live_", "sk_test_", "rk_live_", "rk_test_"):
        add("stripe-key", p + key(24))
    add("stripe-webhook-secret", "whsec_" + key(32))
    for p in ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"):
        add("slack-token", p + "123456789012-" + key(20))
    add("slack-token", "xapp-1-A0" + key(16))
    for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"):
        add("github-token", p + key(36))
    add("github-token", "github_pat_" + key(22) + "_" + key(30))
    for p in (
        "glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-",
        "gloas-",
    ):  # fmt: skip
        add("gitlab-token", p + key(20, ALNUM + "_-"))
    add("npm-token", "npm_" + key(36))
    add("pypi-token", "pypi-" + key(60))
    add("anthropic-key", "sk-ant-" + key(40))
    add("openai-key", "sk-" + key(40))
    add("google-api-key", "AIza" + key(35))
    add("google-oauth-secret", "GOCSPX-" + key(28))
    add("huggingface-token", "hf_" + key(34))
    add("square-token", "sq0atp-" + key(22))
    add("square-token", "sq0csp-" + key(43))
    add("sendgrid-key", "SG." + key(22) + "." + key(43))
    add("jwt", "eyJ" + key(20) + "." + key(30) + "." + key(43))
    team = "T0" + rand(8, UPPER)
    for path in (
        "services/" + team + "/B0" + rand(8, UPPER),
        "workflows/" + team,
        "triggers/" + team,
    ):
        value = path + "/" + key(24)
        add("slack-webhook", value, "u = https://hooks.slack.com/", value)
    hook = "123456789012/" + key(40, ALNUM + "_-")
    add("discord-webhook", hook, "u = https://discord.com/api/webhooks/", hook)
    account = key(40, B64) + "=="
    add("azure-storage-key", account, "c = Protocol=https;AccountKey=")
    shared = key(40, B64) + "="
    add("azure-storage-key", shared, "c = Endpoint=sb://x/;SharedAccessKey=")
    add("azure-sas-signature", key(30) + "%2B" + key(10), "u = https://x/?sv=1&sig=")
    return out


TOKENS = _tokens()


@pytest.mark.parametrize(("kind", "text", "value"), TOKENS[:12], ids=[t[0] for t in TOKENS[:12]])
def test_a_provider_prefix_inside_a_word_is_not_a_token(kind: str, text: str, value: str) -> None:
    assert own_masks(text.replace(value, "x" + value)) == []


def test_an_aws_key_id_of_more_than_seventeen_characters_is_not_one() -> None:
    assert own_masks("id = AKIAABCDEFGHIJ2345678X\n") == []
    assert own_masks("id = AKIAABCDEFGHIJ23456\n") == []  # fifteen


def test_an_npm_token_of_any_length_is_masked_but_npm_package_words_are_not() -> None:
    """npm tokens have had several lengths: any random-looking run after npm_ is one; npm's own
    npm_package_* variables are words."""
    token = "npm_" + key(37)
    assert own_masks("t = " + token + "\n") == [(token, "npm-token")]
    assert own_masks("echo $npm_package_version\n") == []


# -- key blocks -----------------------------------------------------------------------------------

BODY = [key(64, B64) for _ in range(3)] + [key(20, B64) + "=="]


@pytest.mark.parametrize(
    "label",
    [
        "RSA PRIVATE KEY",
        "PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ],
)
def test_a_private_key_block_is_masked_between_its_header_and_end_line(label: str) -> None:
    text = f"-----BEGIN {label}-----\n" + "\n".join(BODY) + f"\n-----END {label}-----\n"
    assert [(v.strip(), k) for v, k in own_masks(text)] == [("\n".join(BODY), "private-key")]


def test_a_whole_key_block_is_masked_past_blank_and_header_lines_inside_it() -> None:
    inner = "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\n" + "\n".join(BODY)
    text = f"-----BEGIN RSA PRIVATE KEY-----\n{inner}\n-----END RSA PRIVATE KEY-----\n"
    assert own_masks(text) == [(inner, "private-key")]
    ssh2 = "Comment: me\n\n" + "\n".join(BODY)
    text = (
        f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n{ssh2}\n"
        "---- END SSH2 ENCRYPTED PRIVATE KEY ----\n"
    )
    assert own_masks(text) == [(ssh2, "private-key")]


def test_an_ssh2_encrypted_key_block_is_masked_between_its_lines() -> None:
    text = (
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n"
        + "\n".join(BODY)
        + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n"
    )
    assert [(v.strip(), k) for v, k in own_masks(text)] == [("\n".join(BODY), "private-key")]


def test_a_putty_key_masks_its_private_lines_and_mac_not_its_public_lines() -> None:
    public = key(60, B64)
    text = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\n"
        f"Public-Lines: 1\n{public}\nPrivate-Lines: 2\n{BODY[0]}\n{BODY[1]}\n"
        "Private-MAC: 0a1b2c3d4e5f\n"
    )
    assert own_masks(text) == [
        (f"{BODY[0]}\n{BODY[1]}\nPrivate-MAC: 0a1b2c3d4e5f", "putty-private-key")
    ]


def test_a_base64_wrapped_pem_is_masked_only_when_it_is_a_private_key() -> None:
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(BODY) + "\n-----END RSA PRIVATE KEY-----\n"
    )
    wrapped = base64.b64encode(pem.encode()).decode()
    assert own_masks(f"client-key: {wrapped}\n") == [(wrapped, "private-key")]
    cert = pem.replace("RSA PRIVATE KEY", "CERTIFICATE")
    public = base64.b64encode(cert.encode()).decode()
    assert own_masks(f"client-certificate: {public}\n") == []
    assert own_masks("x: LS0tLS1CRUdJTi!!!!\n") == []


def test_a_base64_wrapped_pem_that_is_not_valid_base64_is_not_a_key() -> None:
    assert own_masks("x: LS0tLS1CRUdJTi=AAAAAAAAAAAAAAAAAAAAAAAA\n") == []  # bad padding


# -- material_end: how far a cut key block runs --------------------------------------------------


def test_a_cut_block_runs_to_the_last_line_of_key_material() -> None:
    head = "-----BEGIN RSA PRIVATE KEY-----"
    text = head + "\n" + "\n".join(BODY) + "\ndef f():\n    pass\n"
    end = material_end(text, len(head))
    assert text[len(head) : end] == "\n" + "\n".join(BODY)


def test_a_cut_block_counts_header_lines_prefixes_and_escapes_as_material() -> None:
    head = "-----BEGIN RSA PRIVATE KEY-----"
    lines = [
        "Proc-Type: 4,ENCRYPTED",
        "DEK-Info: AES-128-CBC,0A1B",
        f"+ {BODY[0]}",
        f'  "{BODY[1]}\\n" +',
    ]
    text = head + "\n" + "\n".join(lines) + "\nplain words here\n"
    assert text[len(head) : material_end(text, len(head))] == "\n" + "\n".join(lines)


def test_a_cut_block_at_the_end_of_the_text_runs_to_the_end() -> None:
    head = "-----BEGIN RSA PRIVATE KEY-----"
    assert material_end(head, len(head)) == len(head)
    text = head + "\\n" + BODY[0] + "\\n" + BODY[1]
    assert material_end(text, len(head)) == len(text)
    text = head + "\n" + BODY[0]
    assert material_end(text, len(head)) == len(text)


def test_a_cut_block_is_followed_for_at_most_64_kib() -> None:
    head = "-----BEGIN RSA PRIVATE KEY-----"
    line = key(64, B64)
    text = head + ("\n" + line) * 2000
    end = material_end(text, len(head))
    assert 65_536 <= end - len(head) < 65_536 + 65


# -- a bare AWS secret ----------------------------------------------------------------------------

AWS = key(40, B64.replace("/", "").replace("+", ""))


def test_a_bare_aws_secret_standing_alone_is_masked() -> None:
    assert own_masks(f"deploy-bot,ASIAABCDEFGHIJ234567,{AWS}\n") == [
        ("ASIAABCDEFGHIJ234567", "aws-access-key-id"),
        (AWS, "aws-secret-key"),
    ]
    assert own_masks(AWS) == [(AWS, "aws-secret-key")]
    assert own_masks(f"{AWS} is the key.") == [(AWS, "aws-secret-key")]
    assert own_masks(f"{AWS}: x") == [(AWS, "aws-secret-key")]


@pytest.mark.parametrize("before", [".", "_", "-", ":", "@", "\\"])
def test_a_forty_character_string_after_punctuation_of_a_path_or_url_is_not_one(
    before: str,
) -> None:
    assert own_masks(f"x {before}{AWS} y") == []


@pytest.mark.parametrize("after", [".", "_", "-", "@", "\\"])
def test_a_forty_character_string_before_punctuation_of_a_path_or_url_is_not_one(
    after: str,
) -> None:
    assert own_masks(f"x {AWS}{after}y") == []


def test_a_forty_character_path_with_more_than_three_slashes_is_not_one() -> None:
    three = AWS[:10] + "/" + AWS[11:20] + "/" + AWS[21:30] + "/" + AWS[31:]
    assert own_masks(f"x {three} y") == [(three, "aws-secret-key")]
    four = three[:5] + "/" + three[6:]
    assert own_masks(f"x {four} y") == []


def test_a_forty_character_string_that_does_not_look_random_is_not_one() -> None:
    assert own_masks("x " + "Ab1" * 13 + "A" + " y") == []  # three characters over and over
    assert own_masks("x " + "abcdefghij" * 4 + " y") == []


def test_every_provider_rule_but_the_bare_aws_secret_has_the_provider_rank() -> None:
    rules = provider_rules()
    assert [r.kind for r in rules if r.rank != 0] == ["aws-secret-key"]


# -- known gap (reported, not fixed here: the redaction source belongs to another change) -------


@pytest.mark.xfail(
    strict=True,
    reason="material_end stops at the first blank line: a cut legacy-encrypted PEM "
    "(Proc-Type, DEK-Info, blank line, body) keeps its whole body",
)
def test_a_cut_encrypted_pem_is_masked_past_the_blank_line_after_its_headers() -> None:
    head = "-----BEGIN RSA PRIVATE KEY-----"
    headers = "\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\n"
    out = redactor().redact(head + headers + "\n".join(BODY) + "\n")
    assert not any(line in out for line in BODY)


# -- every format, whole, under its provider's kind ------------------------------------------------


@pytest.mark.parametrize(("kind", "text", "value"), TOKENS, ids=[t[0] for t in TOKENS])
def test_every_provider_format_is_masked_whole_as_its_providers_kind(
    kind: str, text: str, value: str
) -> None:
    assert own_masks(text) == [(value, kind)]


PREFIXED = [t for t in TOKENS[12:] if t[0] not in ("slack-webhook", "discord-webhook")]
PREFIXED = [t for t in PREFIXED if not t[0].startswith("azure-")]  # a named value, not a prefix


@pytest.mark.parametrize(("kind", "text", "value"), PREFIXED, ids=[t[0] for t in PREFIXED])
def test_every_provider_prefix_inside_a_word_is_not_a_token(
    kind: str, text: str, value: str
) -> None:
    assert own_masks(text.replace(value, "xy" + value)) == []


# -- the last survivors of the first mutation run ------------------------------------------------


def test_a_base64_wrapped_key_cut_short_is_read_from_its_whole_four_character_groups() -> None:
    def wrapped(label: str, n: int) -> str:
        pem = f"-----BEGIN {label}-----\n" + "\n".join(BODY) + f"\n-----END {label}-----\n"
        return base64.b64encode(pem.encode()).decode()[:n]

    cut = wrapped("RSA PRIVATE KEY", 50)  # 48 characters decode; the last two are dropped
    assert own_masks(f"k: {cut}\n") == [(cut, "private-key")]
    cut = wrapped("ENCRYPTED PRIVATE KEY", 44)  # all 44 are needed to reach `PRIVATE KEY`
    assert own_masks(f"k: {cut}\n") == [(cut, "private-key")]


def test_an_npm_token_that_is_a_word_is_not_one() -> None:
    assert own_masks("run npm_installdependencies\n") == []


def test_a_cut_block_after_other_lines_runs_from_its_own_header() -> None:
    head = "x = 1\n-----BEGIN RSA PRIVATE KEY-----"
    text = head + "\n" + "\n".join(BODY) + "\nplain words here\n"
    assert text[len(head) : material_end(text, len(head))] == "\n" + "\n".join(BODY)


def test_a_cut_block_whose_header_ends_at_the_very_start_is_read_line_by_line() -> None:
    text = "\n" + BODY[0] + "\nplain words here\n"
    assert material_end(text, 0) == 1 + len(BODY[0])


def test_a_cut_block_stops_at_exactly_64_kib_when_a_line_ends_there() -> None:
    head = "-----BEGIN RSA PRIVATE KEY-----"
    text = head + ("\n" + key(63, B64)) * 1100  # 64 characters a line: 1024 lines are 64 KiB
    assert material_end(text, len(head)) - len(head) == 65_536


def test_a_key_of_a_fixed_length_followed_or_preceded_by_a_capital_is_not_one() -> None:
    ado = "qwb5pdkhx6pygpan2rlykei4iiaannkksumnlmytbx2kjqevtave"
    assert own_masks(f'$pat = "{ado}"\n') == [(ado, "azure-devops-pat")]
    assert own_masks(f'$pat = "Q{ado}"\n') == []
    assert own_masks(f'$pat = "{ado}Q"\n') == []
    mailgun = "key-9b9fa5ff5180bc0dbc0e15637ebb8e3b"
    assert own_masks(f"k = {mailgun}\n") == [(mailgun, "mailgun-key")]
    assert own_masks(f"k = {mailgun}X\n") == []
    assert own_masks("t = 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X\n") == []


def test_a_shopify_token_in_upper_case_hex_is_one() -> None:
    token = "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"
    assert own_masks(f"t = {token}\n") == [(token, "shopify-token")]
