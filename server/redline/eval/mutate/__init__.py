"""Mutation operators on tree-sitter syntax trees and the deterministic mutant generator.

- `base.py`          a parsed file (`Source`), a candidate edit (`Candidate`), tree helpers.
- `ops_expr.py`      off_by_one, flipped_comparison, and_or_swap, negated_condition,
                     wrong_constant, swapped_arguments.
- `ops_names.py`     wrong_variable.
- `ops_flow.py`      removed_null_check, removed_await, missing_return, early_break,
                     swallowed_exception, resource_not_closed.
- `ops_security.py`  injection (SQL and shell).
- `registry.py`      operator name → function, and the languages each applies to (`APPLIES`).
- `generate.py`      `generate()`: validated, deterministic, round-robin mutants.
- `sources.py`       `corpus_files()` (the bundled programs) and `redline_files()` (Redline's own
                     Python sources).
"""

from redline.eval.mutate.generate import generate
from redline.eval.mutate.registry import APPLIES, OPERATOR_FUNCTIONS
from redline.eval.mutate.sources import corpus_files, redline_files

__all__ = ["APPLIES", "OPERATOR_FUNCTIONS", "corpus_files", "generate", "redline_files"]
