"""Project memory in a review, measured with the eval's oracle (issue 27): bugs visible only
with a caller's context are found with memory and missed without it; the other operators'
recall does not change; and what reading memory costs per review unit.

The caller_contract cases (eval/mutate/ops_contract.py) are planted in Redline's own sources:
a function's contract changes (a returned tuple's order, a path now returning None or raising,
a default) where a function of ANOTHER file relies on it; the case's repository holds the
callee and the callers' files. The oracle finds such a bug only when the prompt shows one of
those calls (eval/oracle.shows_call): it reads the context bundle the real pipeline built.
The other operators' cases come from the bundled corpus. Every case is reviewed twice through
the real pipeline (eval/loss.measure_pipeline_loss, no noise): without memory, then with
memory built in the case's repository by the real builder (`redline memory build`'s
build_memory) just before its review.

    python benchmarks/memory_oracle_eval.py [--contract-cases 16] [--per-operator 2]

Memory reads per unit: the time a unit's bundle spends on memory (context/memory_context.
MemoryReads: the graph's callers, and waiting at most 1 s for the warm-up's similar code), and
apart, what each question costs (callers: the graph; similar code: one embedding by the local
model + the nearest vectors). The oracle's planner answers at once, so the warm-up has less
time to get ahead than behind a real model's planner call. Target ≤ 20 ms per unit.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redline.context.memory_context import MemoryContext
from redline.eval.loss import measure_pipeline_loss
from redline.eval.noise import Noise
from redline.eval.truth import OPERATORS, Mutant

from _change import target_line

TARGET_READ_MS = 20.0


def contract_cases(limit: int) -> list[Mutant]:
    from redline.eval.mutate import generate
    from redline.eval.mutate.sources import redline_files

    return generate(redline_files(), seed=0, operators=["caller_contract"], limit=limit)


def other_cases(per_operator: int) -> dict[str, list[Mutant]]:
    from redline.eval.mutate import generate
    from redline.eval.mutate.sources import corpus_files

    mutants = generate(corpus_files(), seed=0, operators=list(OPERATORS))
    groups: dict[str, list[Mutant]] = {}
    for m in random.Random(0).sample(mutants, len(mutants)):
        group = groups.setdefault(m.bug.operator, [])
        if len(group) < per_operator:
            group.append(m)
    return {op: groups[op] for op in OPERATORS if op in groups}


def build_here(root: Path) -> None:
    from redline.config_models import Settings
    from redline.memory.build import build_memory

    build_memory(root, Settings())


class Reads:
    """Every MemoryContext the reviews make, to collect their per-unit read times."""

    def __init__(self) -> None:
        self.contexts: list[MemoryContext] = []
        original = MemoryContext.__init__
        contexts = self.contexts

        def recording(self: MemoryContext, *args: object, **kwargs: object) -> None:
            original(self, *args, **kwargs)  # type: ignore[arg-type]
            contexts.append(self)

        MemoryContext.__init__ = recording  # type: ignore[method-assign]

    def all(self, kind: str) -> list[float]:
        return [ms for c in self.contexts for ms in getattr(c.reads, kind)]


def found(mutants: list[Mutant], prepare: Callable[[Path], None] | None) -> tuple[int, float]:
    report = measure_pipeline_loss(mutants, seed=0, noise=Noise.none(), prepare=prepare)
    if report.errors:
        print(report.render(), file=sys.stderr)
    return report.shown, report.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--contract-cases", type=int, default=16)
    parser.add_argument("--per-operator", type=int, default=2)
    args = parser.parse_args()
    # Memory goes to a private cache directory: the user's is neither read nor written.
    cache = tempfile.mkdtemp(prefix="redline-bench-cache-")
    os.environ["REDLINE_CACHE_DIR"] = cache
    started = time.perf_counter()
    from redline.memory.embed import load_embedder

    load_embedder()
    print(f"embedding model loaded once in {time.perf_counter() - started:.2f} s")
    reads = Reads()

    groups = {"caller_contract": contract_cases(args.contract_cases)}
    groups.update(other_cases(args.per_operator))
    print(f"{'operator':<22} {'cases':>5} {'found without':>14} {'found with':>11}")
    unchanged = True
    contract = (0, 0, 0)
    seconds = [0.0, 0.0]
    for op, mutants in groups.items():
        without, t0 = found(mutants, None)
        with_memory, t1 = found(mutants, build_here)
        seconds[0] += t0
        seconds[1] += t1
        print(f"{op:<22} {len(mutants):>5} {without:>14} {with_memory:>11}", flush=True)
        if op == "caller_contract":
            contract = (len(mutants), without, with_memory)
        elif without != with_memory:
            unchanged = False
    cases, without, with_memory = contract
    print(f"wall time: {seconds[0]:.1f} s without memory, {seconds[1]:.1f} s with (incl. builds)")
    per_unit = reads.all("per_unit")
    if per_unit:
        for kind, what in (
            ("callers", "callers of a function (graph)"),
            ("similar", "similar code of a function (embedding + nearest vectors)"),
            ("per_unit", "a unit's bundle (waiting for the warm-up included)"),
        ):
            values = reads.all(kind)
            print(f"memory read, {what}: median {statistics.median(values):.1f} ms, "
                  f"max {max(values):.1f} ms over {len(values)}")  # fmt: skip
        median = statistics.median(per_unit)
        print(target_line("memory read per unit (median)", f"{median:.1f} ms", "<=",
                          f"{TARGET_READ_MS:.0f} ms", median <= TARGET_READ_MS))  # fmt: skip
    print(target_line("caller_contract found with memory", f"{with_memory}/{cases}", ">=",
                      f"{cases}/{cases}", with_memory == cases))  # fmt: skip
    print(target_line("caller_contract found without memory", f"{without}/{cases}", "==",
                      f"0/{cases}", without == 0))  # fmt: skip
    print(target_line("other operators' recall", "unchanged" if unchanged else "CHANGED", "==",
                      "unchanged", unchanged))  # fmt: skip


if __name__ == "__main__":
    main()
