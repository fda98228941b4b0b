"""Recall lost by Redline itself (redline.eval.loss.measure_pipeline_loss): planted bugs
reviewed by the real pipeline against the oracle, a scripted model that knows where they are
and answers with real models' noise (line numbers off or counted in the diff, misquoted code,
fenced or chatty JSON, malformed first answers).

Prints the LossReport (said / anchored / verified / shown, the cases lost and where) and the
wall time per case. The cases are the generated mutants (redline.eval.mutate) when the
generator is installed, else the hand-written ones of tests/eval_oracle_cases.py.

    python benchmarks/eval_oracle.py [--seeds 3] [--cases 240] [--heavy]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from redline.eval.loss import measure_pipeline_loss
from redline.eval.noise import Noise
from redline.eval.truth import Mutant

from _change import target_line

TARGET_LOSS = 0.01
TARGET_MS_PER_CASE = 400.0
HEAVY = Noise(line_offset=0.5, diff_relative=0.3, misquote=0.3)


def cases(limit: int) -> tuple[str, list[Mutant]]:
    try:
        from redline.eval.mutate import generate
        from redline.eval.mutate.sources import corpus_files
    except ImportError:
        from eval_oracle_cases import HAND_MUTANTS

        return "hand-written", list(HAND_MUTANTS)
    by_operator: dict[str, list[Mutant]] = {}
    mutants = generate(corpus_files(), seed=0)
    for m in random.Random(0).sample(mutants, len(mutants)):
        by_operator.setdefault(m.bug.operator, []).append(m)
    chosen: list[Mutant] = []
    while len(chosen) < limit and any(by_operator.values()):
        for group in by_operator.values():
            if group and len(chosen) < limit:
                chosen.append(group.pop())
    return "generated", chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--cases", type=int, default=240)
    parser.add_argument("--heavy", action="store_true", help="more line and quote noise")
    args = parser.parse_args()
    kind, mutants = cases(args.cases)
    noise = HEAVY if args.heavy else Noise()
    said = shown = count = 0
    seconds = 0.0
    for seed in range(args.seeds):
        report = measure_pipeline_loss(mutants, seed=seed, noise=noise)
        print(f"--- {kind} mutants, seed {seed}\n{report.render()}\n", flush=True)
        said, shown, count = said + report.said, shown + report.shown, count + report.cases
        seconds += report.seconds
    loss = 1 - shown / said if said else 0.0
    per_case = 1000 * seconds / count if count else 0.0
    print(f"pipeline loss over {args.seeds} seeds: {loss:.2%} ({said - shown} of {said} lost)")
    print(f"wall time per case: {per_case:.0f} ms")
    print(target_line("pipeline loss", f"{loss:.2%}", "<=", f"{TARGET_LOSS:.0%}",
                      loss <= TARGET_LOSS))  # fmt: skip
    print(target_line("oracle case", f"{per_case:.0f} ms", "<=", f"{TARGET_MS_PER_CASE:.0f} ms",
                      per_case <= TARGET_MS_PER_CASE))  # fmt: skip


if __name__ == "__main__":
    main()
