"""A request for more context, as a model asks for it: what kind, about what, and why.

Planner and reviewer answers carry these (review/schemas.py); ContextProvider.bundle serves
them. Defined here, below both, so context/ needs nothing from review/.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

ContextKind = Literal["function", "file", "callers", "previous_version", "search"]


class ContextRequest(BaseModel):
    # Part of a model's answer: keys we did not ask for are ignored, as in review/schemas.py.
    model_config = ConfigDict(extra="ignore")

    kind: ContextKind
    # a symbol for callers/search, a path for file/previous_version; "" means this unit
    target: str = ""
    reason: str = ""
