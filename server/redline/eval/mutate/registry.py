"""Operator name → function, and the languages each applies to."""

from __future__ import annotations

from typing import Final

from redline.eval.mutate.base import Operator
from redline.eval.mutate.ops_contract import caller_contract
from redline.eval.mutate.ops_expr import (
    and_or_swap,
    flipped_comparison,
    negated_condition,
    off_by_one,
    swapped_arguments,
    wrong_constant,
)
from redline.eval.mutate.ops_flow import (
    early_break,
    missing_return,
    removed_await,
    removed_null_check,
    resource_not_closed,
    swallowed_exception,
)
from redline.eval.mutate.ops_names import wrong_variable
from redline.eval.mutate.ops_security import injection
from redline.eval.truth import ALL_OPERATORS, LANGUAGES, OPERATORS

OPERATOR_FUNCTIONS: Final[dict[str, Operator]] = {
    "off_by_one": off_by_one,
    "flipped_comparison": flipped_comparison,
    "and_or_swap": and_or_swap,
    "negated_condition": negated_condition,
    "wrong_variable": wrong_variable,
    "swapped_arguments": swapped_arguments,
    "removed_null_check": removed_null_check,
    "removed_await": removed_await,
    "missing_return": missing_return,
    "wrong_constant": wrong_constant,
    "early_break": early_break,
    "swallowed_exception": swallowed_exception,
    "resource_not_closed": resource_not_closed,
    "injection": injection,
    "caller_contract": caller_contract,
}
assert tuple(OPERATOR_FUNCTIONS) == ALL_OPERATORS

# Every operator applies to every language except `await` removal (Go has no `await`);
# caller_contract finds callers through Python's imports.
APPLIES: Final[dict[str, tuple[str, ...]]] = {
    **{
        op: tuple(lang for lang in LANGUAGES if op != "removed_await" or lang != "go")
        for op in OPERATORS
    },
    "caller_contract": ("python",),
}
