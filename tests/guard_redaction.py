"""Helpers for the rule-by-rule tests of redline.redaction (tests/test_guard_redaction_*.py):
what a text's masks are, exactly, as (masked text, kind) pairs.

`masks` asks a fresh redactor (every detector, known secrets too); `own_masks` asks Redline's
own rules alone (`detect(text, None)`: what still holds when detect-secrets is unavailable),
so a rule of provider_rules.py or context_rules.py is seen without detect-secrets masking the
same value behind it.
"""

from __future__ import annotations

from redline.redaction import Redactor
from redline.redaction.detection import detect
from redline.redaction.spans import merge, trim

KEY = b"k" * 32

# Fake values that look random (mixed case and digits, no lower-case run): what a key looks like.
GHP = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"
RANDOM20 = "zQ8sKV2n4wX6yB1cD3fG"  # 20 distinct characters: entropy log2(20) = 4.32 bits


def redactor() -> Redactor:
    return Redactor(key=KEY, environment=False)


def masks(text: str, r: Redactor | None = None) -> list[tuple[str, str]]:
    """What the redactor masks in `text`: (the masked text, its kind), in text order."""
    r = r or redactor()
    return [(text[s.start : s.end], s.kind) for s in r.find(text)]


def own_masks(text: str) -> list[tuple[str, str]]:
    """What Redline's own rules mask in `text`, without detect-secrets' plugins."""
    return [(text[s.start : s.end], s.kind) for s in merge(trim(text, detect(text, None)))]


def masked(text: str, r: Redactor | None = None) -> list[str]:
    return [value for value, _ in masks(text, r)]


def own_masked(text: str) -> list[str]:
    return [value for value, _ in own_masks(text)]
