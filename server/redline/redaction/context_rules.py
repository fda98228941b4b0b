"""Secrets found by where they stand: URL passwords (DSNs), `.env` values and — on the
keyword gate's lines only — Authorization headers, `auth=("user", "…")` tuples and values
assigned to secret-named keys (`pass:`/`pwd`/`DB_PASSWORD = …`).

Each rule's check asks code_filter.py whether the value is a literal secret or ordinary code.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Final

from redline.redaction.code_filter import (
    DOTTED,
    EXAMPLE,
    FILLER,
    IDENT,
    NOT_SECRETS,
    TEMPLATED,
    entropy,
    looks_random,
    name_words,
    plausible,
    secret_name,
    wordset,
)
from redline.redaction.rule import CONTEXT, ENTROPY, KEYWORD, Rule
from redline.redaction.spans import line_of


def _not_templated(group: str) -> Callable[[re.Match[str]], bool]:
    def check(m: re.Match[str]) -> bool:
        v = m.group(group)
        if len(v) < 3 or v.lower() in NOT_SECRETS or v.lower() in ("pass", "pwd", "pw"):
            return False  # scheme://user:pass@host
        if EXAMPLE.search(v):
            return False  # scheme://user:pass@host, a documented example
        return not (TEMPLATED.match(v) or set(v) <= FILLER or v.startswith(("$", "{", "%")))

    return check


def _url_token(m: re.Match[str]) -> bool:
    """A random user name is a key (`https://<32 hex>@o1.ingest.sentry.io/2`); a name made of
    words or an e-mail's local part is not."""
    v = m.group("v")
    if all(c in "0123456789abcdefABCDEF" for c in v):
        return entropy(v) > 3.0
    return looks_random(v, min_entropy=3.5)


def _url_token_kind(m: re.Match[str]) -> str:
    return "sentry-key" if "sentry" in m.group("host").lower() else "url-token"


_SCHEMES: Final = wordset("bearer basic token digest bot apikey sso-key negotiate")


def _header_value(m: re.Match[str]) -> bool:
    """A credential in a header, not the variable that holds it (`"x-api-key": self.api_key`,
    `"Authorization": auth_header`). After a scheme word (`Bearer abc.def`) it is a credential."""
    v = m.group("v")
    bare = re.sub(r"(?i)(%20|\+)$", "", v).lower()
    if bare in _SCHEMES or TEMPLATED.match(v) or EXAMPLE.search(v) or set(v) <= FILLER:
        return False
    if m.groupdict().get("scheme"):
        return True
    if DOTTED.fullmatch(v):
        return False  # self.api_key
    # auth_header, argillaApiKey: a variable (a random token has digits).
    return not (IDENT.fullmatch(v) and not any(c.isdigit() for c in v))


def _env_secret(m: re.Match[str]) -> bool:
    value = m.group("v")
    if TEMPLATED.match(value) or value.startswith(("$", "/", "./", "http")):
        return False
    if all(c in "0123456789abcdefABCDEF" for c in value):
        return entropy(value) > 3.0
    return looks_random(value, min_entropy=random_bar(len(value)))


def random_bar(length: int) -> float:
    """The entropy a random value of `length` characters reaches: 4 bits where it can, less for a
    short one. n characters hold at most log2(n) bits each, so a flat 4.0 let through 89 % of
    random 16-character keys (only all-distinct ones reach 4.0) and 35 % of 20-character ones;
    log2(n) - 0.8 is below 99 % of random base62 values of each length."""
    return min(4.0, math.log2(max(length, 1)) - 0.8)


def _assigned(m: re.Match[str]) -> bool:
    """A keyword assignment whose value is a literal secret (see `plausible`)."""
    name = _name(m)
    if not secret_name(name):
        return False
    text = m.string
    line = line_of(text, m.start(), m.end())
    quoted = m.group("bare") is None
    if not quoted and m.end() < len(text) and text[m.end()] in "(.[":
        return False  # token = b64encode(...), secret = settings.x: code, not a literal
    return plausible(_value(m), quoted=quoted, line=line, name=name, op=m.group("op"))


def _value(m: re.Match[str]) -> str:
    return next(v for v in (m.group("dq"), m.group("sq"), m.group("bq"), m.group("bare")) if v)


def keyword_kind(name: str) -> str:
    words = name_words(name)
    for w in reversed(words):
        if w in ("password", "passwords", "passwd", "pwd", "pass", "passphrase", "pin"):
            return "password"
        if w in ("token", "tokens"):
            return "token"
        if w in ("credential", "credentials"):
            return "credential"
        if w in ("secret", "secrets"):
            return "secret"
        if w in ("apikey", "api"):
            return "api-key"
    return "secret-key" if words and words[-1] in ("key", "keys") else "secret"


def _kind_of_name(m: re.Match[str]) -> str:
    return keyword_kind(_name(m))


# Starts at the keyword (a pattern starting with an optional name would be tried at every
# position of the text); the rest of the name is found by `_name`.
_KEYWORD_ASSIGNMENT: Final = re.compile(
    r"""(?ix)
    (?:key|secret|token|pass|pwd|credential)(?P<tail>[\w.\-]{0,64})
    ["'\]]{0,2}[ \t]*
    (?P<op>:=|=>|==|!=|[:=])[ \t]*
    (?:@|[rbuf]{1,2}(?=["']))?
    (?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|`(?P<bq>[^`\n]+)`|(?P<bare>[^\s,;'"`(){}\[\]<>\\]+))
    """
)
_NAME_CHAR: Final = re.compile(r"[\w.\-]")


def _name(m: re.Match[str]) -> str:
    """The whole name a keyword assignment assigns to: `db_password` for `pass` + `word`."""
    text, start = m.string, m.start()
    lo = start
    while lo > start - 64 and lo > 0 and _NAME_CHAR.match(text[lo - 1]):
        lo -= 1
    return text[lo : m.start("tail")] + m.group("tail")


_P = re.compile


def context_rules() -> tuple[Rule, ...]:
    """The context and keyword rules, compiled on each call (detection.py caches them)."""
    return (
        # scheme://user:password@host (DSNs of every database, basic-auth URLs).
        Rule(
            "url-password",
            _P(r"""://(?P<user>[^/\s:@'"<>]*):(?P<v>[^@\s/'"<>]+)@"""),
            group="v",
            rank=CONTEXT,
            check=_not_templated("v"),
        ),
        # scheme://<token>@host: a key as the URL's user (Sentry DSNs, tokens in clone URLs).
        Rule(
            _url_token_kind,
            _P(r"://(?P<v>[A-Za-z0-9_\-.~%]{16,256})@(?P<host>[A-Za-z0-9.\-]{1,253})"),
            group="v",
            rank=CONTEXT,
            check=_url_token,
            name="url-token",
        ),
        # .env / shell: NAME=<random-looking value> (quoted values are the entropy plugins' job),
        # also as a grep hit (`app.conf:3: NAME=…`, what search_callers shows).
        Rule(
            "env-secret",
            _P(
                r"(?m)^(?:[^\s:]{1,256}:\d+:)?[ \t\d+|\-]*(?:export[ \t]+)?"
                r"[A-Z][A-Z0-9_]{2,}=(?P<v>[^\s'\"#\\]{16,})"
            ),
            group="v",
            rank=ENTROPY,
            check=_env_secret,
        ),
        # -- gated: on lines with a secret-sounding word only -----------------------------------
        Rule(
            "kubeconfig-client-key",
            _P(r"""(?i)client-key-data["']?[ \t]*[:=][ \t]*["']?(?P<v>[A-Za-z0-9+/=]{16,})"""),
            group="v",
            gated=True,
        ),
        Rule(
            "authorization",
            _P(
                r"""(?i)(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?"""
                r"(?P<scheme>(?:bearer|basic|token|digest|bot|apikey|sso-key)[ \t]+)?"
                r"(?P<v>[A-Za-z0-9\-._~+/=:%]{6,})(?![\w.]*\()"
            ),
            group="v",
            rank=CONTEXT,
            gated=True,
            check=_header_value,
        ),
        Rule(
            "bearer-token",
            _P(r"(?i)(?P<scheme>bearer[ \t]+)(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)(?![\w.]*\()"),
            group="v",
            rank=CONTEXT,
            gated=True,
            check=_header_value,
        ),
        Rule(
            "api-key",
            _P(
                r"""(?i)(?:x-api-key|api-key|x-auth-token|private-token|x-access-token|x-apikey)"""
                r"""["']?[ \t]*[:=][ \t]*["']?(?P<v>[A-Za-z0-9\-._~+/=]{8,})(?![\w.]*\()"""
            ),
            group="v",
            rank=CONTEXT,
            gated=True,
            check=_header_value,
        ),
        # requests' auth=("user", "password"), HTTPBasicAuth("user", "password"), aiohttp BasicAuth.
        Rule(
            "password",
            _P(
                r"""(?:\bauth[ \t]*=[ \t]*[(\[]"""
                r"""|(?:HTTPBasicAuth|HTTPDigestAuth|BasicAuth|DigestAuth)\()"""
                r"""[ \t]*(?:[rbuf]?(?P<q1>["'])[^"'\n]*(?P=q1)|[\w.\[\]"']+)[ \t]*,[ \t]*"""
                r"""[rbuf]?(?P<q>["'])(?P<v>[^"'\n]+)(?P=q)"""
            ),
            group="v",
            rank=CONTEXT,
            gated=True,
            check=_not_templated("v"),
            name="auth-tuple",
        ),
        Rule(
            _kind_of_name,
            _KEYWORD_ASSIGNMENT,
            group="dqv",  # resolved by `value_span`
            rank=KEYWORD,
            gated=True,
            check=_assigned,
            name="keyword-assignment",
        ),
    )
