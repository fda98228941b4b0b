"""Offline recall on the bundled eval corpus: Python's analyzers alone beside every analyzer.

`redline eval --corpus bundled --cases 210` with no model scores the offline analyzers on bugs
planted in Python, JavaScript, TypeScript and Go code (issue 26). This runs it twice as a user
runs it (the installed CLI, an isolated cache and configuration), side by side in one run:

- before: ruff and bandit only (every analyzer added for other languages turned off in the
  configuration file the run reads);
- after: the default configuration (every analyzer on).

It prints recall and precision, recall per language and per operator, both runs' wall times, and
TARGET lines: precision stays ≥ 0.9, and every language other than Python is found at all.

    python benchmarks/offline_eval.py [--cases 210] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from redline.config_models import AnalyzerSettings

REDLINE = Path(sys.executable).with_name("redline")
# The analyzers for languages other than Python; only those this install knows are named.
OTHER_LANGUAGES = ("ast_grep", "oxlint", "shellcheck", "hadolint", "zizmor")


def before_config() -> str:
    known = [name for name in OTHER_LANGUAGES if name in AnalyzerSettings.model_fields]
    return "[analyzers]\n" + "".join(f"{name} = false\n" for name in known)


def run_eval(cases: int, seed: int, config: str) -> tuple[float, dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="redline-bench-eval-") as tmp:
        home = Path(tmp)
        config_file = home / "config.toml"
        config_file.write_text(config, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
            env.pop(key, None)
        env.update(
            {
                "REDLINE_CONFIG": str(config_file),
                "REDLINE_CACHE_DIR": str(home / "cache"),
                "HOME": str(home),
                "TMPDIR": str(home),
                "NO_COLOR": "1",
            }
        )
        argv = [str(REDLINE), "eval", "--corpus", "bundled", "--cases", str(cases)]
        argv += ["--seed", str(seed), "--format", "json"]
        start = time.perf_counter()
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"redline eval exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return seconds, json.loads(proc.stdout)


def _cell(entry: dict[str, int] | None) -> str:
    return "—" if not entry else f"{entry['found']}/{entry['cases']}"


def _table(name: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    b, a = before[f"by_{name}"]["offline"], after[f"by_{name}"]["offline"]
    lines = [f"| {name} | before | after |", "|---|--:|--:|"]
    for key in sorted(set(b) | set(a)):
        lines.append(f"| {key} | {_cell(b.get(key))} | {_cell(a.get(key))} |")
    return lines


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=210)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    before_s, before = run_eval(args.cases, args.seed, before_config())
    after_s, after = run_eval(args.cases, args.seed, "")
    (tb,), (ta,) = before["totals"], after["totals"]
    print(f"offline eval, bundled corpus, {args.cases} cases, seed {args.seed}")
    print("| run | recall | precision | found | wall s |")
    print("|---|--:|--:|--:|--:|")
    for label, t, s, data in (("before", tb, before_s, before), ("after", ta, after_s, after)):
        found = sum(r["found"] for r in data["results"])
        print(f"| {label} | {_ratio(t['recall'])} | {_ratio(t['precision'])} | {found} | {s:.1f} |")
    print()
    print("\n".join(_table("language", before, after)))
    print()
    print("\n".join(_table("operator", before, after)))
    precision = ta["precision"]
    print(f"TARGET offline eval precision ≥ 0.9: {_ratio(precision)}", end=" ")
    print("(met)" if precision is None or precision >= 0.9 else "(MISSED)")
    languages = after["by_language"]["offline"]
    silent = sorted(k for k, v in languages.items() if k != "python" and v["found"] == 0)
    print(
        "TARGET offline eval finds bugs in every language: "
        + ("met" if not silent else f"MISSED in {', '.join(silent)}")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
