"""Review latency: the real pipeline on a 20-file change against a model that takes 300 ms per
call, compared with the critical path of the calls it actually made.

The critical-path bound is what a perfectly parallel pipeline could not beat:
planner + the slowest file's reviewer chain (the sum of that file's reviewer call latencies)
+ the verifier calls + the summarizer, all taken from the latencies the client measured. The
ratio wall / bound shows the pipeline's own overhead (target ≤ 1.3). The sequential equivalent
is the sum of every call's latency: what one-call-at-a-time would cost.

llm.max_concurrency is raised to 32 here: the bound assumes every file's reviewer runs at once.
(The default, 16, is printed too, measured, for comparison.)

    python benchmarks/review_latency.py [--delay 0.3] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redline.config_models import LLMSettings
from redline.review.reviewer import FileReview

from _change import (
    FILES,
    FINDING_FILES,
    BenchLLM,
    Run,
    build_change,
    isolated_env,
    review_script,
    run,
    settings_for,
    target_line,
)

TARGET_RATIO = 1.3
DEFAULT = LLMSettings().max_concurrency


def critical_path(result: Run, files: dict[str, FileReview]) -> tuple[float, int]:
    """(bound in seconds from the latencies of the calls actually made, the number of calls
    on the critical path)."""
    planner = result.by_role("planner")
    chains = {path: sum(resp.latency_s for resp in fr.responses) for path, fr in files.items()}
    slowest = max(chains, key=chains.__getitem__) if chains else ""
    verifier = result.by_role("verifier")
    summary = result.by_role("summarizer")
    bound = sum(r.latency_s for r in [*planner, *verifier, *summary]) + chains.get(slowest, 0.0)
    depth = len(planner) + len(verifier) + len(summary)
    depth += len(files[slowest].responses) if slowest else 0
    return bound, depth


def measure(root: Path, delay: float, concurrency: int, cache_dir: str) -> dict[str, float]:
    os.environ["REDLINE_CACHE_DIR"] = cache_dir  # a fresh cache: every call really happens
    script = review_script(delay)
    files: dict[str, FileReview] = {}
    with BenchLLM(handler=script) as llm:
        settings = settings_for(llm.base_url, max_concurrency=concurrency)
        result = run(root, settings, on_file=lambda fr: files.__setitem__(fr.path, fr))
        peak = llm.max_in_flight
    bound, depth = critical_path(result, files)
    sequential = sum(r.latency_s for r in result.records)
    attempts = result.review.attempts
    return {
        "wall": result.wall_s,
        "plan": result.plan_s,
        "bound": bound,
        "sequential": sequential,
        "calls": result.calls,
        "reviewer_calls": len(result.by_role("reviewer")),
        "peak": peak,
        "attempts": attempts,
        "findings": len(result.review.findings),
        "ideal": depth * delay,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.3, help="seconds per model call")
    parser.add_argument("--concurrency", type=int, default=32, help="llm.max_concurrency")
    args = parser.parse_args(argv)

    with isolated_env() as tmp:
        repo = build_change(tmp / "repo")
        # The first review in a process pays the OpenAI SDK's lazy imports (~1 s, inside the
        # planner call, so in the bound too); a CLI run is always such a first review.
        conc = args.concurrency
        rows = {
            f"cold, conc={conc}": measure(repo.root, args.delay, conc, str(tmp / "cache-a")),
            f"warm, conc={conc}": measure(repo.root, args.delay, conc, str(tmp / "cache-b")),
            f"warm, conc={DEFAULT} (default)": measure(
                repo.root, args.delay, DEFAULT, str(tmp / "cache-c")
            ),
        }

    print(
        f"Review latency — {FILES}-file branch change, scripted model at "
        f"{args.delay * 1000:.0f} ms per call, findings in {len(FINDING_FILES)} files, "
        "analyzers off, litellm imported beforehand"
    )
    print()
    names = list(rows)
    width = max(len(n) for n in names) + 2
    print("".ljust(38) + "".join(n.rjust(width) for n in names))

    def line(label: str, key: str, fmt: str) -> None:
        print(label.ljust(38) + "".join(format(rows[n][key], fmt).rjust(width) for n in names))

    line("plan_review (s, not in the wall)", "plan", ".2f")
    line("wall time of run_review (s)", "wall", ".2f")
    line("critical-path bound (s)", "bound", ".2f")
    line("sequential equivalent (s)", "sequential", ".2f")
    line("model calls", "calls", ".0f")
    line("  of which reviewer calls", "reviewer_calls", ".0f")
    line("peak requests in flight", "peak", ".0f")
    line("review attempts", "attempts", ".0f")
    line("findings shown", "findings", ".0f")
    line("ideal bound at the nominal delay (s)", "ideal", ".2f")
    ratios = {n: rows[n]["wall"] / rows[n]["bound"] for n in names}
    ideal = {n: rows[n]["wall"] / rows[n]["ideal"] for n in names}
    print("wall / bound".ljust(38) + "".join(f"{ratios[n]:.2f}".rjust(width) for n in names))
    print("wall / ideal bound".ljust(38) + "".join(f"{ideal[n]:.2f}".rjust(width) for n in names))
    print()
    print(
        "bound = planner + slowest file's reviewer calls + verifier + summarizer latencies "
        "(as measured by the client);"
    )
    print(
        "ideal bound = the calls on that path × the scripted delay: what a zero-overhead "
        "client would take."
    )
    print(
        f"The target applies to max_concurrency={conc} (both runs): the bound assumes all files "
        "are reviewed at once."
    )
    ratio = max(ratios[n] for n in names[:2])
    met = ratio <= TARGET_RATIO
    print(target_line("latency ratio", f"{ratio:.2f}", "<=", f"{TARGET_RATIO}", met))
    return 0


if __name__ == "__main__":
    sys.exit(main())
