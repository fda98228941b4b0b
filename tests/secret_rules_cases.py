"""Per rule of the redactor (redaction/*_rules.py, named by `Rule.label`): what it must mask —
exactly which characters, under which kind — and its near misses, which must stay readable.

tests/test_secret_rules.py runs them; a rule with no entry here fails that test. Values are
generated at import time (nothing committed looks like a live credential).
"""

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass, field

from redline.redaction.rule import CONTEXT, ENTROPY, KEYWORD, PROVIDER

from secret_corpus import (
    ALNUM,
    B64,
    BASE32_LOWER,
    DJANGO,
    HEX,
    UPPER_DIGITS,
    URLSAFE,
)
from secret_corpus import rand as _corpus_rand
from secret_corpus import random_key as _corpus_random_key

# The table draws from its own generator: its values are the same whichever test module drew
# from secret_corpus's before it was imported (a near miss must not turn into a hit, or a hit
# into a near miss, because of the order pytest or mutmut imports the test files in).
_R = random.Random(20260325)


def rand(n: int, alphabet: str = ALNUM) -> str:
    return _corpus_rand(n, alphabet, _R)


def random_key(n: int, alphabet: str = ALNUM) -> str:
    return _corpus_random_key(n, alphabet, _R)


BECH32_UPPER = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
GITLAB_PREFIXES = ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-")
GITLAB_PREFIXES += ("glptt-", "glagent-", "gloas-")
DIGITS = string.digits


@dataclass
class Case:
    """`hits`: (text, the secret in it, the kind it is masked as); `near`: texts nothing in
    may be masked; `rank` and `gated`: the rule's specificity and whether it runs only on the
    keyword gate's lines."""

    rank: int
    gated: bool = False
    hits: list[tuple[str, str, str]] = field(default_factory=list)
    near: list[str] = field(default_factory=list)
    multiline: bool = False  # the secret spans lines (a key block): checked line by line


def _pem(label: str) -> tuple[str, str]:
    body = "\n".join(random_key(64, B64) for _ in range(3))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n", f"\n{body}\n"


_rsa, _rsa_body = _pem("RSA PRIVATE KEY")
_pub, _ = _pem("PUBLIC KEY")
_ssh2_body = f"\nComment: fake\n{random_key(64, B64)}\n{random_key(30, B64)}\n"
_ppk_private = f"{random_key(64, B64)}\n{random_key(40, B64)}\nPrivate-MAC: {rand(64, HEX)}"
_pem_b64 = base64.b64encode(_pem("EC PRIVATE KEY")[0].encode()).decode()
_cert_b64 = base64.b64encode(
    f"-----BEGIN CERTIFICATE-----\n{random_key(64, B64)}\n".encode()
).decode()
_mailgun = "key-" + rand(32, HEX)
_age = "AGE-SECRET-KEY-1" + rand(58, BECH32_UPPER)
_ado = rand(52, BASE32_LOWER)
_ado84 = random_key(76) + "AZDO" + random_key(4)
_aws_bare = random_key(40, B64)
_sentry = rand(32, HEX)
_django = rand(50, DJANGO)


def _prefixed(
    prefixes: tuple[str, ...], body: str, kind: str, template: str = 'KEY = "{}"\n'
) -> list[tuple[str, str, str]]:
    return [(template.format(p + body), p + body, kind) for p in prefixes]


CASES: dict[str, Case] = {
    # -- provider_rules.py ---------------------------------------------------------------------
    "pem-private-key": Case(
        PROVIDER, hits=[(_rsa, _rsa_body, "private-key")], near=[_pub], multiline=True
    ),
    "ssh2-private-key": Case(
        PROVIDER,
        hits=[
            (
                f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----{_ssh2_body}"
                "---- END SSH2 ENCRYPTED PRIVATE KEY ----\n",
                _ssh2_body,
                "private-key",
            )
        ],
        near=[f"---- BEGIN SSH2 PUBLIC KEY ----{_ssh2_body}---- END SSH2 PUBLIC KEY ----\n"],
        multiline=True,
    ),
    "putty-private-key": Case(
        PROVIDER,
        hits=[(f"Private-Lines: 2\n{_ppk_private}\n", _ppk_private, "putty-private-key")],
        near=[f"Public-Lines: 2\n{random_key(64, B64)}\n{random_key(30, B64)}\n"],
        multiline=True,
    ),
    "base64-private-key": Case(
        PROVIDER,
        hits=[(f"tls_blob: {_pem_b64}\n", _pem_b64, "private-key")],
        near=[f"client-certificate-data: {_cert_b64}\n"],
    ),
    "aws-access-key-id": Case(
        PROVIDER,
        hits=[
            *_prefixed(
                ("AKIA", "ASIA", "ABIA", "ACCA"), rand(16, UPPER_DIGITS), "aws-access-key-id"
            ),
            *_prefixed(("A3T",), rand(17, UPPER_DIGITS), "aws-access-key-id"),
        ],
        near=['KEY = "AKIA' + rand(15, UPPER_DIGITS) + '"\n', "AKIAFOO = 1\n"],
    ),
    "stripe-key": Case(
        PROVIDER,
        hits=_prefixed(
            ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
            random_key(24),
            "stripe-key",
            'stripe.api_key = "{}"\n',
        ),
        near=['prefix = "sk_live_' + random_key(9) + '"\n', "if key.startswith('sk_live_'):\n"],
    ),
    "stripe-webhook-secret": Case(
        PROVIDER,
        hits=_prefixed(("whsec_",), random_key(32), "stripe-webhook-secret"),
        near=['event = "whsec_' + random_key(19) + '"\n'],
    ),
    "slack-webhook": Case(
        PROVIDER,
        hits=[
            (
                f"url: https://hooks.slack.com/triggers/T{rand(8, UPPER_DIGITS)}/"
                f"B{rand(10, UPPER_DIGITS)}/{random_key(24)}\n",
                "",  # filled in below: everything after the host
                "slack-webhook",
            )
        ],
        near=["see https://hooks.slack.com/services/ for the setup\n"],
    ),
    "slack-token": Case(
        PROVIDER,
        hits=[
            *_prefixed(
                ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"),
                f"{rand(12, DIGITS)}-{random_key(24)}",
                "slack-token",
                "client = WebClient({})\n",
            ),
            *_prefixed(
                ("xapp-",),
                f"1-A{rand(10, UPPER_DIGITS)}-{random_key(24)}",
                "slack-token",
                "client = WebClient({})\n",
            ),
        ],
        near=["token_prefix = xoxb-123\n", "app = xapp-x\n"],
    ),
    "discord-webhook": Case(
        PROVIDER,
        hits=[
            (
                "URL = https://discord.com/api/webhooks/"
                f"{rand(18, DIGITS)}/{random_key(68, URLSAFE)}\n",
                "",
                "discord-webhook",
            )
        ],
        near=["route: /api/webhooks/123/abc\n"],
    ),
    "github-token": Case(
        PROVIDER,
        hits=[
            *_prefixed(("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), random_key(36), "github-token"),
            *_prefixed(("github_pat_",), "11" + random_key(80), "github-token"),
        ],
        near=["ref ghp_" + random_key(29) + "\n", "github_pat_prefix = 1\n"],
    ),
    "gitlab-token": Case(
        PROVIDER,
        hits=_prefixed(
            GITLAB_PREFIXES,
            random_key(20, URLSAFE),
            "gitlab-token",
            "gitlab: {}\n",
        ),
        near=["gitlab: glpat-" + random_key(19) + "\n"],
    ),
    "npm-token": Case(
        PROVIDER,
        hits=[
            ("npm publish --auth npm_" + (v := random_key(36)) + "\n", "npm_" + v, "npm-token"),
            ("npm whoami --otp npm_" + (w := random_key(20)) + "\n", "npm_" + w, "npm-token"),
            ("run npm_" + (x := random_key(50)) + "\n", "npm_" + x, "npm-token"),
        ],
        near=[
            "echo $npm_package_version $npm_config_registry\n",
            "process.env.npm_lifecycle_event\n",
            "run npm_aaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
            "run npm_" + random_key(15) + "\n",
        ],
    ),
    "mailgun-key": Case(
        PROVIDER,
        # `key: "…"` is a keyword assignment too: the provider's kind wins (the rank).
        hits=[(f'mg.init({{ api_key: "{_mailgun}" }})\n', _mailgun, "mailgun-key")],
        near=[
            "monkey-" + rand(32, HEX) + "\n",
            "pubkey-" + rand(32, HEX) + "\n",
            "key-" + rand(31, HEX) + "\n",
            "key-value-store-0123456789\n",
        ],
    ),
    "shopify-token": Case(
        PROVIDER,
        hits=_prefixed(
            ("shpat_", "shpss_", "shpca_", "shppa_"),
            rand(32, HEX),
            "shopify-token",
            'Shopify::Client.new("{}")\n',
        ),
        near=[
            'Shopify::Client.new("shpat_' + rand(31, HEX) + '")\n',
            'Shopify::Client.new("shpat_' + "g" * 32 + '")\n',
            "myshpat_" + rand(32, HEX) + "\n",
        ],
    ),
    "age-secret-key": Case(
        PROVIDER,
        hits=[(f"# created: 2025\n{_age}\n", _age, "age-secret-key")],
        near=[
            "# public key: age1" + rand(58, BECH32_UPPER.lower()) + "\n",
            "AGE-SECRET-KEY-1" + rand(57, BECH32_UPPER) + "\n",
        ],
    ),
    "pypi-token": Case(
        PROVIDER,
        hits=_prefixed(("pypi-",), "AgEIcHlwaS5vcmc" + random_key(60, URLSAFE), "pypi-token"),
        near=["pypi-" + random_key(40) + "\n"],
    ),
    "anthropic-key": Case(
        PROVIDER,
        hits=_prefixed(("sk-ant-",), "api03-" + random_key(80, URLSAFE), "anthropic-key"),
        near=["risk-ant-" + random_key(30) + "\n"],
    ),
    "openai-key": Case(
        PROVIDER,
        hits=_prefixed(("sk-",), "proj-" + random_key(48, URLSAFE), "openai-key"),
        near=["disk-cache-directory-name-here\n", "sk-" + random_key(19) + "\n"],
    ),
    "google-api-key": Case(
        PROVIDER,
        hits=_prefixed(("AIza",), random_key(35, URLSAFE), "google-api-key"),
        near=["AIza" + random_key(34) + "\n"],
    ),
    "google-oauth-secret": Case(
        PROVIDER,
        hits=_prefixed(("GOCSPX-",), random_key(28, URLSAFE), "google-oauth-secret"),
        near=["GOCSPX-" + random_key(19) + "\n"],
    ),
    "huggingface-token": Case(
        PROVIDER,
        hits=_prefixed(("hf_",), random_key(34), "huggingface-token"),
        near=["hf_" + random_key(29) + "\n", "self.hf_model_name_or_path_for_loading = 1\n"],
    ),
    "square-token": Case(
        PROVIDER,
        hits=[
            *_prefixed(("sq0atp-",), random_key(22, URLSAFE), "square-token"),
            *_prefixed(("sq0csp-",), random_key(43, URLSAFE), "square-token"),
        ],
        near=["sq0atp-" + random_key(21) + "\n"],
    ),
    "sendgrid-key": Case(
        PROVIDER,
        hits=_prefixed(
            ("SG.",), random_key(22, URLSAFE) + "." + random_key(43, URLSAFE), "sendgrid-key"
        ),
        near=["SG.short.value\n"],
    ),
    "jwt": Case(
        PROVIDER,
        hits=_prefixed(
            ("eyJ",),
            "hbGciOiJIUzI1NiJ9." + random_key(30, URLSAFE) + "." + random_key(43, URLSAFE),
            "jwt",
        ),
        near=['prefix = "eyJhbGciOi"\n'],
    ),
    "azure-account-key": Case(
        PROVIDER,
        hits=[
            (
                f"conn = AccountName=x;AccountKey={(k := random_key(60, B64))};\n",
                k,
                "azure-storage-key",
            )
        ],
        near=["AccountKey=short;\n"],
    ),
    "azure-shared-access-key": Case(
        PROVIDER,
        hits=[
            (
                f"Endpoint=sb://x/;SharedAccessKey={(k2 := random_key(44, B64))};\n",
                k2,
                "azure-storage-key",
            )
        ],
        near=["SharedAccessKey=short;\n"],
    ),
    "azure-sas-signature": Case(
        PROVIDER,
        hits=[
            (
                f"GET /c?sv=2020-08-04&sig={(sig := random_key(43, B64) + '%3D')}&se=1\n",
                sig,
                "azure-sas-signature",
            )
        ],
        near=["sig=short&x=1\n"],
    ),
    "azure-devops-pat": Case(
        PROVIDER,
        hits=[
            (f'$pat = "{_ado}"\n', _ado, "azure-devops-pat"),
            (f"export AZURE_DEVOPS_EXT_PAT={_ado}\n", _ado, "azure-devops-pat"),
            (f"az devops login --token {_ado}\n", _ado, "azure-devops-pat"),
        ],
        near=[
            f'checksum = "{_ado}"\n',  # no word that names Azure DevOps on the line
            f'$pat = "{"abcdefghijklmnopqrstuvwxyz" * 2}"\n',  # letters only: not random
            f'path = "{_ado}"\n',
        ],
    ),
    "azure-devops-pat-84": Case(
        PROVIDER,
        hits=[(f"ADO_PAT={_ado84}\n", _ado84, "azure-devops-pat")],
        near=[f"blob = {_ado84.replace('AZDO', 'AZDX')}\n"],
    ),
    "aws-secret-key": Case(
        CONTEXT,
        hits=[(f"deploy-bot,ASIAEXAMPLE,{_aws_bare}\n", _aws_bare, "aws-secret-key")],
        near=[f"commit {rand(40, HEX)}\n", "src/main/java/org/example/project/App.java\n"],
    ),
    # -- context_rules.py ----------------------------------------------------------------------
    "url-password": Case(
        CONTEXT,
        hits=[
            (
                f'DATABASE_URL = "postgresql://app:{(pg := "Pg-" + random_key(16))}@db:5432/app"\n',
                pg,
                "url-password",
            )
        ],
        near=[
            "https://user:password@host.invalid/path\n",
            "redis://:${REDIS_PASSWORD}@cache:6379\n",
        ],
    ),
    "url-token": Case(
        CONTEXT,
        hits=[
            (
                f'sentry_sdk.init("https://{_sentry}@o1.ingest.sentry.io/2")\n',
                _sentry,
                "sentry-key",
            ),
            (
                f"git clone https://{(gt := random_key(24))}@git.fake-host.dev/a/b.git\n",
                gt,
                "url-token",
            ),
        ],
        near=[
            "git clone ssh://git@github.com/a/b.git\n",
            "https://examplePublicKey@o0.ingest.sentry.io/0\n",
            "mailto://john.doe.smithers@example.com\n",
        ],
    ),
    "env-secret": Case(
        ENTROPY,
        hits=[(f"SESSION_SIGNING={(es := random_key(40, URLSAFE))}\n", es, "env-secret")],
        near=[
            "DATABASE_URL=http://localhost:5432/app\n",
            "NODE_OPTIONS=--max-old-space-size=4096\n",
        ],
    ),
    "kubeconfig-client-key": Case(
        PROVIDER,
        gated=True,
        hits=[
            (
                f"    client-key-data: {(kd := random_key(60, B64))}\n",
                kd,
                "kubeconfig-client-key",
            )
        ],
        near=["    client-key-data: short\n"],
    ),
    "authorization": Case(
        CONTEXT,
        gated=True,
        hits=[
            (
                f'curl -H "Authorization: Basic {(bh := random_key(32, B64))}" $URL\n',
                bh,
                "authorization",
            )
        ],
        near=['headers = {"Authorization": auth_header}\n'],
    ),
    "bearer-token": Case(
        CONTEXT,
        gated=True,
        hits=[(f'header_line = "Bearer {(bt := random_key(36))}"\n', bt, "bearer-token")],
        near=['"Bearer " + token\n', "return Bearer(token_getter())\n"],
    ),
    "api-key": Case(
        CONTEXT,
        gated=True,
        hits=[(f"curl -H 'X-Api-Key: {(ak := random_key(32))}' $URL\n", ak, "api-key")],
        near=["headers = {'x-api-key': self.api_key}\n"],
    ),
    "auth-tuple": Case(
        CONTEXT,
        gated=True,
        hits=[
            (
                f'requests.get(URL, auth=("deploy", "{(tp := "tuple-" + random_key(12))}"))\n',
                tp,
                "password",
            )
        ],
        near=["requests.get(URL, auth=(user, password))\n", 'auth=("u", "${PASS}")\n'],
    ),
    "keyword-assignment": Case(
        KEYWORD,
        gated=True,
        hits=[
            (f'DB_PASSWORD = "{(kp := "Sw0rd-" + random_key(10))}"\n', kp, "password"),
            (f"  pass: {(yp := 'Tr0ub4dor&3')}\n", yp, "password"),
            (f"SIGNING_SECRET_KEY = {(ck := 'Q' + random_key(35))}\n", ck, "secret"),
        ],
        near=[
            "password_hash = hash_password(secret)\n",
            "token = get_token()\n",
            "password: HttpClient\n",
        ],
    ),
    # -- file_rules.py ---------------------------------------------------------------------------
    "netrc-machine": Case(
        CONTEXT,
        hits=[
            (
                f"machine h.example login ci password {(np := 'Nr' + random_key(12))}\n",
                np,
                "password",
            ),
            (
                f"machine h.example\n  login ci\n  password {(np2 := 'x7' + rand(6))}\n",
                np2,
                "password",
            ),
            (
                f"machine h.example password {(np3 := 'Pz' + random_key(8))} login ci\n",
                np3,
                "password",
            ),
        ],
        near=[
            "the machine learning password reset flow\n",
            "machine h.example password hunter2\n",  # no login: not a netrc entry
            "`machine h login u password p`, on one line\n",
        ],
    ),
    "netrc-default": Case(
        CONTEXT,
        hits=[
            (
                f"default login anonymous password {(dp := 'Df' + random_key(10))}\n",
                dp,
                "password",
            )
        ],
        near=["the default password is set on first login\n"],
    ),
    "xml-element": Case(
        KEYWORD,
        gated=True,
        hits=[
            (f"    <password>{(xp := 'Xm1-' + random_key(12))}</password>\n", xp, "password"),
            (f"<ns:apiToken>{(xt := random_key(32))}</ns:apiToken>\n", xt, "token"),
        ],
        near=[
            "<passwordPolicy>strict-mode-on</passwordPolicy>\n",
            "<password>${DB_PASSWORD}</password>\n",
            "<tokenType>bearer</tokenType>\n",
            "<privateKey>/path/to/private/key</privateKey>\n",
        ],
    ),
    "xml-setting": Case(
        KEYWORD,
        gated=True,
        hits=[
            (
                f'<add key="SmtpPassword" value="{(xs := "Sm7p-" + random_key(10))}" />\n',
                xs,
                "password",
            ),
            (
                f"<property name='db.password' value='{(xs2 := 'Pr0p-' + random_key(8))}'/>\n",
                xs2,
                "password",
            ),
        ],
        near=[
            '<add key="SmtpHost" value="mail.example.com" />\n',
            '<add key="PasswordLength" value="12" />\n',
        ],
    ),
    "libpq-password": Case(
        CONTEXT,
        gated=True,
        hits=[
            ('conn = connect("host=db password=hunter dbname=app")\n', "hunter", "password"),
            (
                f"DSN = \"host=r user=ro password='{(lq := 'Lq ' + random_key(10))}'\"\n",
                lq,
                "password",
            ),
        ],
        near=[
            "connect(user='app', password=os.environ['PW'])\n",
            "f(host=h, password=pw)\n",
            '"host=x password=%s dbname=y" % pw\n',
        ],
    ),
    "gcp-private-key-id": Case(
        CONTEXT,
        gated=True,
        hits=[(f'  "private_key_id": "{(gk := rand(40, HEX))}",\n', gk, "gcp-private-key-id")],
        near=['  "private_key_id": "abc",\n', 'key_id = info["private_key_id"]\n'],
    ),
    "config-value": Case(
        KEYWORD,
        gated=True,
        hits=[
            (f"SECRET_KEY={_django}\n", _django, "secret"),
            (f"  pass: {(tl := '~' + random_key(12))}\n", tl, "password"),
            (f"app.conf:3: SECRET_KEY={_django}\n", _django, "secret"),
        ],
        near=[
            "SECRET_KEY = get_random_secret_key()\n",
            "  password: this.password,\n",
            "hook_call_pass = ast.Expr(\n",
            "access_key = ConfigValue(credentials.access_key,\n",
            "password: hashedPassword!\n",
            "SECRET_KEY=${SECRET_KEY}\n",
            "private_key: /etc/ssl/private/key.pem\n",
        ],
    ),
}


def _fill_url_cases() -> None:
    text, _, kind = CASES["slack-webhook"].hits[0]
    secret = text.split("hooks.slack.com/", 1)[1].strip()
    CASES["slack-webhook"].hits[0] = (text, secret, kind)
    text, _, kind = CASES["discord-webhook"].hits[0]
    secret = text.split("/api/webhooks/", 1)[1].strip()
    CASES["discord-webhook"].hits[0] = (text, secret, kind)


_fill_url_cases()
ALL_ALNUM = ALNUM  # re-exported for the tests' own generated values
