"""Which model a role calls, at which address and with which key, for `agent/llm.py`: the
role's model and its fallbacks from settings (`ModelSettings.for_role`), or the model a run
assigned to the role (a debater's own), and which fallbacks are not worth trying once a model
proved unusable.

The configured api_base and key go only to the provider they were configured for: a fallback
or an assigned model on another provider prefix gets neither (litellm then reads that
provider's own environment variable), so code is never sent to one provider's address and a
key never to another provider.
"""

from __future__ import annotations

from redline.agent.outcomes import ModelUnusable, provider_of
from redline.config_models import Settings

# (model, api_base, api_key) of one candidate.
Target = tuple[str, str | None, str | None]


class Routes:
    """The candidates a role's call goes to, in order (one per client: assignments are the
    run's)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._assigned: dict[str, tuple[str, str | None]] = {}
        self._base_settings: dict[str, str] = {}

    def assign(
        self, role: str, model: str, api_base: str | None = None, api_base_setting: str = ""
    ) -> None:
        """Give a role its own model and api_base, no fallbacks (`LLMClient.assign`);
        `api_base_setting` names where that address is set, for the hints of its failures."""
        self._assigned[role] = (model, api_base)
        if api_base_setting:
            self._base_settings[role] = api_base_setting

    def api_base_setting(self, role: str) -> str | None:
        """The setting the role's address comes from, when it is not `[models] api_base` (the
        flag, the variable): a hint naming that one would send the user to the wrong place."""
        return self._base_settings.get(role)

    def targets(self, role: str) -> list[Target]:
        """(model, api_base, api_key) per candidate.

        A fallback shares the role's api_base and configured key only when it is on the same
        provider prefix: `openai/a` → `openai/b` stays on the local server, but `ollama/x` →
        `anthropic/y` must neither go to the Ollama address nor carry another provider's key
        (litellm then reads the provider's own environment variable).
        """
        key = self.settings.models.api_key
        if role in self._assigned:
            mine, base = self._assigned[role]
            # As for fallbacks: the shared api_base and key go only to the default model's
            # provider (with no default model, [models] describes the one endpoint there is).
            default = self.settings.models.model
            same = default is None or provider_of(default) == provider_of(mine)
            shared_base = self.settings.models.api_base if same else None
            return [(mine, base or shared_base, key if same else None)]
        model, api_base, fallbacks = self.settings.models.for_role(role)
        if not model:
            return []
        out = [(model, api_base, key)]
        for fb in fallbacks:
            same = provider_of(fb) == provider_of(model)
            out.append((fb, api_base if same else None, key if same else None))
        return out


def shares_the_fault(known: ModelUnusable, model: str, api_base: str | None) -> bool:
    """Whether a fallback would fail for the reason `known` did, so it is not tried: a missing
    or refused key is the provider's (a fallback on the same provider carries the same key),
    an unreachable server is the address's (the same provider at the same api_base). A model
    the server does not know says nothing about the server's other models: those are tried."""
    if known.kind == "unknown_model" or known.model is None:
        return False
    return provider_of(known.model) == provider_of(model) and (
        known.kind != "unreachable" or known.api_base == api_base
    )
