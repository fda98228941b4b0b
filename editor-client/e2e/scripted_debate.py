"""The scripted models of the e2e test's debate (scenario/debate.mjs).

tests/scripted_llm.py's server, answering by the model a request names: each debater's model
gives its scripted turns in order (then passes), its final position when asked for one; the
summarizer's model gives the summary JSON. Every request body is appended to a JSON-lines log,
so the test can check what a debater was shown (the user's interjection).

    python scripted_debate.py --port P --script debate.json --log requests.jsonl

debate.json: {"debaters": {MODEL: {"turns": [TEXT, ...], "position": TEXT}},
              "summarizer": MODEL, "summary": {...}, "turn_delay": SECONDS}
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

from scripted_llm import Reply, ScriptedLLM

# How the engine asks a debater for its final position (prompts/debate/final_position.md):
# words its turn prompts never use.
POSITION_MARKER = "your final position"
# A debater's own model folding older turns (prompts/debate/compact.md).
COMPACT_MARKER = "keep the record of a code review debate"


def _text(body: dict[str, Any]) -> str:
    parts = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return "\n".join(parts)


def _tail(model: str) -> str:
    """litellm sends "openai/alice" as "alice": the script's names are matched without it."""
    return model.rsplit("/", 1)[-1]


def _model(body: dict[str, Any]) -> str:
    return _tail(str(body.get("model", "")))


class DebateScript:
    def __init__(self, script: dict[str, Any], log: Path) -> None:
        self.script = script
        self.log = log
        self.turns_taken: dict[str, int] = {}
        self.lock = threading.Lock()

    def kind(self, body: dict[str, Any]) -> str:
        model = _model(body)
        if model == _tail(self.script["summarizer"]):
            return "summary"
        if COMPACT_MARKER in _text(body):
            return "compact"
        if POSITION_MARKER in _text(body).lower():
            return "position"
        return "turn"

    def __call__(self, body: dict[str, Any]) -> Reply:
        model = _model(body)
        kind = self.kind(body)
        with self.lock:
            n = self.turns_taken.get(model, 0)
            if kind == "turn":
                self.turns_taken[model] = n + 1
            entry = {
                "at": time.time(),
                "model": model,
                "kind": kind,
                "turn": n,
                "text": _text(body),
            }
            with self.log.open("a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
        if kind == "summary":
            return Reply.text(json.dumps(self.script["summary"]))
        debater = {_tail(k): v for k, v in self.script["debaters"].items()}.get(model)
        if debater is None:
            return Reply.error(400, f"scripted_debate: no script for model {model!r}")
        if kind == "position":
            return Reply.text(debater["position"])
        if kind == "compact":
            return Reply.text("Summary so far: the shell call in export_report was discussed.")
        turns: list[str] = debater["turns"]
        text = turns[n] if n < len(turns) else "PASS"
        return Reply.text(text, delay=float(self.script.get("turn_delay", 0)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    args = parser.parse_args()
    script = json.loads(args.script.read_text(encoding="utf-8"))
    llm = ScriptedLLM(handler=DebateScript(script, args.log), port=args.port)
    llm.start()
    print(f"scripted debate models on {llm.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        llm.close()


if __name__ == "__main__":
    main()
