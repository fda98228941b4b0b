"""Which key a model call carries when none is configured.

An OpenAI-compatible server on this machine or network (llama.cpp, vLLM, LM Studio, a LiteLLM
proxy) usually needs no key, but litellm's OpenAI client refuses to send a request without one
("Missing credentials"): so a call to an `openai/…` model at a local `api_base`, with no key
configured anywhere, carries a placeholder. A hosted provider never gets it — a public host name
keeps the honest "no OPENAI_API_KEY set" error, and a server that does want a key says so with a
401, which the caller reports as "the server asks for an API key". Ollama's own API needs no key
at all (litellm sends its requests without one).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from redline.agent.outcomes import provider_of

PLACEHOLDER_KEY = "redline-no-key"

# Provider prefixes whose litellm path is the OpenAI client, which will not send without a key.
_OPENAI_CLIENT_PROVIDERS = frozenset({"openai"})
_OPENAI_KEY_VARS = ("OPENAI_API_KEY",)
# Suffixes of host names that are not on the public internet.
_LOCAL_SUFFIXES = (".local", ".localhost", ".internal", ".lan", ".home.arpa")


def is_local_address(api_base: str) -> bool:
    """A loopback, private or link-local address, `localhost`, a single-label name (a
    container's service name) or a local suffix: not a hosted provider."""
    host = urlsplit(api_base).hostname or ""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or "." not in host or host.endswith(_LOCAL_SUFFIXES)
    return ip.is_loopback or ip.is_private or ip.is_link_local


def placeholder_key(
    model: str, api_base: str | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The placeholder for a keyless call to a local OpenAI-compatible server, else None
    (a key set in the provider's variable is left for litellm to use)."""
    environ = os.environ if environ is None else environ
    if not api_base or provider_of(model) not in _OPENAI_CLIENT_PROVIDERS:
        return None
    if any(environ.get(var) for var in _OPENAI_KEY_VARS):
        return None
    return PLACEHOLDER_KEY if is_local_address(api_base) else None


def key_variables(litellm: Any, model: str) -> list[str]:
    """The environment variables litellm reads the model's key from (["OPENAI_API_KEY"]), or []
    when it does not say."""
    try:
        missing = litellm.validate_environment(model).get("missing_keys") or []
    except Exception:  # an unknown provider: the message then names no variable
        return []
    return [str(v) for v in missing if str(v).endswith(("_KEY", "_TOKEN"))]
