"""The settings memory reads, from either a whole `Settings` or its `memory` table alone.

Callers hold one or the other (the CLI and the review have the whole settings; a store test
has only the memory table): the caps and the store's location come from `[memory]` (the
user's file only: a repository must not choose where its index goes or how big it may grow),
the paths left out from the user's `review.exclude`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.config_models import MemorySettings, Settings


def memory_settings(settings: Settings | MemorySettings) -> MemorySettings:
    from redline.config_models import Settings

    return settings.memory if isinstance(settings, Settings) else settings


def excludes_of(settings: Settings | MemorySettings) -> list[str]:
    from redline.config_models import Settings

    return list(settings.review.exclude) if isinstance(settings, Settings) else []


__all__ = ["excludes_of", "memory_settings"]
