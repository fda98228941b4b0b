"""Ordinary code is not a secret: the checks that keep the rules' false positives out.

`token = get_token()`, `max_tokens = 100`, `password: str`, `"${DB_PASSWORD}"`, an example
value (`your-api-key`, `<token>`, `****`), a long identifier or a docstring stay readable;
`password = "hunter2"` and a random-looking key do not. Shared by the context rules
(context_rules.py) and detect-secrets' keyword detector (plugins.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Final

from redline.redaction.rule import CONTEXT, KEYWORD


def wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(text)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


_LOWER_RUN: Final = re.compile(r"[a-z]{8,}")
_HEX: Final = frozenset("0123456789abcdefABCDEF")


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


TEMPLATED: Final = re.compile(
    r"""^(?:
        \$\{[^}]*\}  | \{\{.*\}\} | \{%.*%\} | <[^<>]*> | %\(?\w*\)?[sd] | \$[A-Za-z_]\w*
      | \{[A-Za-z_][\w.]*\} | %[A-Za-z_]+% | \#\{[^}]*\} | \$\(.*\)
    )$""",
    re.VERBOSE,
)
# Example values, not secrets: "your-api-key", "my_token", "<token>", "xxxx", "glpat_***".
EXAMPLE: Final = re.compile(
    r"(?i)^(?:your|my)[-_ ](?:[a-z]+[-_ ])*(?:api[-_ ]?)?(?:key|token|secret|password|pass|pwd)s?$"
    r"|^(?:example|placeholder|dummy|sample|changeme|redacted)\b|\*\*\*|^x{4,}"
)
NOT_SECRETS: Final = wordset(
    """none null nil true false undefined yes no on off required optional empty default
    unset changeit redacted hidden masked secret password passwd token xxx lambda function
    new await async return self this def class fn func not and or is in if else"""
)
FILLER: Final = frozenset("*xX.#-_•?")
_INTERPOLATION: Final = re.compile(r"\{[A-Za-z_][\w.]*\}|\$\{")  # f"{value}s", `${x}`
_NUMBER: Final = re.compile(r"[-+]?\d[\d_]*(?:\.\d+)?(?:[eE][-+]?\d+)?[jJlLuUfF]?")
_CONSTANT_NAME: Final = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # "SECRET_KEY": a name
_PROSE: Final = re.compile(r"[A-Za-z]{2,}[,.]? [A-Za-z]{2,}[,.]? [A-Za-z]{2,}")  # 3 words
# Another word after an unquoted value (not `name=`): a docstring or comment, not a setting.
_PROSE_AFTER: Final = re.compile(r"[ \t]+[A-Za-z(](?![\w.\-]*=)")
IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH: Final = re.compile(r"(?:~|\.{1,2})?/(?:[\w.\-]+/)*[\w.\-]+")
_WORD_ONLY: Final = re.compile(r"[A-Za-z]+")
_JOINED_WORDS: Final = re.compile(r"[a-z]+(?:[-_. ][a-z]+)+")  # "azure_ad_token", "any-value"
_CLASS_NAME: Final = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Z]\w*\[.*\](?: \| None)?")
# Words a passphrase of random dictionary words (`correct horse battery staple`) has no use for
# and a sentence (`enter your new password here`) cannot do without.
_PASSPHRASE: Final = re.compile(r"[a-z]{3,}(?:[ \-][a-z]{3,}){3,}")
_STOPWORDS: Final = wordset(
    """the and for with your you are not must please enter new this that from here into
    our their its has have was were will can may should type choose"""
)
DOTTED: Final = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->|\?\.)[A-Za-z_$][\w$]*)+[!?]?")
_TYPES: Final = wordset(
    """str string bytes bytearray int integer float bool boolean number char object any
    unknown void secretstr secretbytes text varchar binary blob uuid list dict optional"""
)
_ENV_LINE: Final = re.compile(r"[ \t\d+|\-]*(?:export[ \t]+)?[A-Z][A-Z0-9_]*=[^ ]")
_PASSWORD_WORDS: Final = frozenset(
    ("password", "passwords", "passwd", "pwd", "pass", "passphrase", "pin")
)
_DIGEST_WORDS: Final = wordset(
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


_KEY_OWNERS: Final = wordset(
    """api access secret private priv signing encryption session master client auth account
    service db database storage app consumer ssh license webhook hmac jwt"""
)
_TRAILING: Final = wordset("value str string b64 base64 hex raw plain enc v")
_KEYWORD_WORDS: Final = wordset("token secret secrets credential credentials")


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
    if len(v) < 3 or v.lower() in NOT_SECRETS or set(v) <= FILLER:
        return False
    if TEMPLATED.match(v) or EXAMPLE.search(v) or _INTERPOLATION.search(v) or "[REDACTED" in v:
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
        if _CONSTANT_NAME.fullmatch(v) or (_PROSE.search(v) and not (password and passphrase(v))):
            return False  # "OPENAI_API_KEY" (a name), "Password is too short" (a message)
        return not (op == ":" and class_name(v))  # token: "Token[str]"
    if _NUMBER.fullmatch(v):
        # `max_tokens = 100` is code; `password: 123456` is a (bad) password.
        return password and sum(c.isdigit() for c in v) >= 4
    if v[0] in "([{$%@&*!<\\:~`" or any(c in v for c in "([{`"):
        return False  # a call, an index, a template, a reference
    if _PATH.fullmatch(v) and not looks_random(v, min_entropy=3.0):
        return False  # private_key: /etc/ssl/private/key.pem
    core = v.rstrip("!?") or v  # TypeScript's non-null assertion: `hashedPassword!`
    if DOTTED.fullmatch(core) or v.lower() in _TYPES or class_name(v):
        return False  # self.password, os.environ, password: str, token: Token
    if core != v and IDENT.fullmatch(core) and ("_" in core or not core[1:].islower()):
        return False  # password: hashedPassword!, token: user_token?
    at = line.find(v)
    if at >= 0 and _PROSE_AFTER.match(line, at + len(v)):
        return False  # a docstring or comment: "token: the token to use"
    if IDENT.fullmatch(v):
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


def class_name(value: str) -> bool:
    """`Token`, `HttpClient`, `Sha256Hasher`, `Optional[str]`: a type, not a value. A random
    key can have the same shape (`LpR0GXI0pW83wA`, `Zx81kQ0pLm33`), but its capitals come every
    two characters or so and a third of it is digits; a class name has a capital per word and
    few digits."""
    if not _CLASS_NAME.fullmatch(value):
        return False
    if "[" in value:
        return True
    capitals = sum(c.isupper() for c in value)
    digits = sum(c.isdigit() for c in value)
    return len(value) >= 3 * capitals and 4 * digits <= len(value)


def passphrase(value: str) -> bool:
    """Four or more lower-case words and none a sentence needs: `lagoon tundra dune umber`."""
    return bool(_PASSPHRASE.fullmatch(value)) and not any(
        w in _STOPWORDS for w in re.split(r"[ \-]", value)
    )


def example_value(value: str) -> bool:
    """`<password>`, `${TOKEN}`, `password`, `your-api-key`, `****`: an example, no secret."""
    v = value.strip()
    return (
        len(v) < 3
        or v.lower() in NOT_SECRETS
        or set(v) <= FILLER
        or bool(TEMPLATED.match(v) or EXAMPLE.search(v))
    )


def name_like(value: str) -> bool:
    """An identifier made of words (`_with_portable_cache_control`): code, not a key."""
    return bool(IDENT.fullmatch(value) and _LOWER_RUN.search(value))


def registrable(value: str, rank: int = KEYWORD) -> bool:
    """Whether a found secret is distinctive enough to be masked wherever it appears again — a
    model quoting it, a test using it — without a false positive spreading through the text.

    Not a plain word; an identifier-shaped value (`hunter2`, `e9700252…`) only when it looks
    generated, or when a rule that knows the format found it (a URL's key, a netrc password:
    rank CONTEXT or better) and it holds a digit (`sk_live_`, a split key's prefix, does not)."""
    if len(value) < 6 or _WORD_ONLY.fullmatch(value):
        return False
    if not IDENT.fullmatch(value):
        return True
    if looks_random(value, min_entropy=3.0) or (set(value) <= _HEX and entropy(value) > 3.0):
        return True
    return rank <= CONTEXT and any(c.isdigit() for c in value)
