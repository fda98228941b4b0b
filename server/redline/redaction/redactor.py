"""The redactor: finds secrets in text and replaces each with a stable placeholder.

Detection (detection.py) runs Redline's own rules and detect-secrets' plugins; then the
secrets already found in this process are masked wherever they appear again (a password found
in `config.py` is masked in a test that uses it, in a tool result, in a log line), plus the
values of secret-named environment variables (the user's own API keys). Each secret becomes a
keyed placeholder (placeholder.py); JSON-like data and chat messages are walked in
structures.py.

A placeholder already in a text is never redacted again, so redaction is idempotent (tool
output is redacted by the tool, then again with the whole request).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Sequence
from typing import Any, Final

from redline.redaction import structures
from redline.redaction.code_filter import registrable
from redline.redaction.context_rules import keyword_kind
from redline.redaction.detection import detect
from redline.redaction.placeholder import PLACEHOLDER, keyed_placeholder, stored_key
from redline.redaction.rule import KEYWORD_GATE
from redline.redaction.spans import Span, inside, merge, split_at, subtract, trim, word_bounded

log = logging.getLogger(__name__)

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
_CACHE_MIN: Final = 64
# The result cache pays for texts redacted again and again (the system prompt of every call, a
# conversation's earlier messages, a retried request, progress lines). Its keys keep the texts
# alive: most of what is redacted is seen once (every file's context sections and prompt), and
# a larger bound kept up to that many characters of finished files' prompts in memory (~31 MB
# over a 2,000-file review, issue 23) to save nothing.
_CACHE_CHARS: Final = 2_000_000
_MAX_KNOWN: Final = 2048
_MIN_KNOWN: Final = 6  # shorter values are masked where detected, not searched for elsewhere
_ENV_NAME: Final = re.compile(
    r"(?i)api_?key|token|secret|passw(?:or)?d|credential|private_?key|access_?key"
)


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
        pieces = self._apply(joined, split_at(joined, spans, _SEP)).split(_SEP)
        if len(pieces) != len(together):  # cannot happen: placeholders hold no separator
            return [self.redact(t) for t in texts]
        for i, piece in zip(together, pieces, strict=True):
            out[i] = piece
        return out

    def redact_data(self, value: Any) -> Any:
        """A copy of JSON-like data (dicts, lists, strings, ...) with every string redacted
        (dictionary keys too); `value` itself when nothing needed masking."""
        return structures.redact_data(self, value)

    def redact_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Copies of chat messages with every text field redacted (the originals untouched).

        Covers string contents, multi-part contents (`{"type": "text", "text": ...}`) and the
        arguments of assistant tool calls — a model can echo a secret it saw earlier."""
        return structures.redact_messages(self, messages)

    def register(self, value: str, kind: str = "secret") -> None:
        """Mask `value` wherever it appears from now on (e.g. the configured API key)."""
        if value and len(value) >= _MIN_KNOWN:
            with self._lock:
                self._add_known(value, kind)

    def load_plugins(self, *, without_requests: bool = False) -> None:
        """Import detect-secrets and build its plugins now (~0.2 s), e.g. in a background
        thread of a long-lived process, rather than on the first text that needs them.
        `without_requests`: see plugins._inert_requests (only for a process that will import
        nothing needing `requests` while this runs)."""
        self._detect_secrets(without_requests)

    def placeholder(self, value: str, kind: str) -> str:
        return keyed_placeholder(self._secret_key(), value, kind)

    def find(self, text: str) -> list[Span]:
        """The secrets in `text`, as merged, non-overlapping spans in text order."""
        self._load_environment()
        found: list[Span] = []
        if len(text) > _PREFILTER_MAX or _PREFILTER.search(text):
            found = detect(text, self._detect_secrets())
        protected = [m.span() for m in PLACEHOLDER.finditer(text)] if "[REDACTED" in text else []
        spans = merge(subtract(trim(text, found), protected))
        if spans:
            with self._lock:
                for s in spans:
                    value = text[s.start : s.end]
                    if registrable(value, s.rank):
                        self._add_known(value, s.kind)
                spans = [
                    s._replace(kind=self._known.get(text[s.start : s.end], s.kind)) for s in spans
                ]
        again = self._known_spans(text, protected)
        if again:
            spans = merge(spans + again)
        return spans

    # -- detection -------------------------------------------------------------------------------

    def _detect_secrets(self, without_requests: bool = False) -> Any:
        if not self._plugins_loaded:
            with self._lock:
                if not self._plugins_loaded:
                    try:
                        from redline.redaction.plugins import DetectSecrets

                        self._plugins = DetectSecrets(without_requests=without_requests)
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
                if word_bounded(text, i, end) and not inside(protected, i):
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
                    self._add_known(value, keyword_kind(name))

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
        if len(text) > _CACHE_CHARS:
            return  # it would empty the cache and still hold more than it may
        if self._result_chars + len(text) > _CACHE_CHARS:
            self._results.clear()
            self._result_chars = 0
        self._results[text] = out
        self._result_chars += len(text)

    def _secret_key(self) -> bytes:
        if self._key is None:
            with self._lock:
                if self._key is None:
                    self._key = stored_key()
        return self._key


_default: Redactor | None = None
_default_lock = threading.Lock()


def get_redactor() -> Redactor:
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Redactor()
    return _default
