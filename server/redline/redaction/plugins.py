"""detect-secrets, configured in code: its provider plugins, keyword and entropy detectors.

Nothing here reads a `.secrets.baseline`, detect-secrets' settings or any file of the reviewed
repository (its custom-plugin loading goes through those settings, so plugins are listed from
the installed package instead), and no plugin's `verify` is ever called: verification sends the
candidate secret to the provider's API. Only the patterns and the pure checks are used.

detect-secrets scans line by line, calling every plugin on every line, which costs seconds on a
big diff. Here each regex plugin's denylist runs once over the whole text (they are line-free
patterns), the slow ones only over the lines a cheap gate selects, the keyword detector only on
lines that hold one of its keywords (cached per distinct line), and the entropy detectors'
quoted-string pattern once over the whole text, computing entropy only for strings long enough
to pass the limit.

Imported on first use (detect-secrets pulls in `requests`: ~0.2 s), never at start-up.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import logging
import pkgutil
import re
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from redline.redaction.code_filter import (
    example_value,
    name_before,
    name_like,
    plausible,
    secret_name,
)
from redline.redaction.context_rules import keyword_kind
from redline.redaction.rule import CONTEXT, ENTROPY, KEYWORD
from redline.redaction.spans import line_of

log = logging.getLogger(__name__)

# detect-secrets' secret types, as placeholder kinds. A plugin added in a later version gets a
# kind made from its type ("Foo Bar Token" → "foo-bar-token").
_KINDS: Final = {
    "AWS Access Key": "aws-key",
    "Artifactory Credentials": "artifactory-token",
    "Azure Storage Account access key": "azure-storage-key",
    "Basic Auth Credentials": "url-password",
    "Cloudant Credentials": "cloudant-credentials",
    "Discord Bot Token": "discord-token",
    "GitHub Token": "github-token",
    "GitLab Token": "gitlab-token",
    "IBM Cloud IAM Key": "ibm-cloud-iam-key",
    "IBM COS HMAC Credentials": "ibm-cos-hmac-key",
    "JSON Web Token": "jwt",
    "Mailchimp Access Key": "mailchimp-key",
    "NPM tokens": "npm-token",
    "OpenAI Token": "openai-key",
    "PyPI Token": "pypi-token",
    "SendGrid API Key": "sendgrid-key",
    "Slack Token": "slack-token",
    "SoftLayer Credentials": "softlayer-key",
    "Square OAuth Secret": "square-secret",
    "Stripe Access Key": "stripe-key",
    "Telegram Bot Token": "telegram-token",
    "Twilio API Key": "twilio-key",
}
# Not secrets, or handled elsewhere: public IPs are no secret and masking them would hide
# what a reviewer needs; private-key markers are matched as whole blocks by provider_rules.py.
_SKIP: Final = frozenset({"IPPublicDetector", "PrivateKeyDetector"})
# Plugins whose patterns have no literal prefix (or are case-insensitive with optional
# prefixes): run only on lines their gate selects. "keyword" is rules.KEYWORD_GATE; every
# pattern of these plugins needs key|pw|pass|token (or cloudant/softlayer in their URL forms).
_GATES: Final[dict[str, str | re.Pattern[str]]] = {
    "CloudantDetector": "keyword",
    "IbmCloudIamDetector": "keyword",
    "IbmCosHmacDetector": "keyword",
    "SoftlayerDetector": "keyword",
    "ArtifactoryDetector": re.compile(r"AKC|AP[\dA-F]"),
    "MailchimpDetector": re.compile(r"-us\d"),
    # `//.+/:_authToken=`: `.+` runs to the end of the line from every `//` (minified code).
    "NpmDetector": re.compile(r"_authToken"),
}
_MIN_B64: Final = 23  # entropy ≤ log2(length): shorter strings can never pass 4.5 bits
_MIN_HEX: Final = 9  # ... nor 3.0 bits
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_LONG_LINE: Final = 2048
_WINDOW: Final = 256
_TOKEN: Final = re.compile(r"[^\s,;)\]}\\'\"`]+")


def kind_of(secret_type: str) -> str:
    return _KINDS.get(secret_type) or re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


@dataclass(frozen=True)
class RegexPlugin:
    """One detect-secrets regex plugin: its denylist, as detect-secrets applies it."""

    name: str
    kind: str
    patterns: tuple[re.Pattern[str], ...]
    gate: str | re.Pattern[str] | None
    confirm: Callable[[str], bool] | None  # the plugin's own extra check (JWT validity)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        for pattern in self.patterns:
            for m in pattern.finditer(text):
                groups = [i for i in range(1, (pattern.groups or 0) + 1) if m.group(i)]
                # As detect-secrets' findall: every non-empty group, else the whole match
                # (minus the delimiters some patterns include: whitespace, quotes, = and :),
                # widened to the whole token it is part of: a fixed-length pattern (Discord's
                # 27 characters of a 38-character HMAC, Stripe's 24) must not leave the rest.
                found = [m.span(i) for i in groups] or [whole_token(text, *_trim(text, *m.span()))]
                for start, end in found:
                    value = text[start:end]
                    if (
                        end > start
                        and not example_value(value)
                        and (self.confirm is None or self.confirm(value))
                    ):
                        yield start, end


_TOKEN_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_MAX_TOKEN: Final = 256  # no key is longer; a longer run is a blob a pattern matched inside


def whole_token(text: str, start: int, end: int) -> tuple[int, int]:
    """`start:end` widened over the letters, digits, `_` and `-` that touch it on either side,
    when the token they make is at most 256 characters (else `start:end` as it is)."""
    if end <= start:
        return start, end
    lo, hi = start, end
    floor = max(0, end - _MAX_TOKEN - 1)
    while lo > floor and text[lo - 1] in _TOKEN_CHARS:
        lo -= 1
    ceiling = min(len(text), lo + _MAX_TOKEN + 1)
    while hi < ceiling and text[hi] in _TOKEN_CHARS:
        hi += 1
    if hi - lo > _MAX_TOKEN:
        return start, end
    return lo, hi


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " \t\r\n\"'=:":
        start += 1
    while end > start and text[end - 1] in " \t\r\n\"'=:":
        end -= 1
    return start, end


class _Inert(types.ModuleType):
    """A stand-in for `requests` while detect-secrets loads: every attribute is an empty class."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {})


@contextlib.contextmanager
def _inert_requests() -> Iterator[None]:
    """detect-secrets imports `requests` only to *verify* a secret it found, by sending it to
    the provider — a network call carrying the secret, which Redline never makes (it masks).
    That import is ~70 ms of a ~300 ms offline review, so while the plugins load, `requests`
    is an inert stand-in, and their verification path cannot work even by mistake. Only when
    nothing imported `requests` before, and only for a process that imports nothing needing
    it meanwhile (the caller's promise: an offline CLI review, where litellm never loads);
    removed afterwards, so a later `import requests` loads the real one."""
    if "requests" in sys.modules:
        yield
        return
    stand_in = _Inert("requests")
    sys.modules["requests"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("requests") is stand_in:
            del sys.modules["requests"]


class DetectSecrets:
    """The installed detect-secrets plugins, ready to scan text."""

    def __init__(self, *, without_requests: bool = False) -> None:
        with _inert_requests() if without_requests else contextlib.nullcontext():
            self._load()

    def _load(self) -> None:
        import detect_secrets.plugins as package
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins import keyword
        from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import (
            Base64HighEntropyString,
            HexHighEntropyString,
        )
        from detect_secrets.plugins.keyword import KeywordDetector
        from detect_secrets.plugins.private_key import PrivateKeyDetector

        self.regex_plugins: list[RegexPlugin] = []
        self.other_plugins: list[str] = []
        for cls in _plugin_classes(package, BasePlugin):
            name = cls.__name__
            if name in _SKIP or cls in (KeywordDetector,):
                continue
            if not issubclass(cls, RegexBasedDetector):
                if not issubclass(cls, Base64HighEntropyString | HexHighEntropyString):
                    self.other_plugins.append(name)  # a new kind of plugin: not wired
                continue
            plugin = cls()
            overrides = type(plugin).analyze_string is not RegexBasedDetector.analyze_string
            self.regex_plugins.append(
                RegexPlugin(
                    name,
                    kind_of(str(cls.secret_type)),
                    tuple(plugin.denylist),
                    _GATES.get(name),
                    _confirm(plugin, overrides, _GATES.get(name) == "keyword"),
                )
            )
        if self.other_plugins:
            log.debug("detect-secrets plugins not used: %s", ", ".join(self.other_plugins))
        self.private_key_markers = tuple(PrivateKeyDetector.denylist)
        self.keyword = KeywordDetector()
        # Every pattern set detect-secrets picks by file type: text here has no single type.
        self.keyword_patterns: dict[re.Pattern[str], int] = {}
        for table in (
            keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
            keyword.CONFIG_DENYLIST_REGEX_TO_GROUP,
            keyword.GOLANG_DENYLIST_REGEX_TO_GROUP,
            keyword.COMMON_C_DENYLIST_REGEX_TO_GROUP,
            keyword.C_PLUS_PLUS_REGEX_TO_GROUP,
        ):
            self.keyword_patterns.update(table)
        self.keyword_words = re.compile("|".join(keyword.DENYLIST), re.IGNORECASE)
        self.b64 = Base64HighEntropyString()
        self.hex = HexHighEntropyString()
        self.heuristic = heuristic
        self._line_cache: dict[str, list[tuple[int, int, str]]] = {}

    # -- keyword detector ----------------------------------------------------------------------

    def keyword_spans(self, line: str) -> list[tuple[int, int, str]]:
        """(start, end, kind) of keyword-detected secrets in one line (cached per line)."""
        cached = self._line_cache.get(line)
        if cached is not None:
            return cached
        if len(line) <= _LONG_LINE:
            found = self._keyword_spans(line) if self.keyword_words.search(line) else []
        else:
            # A minified file is one huge line: detect-secrets' patterns (unbounded `\w*`
            # affixes, `[^'"]*` values) would backtrack over all of it; scan around each
            # keyword instead.
            found = []
            covered = -1  # keywords before this have their window scanned already
            for m in self.keyword_words.finditer(line):
                if m.start() < covered:
                    continue
                lo, hi = max(0, m.start() - _WINDOW), min(len(line), m.end() + 4 * _WINDOW)
                found += [(lo + s, lo + e, k) for s, e, k in self._keyword_spans(line[lo:hi])]
                covered = hi - _WINDOW
        if len(self._line_cache) > 50_000:
            self._line_cache.clear()
        self._line_cache[line] = found
        return found

    def _keyword_spans(self, line: str) -> list[tuple[int, int, str]]:
        found: list[tuple[int, int, str]] = []
        # As KeywordDetector.analyze_string (every pattern searched once), with positions.
        for pattern, group in self.keyword_patterns.items():
            m = pattern.search(line)
            if m is None or not m.group(group):
                continue
            start, end = m.span(group)
            quoted = start > 0 and line[start - 1] in "\"'`"
            if not quoted:
                # An unquoted value runs to the end of the line in detect-secrets' patterns
                # (`password: str | bytes) -> None:`): its first token is the value.
                token = _TOKEN.match(line, start, end)
                end = token.end() if token else start
            name = name_before(line, start)
            if end <= start or (name and not secret_name(name)):
                continue  # `api_key_header = "x-api-key"`, `password_hash = ...`
            op = _op_before(line, start)
            if plausible(line[start:end], quoted=quoted, line=line, name=name, op=op):
                found.append((start, end, keyword_kind(name) if name else "secret"))
        return found

    # -- entropy detectors ---------------------------------------------------------------------

    def entropy_spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Quoted strings of base64/hex characters above detect-secrets' entropy limits."""
        h = self.heuristic
        for m in self.b64.regex.finditer(text):
            value = m.group(2)
            n = len(value)
            if n < _MIN_HEX:
                continue
            if set(value) <= _HEX:
                hit = self.hex.calculate_shannon_entropy(value) > self.hex.entropy_limit
            else:
                hit = False
            if not hit and n >= _MIN_B64:
                hit = self.b64.calculate_shannon_entropy(value) > self.b64.entropy_limit
            if not hit or h.is_sequential_string(value) or h.is_potential_uuid(value):
                continue
            start, end = m.span(2)
            if h.is_likely_id_string(value, line_of(text, start, end)):
                continue
            yield start, end


def _confirm(plugin: Any, overrides: bool, keyword: bool) -> Callable[[str], bool] | None:
    """The plugin's own check on a value (JWT: a valid token), and for plugins that match
    `<keyword> = <N characters>` (IBM, Cloudant, SoftLayer): not a name made of words."""
    if not overrides and not keyword:
        return None

    def confirm(value: str) -> bool:
        if keyword and name_like(value):
            return False
        return not overrides or any(True for _ in plugin.analyze_string(value))

    return confirm


def _op_before(line: str, start: int) -> str:
    head = line[:start].rstrip("\"'`@ \t")
    for op in (":=", "=>", "==", "!=", ":", "="):
        if head.endswith(op):
            return op
    return ""


def _plugin_classes(package: Any, base: type) -> Iterator[type]:
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                cls.__module__ == module.__name__
                and issubclass(cls, base)
                and not inspect.isabstract(cls)
            ):
                yield cls


RANKS: Final = {"regex": CONTEXT, "keyword": KEYWORD, "entropy": ENTROPY}
