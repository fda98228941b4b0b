"""Redline's own secret patterns: the fast first pass, and what detect-secrets lacks.

detect-secrets (plugins.py) is the maintained list; these rules cover what it misses or
under-reports (Stripe keys longer than its 24 characters, Slack webhooks' full path, a bare
40-character AWS secret, PuTTY `.ppk` private lines, kubeconfig `client-key-data`, `npm_`
tokens, `auth=("user", "…")`, `pass:`/`pwd` assignments, ...) and the multi-line key blocks,
which its line scanner cannot see whole.

Speed matters (a big diff is megabytes): every ungated pattern starts with a literal, so the
regex engine jumps from one occurrence of that literal to the next; a word boundary before the
literal would defeat that, so `boundary=True` checks the preceding character in Python
instead. Patterns without a literal, or case-insensitive ones, are gated: they run only on the
lines the keyword gate selects (see core.py).

A rule names the secret *value* (a group of the match); the key name around it stays, so the
reviewer still reads `password = "[REDACTED:password:…]"`.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

# Ranks decide the kind shown when detections overlap: the lower, the more specific.
PROVIDER: Final = 0  # a provider's own key format, a private key block
CONTEXT: Final = 1  # a credential position: URL password, Authorization header, auth tuple
KEYWORD: Final = 2  # a value assigned to a secret-sounding name
ENTROPY: Final = 3  # a random-looking string

# The gate that selects lines for case-insensitive and keyword rules. It is applied to the
# lower-cased text and must be a necessary condition for every gated rule (here and in
# plugins.py): each of them needs one of these words on the line.
KEYWORD_GATE: Final = re.compile(
    r"key|pw|pass|token|secret|contrase|credential|auth|bearer|access|cloudant|softlayer"
)


@dataclass(frozen=True)
class Rule:
    """One pattern. `group` is the secret value inside the match (0: the whole match)."""

    kind: str | Callable[[re.Match[str]], str]
    pattern: re.Pattern[str]
    group: int | str = 0
    rank: int = PROVIDER
    boundary: bool = False  # the match must not directly follow a letter, digit or `_`
    check: Callable[[re.Match[str]], bool] | None = None  # False: not a secret after all
    gated: bool = False  # run on the keyword gate's lines only


# -- value heuristics ----------------------------------------------------------------------------


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(text)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


_LOWER_RUN: Final = re.compile(r"[a-z]{8,}")


def looks_random(value: str, *, min_entropy: float) -> bool:
    """Mixed case and digits, high entropy, no long lower-case word: a key, not a name.

    Random base64 of 40 characters has an entropy of 4.35-5.2 and almost never a run of 8
    lower-case letters; a long camelCase identifier or a path has both words and less entropy.
    """
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and not _LOWER_RUN.search(value)
        and entropy(value) >= min_entropy
    )


_TEMPLATED: Final = re.compile(
    r"""^(?:
        \$\{[^}]*\}  | \{\{.*\}\} | \{%.*%\} | <[^<>]*> | %\(?\w*\)?[sd] | \$[A-Za-z_]\w*
      | \{[A-Za-z_][\w.]*\} | %[A-Za-z_]+% | \#\{[^}]*\} | \$\(.*\)
    )$""",
    re.VERBOSE,
)
# Example values, not secrets: "your-api-key", "my_token", "<token>", "xxxx", "glpat_***".
_EXAMPLE: Final = re.compile(
    r"(?i)^(?:your|my)[-_ ](?:[a-z]+[-_ ])*(?:api[-_ ]?)?(?:key|token|secret|password|pass|pwd)s?$"
    r"|^(?:example|placeholder|dummy|sample|changeme|redacted)\b|\*\*\*|^x{4,}"
)
_NOT_SECRETS: Final = _wordset(
    """none null nil true false undefined yes no on off required optional empty default
    unset changeit redacted hidden masked secret password passwd token xxx lambda function
    new await async return self this def class fn func not and or is in if else"""
)
_FILLER: Final = frozenset("*xX.#-_•?")
_INTERPOLATION: Final = re.compile(r"\{[A-Za-z_][\w.]*\}|\$\{")  # f"{value}s", `${x}`
_NUMBER: Final = re.compile(r"[-+]?\d[\d_]*(?:\.\d+)?(?:[eE][-+]?\d+)?[jJlLuUfF]?")
_CONSTANT_NAME: Final = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # "SECRET_KEY": a name
_PROSE: Final = re.compile(r"[A-Za-z]{2,}[,.]? [A-Za-z]{2,}[,.]? [A-Za-z]{2,}")  # 3 words
# Another word after an unquoted value (not `name=`): a docstring or comment, not a setting.
_PROSE_AFTER: Final = re.compile(r"[ \t]+[A-Za-z(](?![\w.\-]*=)")
_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD_ONLY: Final = re.compile(r"[A-Za-z]+")
_JOINED_WORDS: Final = re.compile(r"[a-z]+(?:[-_. ][a-z]+)+")  # "azure_ad_token", "any-value"
_CLASS_NAME: Final = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Z]\w*\[.*\](?: \| None)?")
_DOTTED: Final = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->|\?\.)[A-Za-z_$][\w$]*)+[!?]?")
_TYPES: Final = _wordset(
    """str string bytes bytearray int integer float bool boolean number char object any
    unknown void secretstr secretbytes text varchar binary blob uuid list dict optional"""
)
_ENV_LINE: Final = re.compile(r"[ \t\d+|\-]*(?:export[ \t]+)?[A-Z][A-Z0-9_]*=[^ ]")
_PASSWORD_WORDS: Final = frozenset(
    ("password", "passwords", "passwd", "pwd", "pass", "passphrase", "pin")
)
_DIGEST_WORDS: Final = _wordset(
    """sha sha1 sha256 sha512 hash digest checksum commit revision rev etag md5 integrity
    fingerprint"""
)
_NAME_BEFORE: Final = re.compile(
    r"""([\w.\-]+)["'\]]{0,2}[ \t]*(?::=|=>|==|!=|[:=(])[ \t]*[@rbuf]?["'`]?$"""
)
_WORD: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def name_words(name: str) -> list[str]:
    """`dbPassword_v2` → ["db", "password", "v", "2"], lower-cased."""
    return [w.lower() for w in _WORD.findall(name)]


def name_before(line: str, start: int) -> str:
    """The name a value at `start` is assigned to (`DB_PASSWORD` in `DB_PASSWORD = "…"`)."""
    m = _NAME_BEFORE.search(line, max(0, start - 120), start)
    return m.group(1) if m else ""


def secret_name(name: str) -> bool:
    """The last word of a name (ignoring `_v2`, `_value`, ...) says it holds a secret:
    `db_password`, `GITHUB_TOKEN`, `apiKey`, `client_secret`, `aws_secret_access_key` — not
    `max_tokens`, `password_hash`, `token_type`, `cache_key`, `secret_name`."""
    words = name_words(name)
    while len(words) > 1 and (words[-1] in _TRAILING or words[-1].isdigit()):
        words = words[:-1]
    if not words:
        return False
    last = words[-1]
    if last in ("key", "keys"):
        return len(words) > 1 and words[-2] in _KEY_OWNERS
    return last in _KEYWORD_WORDS or last in _PASSWORD_WORDS or last == "apikey"


_KEY_OWNERS: Final = _wordset(
    """api access secret private priv signing encryption session master client auth account
    service db database storage app consumer ssh license webhook hmac jwt"""
)
_TRAILING: Final = _wordset("value str string b64 base64 hex raw plain enc v")
_KEYWORD_WORDS: Final = _wordset("token secret secrets credential credentials")


def plausible(value: str, *, quoted: bool, line: str, name: str = "", op: str = "") -> bool:
    """Whether a value assigned to a secret-sounding name is a literal secret, not code.

    Keeps code readable: `token = get_token()`, `max_tokens = 100`, `self.token = token`,
    `password: str`, `secret = os.environ["SECRET"]`, `password = "${DB_PASSWORD}"`,
    `api_key_env = "OPENAI_API_KEY"`, `"eos_token": "stop"` and docstrings (`token: the token
    to use`) are left alone; `password = "hunter2"`, `pass: hunter2` (YAML),
    `DB_PASSWORD=correcthorse` (.env) and `password: 123456` are secrets.
    """
    v = value.strip()
    if not quoted:
        v = v.rstrip(",;:.)]}`")
    if len(v) < 3 or v.lower() in _NOT_SECRETS or set(v) <= _FILLER:
        return False
    if _TEMPLATED.match(v) or _EXAMPLE.search(v) or _INTERPOLATION.search(v) or "[REDACTED" in v:
        return False
    words = name_words(name)
    if words and words[-1] in _DIGEST_WORDS:
        return False
    password = bool(words) and any(w in _PASSWORD_WORDS for w in words[-2:])
    # A token, key or secret is long and not a plain word ("stop", "bearer"); a password can
    # be anything.
    if not password and (len(v) < 8 or _WORD_ONLY.fullmatch(v) or _JOINED_WORDS.fullmatch(v)):
        return False
    if quoted:
        if _CONSTANT_NAME.fullmatch(v) or _PROSE.search(v):
            return False  # "OPENAI_API_KEY" (a name), "Password is too short" (a message)
        return not (op == ":" and _CLASS_NAME.fullmatch(v))  # token: "Token[str]"
    if _NUMBER.fullmatch(v):
        # `max_tokens = 100` is code; `password: 123456` is a (bad) password.
        return password and sum(c.isdigit() for c in v) >= 4
    if v[0] in "([{$%@&*!<\\:~`" or any(c in v for c in "([{`"):
        return False  # a call, an index, a template, a reference
    if _DOTTED.fullmatch(v) or v.lower() in _TYPES or _CLASS_NAME.fullmatch(v):
        return False  # self.password, os.environ, password: str, token: Token
    at = line.find(v)
    if at >= 0 and _PROSE_AFTER.match(line, at + len(v)):
        return False  # a docstring or comment: "token: the token to use"
    if _IDENT.fullmatch(v):
        # A bare word: a variable in code, a secret in .env, YAML or INI.
        if words and v.lower() == words[-1]:
            return False  # password = password
        if _ENV_LINE.match(line) or looks_random(v, min_entropy=3.0):
            return True  # DB_PASSWORD=correcthorse, password = ini3ivh0fG8Xhfy
        if "_" in v or any(c.isupper() for c in v[1:]):
            return False  # user_password, newPassword: names
        if v[0].isupper() and not any(c.isdigit() for c in v):
            return False  # password: Final, token: Token (types, classes)
        if any(c.isdigit() for c in v):
            return True  # password = hunter2
        rest = line[at + len(v) :].lstrip() if at >= 0 else ""
        return op == ":" and not rest.startswith((",", ")"))  # pass: hunter (YAML)
    return True


def example_value(value: str) -> bool:
    """`<password>`, `${TOKEN}`, `password`, `your-api-key`, `****`: an example, no secret."""
    v = value.strip()
    return (
        len(v) < 3
        or v.lower() in _NOT_SECRETS
        or set(v) <= _FILLER
        or bool(_TEMPLATED.match(v) or _EXAMPLE.search(v))
    )


def name_like(value: str) -> bool:
    """An identifier made of words (`_with_portable_cache_control`): code, not a key."""
    return bool(_IDENT.fullmatch(value) and _LOWER_RUN.search(value))


def registrable(value: str) -> bool:
    """Whether a found secret is distinctive enough to be masked wherever it appears again
    (not a plain word: a false positive must not spread through the whole text)."""
    return len(value) >= 6 and not _WORD_ONLY.fullmatch(value) and not _IDENT.fullmatch(value)


# -- key blocks --------------------------------------------------------------------------------

# Lines after a key header that are still key material: base64, or `Header: value` lines
# (Proc-Type, DEK-Info, Comment, Encryption, Public-Lines, ...), under any diff/line-number
# prefix or string quoting.
_MATERIAL: Final = re.compile(
    r"""[\s\d+|\-#/*>;,'"]*(?:[A-Za-z0-9+/=]{8,}|[A-Z][A-Za-z0-9-]*:[^\n]*|\\n)[\s'",+\\n]*"""
)
_MAX_BLOCK: Final = 65_536
MARKER: Final = re.compile(
    r"-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}|Private-Lines:[ \t]*\d+"
)


def material_end(text: str, start: int) -> int:
    """End of the key material that follows a key header ending at `start` (no END line)."""
    end = text.find("\n", start)
    end = len(text) if end < 0 else end  # the rest of the header's line (`\n` escapes)
    limit = min(len(text), start + _MAX_BLOCK)
    while end < limit:
        nxt = text.find("\n", end + 1)
        nxt = len(text) if nxt < 0 else nxt
        if not _MATERIAL.fullmatch(text, end + 1, nxt):
            break
        end = nxt
    return end


def _b64_private_key(m: re.Match[str]) -> bool:
    head = m.group()[:96]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head[: len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return False


def _aws_secret(m: re.Match[str]) -> bool:
    text, start, end = m.string, m.start(), m.end()
    value = m.group()
    if (start and text[start - 1] in "._-:@\\") or (end < len(text) and text[end] in "._-@\\"):
        return False  # part of a URL, path or identifier
    return value.count("/") <= 3 and looks_random(value, min_entropy=4.2)


def _not_templated(group: str) -> Callable[[re.Match[str]], bool]:
    def check(m: re.Match[str]) -> bool:
        v = m.group(group)
        if len(v) < 3 or v.lower() in _NOT_SECRETS or v.lower() in ("pass", "pwd", "pw"):
            return False  # scheme://user:pass@host
        if _EXAMPLE.search(v):
            return False  # scheme://user:pass@host, a documented example
        return not (_TEMPLATED.match(v) or set(v) <= _FILLER or v.startswith(("$", "{", "%")))

    return check


_SCHEMES: Final = _wordset("bearer basic token digest bot apikey sso-key negotiate")


def _header_value(m: re.Match[str]) -> bool:
    """A credential in a header, not the variable that holds it (`"x-api-key": self.api_key`,
    `"Authorization": auth_header`). After a scheme word (`Bearer abc.def`) it is a credential."""
    v = m.group("v")
    bare = re.sub(r"(?i)(%20|\+)$", "", v).lower()
    if bare in _SCHEMES or _TEMPLATED.match(v) or _EXAMPLE.search(v) or set(v) <= _FILLER:
        return False
    if m.groupdict().get("scheme"):
        return True
    if _DOTTED.fullmatch(v):
        return False  # self.api_key
    # auth_header, argillaApiKey: a variable (a random token has digits).
    return not (_IDENT.fullmatch(v) and not any(c.isdigit() for c in v))


def _env_secret(m: re.Match[str]) -> bool:
    value = m.group("v")
    if _TEMPLATED.match(value) or value.startswith(("$", "/", "./", "http")):
        return False
    if all(c in "0123456789abcdefABCDEF" for c in value):
        return entropy(value) > 3.0
    return looks_random(value, min_entropy=4.0)


def _assigned(m: re.Match[str]) -> bool:
    """A keyword assignment whose value is a literal secret (see `plausible`)."""
    name = _name(m)
    if not secret_name(name):
        return False
    text = m.string
    line_start = text.rfind("\n", 0, m.start()) + 1
    line_end = text.find("\n", m.end())
    line = text[line_start : len(text) if line_end < 0 else line_end]
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


# -- the rules -----------------------------------------------------------------------------------

_P = re.compile


def _prefixed(kind: str, prefixes: tuple[str, ...], body: str, **kw: object) -> list[Rule]:
    """One rule per literal prefix (an alternation would lose the literal-prefix search)."""
    return [Rule(kind, _P(re.escape(p) + body), boundary=True, **kw) for p in prefixes]  # type: ignore[arg-type]


@functools.cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, compiled on first use (importing this module must stay cheap: the language
    server's log filter imports it at start-up)."""
    return (
        # Private keys: the whole block between the BEGIN and END lines (those stay readable).
        Rule(
            "private-key",
            _P(
                r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?P<v>.{1,65536}?)"
                r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
                re.DOTALL,
            ),
            group="v",
        ),
        Rule(
            "private-key",
            _P(
                r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----(?P<v>.{1,65536}?)"
                r"---- END SSH2 ENCRYPTED PRIVATE KEY ----",
                re.DOTALL,
            ),
            group="v",
        ),
        # PuTTY .ppk: the private lines and their MAC (the public lines are public).
        Rule(
            "putty-private-key",
            _P(
                r"Private-Lines:[ \t]*\d+[ \t]*\r?\n"
                r"(?P<v>.{1,65536}?Private-MAC:[ \t]*[0-9a-fA-F]+)",
                re.DOTALL,
            ),
            group="v",
        ),
        # A PEM private key, base64-encoded again (kubeconfig, Kubernetes secrets, CI variables).
        Rule("private-key", _P(r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]{20,}"), check=_b64_private_key),
        *_prefixed(
            "aws-access-key-id",
            ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
            r"[A-Z0-9]{16,17}(?![A-Z0-9])",
        ),
        *_prefixed(
            "stripe-key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_"), r"[0-9a-zA-Z]{10,}"
        ),
        *_prefixed("stripe-webhook-secret", ("whsec_",), r"[A-Za-z0-9+/=]{20,}"),
        Rule(
            "slack-webhook",
            _P(r"hooks\.slack\.com/(?P<v>(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{10,})"),
            group="v",
        ),
        *_prefixed(
            "slack-token",
            ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"),
            r"[A-Za-z0-9\-]{10,}",
        ),
        *_prefixed("slack-token", ("xapp-",), r"\d-[A-Za-z0-9\-]{10,}"),
        Rule("discord-webhook", _P(r"/api/webhooks/(?P<v>\d{5,}/[A-Za-z0-9_\-]{20,})"), group="v"),
        *_prefixed("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"[A-Za-z0-9]{30,}"),
        *_prefixed("github-token", ("github_pat_",), r"[A-Za-z0-9_]{30,}"),
        *_prefixed(
            "gitlab-token",
            (
                "glpat-",
                "gldt-",
                "glft-",
                "glsoat-",
                "glrt-",
                "glcbt-",
                "glimt-",
                "glptt-",
                "glagent-",
                "gloas-",
            ),
            r"[A-Za-z0-9_\-]{20,}",
        ),
        *_prefixed("npm-token", ("npm_",), r"[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
        *_prefixed("pypi-token", ("pypi-",), r"[A-Za-z0-9_\-]{50,}"),
        *_prefixed("anthropic-key", ("sk-ant-",), r"[A-Za-z0-9_\-]{20,}"),
        *_prefixed("openai-key", ("sk-",), r"[A-Za-z0-9_\-]{20,}"),  # OpenAI, OpenRouter, DeepSeek
        *_prefixed("google-api-key", ("AIza",), r"[0-9A-Za-z_\-]{35}"),
        *_prefixed("google-oauth-secret", ("GOCSPX-",), r"[A-Za-z0-9_\-]{20,}"),
        *_prefixed("huggingface-token", ("hf_",), r"[A-Za-z0-9]{30,}"),
        *_prefixed("square-token", ("sq0atp-", "sq0csp-"), r"[0-9A-Za-z_\-]{22,}"),
        *_prefixed("sendgrid-key", ("SG.",), r"[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
        *_prefixed("jwt", ("eyJ",), r"[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
        Rule("azure-storage-key", _P(r"AccountKey=(?P<v>[A-Za-z0-9+/=]{20,})"), group="v"),
        Rule("azure-storage-key", _P(r"SharedAccessKey=(?P<v>[A-Za-z0-9+/=]{20,})"), group="v"),
        Rule("azure-sas-signature", _P(r"sig=(?P<v>[A-Za-z0-9%+/=]{20,})"), group="v"),
        # scheme://user:password@host (DSNs of every database, basic-auth URLs).
        Rule(
            "url-password",
            _P(r"""://(?P<user>[^/\s:@'"<>]*):(?P<v>[^@\s/'"<>]+)@"""),
            group="v",
            rank=CONTEXT,
            check=_not_templated("v"),
        ),
        # A bare AWS secret access key: 40 base64 characters that look random.
        Rule(
            "aws-secret-key",
            _P(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
            rank=CONTEXT,
            check=_aws_secret,
        ),
        # .env / shell: NAME=<random-looking value> (quoted values are the entropy plugins' job).
        Rule(
            "env-secret",
            _P(r"(?m)^[ \t\d+|\-]*(?:export[ \t]+)?[A-Z][A-Z0-9_]{2,}=(?P<v>[^\s'\"#\\]{16,})"),
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
        ),
        Rule(
            _kind_of_name,
            _KEYWORD_ASSIGNMENT,
            group="dqv",  # resolved by `value_span`
            rank=KEYWORD,
            gated=True,
            check=_assigned,
        ),
    )


def value_span(rule: Rule, m: re.Match[str]) -> tuple[int, int]:
    """Where the secret value of a match is."""
    if rule.group == "dqv":
        for g in ("dq", "sq", "bq", "bare"):
            if m.group(g) is not None:
                return m.span(g)
    return m.span(rule.group)
