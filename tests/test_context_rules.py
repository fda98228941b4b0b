"""The context and file rules (redaction/context_rules.py, file_rules.py) alone, at each edge
of their checks: the
shortest value a rule takes and the one just shorter, each placeholder and template form, each
header name and scheme word, each quoting and operator of a keyword assignment, and the kind
each secret-sounding name gives. detect-secrets' plugins are left out (the rule alone runs), so
a broken check cannot hide behind a plugin that masks the same value.
"""

from __future__ import annotations

import math
import random

import pytest

from redline.redaction.context_rules import keyword_kind, random_bar
from test_secret_rules import found_by, rules_named

from secret_corpus import random_key


def finds(label: str, text: str) -> list[str]:
    return [f for rule in rules_named(label) for f in found_by(rule, text)]


R16 = random_key(16)


@pytest.mark.parametrize(
    ("label", "text", "expected"),
    [
        # url-password: three characters at least; no example, placeholder or template.
        ("url-password", "redis://u:abc@cache:6379", ["abc"]),
        ("url-password", "redis://u:ab@cache:6379", []),
        ("url-password", "redis://:Rd1x9Kq2@cache", ["Rd1x9Kq2"]),
        ("url-password", "https://u:pass@h/", []),
        ("url-password", "https://u:PWD@h/", []),
        ("url-password", "https://u:null@h/", []),
        ("url-password", "https://u:your-password@h/", []),
        ("url-password", "https://u:${DB_PASS}@h/", []),
        ("url-password", "https://u:$DB_PASS@h/", []),
        ("url-password", "https://u:{password}@h/", []),
        ("url-password", "https://u:%(pw)s@h/", []),
        ("url-password", "https://u:****@h/", []),
        ("url-password", "https://u:<password>@h/", []),
        # url-token: sixteen characters at least, random.
        ("url-token", f"https://{R16}@h.example/x", [R16]),
        ("url-token", f"https://{R16[:15]}@h.example/x", []),
        (
            "url-token",
            "https://0123456789abcdef0123456789abcdef@h/x",
            ["0123456789abcdef0123456789abcdef"],
        ),
        ("url-token", "https://00000000000000000000000000000000@h/x", []),
        ("url-token", "https://deploymentuserforci@h/x", []),
        # env-secret: NAME of three or more capitals, a value of sixteen or more.
        ("env-secret", f"SIGNING={R16}\n", [R16]),
        ("env-secret", f"SIGNING={R16[:15]}\n", []),
        ("env-secret", f"export SIGNING={R16}\n", [R16]),
        ("env-secret", f"+SIGNING={R16}\n", [R16]),
        ("env-secret", f"  42 +| SIGNING={R16}\n", [R16]),
        ("env-secret", f"deploy/app.conf:3: SIGNING={R16}\n", [R16]),
        ("env-secret", f"AB={R16}\n", []),
        ("env-secret", f"signing={R16}\n", []),
        (
            "env-secret",
            "SEED=9f86d081884c7d659a2feaa0c55ad015\n",
            ["9f86d081884c7d659a2feaa0c55ad015"],
        ),
        ("env-secret", "SEED=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n", []),
        ("env-secret", "SEED=0123456701234567\n", []),  # hex of entropy 3.0 exactly: not above
        ("env-secret", "SEED=0123456789abcdef\n", ["0123456789abcdef"]),
        ("env-secret", f"REF=${R16}\n", []),
        ("env-secret", f"ROOT=/{R16}\n", []),
        ("env-secret", f"ROOT=./{R16}\n", []),
        ("env-secret", f"URL=https{R16}\n", []),
        ("env-secret", "NAME=correcthorsebatterystaple\n", []),
        # kubeconfig-client-key: sixteen base64 characters at least, any case of the name.
        ("kubeconfig-client-key", f"client-key-data: {R16}", [R16]),
        ("kubeconfig-client-key", f"Client-Key-Data = '{R16}'", [R16]),
        ("kubeconfig-client-key", f"client-key-data: {R16[:15]}", []),
        # authorization: a credential, not the variable holding it.
        ("authorization", "Authorization: Bearer abc123", ["abc123"]),
        ("authorization", "Authorization: Bearer ab123", []),
        ("authorization", "Proxy-Authorization: Basic dXNlcjpwdzEyMw==", ["dXNlcjpwdzEyMw=="]),
        ("authorization", "Authorization: token", []),
        ("authorization", "Authorization: Bearer%20", []),
        ("authorization", '"Authorization": self.auth_header', []),
        ("authorization", '"Authorization": authHeader', []),
        ("authorization", '"Authorization": abc123def', ["abc123def"]),
        ("authorization", "Authorization: get_auth_header()", []),
        ("authorization", "Authorization: ${AUTH}", []),
        ("authorization", "Authorization: your-api-key", []),
        ("authorization", "Authorization: ******", []),
        # bearer-token: sixteen characters at least (padding kept).
        ("bearer-token", f"Bearer {R16}==", [R16 + "=="]),
        ("bearer-token", f"Bearer {R16[:15]}", []),
        ("bearer-token", f"bearer {R16}.token_for(user)", []),
        # api-key: each header name, eight characters at least.
        *[
            ("api-key", f"{header}: {R16[:8]}", [R16[:8]])
            for header in (
                "X-Api-Key",
                "api-key",
                "X-Auth-Token",
                "Private-Token",
                "X-Access-Token",
                "X-ApiKey",
            )
        ],
        ("api-key", f"X-Api-Key: {R16[:7]}", []),
        ("api-key", "X-Api-Key: self.settings.key", []),
        # auth-tuple: every constructor, three characters at least.
        ("auth-tuple", 'auth=("u", "pw1")', ["pw1"]),
        ("auth-tuple", 'auth = ["u", "pw1"]', ["pw1"]),
        ("auth-tuple", "auth=(user, 'pw1')", ["pw1"]),
        ("auth-tuple", 'HTTPBasicAuth("u", r"pw1")', ["pw1"]),
        ("auth-tuple", 'HTTPDigestAuth("u", "pw1")', ["pw1"]),
        ("auth-tuple", 'aiohttp.BasicAuth("u", "pw1")', ["pw1"]),
        ("auth-tuple", 'DigestAuth("u", "pw1")', ["pw1"]),
        ("auth-tuple", 'auth=("u", "pw")', []),
        ("auth-tuple", 'oauth=("u", "pw1")', []),
    ],
)
def test_a_context_rule_at_its_edges(label: str, text: str, expected: list[str]) -> None:
    assert finds(label, text) == expected


@pytest.mark.parametrize(
    ("label", "text", "expected"),
    [
        # config-value: a key of twelve characters or more, of three kinds (lower, upper,
        # digit, symbol) and random; a password of eight or more, of two kinds.
        ("config-value", "SIGNING_SECRET=a(B3xY9)kQ2#\n", ["a(B3xY9)kQ2#"]),
        ("config-value", "SIGNING_SECRET=a(B3xY9)kQ2\n", []),  # eleven
        ("config-value", "SIGNING_SECRET=a(b3xy9)kq2#\n", ["a(b3xy9)kq2#"]),  # three kinds
        ("config-value", "SIGNING_SECRET=a(bcxyz)kqw#\n", []),  # two kinds
        ("config-value", "SIGNING_SECRET=a(B3a(B3a(B3\n", []),  # not random
        ("config-value", "db_pass: ab(cdef)\n", ["ab(cdef)"]),
        ("config-value", "db_pass: ab(cde)\n", []),  # seven
        ("config-value", "db_pass: ((((((((\n", []),  # one kind
        ("config-value", "db_pass: abc(def)\n", []),  # a call
        ("config-value", "db_pass: ab(cdef) # note\n", []),  # not alone on its line
        # netrc: up to four fields around the password, a login among them.
        (
            "netrc-machine",
            "machine h login u account a port 1 protocol p password pw1x\n",
            ["pw1x"],
        ),
        ("netrc-machine", "machine h account a password pw1x\n", []),
        # gcp-private-key-id: forty hex digits, not one more or less.
        ("gcp-private-key-id", '"private_key_id": "' + "ab12" * 10 + '"', ["ab12" * 10]),
        ("gcp-private-key-id", '"private_key_id": "' + "ab12" * 10 + 'c"', []),
        ("gcp-private-key-id", '"private_key_id": "' + ("ab12" * 10)[:39] + '"', []),
        # libpq-password: only beside another pair of the connection string.
        ("libpq-password", '"host=x password=hunter dbname=y"', ["hunter"]),
        ("libpq-password", '"password=hunter"', []),
        ("libpq-password", "\"sslmode=require password='a b c'\"", ["a b c"]),
    ],
)
def test_a_file_rule_at_its_edges(label: str, text: str, expected: list[str]) -> None:
    assert finds(label, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Each operator and quoting.
        ('password = "hunter2"', ["hunter2"]),
        ("password := 'hunter2'", ["hunter2"]),
        ('"password" => "hunter2"', ["hunter2"]),
        ('if password == "hunter2":', ["hunter2"]),
        ('if password != "hunter2":', ["hunter2"]),
        ("password: `hunter2`", ["hunter2"]),
        ('password = r"hunter2"', ["hunter2"]),
        ("password = b'hunter2'", ["hunter2"]),
        ('password = @"hunter2"', ["hunter2"]),
        ('config["password"] = "hunter2"', ["hunter2"]),
        ("db_password: hunter2", ["hunter2"]),
        ("PWD=hunter2", ["hunter2"]),
        ("my_secret_credential = Zx81kQ0pLm33", ["Zx81kQ0pLm33"]),
        # The name is read back from the keyword: `api_key`, not `key` (no owner: no secret).
        ('api_key = "Zx81kQ0pLm33Yy"', ["Zx81kQ0pLm33Yy"]),
        ('key = "Zx81kQ0pLm33Yy"', []),
        # Code, not a literal.
        ("token = b64encode(raw)", []),
        ("secret = settings.secret", []),
        ("password = passwords[0]", []),
        ("password = password", []),
        ("password_hash = 'hunter2'", []),
        ("token_type = 'bearer'", []),
        ("max_tokens = 4096", []),
    ],
)
def test_a_keyword_assignment_at_its_edges(text: str, expected: list[str]) -> None:
    assert finds("keyword-assignment", text) == expected


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("db_password", "password"),
        ("passwords", "password"),
        ("PASSWD", "password"),
        ("pwd", "password"),
        ("smtp_pass", "password"),
        ("gpgPassphrase", "password"),
        ("card_pin", "password"),
        ("GITHUB_TOKEN", "token"),
        ("refresh_tokens", "token"),
        ("aws_credential", "credential"),
        ("credentials", "credential"),
        ("client_secret", "secret"),
        ("app_secrets", "secret"),
        ("openaiApiKey", "api-key"),
        ("apikey", "api-key"),
        ("signing_key", "secret-key"),
        ("ssh_keys", "secret-key"),
        ("SECRET_KEY", "secret"),  # the last word that names a secret decides
        ("value", "secret"),
        ("", "secret"),
    ],
)
def test_the_kind_a_name_gives(name: str, kind: str) -> None:
    assert keyword_kind(name) == kind


@pytest.mark.parametrize("length", [16, 20, 24, 26, 28, 32, 48])
def test_env_secret_masks_random_values_of_every_length(length: int) -> None:
    """`NAME=<random key>` is masked whatever the key's characters happen to be: a flat 4-bit
    entropy bar let through 89 % of random 16-character keys (only those with 16 distinct
    characters reach it) and 35 % of 20-character ones. Found when another seed's 16-character
    key, with a repeated letter, was not masked."""
    rng = random.Random(length)
    keys = [random_key(length, rng=rng) for _ in range(500)]
    missed = [k for k in keys if finds("env-secret", f"SIGNING={k}\n") != [k]]
    assert len(missed) <= len(keys) // 100, missed[:5]


def test_env_secret_bar_is_what_a_value_of_that_length_can_reach() -> None:
    assert random_bar(16) == pytest.approx(3.2)
    assert random_bar(20) == pytest.approx(math.log2(20) - 0.8)
    assert random_bar(29) == 4.0 and random_bar(400) == 4.0  # never above 4 bits
    # A value that repeats itself stays below the bar at any length.
    assert finds("env-secret", "SIGNING=aB3aB3aB3aB3aB3aB3\n") == []
