"""Anchoring a finding by its quoted code (redline.review.anchoring.locate) in a big file: the
timings that tests/test_anchoring.py used to assert and now checks as work done (no re-split of
the file, the number of fuzzy windows scored), since a wall-clock bound in a test flakes under
load and garbage collection.

Three quotes in a 5,000-line file, each the median of --rounds calls with the collector off and
the file's line index already built (a review anchors many findings against one file):
  1. verbatim: two lines quoted as they are;
  2. fuzzy: the same two lines with a token changed on each;
  3. fuzzy, hostile: two lines made of text found everywhere (the window cap bites).

Then the near-miss measurement of issue 10 (tests/near_miss_bed.py): how the old policy (the
file's text swapped in as the quote, the fix offered), "approximate" (the chosen one) and
"unanchored" show near-miss quotes and legitimate re-quotes.

    python benchmarks/anchoring.py [--rounds 200] [--lines 5000]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from redline.review.anchoring import locate

from _change import target_line

TARGET_EXACT_MS = 5.0
TARGET_FUZZY_MS = 500.0


def big_file(lines: int) -> str:
    return "".join(
        f"def f{i}(x):\n    return x * {i} + helper_{i % 97}(x)\n" for i in range(lines // 2)
    )


def median_ms(fn: Callable[[], object], rounds: int) -> float:
    times = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--lines", type=int, default=5000)
    args = parser.parse_args()

    text = big_file(args.lines)
    start = time.perf_counter()
    locate("warm-up", text)  # splits the file and builds its indexes, once per file
    index_ms = (time.perf_counter() - start) * 1000
    mid = args.lines // 4
    line = 2 * mid + 1
    rows = [
        (
            "verbatim",
            median_ms(
                lambda: locate(
                    f"def f{mid}(x):\n    return x * {mid} + helper_{mid % 97}(x)", text
                ),
                args.rounds,
            ),
        ),
        (
            "fuzzy",
            median_ms(
                lambda: locate(
                    f"def f{mid}(y):\n    return y * {mid} + helper_{mid % 97}(y)", text, line
                ),
                args.rounds,
            ),
        ),
        (
            "fuzzy, hostile (lines found everywhere)",
            median_ms(
                lambda: locate("return x * 1 + helper_1(y)\nreturn x * 1 + helper_1(z)", text, 1),
                args.rounds,
            ),
        ),
    ]

    print(f"Anchoring in a {args.lines:,}-line file (median of {args.rounds} calls, collector off)")
    print(f"first call (splits the file, builds its indexes): {index_ms:.1f} ms")
    print()
    for label, ms in rows:
        print(label.ljust(48) + f"{ms:.3f} ms".rjust(14))
    print()
    exact = rows[0][1]
    print(target_line("exact anchoring", f"{exact:.3f} ms", "<=", f"{TARGET_EXACT_MS} ms",
                      exact <= TARGET_EXACT_MS))  # fmt: skip
    fuzzy = max(rows[1][1], rows[2][1])
    print(target_line("fuzzy anchoring (worst)", f"{fuzzy:.1f} ms", "<=",
                      f"{TARGET_FUZZY_MS:.0f} ms", fuzzy <= TARGET_FUZZY_MS))  # fmt: skip
    print()
    near_miss_policies()
    return 0


def near_miss_policies() -> None:
    """How each policy for a fuzzy match shows the bed of tests/near_miss_bed.py (issue 10),
    and the same quotes made from a few of Redline's own modules."""
    from near_miss_bed import measure, render

    print("Near-miss quotes (one identifier renamed) vs legitimate re-quotes, per policy:")
    print(render(measure()))
    root = Path(__file__).resolve().parents[1] / "server" / "redline" / "review"
    for name in ("fusion.py", "verifier.py"):
        print(f"\nquotes made from server/redline/review/{name}:")
        print(render(measure((root / name).read_text(encoding="utf-8"))))


if __name__ == "__main__":
    sys.exit(main())
