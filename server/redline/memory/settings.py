"""What a build reads from the whole settings besides `[memory]` (store.memory_settings):
the paths the user's `review.exclude` leaves out. Callers may hold the whole `Settings` (the
CLI, a review) or the memory table alone (then nothing is excluded)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.config_models import MemorySettings, Settings


def excludes_of(settings: Settings | MemorySettings) -> list[str]:
    from redline.config_models import Settings

    return list(settings.review.exclude) if isinstance(settings, Settings) else []


__all__ = ["excludes_of"]
