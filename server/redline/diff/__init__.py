"""Diff → review units: parse a git diff, tag and measure each hunk group, apply the rules.

`build_units` (units.py) turns diff text into `ReviewUnit`s, `apply_rules` (rules.py) fills in
context level, confidence and skip reasons, and `review_index` (index.py) is the code-free view
the planner sees. `enclosing_functions`/`language_for` (functions.py) are shared with the
context provider.
"""

from redline.diff.functions import enclosing_functions, language_for
from redline.diff.index import review_index
from redline.diff.rules import apply_rules
from redline.diff.units import build_units

__all__ = ["apply_rules", "build_units", "enclosing_functions", "language_for", "review_index"]
