"""Hand-made mutants of a small real program, for the eval's tests (until `eval/mutate` and
`eval/corpus` land, and as a fixed ground truth afterwards): each replaces one piece of
`shop/cart.py` the way the generator's operators do."""

from __future__ import annotations

from redline.eval.truth import Mutant, PlantedBug

CART = "shop/cart.py"

CART_PY = '''\
"""A shopping cart."""


def total(items):
    result = 0
    for i in range(len(items)):
        result += items[i].price
    return result


def find(items, name):
    for item in items:
        if item.name == name:
            return item
    return None


def discount(price, percent):
    if percent < 0 or percent > 100:
        raise ValueError("percent out of range")
    return price * (100 - percent) / 100
'''

# (operator, function, original, mutated, description)
EDITS = (
    (
        "off_by_one",
        "total",
        "for i in range(len(items)):",
        "for i in range(len(items) + 1):",
        "the loop runs one past the end of items: IndexError",
    ),
    (
        "flipped_comparison",
        "find",
        "if item.name == name:",
        "if item.name != name:",
        "returns the first item whose name differs",
    ),
    (
        "and_or_swap",
        "discount",
        "if percent < 0 or percent > 100:",
        "if percent < 0 and percent > 100:",
        "the range check can never be true: any percent is accepted",
    ),
)


def mutant(operator: str, function: str, original: str, mutated: str, description: str) -> Mutant:
    assert CART_PY.count(original) == 1, original
    source = CART_PY.replace(original, mutated)
    line = source[: source.index(mutated)].count("\n") + 1
    bug = PlantedBug(
        operator=operator,
        language="python",
        file=CART,
        lines=(line,),
        function=function,
        description=description,
        original=original,
        mutated=mutated,
    )
    return Mutant(bug=bug, source=source)


def cart_mutants() -> list[Mutant]:
    return [mutant(*edit) for edit in EDITS]


def finding_for(m: Mutant, **extra: object) -> dict[str, object]:
    """What a competent reviewer would answer about the planted bug (a reviewer-schema item)."""
    return {
        "file": m.bug.file,
        "line": m.bug.lines[0],
        "severity": "high",
        "category": "Functionality",
        "title": f"planted: {m.bug.operator}",
        "comment": m.bug.description,
        "existing_code": m.bug.mutated,
        "confidence": 0.9,
        **extra,
    }
