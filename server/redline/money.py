"""How every place that shows a cost writes it: `$0.0123`, or "unpriced" for a model litellm's
price map has no price for. Not `$0.0000`: a cost that is not known is not zero, and a model
that is not in the map is exactly the local one a user runs for free or pays for elsewhere.

One function, so the CLI's progress line, the reports, `redline history`, the debate table,
the estimates and the eval table cannot say it differently (the editor's TypeScript
`formatCost` in editor-client/src/statusText.ts says the same)."""

from __future__ import annotations

UNPRICED = "unpriced"


def usd(cost: float | None, places: int = 4) -> str:
    """`$0.0123` (with `places` decimals); "unpriced" when the cost is not known (None)."""
    return UNPRICED if cost is None else f"${cost:.{places}f}"


def spent(cost: float | None, tokens: int) -> str | None:
    """What a run's spending says of its cost: `usd(cost)`, "unpriced" when tokens were spent
    on a model without a price, None when nothing was spent and no price is known (nothing
    to say; no model was called)."""
    if cost is None and tokens <= 0:
        return None
    return usd(cost)
