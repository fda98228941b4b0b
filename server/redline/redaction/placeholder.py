"""Placeholders: a secret becomes `[REDACTED:<kind>:<digest>]`.

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
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
from typing import Final

log = logging.getLogger(__name__)

MASK: Final = "[REDACTED]"
PLACEHOLDER: Final = re.compile(r"\[REDACTED(?::[a-z0-9][a-z0-9-]*:[0-9a-f]{6})?\]")
KEY_FILE: Final = "redaction.key"


def keyed_placeholder(key: bytes, value: str, kind: str) -> str:
    """`[REDACTED:<kind>:<digest>]`, the digest a keyed HMAC-SHA256 of `value`."""
    digest = hmac.new(key, value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
    return f"[REDACTED:{kind}:{digest[:6]}]"


def stored_key() -> bytes:
    """The HMAC key kept in the cache directory (created on first use), else a random one."""
    try:
        from redline.files import cache_root, private_dir  # on first use: not at start-up

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
