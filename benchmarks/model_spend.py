"""Model spend, measured as a user runs Redline: `redline review --branch main` in a subprocess
against the scripted model server (300 ms per call by default), default settings (concurrency
included), a fresh cache — then one line is edited in a new commit and the branch is reviewed
again with the same cache (the one-line re-review).

Printed side by side:
- prompt tokens per changed line (characters / 4 over every message the server received, as in
  review_cost.py) beside the whole-files baseline (one prompt: instructions, diff, every changed
  file in full), and the server's own count;
- model calls per stage (planner, reviewer, verifier, summarizer) for both runs;
- the CLI's wall time over the critical path of its model calls. The critical path is the
  chain a perfectly parallel client could not beat: planner + the longest per-file reviewer
  chain + one verifier round + the summarizer, × the delay. The model phase is from the first
  request the server saw to the process's exit; before it: interpreter start, git, units,
  analyzers — and litellm's import, started in the background (its cold import alone is timed
  in a separate interpreter and shown on its own line).

    python benchmarks/model_spend.py [--delay 0.3]

The same measurement runs against another checkout by putting its server/ first on PYTHONPATH
(the `redline` script then imports that code): that is how the before/after figures were taken.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from incremental import edit_in_place
from redline.context.budget import estimate_tokens
from redline.requests import ScopeKind, ScopeRequest
from redline.review.pipeline import plan_review
from review_cost import baseline_prompt, file_contents

from _change import (
    BASE_BRANCH,
    FILES,
    BenchLLM,
    build_change,
    isolated_env,
    module_text,
    path_of,
    review_script,
    settings_for,
    target_line,
)
from review_script import role_of
from scripted_llm import _estimate_tokens

TARGET_TOKENS = 150
TARGET_RATIO = 1.3
ROLES = ("planner", "reviewer", "verifier", "summarizer")
REDLINE = Path(sys.executable).parent / "redline"


def message_tokens(body: dict[str, Any]) -> int:
    return sum(estimate_tokens(str(m.get("content") or "")) for m in body.get("messages", []))


class Recorder:
    """Wraps the review script: the arrival time, role and files of every request."""

    def __init__(self, script: Any) -> None:
        self.script = script
        self.seen: list[tuple[float, str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.seen.append((time.monotonic(), role_of(body), body))
        return self.script(body)


def reviewer_depth(script: Any, start: int) -> int:
    """The longest chain of reviewer calls for one file (need_* rounds), from the script's log."""
    per_file: Counter[str] = Counter()
    for role, path in script.calls[start:]:
        if role == "reviewer":
            per_file[path] += 1
    return max(per_file.values(), default=0)


def cli_review(repo: Path, base_url: str, env: dict[str, str]) -> tuple[float, float, int]:
    """(start, end monotonic, exit code) of one `redline review` run."""
    args = [str(REDLINE), "review", "--repo", str(repo), "--branch", BASE_BRANCH, "--quiet"]
    args += ["--model", "openai/scripted", "--api-base", base_url, "--format", "json"]
    start = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    end = time.monotonic()
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"redline review exited {proc.returncode}")
    return start, end, proc.returncode


def litellm_import_seconds(env: dict[str, str]) -> float:
    code = (
        "import time; t = time.perf_counter(); from redline.agent.llm import load_litellm; "
        "load_litellm(); print(time.perf_counter() - t)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def summarize_run(
    rec: Recorder, script: Any, first: int, calls_from: int, span: tuple[float, float]
) -> dict[str, Any]:
    seen = rec.seen[first:]
    roles = Counter(role for _, role, _ in seen)
    start, end = span
    depth = (
        (1 if roles["planner"] else 0)
        + reviewer_depth(script, calls_from)
        + (1 if roles["verifier"] else 0)
        + (1 if roles["summarizer"] else 0)
    )
    first_request = seen[0][0] if seen else end
    last_answer = (seen[-1][0] + script.delay) if seen else end
    arrivals = {role: [t - first_request for t, r, _ in seen if r == role] for role in ROLES}
    return {
        "calls": len(seen),
        "roles": roles,
        "tokens": sum(message_tokens(b) for _, _, b in seen),
        "server_tokens": sum(_estimate_tokens(b.get("messages", [])) for _, _, b in seen),
        "wall": end - start,
        "before_model": first_request - start,
        "model_phase": end - first_request,
        "depth": depth,
        "after_last_answer": end - last_answer,
        "arrivals": arrivals,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.3, help="seconds per model call")
    args = parser.parse_args(argv)

    with isolated_env() as tmp:
        repo = build_change(tmp / "repo")
        plan = plan_review(repo.root, ScopeRequest(ScopeKind.BRANCH, BASE_BRANCH), settings_for(""))
        baseline_text, _ = baseline_prompt(plan, file_contents(plan))
        baseline = estimate_tokens(baseline_text)
        stats = plan.scope.stats
        changed = stats.added + stats.removed
        env = dict(os.environ)  # isolated: no user config, a fresh REDLINE_CACHE_DIR
        env["REDLINE_API_KEY"] = "test-key"
        import_s = litellm_import_seconds(env)

        script = review_script(args.delay)
        rec = Recorder(script)
        with BenchLLM(handler=rec) as llm:
            span = cli_review(repo.root, llm.base_url, env)
            first = summarize_run(rec, script, 0, 0, span[:2])
            edited = 1
            repo.write(path_of(edited), edit_in_place(module_text(edited, 1), edited))
            repo.commit("tweak a default")
            mark, calls_mark = len(rec.seen), len(script.calls)
            span = cli_review(repo.root, llm.base_url, env)
            again = summarize_run(rec, script, mark, calls_mark, span[:2])
            peak = llm.max_in_flight

    print(
        f"Model spend — `redline review --branch {BASE_BRANCH}` as a subprocess, {FILES}-file "
        f"change (+{stats.added} −{stats.removed} lines, {len(plan.units)} units), scripted "
        f"model at {args.delay * 1000:.0f} ms per call, default settings, analyzers on"
    )
    print()
    width = 22
    cols = ("first review", "one-line re-review", "whole files + diff")
    print("".ljust(44) + "".join(c.rjust(width) for c in cols))

    def line(label: str, *values: str) -> None:
        print(label.ljust(44) + "".join(v.rjust(width) for v in values))

    line("model calls", str(first["calls"]), str(again["calls"]), "1 (not sent)")
    for role in ROLES:
        line(f"  {role}", str(first["roles"][role]), str(again["roles"][role]), "")
    line(
        "prompt tokens (chars / 4)", f"{first['tokens']:,}", f"{again['tokens']:,}", f"{baseline:,}"
    )
    line("  server's count", f"{first['server_tokens']:,}", f"{again['server_tokens']:,}", "")
    per_line = first["tokens"] / changed
    line("prompt tokens per changed line", f"{per_line:.1f}", "", f"{baseline / changed:.1f}")
    line("CLI wall time (s)", f"{first['wall']:.2f}", f"{again['wall']:.2f}", "")
    line("  before the first model call (s)", f"{first['before_model']:.2f}", "", "")
    line("  model phase, to exit (s)", f"{first['model_phase']:.2f}", "", "")
    line("  of which after the last answer (s)", f"{first['after_last_answer']:.2f}", "", "")
    crit = first["depth"] * args.delay
    line("critical path of the model calls (s)", f"{crit:.2f} ({first['depth']} calls)", "", "")
    ratio = first["model_phase"] / crit
    line("model phase / critical path", f"{ratio:.2f}", "", "")
    line("wall / critical path", f"{first['wall'] / crit:.2f}", "", "")
    line("litellm import alone, cold process (s)", f"{import_s:.2f}", "", "")
    line("peak requests in flight (both runs)", str(peak), "", "")
    print()
    print(
        "The model phase runs from the first request the server saw to the process's exit "
        "(rendering included); the critical path is planner + longest per-file reviewer chain "
        "+ one verifier round + summarizer, × the delay."
    )
    print(
        target_line(
            "prompt tokens per changed line",
            f"{per_line:.1f}",
            "<=",
            str(TARGET_TOKENS),
            per_line <= TARGET_TOKENS,
        )
    )
    print(
        target_line(
            "CLI model phase / critical path",
            f"{ratio:.2f}",
            "<=",
            str(TARGET_RATIO),
            ratio <= TARGET_RATIO,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
