"""litellm, imported lazily: on the first model call, or in the background as a model review
begins (`start_background_import`), so that its seconds overlap the git, unit and analyzer work
instead of sitting in front of the first model call. Never imported at start-up: the language
server must start instantly, and a review without a model never imports it.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from redline.redaction.logfilter import protect

log = logging.getLogger(__name__)

_litellm: Any = None
_litellm_lock = threading.Lock()
_import_seconds: float | None = None
_background_lock = threading.Lock()
_background: threading.Thread | None = None


def load_litellm() -> Any:
    """Import and harden litellm (once). Never called at import time of this package."""
    global _litellm, _import_seconds
    if _litellm is not None:
        return _litellm
    with _litellm_lock:
        if _litellm is None:
            start = time.perf_counter()
            # Before the import: no network fetch of the price map, and no `.env` loading from
            # the working directory — which may be the repository under review.
            os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
            os.environ["LITELLM_MODE"] = "PRODUCTION"
            import litellm

            litellm.set_verbose = False
            litellm.suppress_debug_info = True  # it prints "Give Feedback" banners to stdout
            litellm.turn_off_message_logging = True
            litellm.log_raw_request_response = False
            litellm.telemetry = False
            for name in (
                "callbacks",
                "input_callback",
                "success_callback",
                "failure_callback",
                "service_callback",
                "_async_success_callback",
                "_async_failure_callback",
            ):
                setattr(litellm, name, [])
            # litellm routes records below WARNING to stdout, which in the language server is
            # the JSON-RPC channel; LITELLM_LOG=DEBUG in the user's env must not change that.
            for logger_name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):
                logging.getLogger(logger_name).setLevel(logging.WARNING)
                # litellm has handlers of its own: its records are redacted there too.
                protect(logging.getLogger(logger_name))
                for handler in logging.getLogger(logger_name).handlers:
                    protect(handler)
            _litellm = litellm
            _import_seconds = time.perf_counter() - start
            log.debug("litellm imported in %.2f s", _import_seconds)
    return _litellm


async def load_litellm_async() -> Any:
    """load_litellm for a coroutine: while a background import holds the lock (seconds on a
    loaded machine), the wait happens in a thread, so the event loop stays free to take a
    cancel or a Ctrl+C (blocked on the lock, it took neither until the import ended)."""
    if _litellm is not None:
        return _litellm
    return await asyncio.to_thread(load_litellm)


def litellm_loaded() -> bool:
    return "litellm" in sys.modules


def import_seconds() -> float | None:
    """How long this process's import of litellm took (None: not imported by load_litellm)."""
    return _import_seconds


def load_and_warm() -> Any:
    """load_litellm, then what litellm's first call would import lazily (the OpenAI SDK's
    resources and types, ~1 s here: it would otherwise sit inside the first model call, on the
    critical path). Nothing is sent."""
    litellm = load_litellm()
    try:
        import openai

        client = openai.AsyncOpenAI(api_key="warm-up", base_url="http://127.0.0.1:9")
        _ = client.chat.completions  # its resources load on first access
        for name in ("litellm._service_logger", "litellm.llms.openai_like.dynamic_config"):
            importlib.import_module(name)
    except Exception as exc:  # a warm-up only: the first call imports whatever it needs
        log.debug("warming litellm up failed: %s", exc)
    return litellm


def start_background_import(load: Callable[[], object] = load_and_warm) -> bool:
    """Start importing litellm in a daemon thread, once per process (True if this call started
    it). The first model call then waits for that import (`load_litellm`'s lock) rather than
    starting its own. `load` lets the language server import it its own way (GC paused).

    A failed import is only logged here: the first model call imports again and reports it."""
    global _background
    with _background_lock:
        if _litellm is not None or _background is not None:
            return False
        _background = threading.Thread(
            target=_load_quietly, args=(load,), name="redline-litellm-import", daemon=True
        )
        _background.start()
    return True


def import_in_progress() -> bool:
    """True while a background import started by `start_background_import` is still running."""
    thread = _background
    return thread is not None and thread.is_alive()


def _load_quietly(load: Callable[[], object]) -> None:
    try:
        load()
    except Exception as exc:  # reported by the first model call, which imports again
        log.debug("background import of litellm failed: %s", exc)
