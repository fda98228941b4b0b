"""Incremental re-review: a 20-file branch change is reviewed, then one line is changed in a new
commit on the branch (the realistic "push a fix" case) and the branch is reviewed again with the
same cache directory. Counts the re-review's model calls (target ≤ 2) and its prompt tokens as
a share of the first review's (target ≤ 10%), and says what was reused.

Two re-reviews are measured, one after the other on the same cache:
  A. the fix: the line a finding pointed at is corrected (the scripted reviewer no longer
     reports it) — the target scenario;
  B. a one-line edit in place in another changed function of a file without findings.

    python benchmarks/incremental.py [--delay 0.05]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _change import (
    FILES,
    FINDING_FILES,
    BenchLLM,
    Run,
    build_change,
    isolated_env,
    module_text,
    path_of,
    review_script,
    run,
    settings_for,
    target_line,
)

TARGET_CALLS = 2
TARGET_SHARE = 0.10


def fix_finding(text: str, i: int) -> str:
    """File i with the sign flip its finding reports corrected: one line."""
    f = i % 4
    bad = f'        score = record.get("weight", 0) - {f} * record.get("boost", 1)\n'
    good = f'        score = record.get("weight", 0) + {f} * record.get("boost", 1)\n'
    assert text.count(bad) == 1
    return text.replace(bad, good)


def edit_in_place(text: str, i: int) -> str:
    """File i with one changed line edited again (a different default): one line, in place."""
    f = i % 4 + 4  # the second changed function of file i
    old = f"def handle_{f}(records: list[dict], limit: int = {20 + f}) -> list[dict]:\n"
    new = f"def handle_{f}(records: list[dict], limit: int = {30 + f}) -> list[dict]:\n"
    assert text.count(old) == 1
    return text.replace(old, new)


def roles(result: Run) -> str:
    counts = Counter(r.role for r in result.records)
    return ", ".join(f"{n} {role}" for role, n in counts.items()) or "none"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.05, help="seconds per model call")
    args = parser.parse_args(argv)

    fixed, edited = FINDING_FILES[0], 1
    assert edited not in FINDING_FILES
    with isolated_env() as tmp:
        repo = build_change(tmp / "repo")
        script = review_script(args.delay)
        with BenchLLM(handler=script) as llm:
            settings = settings_for(llm.base_url)
            first = run(repo.root, settings)

            repo.write(path_of(fixed), fix_finding(module_text(fixed, 1), fixed))
            repo.commit("fix the sign flip")
            del script.findings[path_of(fixed)]  # the model no longer has it to report
            after_fix = run(repo.root, settings)

            repo.write(path_of(edited), edit_in_place(module_text(edited, 1), edited))
            repo.commit("tweak a default")
            after_edit = run(repo.root, settings)

    runs = {"first review": first, "A: fix pushed": after_fix, "B: one-line edit": after_edit}
    print(
        f"Incremental re-review — {FILES}-file branch change ({len(first.plan.units)} units), "
        "same cache directory, scripted model"
    )
    print(f"A: {path_of(fixed)}: the line its finding quoted is fixed, in a new commit")
    print(f"B: {path_of(edited)} (no findings): a default value edited in place, in a new commit")
    print()
    width = 18
    print("".ljust(30) + "".join(n.rjust(width) for n in runs))

    def line(label: str, values: list[str]) -> None:
        print(label.ljust(30) + "".join(v.rjust(width) for v in values))

    base_tokens = first.prompt_tokens
    line("model calls", [str(r.calls) for r in runs.values()])
    for role in ("planner", "reviewer", "verifier", "summarizer"):
        line(f"  {role}", [str(len(r.by_role(role))) for r in runs.values()])
    line("prompt tokens", [f"{r.prompt_tokens:,}" for r in runs.values()])
    line(
        "  share of the first review",
        [f"{r.prompt_tokens / base_tokens:.1%}" for r in runs.values()],
    )
    line("findings shown", [str(len(r.review.findings)) for r in runs.values()])
    line("wall time (s)", [f"{r.wall_s:.2f}" for r in runs.values()])
    for name, result in list(runs.items())[1:]:
        print()
        print(f"{name} — calls: {roles(result)}; reused:")
        for note in result.review.coverage.notes:
            if "reused" in note or "rule plan" in note:
                print(f"  - {note}")

    calls = after_fix.calls
    share = after_fix.prompt_tokens / base_tokens
    print()
    print(target_line("re-review model calls", str(calls), "<=", str(TARGET_CALLS), calls <= 2))
    print(
        target_line(
            "re-review prompt token share",
            f"{share:.1%}",
            "<=",
            f"{TARGET_SHARE:.0%}",
            share <= TARGET_SHARE,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
