"""Run the model-pipeline, language-server, redaction, anchoring, debate, skip-content,
task-store, end-to-end CLI, offline-review, deleted-file search, eval-oracle (pipeline loss),
offline eval, big-diff (memory and request size), native-analyzer and learnings benchmarks one after
another, each in its own process
(so each pays its own imports, like a CLI run), then repeat their TARGET lines together.

    python benchmarks/run_all.py

Exits non-zero only if a benchmark crashed; a missed target is reported, not failed, because
timings depend on the machine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = (
    "model_spend.py",
    "review_latency.py",
    "incremental.py",
    "review_cost.py",
    "lsp_responsiveness.py",
    "memory_lsp.py",
    "redaction.py",
    "anchoring.py",
    "debate.py",
    "skip_content.py",
    "task_store.py",
    "e2e_cli.py",
    "offline_review.py",
    "deleted_search.py",
    "eval_oracle.py",
    "offline_eval.py",
    "big_diff.py",
    "native_analyzers.py",
    "learnings.py",
)


def main() -> int:
    targets: list[str] = []
    failed: list[str] = []
    for name in BENCHMARKS:
        print(f"=== {name}", flush=True)
        proc = subprocess.run(
            [sys.executable, str(HERE / name)], capture_output=True, text=True, check=False
        )
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        print(flush=True)
        if proc.returncode != 0:
            failed.append(name)
        targets += [line for line in proc.stdout.splitlines() if line.startswith("TARGET ")]
    print("=== targets")
    for line in targets:
        print(line)
    for name in failed:
        print(f"FAILED {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
