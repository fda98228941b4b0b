"""Secret redaction: the old hand-kept pattern list vs the redactor (redline.redaction: own
patterns + detect-secrets' plugins), on what Redline really redacts.

1. The prompts of a 20-file model review (`_change.py`'s change against the scripted server):
   every message of every request, redacted as agent/llm.py does before sending.
2. A big diff: ~1 MB of real Python source (the locked pydantic/httpx/pygls packages) as added
   lines, with the secret corpus of tests/secret_corpus.py sprinkled through it.
3. The task record of a 2,000-file offline review (pipeline_overhead.py's repository): its
   content, analyzer and review values, as store/tasks.py redacts them (one `redact_data` per
   stored value), against the whole offline review's time.

Each figure is the median of --rounds runs with a fresh redactor (no result cache; the
detect-secrets import is paid once, before, and reported on its own); "warm" reruns the same
text on the same redactor (a retried or re-asked request). The old redactor is kept below as
it was, as the baseline.

    python benchmarks/redaction.py [--rounds 5] [--files 2000]
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redline.config_models import Settings
from redline.diff.index import review_index
from redline.redaction import Redactor
from redline.requests import ScopeKind, ScopeRequest
from redline.review.pipeline import plan_review, run_review

from _change import (
    FILES,
    BenchLLM,
    build_change,
    isolated_env,
    review_script,
    run,
    settings_for,
    target_line,
)
from pipeline_overhead import build_repo
from secret_corpus import CORPUS

TARGET_BIG_DIFF_S = 0.5
TARGET_RECORD_S = 1.0

# -- the old redactor (agent/redact.py before the redaction package), the baseline -------------
_OLD_MASK = "[REDACTED]"
_OLD: list[tuple[re.Pattern[str], Any]] = [
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        "-----BEGIN PRIVATE KEY----- " + _OLD_MASK + " -----END PRIVATE KEY-----",
    ),
    (
        re.compile(
            r"""(?ix)
            (\b[\w.\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|credential|private[_\-]?key)
             [\w.\-]*["']?\s*[:=]\s*)
            (?:"([^"\n]+)"|'([^'\n]+)'|(?!\d+\b)([^\s,;'"(){}\[\]<>]{6,})(?![(\w]))
            """
        ),
        lambda m: (
            m.group(1)
            + (
                '"' + _OLD_MASK + '"'
                if m.group(2)
                else "'" + _OLD_MASK + "'"
                if m.group(3)
                else _OLD_MASK
            )
        ),
    ),
    (re.compile(r"\b(sk-(?:proj-|ant-|or-)?)[A-Za-z0-9_\-]{16,}"), r"\1" + _OLD_MASK),
    (re.compile(r"\b((?:AKIA|ASIA)[A-Z0-9]{4})[A-Z0-9]{12}\b"), r"\1" + _OLD_MASK),
    (re.compile(r"\b(gh[pousr]_)[A-Za-z0-9]{30,}"), r"\1" + _OLD_MASK),
    (re.compile(r"\b(github_pat_)[A-Za-z0-9_]{30,}"), r"\1" + _OLD_MASK),
    (re.compile(r"\b(xox[abposr]-)[A-Za-z0-9\-]{10,}"), r"\1" + _OLD_MASK),
    (re.compile(r"\b(glpat-)[A-Za-z0-9_\-]{20,}"), r"\1" + _OLD_MASK),
    (re.compile(r"\b(AIza)[A-Za-z0-9_\-]{35}\b"), r"\1" + _OLD_MASK),
    (re.compile(r"\b(hf_)[A-Za-z0-9]{30,}\b"), r"\1" + _OLD_MASK),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), _OLD_MASK),
    (
        re.compile(r"\b([a-z][a-z0-9+.\-]*://[^/\s:@]+:)[^@\s/]+@", re.IGNORECASE),
        r"\1" + _OLD_MASK + "@",
    ),
    (re.compile(r"(?i)\b(authorization\s*[:=]\s*(?:bearer|basic|token)\s+)\S+"), r"\1" + _OLD_MASK),
]


def old_redact(text: str) -> str:
    for pattern, replacement in _OLD:
        text = pattern.sub(replacement, text)
    return text


def old_redact_data(value: Any) -> Any:
    if isinstance(value, str):
        return old_redact(value)
    if isinstance(value, dict):
        return {old_redact(k): old_redact_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [old_redact_data(v) for v in value]
    return value


# -- inputs ------------------------------------------------------------------------------------


def review_prompts() -> list[list[dict[str, Any]]]:
    """The messages of every request of a 20-file model review, as the client built them."""
    with isolated_env() as tmp:
        repo = build_change(tmp / "repo")
        with BenchLLM(handler=review_script(0.0)) as llm:
            run(repo.root, settings_for(llm.base_url, cache=False))
            return [list(body["messages"]) for body in llm.requests]


def big_diff(size: int = 1_000_000) -> str:
    """~`size` characters of real Python source as a diff's added lines, with the corpus in."""
    parts: list[str] = []
    total = 0
    secrets = iter(CORPUS * 4)
    for package in ("pydantic", "httpx", "pygls"):
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.origin is not None
        for path in sorted(Path(spec.origin).parent.rglob("*.py")):
            text = path.read_text(encoding="utf-8", errors="replace")
            secret = next(secrets, None)
            if secret is not None:
                text += secret.text
            section = f"diff --git a/{path.name} b/{path.name}\n+++ b/{path.name}\n@@ -0,0 +1 @@\n"
            section += "".join("+" + line + "\n" for line in text.splitlines())
            parts.append(section)
            total += len(section)
            if total >= size:
                return "".join(parts)[:size]
    return "".join(parts)


def offline_record(files: int) -> tuple[list[Any], float]:
    """The values a 2,000-file offline review stores in its task record, and the review's
    wall time (plan + run, analyzers off as in pipeline_overhead.py)."""
    settings = Settings.model_validate({"analyzers": {"ruff": False, "bandit": False}})
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as tmp:
        root = Path(tmp) / "repo"
        build_repo(root, files)
        start = time.perf_counter()
        plan = plan_review(root, ScopeRequest(ScopeKind.BRANCH, "main"), settings)
        review = run_review(plan, settings)
        wall = time.perf_counter() - start
    content = {
        "scope_label": plan.scope.label,
        "scope": plan.scope.request.kind,
        "repo": str(plan.scope.repo_root),
        "stats": plan.scope.stats.model_dump(),
        "units": review_index(plan.units),
    }
    findings = [f.model_dump(mode="json") for f in review.findings]
    return [content, findings, review.model_dump(mode="json")], wall


# -- timing ------------------------------------------------------------------------------------


def median_time(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fresh() -> Redactor:
    return Redactor(key=b"bench" * 8, environment=False)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()

    start = time.perf_counter()
    fresh().redact("password = 'warm-up-1234'")  # imports detect-secrets
    first_use = time.perf_counter() - start

    prompts = review_prompts()
    prompt_chars = sum(len(str(m.get("content") or "")) for ms in prompts for m in ms)
    diff = big_diff()
    record, offline_wall = offline_record(args.files)
    record_strings: list[str] = []

    def collect(v: Any) -> None:
        if isinstance(v, str):
            record_strings.append(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                record_strings.append(k)
                collect(x)
        elif isinstance(v, list):
            for x in v:
                collect(x)

    collect(record)
    record_chars = sum(map(len, record_strings))

    def old_prompts() -> None:
        for messages in prompts:
            for m in messages:
                old_redact(str(m.get("content") or ""))

    def new_prompts() -> None:
        r = fresh()
        for messages in prompts:
            r.redact_messages(messages)

    warm = fresh()
    for messages in prompts:
        warm.redact_messages(messages)
    warm_diff = fresh()
    warm_diff.redact(diff)

    rows = [
        (
            f"{FILES}-file review prompts ({len(prompts)} requests, {prompt_chars / 1e3:.0f} kB)",
            median_time(old_prompts, args.rounds),
            median_time(new_prompts, args.rounds),
            median_time(lambda: [warm.redact_messages(m) for m in prompts], args.rounds),
        ),
        (
            f"big diff ({len(diff) / 1e6:.2f} MB, {len(CORPUS) * 4} secrets in it)",
            median_time(lambda: old_redact(diff), args.rounds),
            median_time(lambda: fresh().redact(diff), args.rounds),
            median_time(lambda: warm_diff.redact(diff), args.rounds),
        ),
        (
            f"{args.files}-file offline task record ({len(record_strings):,} strings, "
            f"{record_chars / 1e6:.2f} MB)",
            median_time(lambda: old_redact_data(record), args.rounds),
            median_time(lambda: [fresh().redact_data(v) for v in record], args.rounds),
            None,
        ),
    ]

    print("Secret redaction: old pattern list vs redline.redaction (median of "
          f"{args.rounds}; fresh redactor per run)")  # fmt: skip
    print(f"first use (imports detect-secrets, builds its plugins): {first_use * 1000:.0f} ms")
    print()
    width = 14
    print("".ljust(64) + "old".rjust(width) + "new".rjust(width) + "new, warm".rjust(width))
    for label, old, new, again in rows:
        cells = [f"{old * 1000:.1f} ms", f"{new * 1000:.1f} ms"]
        cells.append(f"{again * 1000:.1f} ms" if again is not None else "—")
        print(label.ljust(64) + "".join(c.rjust(width) for c in cells))
    record_new = rows[2][2]
    print()
    print(
        f"offline {args.files}-file review (plan + run, analyzers off): {offline_wall:.2f} s; "
        f"redacting its record adds {record_new * 1000:.0f} ms "
        f"({record_new / offline_wall:.1%}; the old code did not redact records)"
    )
    print()
    big_new = rows[1][2]
    met = big_new <= TARGET_BIG_DIFF_S
    print(
        target_line("1 MB diff redaction", f"{big_new:.3f} s", "<=", f"{TARGET_BIG_DIFF_S} s", met)
    )
    met = record_new <= TARGET_RECORD_S
    print(
        target_line(f"{args.files}-file offline task record redaction", f"{record_new:.3f} s",
                    "<=", f"{TARGET_RECORD_S} s", met)
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
