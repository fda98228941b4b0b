"""The redactor: finds secrets in text and replaces each with a stable placeholder.

Detection, in one pass over a text (each stage's speed notes are in rules.py / plugins.py):

1. Redline's own patterns (rules.py): provider key formats, whole private-key blocks, URL
   passwords, a bare AWS secret, `.env` values, and — on the keyword gate's lines only —
   Authorization headers, `auth=(user, pw)` tuples and secret-named assignments;
2. detect-secrets' regex plugins, keyword detector and entropy detectors (plugins.py);
3. the secrets already found in this process, wherever they appear again (a password found in
   `config.py` is masked in a test that uses it, in a tool result, in a log line), plus the
   values of secret-named environment variables (the user's own API keys).

Replacement: `[REDACTED:<kind>:<digest>]`, where the digest is a keyed HMAC-SHA256 of the value
(6 hex digits), so the same secret always gets the same placeholder and two mentions stay
linked ("the key in settings.py is the one in deploy.sh"), while the text never carries a
plain hash that could be checked against a list of common passwords. The HMAC key is random and
kept privately in Redline's cache directory (0600, next to the task records), so placeholders
are stable across runs too. Why not a per-process key: the answer cache is keyed on the exact
prompt text *before* redaction, so a cached answer is reused by later runs — with a fresh key
per process, the placeholders quoted in that cached answer would no longer match the ones in
the rest of the new review. The cost of a stable key is that whoever can read the cache
directory can test guesses of a password against its digest; the same person can already read
the reviewed code. If the key cannot be stored, a per-process key is used.

A placeholder already in a text is never redacted again, so redaction is idempotent (tool
output is redacted by the tool, then again with the whole request).
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import hmac
import json
import logging
import os
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple

from redline.redaction import rules
from redline.redaction.rules import KEYWORD_GATE, MARKER, all_rules, material_end, value_span

log = logging.getLogger(__name__)

MASK: Final = "[REDACTED]"
PLACEHOLDER: Final = re.compile(r"\[REDACTED(?::[a-z0-9][a-z0-9-]*:[0-9a-f]{6})?\]")
KEY_FILE: Final = "redaction.key"

_LITERAL: Final = -1  # rank of a known secret found again: its first kind is kept
# Short texts without any of these cannot hold a secret any detector finds (each needs a
# long token, a quote before a string, a URL, a key header or a secret-sounding word), so the
# detectors — and the detect-secrets import — are skipped for them.
_PREFILTER: Final = re.compile(
    r"[A-Za-z0-9+/=_\-]{11}|[\"'`][A-Za-z0-9+/=_\-]{9}|@|://|PRIVATE KEY|Private-|PuTTY|(?i:"
    + KEYWORD_GATE.pattern
    + ")"
)
_PREFILTER_MAX: Final = 4096
_SEP: Final = "\n\x1e\x00\x1e\n"  # joins texts scanned together; never inside a span
_LINE_PREFIX: Final = re.compile(r"[ \t]*(?:\d+[ \t]*)?(?:[+\-][ \t]?)?(?:\|[ \t]?)?")
_LONG_LINE: Final = 2048
_WINDOW: Final = 256
_CACHE_MIN: Final = 64
_CACHE_CHARS: Final = 32_000_000
_MAX_KNOWN: Final = 2048
_MIN_KNOWN: Final = 6  # shorter values are masked where detected, not searched for elsewhere
_ENV_NAME: Final = re.compile(
    r"(?i)api_?key|token|secret|passw(?:or)?d|credential|private_?key|access_?key"
)


class Span(NamedTuple):
    start: int
    end: int
    kind: str
    rank: int


class Redactor:
    """Finds and masks secrets. One per process (`get_redactor`); tests may make their own."""

    def __init__(self, *, key: bytes | None = None, environment: bool = True) -> None:
        self._key = key
        self._lock = threading.RLock()
        self._known: dict[str, str] = {}  # secret value → kind, in the order found
        self._known_list: list[str] = []  # longest first
        self._results: dict[str, str] = {}
        self._result_chars = 0
        self._plugins: Any = None
        self._plugins_loaded = False
        self._environment = environment

    # -- public ----------------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by its placeholder."""
        if not text:
            return text
        cacheable = len(text) >= _CACHE_MIN
        if cacheable:
            hit = self._results.get(text)
            if hit is not None:
                return hit
        spans = self.find(text)
        out = self._apply(text, spans) if spans else text
        if cacheable:
            self._remember_result(text, out)
        return out

    def redact_many(self, texts: Sequence[str]) -> list[str]:
        """Each text redacted; scanned together in one pass (much faster for many small ones)."""
        out = list(texts)
        together = [i for i, t in enumerate(texts) if t and _SEP not in t]
        for i, t in enumerate(texts):
            if t and _SEP in t:
                out[i] = self.redact(t)
        if not together:
            return out
        joined = _SEP.join(texts[i] for i in together)
        spans = self.find(joined)
        if not spans:
            return out
        pieces = self._apply(joined, _split_at(joined, spans, _SEP)).split(_SEP)
        if len(pieces) != len(together):  # cannot happen: placeholders hold no separator
            return [self.redact(t) for t in texts]
        for i, piece in zip(together, pieces, strict=True):
            out[i] = piece
        return out

    def redact_data(self, value: Any) -> Any:
        """A copy of JSON-like data (dicts, lists, strings, ...) with every string redacted
        (dictionary keys too); `value` itself when nothing needed masking."""
        strings: list[str] = []
        _collect(value, strings)
        if not strings:
            return value
        redacted = self.redact_many(strings)
        if all(a is b or a == b for a, b in zip(strings, redacted, strict=True)):
            return value
        return _rebuild(value, iter(redacted))

    def redact_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Copies of chat messages with every text field redacted (the originals untouched).

        Covers string contents, multi-part contents (`{"type": "text", "text": ...}`) and the
        arguments of assistant tool calls — a model can echo a secret it saw earlier.
        """
        out: list[dict[str, Any]] = []
        for message in messages:
            m = dict(message)
            content = m.get("content")
            if isinstance(content, str):
                m["content"] = self.redact(content)
            elif isinstance(content, list):
                m["content"] = [
                    {**part, "text": self.redact(part["text"])}
                    if isinstance(part, dict) and isinstance(part.get("text"), str)
                    else part
                    for part in content
                ]
            if m.get("tool_calls"):
                m["tool_calls"] = [self._redact_tool_call(c) for c in m["tool_calls"]]
            out.append(m)
        return out

    def register(self, value: str, kind: str = "secret") -> None:
        """Mask `value` wherever it appears from now on (e.g. the configured API key)."""
        if value and len(value) >= _MIN_KNOWN:
            with self._lock:
                self._add_known(value, kind)

    def load_plugins(self) -> None:
        """Import detect-secrets and build its plugins now (~0.2 s), e.g. in a background
        thread of a long-lived process, rather than on the first text that needs them."""
        self._detect_secrets()

    def placeholder(self, value: str, kind: str) -> str:
        digest = hmac.new(
            self._secret_key(), value.encode("utf-8", "surrogatepass"), hashlib.sha256
        ).hexdigest()
        return f"[REDACTED:{kind}:{digest[:6]}]"

    def find(self, text: str) -> list[Span]:
        """The secrets in `text`, as merged, non-overlapping spans in text order."""
        self._load_environment()
        found: list[Span] = []
        if len(text) > _PREFILTER_MAX or _PREFILTER.search(text):
            found = self._detect(text)
        protected = [m.span() for m in PLACEHOLDER.finditer(text)] if "[REDACTED" in text else []
        spans = _merge(_subtract(_trim(text, found), protected))
        if spans:
            with self._lock:
                for s in spans:
                    value = text[s.start : s.end]
                    if rules.registrable(value):
                        self._add_known(value, s.kind)
                spans = [
                    s._replace(kind=self._known.get(text[s.start : s.end], s.kind)) for s in spans
                ]
        again = self._known_spans(text, protected)
        if again:
            spans = _merge(spans + again)
        return spans

    # -- detection -------------------------------------------------------------------------------

    def _detect(self, text: str) -> list[Span]:
        spans: list[Span] = []
        rules_ = all_rules()
        for rule in rules_:
            if not rule.gated:
                spans += _rule_spans(rule, text)
        self._key_blocks(text, spans)
        lines = LineSet.select(text, KEYWORD_GATE, lower=True)
        if lines is not None:
            for rule in rules_:
                if rule.gated:
                    spans += lines.map(_rule_spans(rule, lines.text))
        plugins = self._detect_secrets()
        if plugins is None:
            return spans
        rank = rules.CONTEXT
        other_lines: dict[str, LineSet | None] = {}
        for plugin in plugins.regex_plugins:
            if plugin.gate is None:
                spans += [Span(s, e, plugin.kind, rank) for s, e in plugin.spans(text)]
                continue
            if plugin.gate == "keyword":
                subset = lines
            else:
                pattern = plugin.gate.pattern
                if pattern not in other_lines:
                    other_lines[pattern] = LineSet.select(text, plugin.gate)
                subset = other_lines[pattern]
            if subset is not None:
                spans += subset.map(
                    Span(s, e, plugin.kind, rank) for s, e in plugin.spans(subset.text)
                )
        if lines is not None:
            for origin, line in lines.lines():
                spans += [
                    Span(origin + s, origin + e, kind, rules.KEYWORD)
                    for s, e, kind in plugins.keyword_spans(line)
                ]
        spans += [
            Span(s, e, "high-entropy-string", rules.ENTROPY) for s, e in plugins.entropy_spans(text)
        ]
        for marker in plugins.private_key_markers:
            for m in marker.finditer(text):
                if not _covered(spans, m.end()):
                    spans.append(
                        Span(m.end(), material_end(text, m.end()), "private-key", rules.PROVIDER)
                    )
        return spans

    def _key_blocks(self, text: str, spans: list[Span]) -> None:
        """A key header whose block was not matched whole (no END line: cut, or a string with
        `\\n` escapes): mask the key material that follows it."""
        if "PRIVATE KEY" not in text and "Private-Lines" not in text:
            return
        for m in MARKER.finditer(text):
            if not _covered(spans, m.end()):
                spans.append(Span(m.end(), material_end(text, m.end()), "private-key", 0))

    def _detect_secrets(self) -> Any:
        if not self._plugins_loaded:
            with self._lock:
                if not self._plugins_loaded:
                    try:
                        from redline.redaction.plugins import DetectSecrets

                        self._plugins = DetectSecrets()
                    except Exception as exc:  # a broken install must not stop a review
                        log.error("detect-secrets is unavailable (%s): own patterns only", exc)
                        self._plugins = None
                    self._plugins_loaded = True
        return self._plugins

    # -- known secrets ---------------------------------------------------------------------------

    def _add_known(self, value: str, kind: str) -> None:
        if len(value) < _MIN_KNOWN or value in self._known:
            return
        if len(self._known) >= _MAX_KNOWN:
            # Forget the older half; they are still masked wherever a detector finds them.
            for old in list(self._known)[: _MAX_KNOWN // 2]:
                del self._known[old]
        self._known[value] = kind
        self._known_list = sorted(self._known, key=len, reverse=True)
        # A cached result may hold this value unmasked where no detector saw it.
        self._results.clear()
        self._result_chars = 0

    def _known_spans(self, text: str, protected: list[tuple[int, int]]) -> list[Span]:
        out: list[Span] = []
        known = self._known
        for value in self._known_list:
            i = text.find(value)
            while i >= 0:
                end = i + len(value)
                if _word_bounded(text, i, end) and not _inside(protected, i):
                    out.append(Span(i, end, known.get(value, "secret"), _LITERAL))
                i = text.find(value, end)
        return out

    def _load_environment(self) -> None:
        if not self._environment:
            return
        with self._lock:
            if not self._environment:
                return
            self._environment = False
            for name, value in os.environ.items():
                if _ENV_NAME.search(name) and len(value) >= 8 and not value.isdigit():
                    self._add_known(value, rules.keyword_kind(name))

    # -- replacement -------------------------------------------------------------------------------

    def _apply(self, text: str, spans: list[Span]) -> str:
        parts: list[str] = []
        last = 0
        for s in spans:
            parts.append(text[last : s.start])
            value = text[s.start : s.end]
            placeholder = self.placeholder(value, s.kind)
            if "\n" not in value:
                parts.append(placeholder)
            else:
                # A key block: one placeholder per line, each line's prefix (indentation, a
                # diff's `+`, the reviewer format's `  42 +| `) kept, so line numbers hold.
                lines = value.split("\n")
                first = ""
                if not text[text.rfind("\n", 0, s.start) + 1 : s.start].strip():
                    prefix = _LINE_PREFIX.match(lines[0])  # the span starts its line
                    first = prefix.group() if prefix else ""
                out = [first + placeholder]
                for line in lines[1:]:
                    prefix = _LINE_PREFIX.match(line)
                    head = prefix.group() if prefix else ""
                    out.append(head + (placeholder if line[len(head) :].strip() else ""))
                parts.append("\n".join(out))
            last = s.end
        parts.append(text[last:])
        return "".join(parts)

    def _remember_result(self, text: str, out: str) -> None:
        if self._result_chars + len(text) > _CACHE_CHARS:
            self._results.clear()
            self._result_chars = 0
        self._results[text] = out
        self._result_chars += len(text)

    def _secret_key(self) -> bytes:
        if self._key is None:
            with self._lock:
                if self._key is None:
                    self._key = _stored_key()
        return self._key

    def _redact_tool_call(self, call: Any) -> Any:
        if not isinstance(call, dict):
            return call
        fn = call.get("function")
        if not (isinstance(fn, dict) and isinstance(fn.get("arguments"), str)):
            return call
        args = fn["arguments"]
        redacted = self.redact(args)
        if redacted != args:
            # Redact the decoded values, so the arguments stay valid JSON whatever was masked.
            with contextlib.suppress(ValueError):
                redacted = json.dumps(self.redact_data(json.loads(args)), ensure_ascii=False)
        return {**call, "function": {**fn, "arguments": redacted}}


# -- spans -------------------------------------------------------------------------------------


def _rule_spans(rule: rules.Rule, text: str) -> list[Span]:
    out = []
    for m in rule.pattern.finditer(text):
        start = m.start()
        if rule.boundary and start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue
        if rule.check is not None and not rule.check(m):
            continue
        s, e = value_span(rule, m)
        kind = rule.kind if isinstance(rule.kind, str) else rule.kind(m)
        out.append(Span(s, e, kind, rule.rank))
    return out


def _covered(spans: list[Span], pos: int) -> bool:
    return any(pos <= s.start <= pos + 16 and s.end > s.start for s in spans)


def _trim(text: str, spans: Iterable[Span]) -> list[Span]:
    out = []
    for s in spans:
        start, end = s.start, s.end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            out.append(s._replace(start=start, end=end))
    return out


def _subtract(spans: list[Span], protected: list[tuple[int, int]]) -> list[Span]:
    """Spans minus the placeholders already in the text (the pieces left that hold a letter
    or digit stay masked)."""
    if not protected or not spans:
        return spans
    out = []
    for s in spans:
        pieces = [(s.start, s.end)]
        for ps, pe in protected:
            if pe <= s.start or ps >= s.end:
                continue
            pieces = [p for a, b in pieces for p in ((a, min(b, ps)), (max(a, pe), b))]
        out += [s._replace(start=a, end=b) for a, b in pieces if b - a >= 2]
    return out


def _merge(spans: list[Span]) -> list[Span]:
    """Overlapping detections become one span; its kind is the most specific one's.

    A random-looking string that holds a more specific detection (`"API_TOKEN=<token>"`)
    gives way to it, so the name stays readable."""
    if not spans:
        return []
    spans = sorted(spans)
    specific = [s for s in spans if s.rank < rules.ENTROPY]
    if len(specific) < len(spans) and specific:
        spans = [s for s in spans if s.rank < rules.ENTROPY or not _holds(s, specific)]
    out: list[Span] = []
    cur = spans[0]
    for s in spans[1:]:
        if s.start < cur.end:
            best = cur if (cur.rank, cur.start - cur.end) <= (s.rank, s.start - s.end) else s
            cur = Span(cur.start, max(cur.end, s.end), best.kind, best.rank)
        else:
            out.append(cur)
            cur = s
    out.append(cur)
    return out


def _holds(outer: Span, spans: list[Span]) -> bool:
    i = bisect.bisect_left(spans, (outer.start,))
    while i < len(spans) and spans[i].start < outer.end:
        if spans[i].end <= outer.end:
            return True
        i += 1
    return False


def _split_at(text: str, spans: list[Span], sep: str) -> list[Span]:
    out = []
    for s in spans:
        start = s.start
        cut = text.find(sep, start, s.end)
        while cut >= 0:
            if cut > start:
                out.append(s._replace(start=start, end=cut))
            start = cut + len(sep)
            cut = text.find(sep, start, s.end)
        if s.end > start:
            out.append(s._replace(start=start))
    return out


def _word_bounded(text: str, start: int, end: int) -> bool:
    if text[start].isalnum() and start and text[start - 1].isalnum():
        return False
    return not (text[end - 1].isalnum() and end < len(text) and text[end].isalnum())


def _inside(protected: list[tuple[int, int]], pos: int) -> bool:
    return any(a <= pos < b for a, b in protected)


class LineSet:
    """The lines of a text that a gate selects, joined by "\\n", mapped back to the text."""

    def __init__(self, text: str, ranges: list[tuple[int, int]]) -> None:
        self.origins = [s for s, _ in ranges]
        self.lengths = [e - s for s, e in ranges]
        self.offsets: list[int] = []
        pos = 0
        for n in self.lengths:
            self.offsets.append(pos)
            pos += n + 1
        self.text = "\n".join(text[s:e] for s, e in ranges)

    @classmethod
    def select(cls, text: str, gate: re.Pattern[str], *, lower: bool = False) -> LineSet | None:
        """The lines holding a match of `gate`; for a very long line (minified code, a data
        blob), only a window around each match: every gated pattern needs its keyword
        nearby, and scanning a megabyte line for each of them would take seconds."""
        hay = text
        if lower:
            hay = text.lower()
            if len(hay) != len(text):  # a few characters change length when lower-cased
                hay, gate = text, re.compile(gate.pattern, re.IGNORECASE)
        ranges: list[tuple[int, int]] = []
        pos = 0
        while True:
            m = gate.search(hay, pos)
            if m is None:
                break
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            end = len(text) if end < 0 else end
            if end - start <= _LONG_LINE:
                ranges.append((start, end))
                pos = end + 1
                continue
            lo = max(start, m.start() - _WINDOW)
            hi = min(end, m.end() + _WINDOW)
            if ranges and lo <= ranges[-1][1]:
                lo = ranges.pop()[0]
            ranges.append((lo, hi))
            pos = m.end()
        return cls(text, ranges) if ranges else None

    def lines(self) -> Iterable[tuple[int, str]]:
        for origin, offset, n in zip(self.origins, self.offsets, self.lengths, strict=True):
            yield origin, self.text[offset : offset + n]

    def map(self, spans: Iterable[Span]) -> list[Span]:
        """Spans in the joined text → spans in the original text, cut at their line's end."""
        out = []
        for s in spans:
            i = bisect.bisect_right(self.offsets, s.start) - 1
            offset, origin = self.offsets[i], self.origins[i]
            end = min(s.end, offset + self.lengths[i])
            if end > s.start:
                out.append(s._replace(start=origin + s.start - offset, end=origin + end - offset))
        return out


# -- data --------------------------------------------------------------------------------------


def _collect(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                out.append(k)
            _collect(v, out)
    elif isinstance(value, list | tuple):
        for v in value:
            _collect(v, out)


def _rebuild(value: Any, strings: Any) -> Any:
    if isinstance(value, str):
        return next(strings)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key = next(strings) if isinstance(k, str) else k
            out[key] = _rebuild(v, strings)
        return out
    if isinstance(value, list | tuple):
        items = [_rebuild(v, strings) for v in value]
        return items if isinstance(value, list) else type(value)(items)
    return value


# -- the key -----------------------------------------------------------------------------------


def _stored_key() -> bytes:
    """The HMAC key kept in the cache directory (created on first use), else a random one."""
    try:
        from redline.store._files import cache_root, private_dir

        path = private_dir(cache_root()) / KEY_FILE
        for _ in range(2):
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except FileNotFoundError:
                key = os.urandom(32)
                try:
                    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                    fd = os.open(path, flags, 0o600)
                except FileExistsError:
                    continue  # another process was first: read its key
                with os.fdopen(fd, "w") as fh:
                    fh.write(key.hex())
                return key
            with os.fdopen(fd) as fh:
                key = bytes.fromhex(fh.read(128).strip())
            if len(key) >= 16:
                return key
            break
    except Exception as exc:
        log.debug("redaction key not stored (%s); placeholders are per process", exc)
    return os.urandom(32)


_default: Redactor | None = None
_default_lock = threading.Lock()


def get_redactor() -> Redactor:
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Redactor()
    return _default
