"""The debate mode, measured as a user runs it: `redline debate --branch main` in a subprocess,
three debaters × three rounds over a 10-file change, every model call answered by the scripted
server after 300 ms (each turn ~400 tokens), with `debate.transcript_tokens` low enough that
the transcript is compacted from round 2 on.

Printed:
- the CLI's wall time beside the sum of the turns' latencies (from the JSON report's
  `debate.turns[].latency_s`): turns are sequential by design, so the turns phase (the first
  turn's request to the first final position's) over that sum is what the orchestration adds;
  the compaction calls inside the phase are shown apart (they are model time, by design too);
- the prompt tokens of the turn requests per round (characters / 4 of every message the
  server received for a turn): the transcript grows every turn, what a debater is shown must
  stay bounded.

    python benchmarks/debate.py [--delay 0.3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redline.context.budget import estimate_tokens

from _change import (
    BASE_BRANCH,
    FEATURE_BRANCH,
    BenchLLM,
    isolated_env,
    module_text,
    path_of,
    target_line,
)
from gitrepo import GitRepo
from scripted_llm import Reply

FILES = 10
ROUNDS = 3
DEBATERS = ("alice", "bob", "carol")
TRANSCRIPT_TOKENS = 1500  # three ~400-token turns: compaction from the fifth turn on
TARGET_PHASE_RATIO = 1.15  # turns phase / (its model calls × delay)
TARGET_GROWTH = 1.25  # prompt tokens of round 3 / round 2
REDLINE = Path(sys.executable).parent / "redline"
ROUND = re.compile(r"Round (\d+) of \d+")

# ~400 tokens: a turn that cites code and argues, as a real one would.
TURN_TEXT = (
    "In pkg0/service_0.py handle_0 the boost is now subtracted, so boosted records score lower; "
    "the same sign flip repeats in every changed function of the ten services. "
) * 10


def build_change(root: Path) -> GitRepo:
    repo = GitRepo(root, branch=BASE_BRANCH)
    for i in range(FILES):
        repo.write(path_of(i), module_text(i, 0))
    repo.commit("base")
    repo.checkout("-b", FEATURE_BRANCH)
    for i in range(FILES):
        repo.write(path_of(i), module_text(i, 1))
    repo.commit("feature: new scoring")
    return repo


def user_config(base_url: str) -> str:
    lines = [
        "[llm]", "max_retries = 0", "timeout = 30", "",
        "[debate]", f"rounds = {ROUNDS}", f"transcript_tokens = {TRANSCRIPT_TOKENS}",
    ]  # fmt: skip
    for name in DEBATERS:
        lines += [
            "", f"[debate.reviewers.{name}]", f'model = "openai/{name}"',
            f'api_base = "{base_url}"', f'prompt = "You review the change as {name}."',
        ]  # fmt: skip
    lines += ["", "[debate.summarizer]", 'model = "openai/judge"', f'api_base = "{base_url}"']
    return "\n".join(lines) + "\n"


SUMMARY = {
    "overview": "The scoring sign flip is in every service.",
    "consensus": [{"point": "The boost is subtracted instead of added."}],
    "disagreements": [],
    "action_items": [
        {
            "title": "Sign flip in the score of handle_0",
            "detail": "Boosted records now score lower.",
            "severity": "High",
            "file": path_of(0),
            "existing_code": '        score = record.get("weight", 0) - 0 * record.get("boost", 1)',
            "improved_code": '        score = record.get("weight", 0) + 0 * record.get("boost", 1)',
        }
    ],
}


def kind_of(body: dict[str, Any]) -> str:
    text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    if "neutral summarizer of a code review debate" in text:
        return "summary"
    if "# Your final position" in text:
        return "position"
    if "# Turns to fold in" in text:
        return "compaction"
    if "# Your turn" in text:
        return "turn"
    return "other"


class Recorder:
    """Answers every call after `delay` and keeps (arrival, kind, prompt tokens, round)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.seen: list[tuple[float, str, int, int | None]] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        kind = kind_of(body)
        tokens = sum(estimate_tokens(str(m.get("content") or "")) for m in body["messages"])
        match = ROUND.search(str(body["messages"][-1].get("content") or ""))
        with self._lock:
            self.seen.append((time.monotonic(), kind, tokens, int(match[1]) if match else None))
        if kind == "summary":
            return Reply.text(json.dumps(SUMMARY), delay=self.delay)
        if kind == "compaction":
            return Reply.text("Summary: every debater sees the sign flip.", delay=self.delay)
        return Reply.text(TURN_TEXT, delay=self.delay)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.3, help="seconds per model call")
    args = parser.parse_args(argv)

    with isolated_env() as tmp:
        repo = build_change(tmp / "repo")
        rec = Recorder(args.delay)
        with BenchLLM(handler=rec) as llm:
            config = tmp / "user.toml"
            config.write_text(user_config(llm.base_url), encoding="utf-8")
            env = dict(os.environ, REDLINE_CONFIG=str(config), REDLINE_API_KEY="test-key")
            cmd = [str(REDLINE), "debate", "--repo", str(repo.root), "--branch", BASE_BRANCH]
            cmd += ["--rounds", str(ROUNDS), "--format", "json", "--quiet"]
            start = time.monotonic()
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
            end = time.monotonic()
        if proc.returncode not in (0, 1):
            sys.stderr.write(proc.stderr)
            raise SystemExit(f"redline debate exited {proc.returncode}")
    report = json.loads(proc.stdout)
    turns = [t for t in report["debate"]["turns"] if t["kind"] in ("turn", "pass")]
    latencies = sum(float(t["latency_s"]) for t in turns)
    seen = rec.seen
    kinds = Counter(kind for _, kind, _, _ in seen)
    first_turn = next(t for t, kind, _, _ in seen if kind == "turn")
    first_position = next((t for t, kind, _, _ in seen if kind == "position"), end)
    phase = first_position - first_turn
    per_round: dict[int, list[int]] = {}
    for _, kind, tokens, round_no in seen:
        if kind == "turn" and round_no is not None:
            per_round.setdefault(round_no, []).append(tokens)

    print(
        f"Debate — `redline debate --branch {BASE_BRANCH}` as a subprocess, {len(DEBATERS)} "
        f"debaters × {ROUNDS} rounds, {FILES}-file change, scripted model at "
        f"{args.delay * 1000:.0f} ms per call, ~{estimate_tokens(TURN_TEXT)} tokens per turn, "
        f"debate.transcript_tokens = {TRANSCRIPT_TOKENS}"
    )
    print()

    def line(label: str, value: str) -> None:
        print(label.ljust(52) + value.rjust(16))

    in_phase = [k for t, k, _, _ in seen if first_turn <= t < first_position]
    model_s = len(in_phase) * args.delay  # sequential by design: each waits for the last
    lat = [float(t["latency_s"]) for t in turns]
    others = sorted(lat[1:]) or [0.0]
    line("model calls", str(len(seen)))
    for kind in ("turn", "compaction", "position", "summary"):
        line(f"  {kind}", str(kinds[kind]))
    line("CLI wall time (s)", f"{end - start:.2f}")
    line("sum of the turns' latencies, from the report (s)", f"{latencies:.2f}")
    line(
        "  first turn / median of the others (s)", f"{lat[0]:.2f} / {others[len(others) // 2]:.2f}"
    )
    line("wall time − sum of the turns' latencies (s)", f"{end - start - latencies:.2f}")
    line("  before the first model call (s)", f"{first_turn - start:.2f}")
    line("  after the turns: positions, summary, report (s)", f"{end - first_position:.2f}")
    line("turns phase: first turn to first final position (s)", f"{phase:.2f}")
    line(f"  model time in it: {len(in_phase)} calls × delay (s)", f"{model_s:.2f}")
    overhead = phase - model_s
    line("  orchestration overhead (s)", f"{overhead:.2f}")
    ratio = phase / model_s
    line("turns phase / model time in it", f"{ratio:.2f}")
    print()
    print("Prompt tokens of the turn requests (chars / 4), per round:")
    for round_no in sorted(per_round):
        values = per_round[round_no]
        line(
            f"  round {round_no}: {len(values)} turns, total (per turn)",
            f"{sum(values):,} ({', '.join(str(v) for v in values)})",
        )
    rounds = sorted(per_round)
    growth = sum(per_round[rounds[-1]]) / sum(per_round[rounds[-2]]) if len(rounds) > 1 else 1.0
    # What the last turn alone would carry in transcript without compaction.
    full = (ROUNDS * len(DEBATERS) - 1) * estimate_tokens(TURN_TEXT)
    line("  the last turn's transcript uncompacted (tokens)", f"{full:,}")
    print()
    print(
        target_line(
            "debate turns phase / its model time",
            f"{ratio:.2f}",
            "<=",
            str(TARGET_PHASE_RATIO),
            ratio <= TARGET_PHASE_RATIO,
        )
    )
    print(
        target_line(
            "debate prompt tokens, last round / the one before",
            f"{growth:.2f}",
            "<=",
            str(TARGET_GROWTH),
            growth <= TARGET_GROWTH,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
