"""Review cost: prompt tokens per changed line and coverage of the changed lines, Redline's
pipeline vs a baseline that puts the whole changed files and the diff in one prompt.

Both are counted with the same estimator (characters / 4, `context.budget.estimate_tokens`,
which is also what Redline budgets context with) over the text of every message sent. Redline's
figure is measured: the messages its calls actually sent to the scripted server, all roles
(planner, reviewers, verifier, summarizer). The baseline prompt is built, not sent: the
reviewer's system prompt, the whole diff, and each changed file's new version in full.

Coverage is the share of added (new-side) lines that a reviewer call saw as a numbered added
line (`  42 +| code`) in the prompt of that file's reviewer; for the baseline it is 100% when
its prompt fits a 128k-token context, else the share of lines inside the part that fits.

    python benchmarks/review_cost.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redline.context.budget import estimate_tokens
from redline.review.plan import Plan
from redline.review.prompts import load_prompt
from redline.review.reviewer import FileReview

from _change import FILES, BenchLLM, build_change, isolated_env, review_script, run, settings_for
from review_script import role_of, user_text

CONTEXT_LIMIT = 128_000
_FILE = re.compile(r"^# File under review: `(.+?)`", re.MULTILINE)


def message_tokens(bodies: list[dict[str, object]]) -> int:
    total = 0
    for body in bodies:
        for m in body.get("messages", []):  # type: ignore[union-attr]
            total += estimate_tokens(str(m.get("content") or ""))
    return total


def covered(prompt: str, number: int, text: str) -> bool:
    return re.search(rf"^ *{number} \+\| {re.escape(text)}$", prompt, re.MULTILINE) is not None


def file_contents(plan: Plan) -> dict[str, str]:
    return {
        u.file_path: (plan.scope.read_new(u.file_path) or b"").decode("utf-8")
        for u in plan.reviewable
    }


def baseline_prompt(plan: Plan, contents: dict[str, str]) -> tuple[str, list[tuple[str, int, int]]]:
    """The whole-files baseline: the reviewer's instructions, the diff and every changed file
    in full, in one prompt; with (path, line, char offset) of each file line in it."""
    parts = [load_prompt("reviewer"), "# The change (unified diff)", plan.scope.diff_text]
    line_offsets: list[tuple[str, int, int]] = []
    for path in sorted(contents):
        parts.append(f"# {path} (new version)")
        offset = sum(len(p) + 1 for p in parts)
        for n, line in enumerate(contents[path].split("\n"), 1):
            line_offsets.append((path, n, offset))
            offset += len(line) + 1
        parts.append(contents[path])
    return "\n".join(parts), line_offsets


def main() -> int:
    with isolated_env() as tmp:
        repo = build_change(tmp / "repo")
        script = review_script(0.0)
        files: dict[str, FileReview] = {}
        with BenchLLM(handler=script) as llm:
            result = run(
                repo.root,
                settings_for(llm.base_url),
                on_file=lambda fr: files.__setitem__(fr.path, fr),
            )
            bodies = list(llm.requests)
        plan = result.plan
        contents = file_contents(plan)

    stats = plan.scope.stats
    changed = stats.added + stats.removed

    # Redline: every request as sent; reviewer prompts by file for coverage.
    reviewer_prompts: dict[str, str] = {}
    for body in bodies:
        if role_of(body) == "reviewer":
            # A batched call carries several files, each from its heading to the next one.
            text = user_text(body)
            heads = list(_FILE.finditer(text))
            for m, nxt in zip(heads, [*heads[1:], None], strict=True):
                part = text[m.start() : nxt.start() if nxt else len(text)]
                reviewer_prompts[m.group(1)] = reviewer_prompts.get(m.group(1), "") + "\n" + part
    redline_tokens = message_tokens(bodies)
    reviewer_tokens = message_tokens([b for b in bodies if role_of(b) == "reviewer"])
    added = [(u.file_path, n) for u in plan.reviewable for n in u.added_lines]
    seen = [
        (path, n)
        for path, n in added
        if covered(reviewer_prompts.get(path, ""), n, contents[path].split("\n")[n - 1])
    ]
    missed = sorted(set(added) - set(seen))

    # Baseline: one prompt, whole changed files + the diff.
    baseline_text, line_offsets = baseline_prompt(plan, contents)
    baseline_tokens = estimate_tokens(baseline_text)
    fits_chars = CONTEXT_LIMIT * 4
    inside = {(p, n) for p, n, off in line_offsets if off < fits_chars}
    baseline_seen = [a for a in added if baseline_tokens <= CONTEXT_LIMIT or a in inside]

    print(
        f"Review cost — {FILES}-file branch change: {stats.files} files, "
        f"+{stats.added} −{stats.removed} lines ({len(plan.units)} units); "
        "tokens = characters / 4 over every message"
    )
    print()
    width = 26
    print("".ljust(40) + "Redline".rjust(width) + "whole files + diff".rjust(width))

    def line(label: str, a: str, b: str) -> None:
        print(label.ljust(40) + a.rjust(width) + b.rjust(width))

    line("model calls", str(len(bodies)), "1 (not sent)")
    line("prompt tokens", f"{redline_tokens:,}", f"{baseline_tokens:,}")
    line("  of which reviewer calls", f"{reviewer_tokens:,}", f"{baseline_tokens:,}")
    line("  ledger (server's count)", f"{result.prompt_tokens:,}", "—")
    line(
        "prompt tokens per changed line",
        f"{redline_tokens / changed:.1f}",
        f"{baseline_tokens / changed:.1f}",
    )
    line(
        "reviewer tokens per changed line",
        f"{reviewer_tokens / changed:.1f}",
        f"{baseline_tokens / changed:.1f}",
    )
    line(
        "added lines seen by a reviewer",
        f"{len(seen)} of {len(added)} ({len(seen) / len(added):.0%})",
        f"{len(baseline_seen)} of {len(added)} ({len(baseline_seen) / len(added):.0%})",
    )
    fits = "yes" if baseline_tokens <= CONTEXT_LIMIT else "no"
    line("fits a 128k context", "per call: yes", fits)
    if missed:
        print()
        print("Added lines no reviewer saw:")
        for path, n in missed:
            print(f"  {path}:{n}")
    system = estimate_tokens(load_prompt("reviewer"))
    print()
    calls = sum(1 for b in bodies if role_of(b) == "reviewer")
    print(
        f"Redline sends the reviewer's instructions (~{system:,} tokens) once per reviewer call "
        f"({calls} calls for {len(reviewer_prompts)} files: small files share a call) and adds "
        "planner, verifier and summary calls;"
    )
    print(
        "it sends the changed functions, not whole files. The baseline's single prompt must "
        "fit one context window;"
    )
    print("Redline's per-file context is bounded by review.context_tokens at any change size.")
    coverage = len(seen) / len(added)
    print()
    print(
        f"TARGET coverage {coverage:.0%} == 100%: {'met' if not missed else 'MISSED'}"
        + ("" if not missed else f" ({len(missed)} added lines left out, listed above)")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
