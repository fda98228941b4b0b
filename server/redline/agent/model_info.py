"""What litellm's local model map says about a model, for the client: the input limit a
prompt must fit, the output limit a re-ask may ask for, and the price of an answer. Looked up
once per model and client; litellm is imported on the first look-up, not before
(`agent/litellm_loader.py`), and its map is local: nothing is fetched.
"""

from __future__ import annotations

from typing import Any

from redline.agent.litellm_loader import load_litellm


class ModelInfo:
    """litellm's `get_model_info` per model, cached ({} for a model it does not know)."""

    def __init__(self) -> None:
        self._info: dict[str, dict[str, Any]] = {}

    def get(self, model: str) -> dict[str, Any]:
        if model not in self._info:
            try:
                self._info[model] = dict(load_litellm().get_model_info(model))
            except Exception:  # litellm raises for models not in its map
                self._info[model] = {}
        return self._info[model]

    def limit(self, model: str, key: str, default: int) -> int:
        """The map's positive integer `key` ("max_input_tokens", "max_output_tokens"), else
        `default`."""
        value = self.get(model).get(key)
        return int(value) if isinstance(value, int) and value > 0 else default

    def cost(self, litellm: Any, raw: Any, model: str) -> float | None:
        """The price of the litellm response `raw`."""
        # Priced from litellm's local map; None (not 0) for models it does not know, so totals
        # can say the cost is incomplete instead of under-reporting it.
        if not self.get(model):
            return None
        try:
            return float(litellm.completion_cost(completion_response=raw, model=model))
        except Exception:
            return None
