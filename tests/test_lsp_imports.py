"""What the language server's event loop imports lazily stays out of the model stages' imports.

The event loop imports `review.anchoring` (re-anchoring findings as documents change) and
`review.quotes` (quick fixes, tracked quotes) on first use, possibly while a review thread is
importing the model stages (context, tools, agent, schemas). Python's per-module import locks
deadlock when two threads import the same modules in opposite orders, and Python then fails one
of the imports (a review that "failed unexpectedly: _DeadlockError", seen in
test_lsp_ask.py under load). So what the event loop imports must not reach those packages.
Each case runs in a fresh interpreter and lists what ended up in sys.modules.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Imported by review threads (the model stages); never by what the event loop loads lazily.
MODEL_STAGES = (
    "redline.context",
    "redline.tools",
    "redline.agent",
    "redline.review.schemas",
    "redline.review.model_review",
)


def modules_after(statement: str) -> set[str]:
    probe = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


@pytest.mark.parametrize(
    "statement",
    [
        "from redline.review.anchoring import locate, split_lines",
        "import redline.lsp.document_findings, redline.lsp.fixes, redline.lsp.tracking",
        # hovers, dismissals and the report command load these on first use
        "import redline.lsp.hover, redline.store.dismissal_matching, redline.report",
    ],
)
def test_the_event_loops_lazy_imports_stay_out_of_the_model_stages(statement: str) -> None:
    loaded = modules_after(statement)
    first = statement.split()[1].rstrip(",")
    assert first in loaded
    assert sorted(m for m in loaded if m.startswith(MODEL_STAGES)) == []


def test_a_quote_is_split_without_loading_the_engine() -> None:
    """Tracking a finding's quote needs only the leaf quotes module (no pydantic either)."""
    loaded = modules_after(
        "from redline.lsp.document_findings import split_lines\n"
        "assert split_lines('a\\r\\nb') == ['a', 'b']"
    )
    assert "pydantic" not in loaded
