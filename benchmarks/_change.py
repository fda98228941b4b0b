"""Shared by the model benchmarks: a 20-file change in a real git repository, settings that
point the real pipeline at the scripted model server, and a run helper that times a review and
keeps the client's ledger.

Nothing leaks to or from the machine: the environment is isolated (REDLINE_CONFIG points at a
file that does not exist, REDLINE_CACHE_DIR at a temporary directory, every other REDLINE_*
variable is removed) and the model is the scripted server on 127.0.0.1.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from redline.agent.llm import LLMClient, load_litellm
from redline.agent.usage import CallRecord
from redline.config_models import (
    AnalyzerSettings,
    LLMSettings,
    ModelSettings,
    Settings,
)
from redline.model import Review
from redline.requests import ScopeKind, ScopeRequest
from redline.review.pipeline import plan_review, run_review
from redline.review.plan import Plan
from redline.review.reviewer import FileReview

from gitrepo import GitRepo
from review_script import ReviewScript
from scripted_llm import ScriptedLLM, _make_handler

FILES = 20
FUNCTIONS_PER_FILE = 12
MODEL = "openai/scripted"
BASE_BRANCH = "main"
FEATURE_BRANCH = "feature"
# Files (by index) whose reviewer reports a finding: a change where a quarter of the files
# have something to say, so the verifier has real work.
FINDING_FILES = (0, 3, 7, 11, 15)


def path_of(i: int) -> str:
    return f"pkg{i // 10}/service_{i}.py"


def _function(i: int, f: int, variant: int) -> list[str]:
    """One function; `variant` 1 changes two of its lines (a realistic small edit)."""
    limit = 10 + f if variant == 0 else 20 + f
    op = "+" if variant == 0 else "-"
    return [
        "",
        "",
        f"def handle_{f}(records: list[dict], limit: int = {limit}) -> list[dict]:",
        f'    """Filter and score the records of batch {f} in service {i}."""',
        "    out = []",
        "    for record in records[:limit]:",
        f'        score = record.get("weight", 0) {op} {f} * record.get("boost", 1)',
        "        if score > 0:",
        '            out.append({"id": record["id"], "score": score})',
        "    return out",
    ]


def module_text(i: int, variant: int) -> str:
    """A ~130-line module; in variant 1 three of its twelve functions change."""
    out = [f'"""Service {i}: filters and scores records."""', "", "import logging", ""]
    out.append("log = logging.getLogger(__name__)")
    for f in range(FUNCTIONS_PER_FILE):
        changed = variant == 1 and f % 4 == i % 4
        out += _function(i, f, 1 if changed else 0)
    return "\n".join(out) + "\n"


def finding_for(i: int) -> dict[str, Any]:
    """A finding the scripted reviewer reports in file i, quoting code that is in the file."""
    f = i % 4  # the first changed function of file i
    return {
        "file": path_of(i),
        "severity": "High",
        "category": "Functionality",
        "title": f"Sign flip in the score of handle_{f} (service {i})",
        "comment": "The boost is now subtracted, so boosted records score lower.",
        "existing_code": f'        score = record.get("weight", 0) - {f} * record.get("boost", 1)',
        "improved_code": f'        score = record.get("weight", 0) + {f} * record.get("boost", 1)',
        "confidence": 0.85,
    }


def build_change(root: Path) -> GitRepo:
    """`main` with 20 modules; `feature` changes three functions (six lines) in each."""
    repo = GitRepo(root, branch=BASE_BRANCH)
    for i in range(FILES):
        repo.write(path_of(i), module_text(i, 0))
    repo.commit("base")
    repo.checkout("-b", FEATURE_BRANCH)
    for i in range(FILES):
        repo.write(path_of(i), module_text(i, 1))
    repo.commit("feature: new scoring")
    return repo


def review_script(delay: float) -> ReviewScript:
    return ReviewScript(
        findings={path_of(i): [finding_for(i)] for i in FINDING_FILES},
        delay=delay,
    )


def settings_for(base_url: str, *, max_concurrency: int = 32, cache: bool = True) -> Settings:
    """The real pipeline's settings with the analyzers off (they are not what is measured
    here) and the model pointed at the scripted server."""
    settings = Settings(
        models=ModelSettings(model=MODEL, api_base=base_url, api_key="test-key"),
        llm=LLMSettings(max_concurrency=max_concurrency, max_retries=0, timeout=30),
        analyzers=AnalyzerSettings(ruff=False, bandit=False),
    )
    settings.review.cache = cache
    return settings


@contextmanager
def isolated_env() -> Iterator[Path]:
    """A temporary directory; REDLINE_CACHE_DIR inside it, no user config, no REDLINE_* from
    the caller's shell. Restores the environment afterwards."""
    saved = dict(os.environ)
    try:
        for var in list(os.environ):
            if var.startswith("REDLINE_"):
                del os.environ[var]
        with tempfile.TemporaryDirectory(prefix="redline-bench-") as tmp:
            root = Path(tmp)
            # An empty file: no user settings (a REDLINE_CONFIG naming a missing file is an
            # error since the CLI stopped ignoring it).
            (root / "redline.toml").write_text("")
            os.environ["REDLINE_CONFIG"] = str(root / "redline.toml")
            os.environ["REDLINE_CACHE_DIR"] = str(root / "cache")
            load_litellm()  # its import takes seconds: paid once, outside every timing
            yield root
    finally:
        os.environ.clear()
        os.environ.update(saved)


@dataclass
class Run:
    plan: Plan
    review: Review
    records: list[CallRecord]
    wall_s: float  # run_review only (the plan is computed before the clock starts)
    plan_s: float

    @property
    def calls(self) -> int:
        return len(self.records)

    @property
    def prompt_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.records)

    def by_role(self, role: str) -> list[CallRecord]:
        return [r for r in self.records if r.role == role]


def run(repo: Path, settings: Settings, on_file: Callable[[FileReview], None] | None = None) -> Run:
    """Plan and review the branch scope with a fresh client; the client's ledger is kept."""
    start = time.perf_counter()
    plan = plan_review(repo, ScopeRequest(ScopeKind.BRANCH, BASE_BRANCH), settings)
    plan_s = time.perf_counter() - start
    client = LLMClient(settings)
    start = time.perf_counter()
    hooks: dict[str, Any] = {"client": client}
    if on_file is not None:
        hooks["on_file"] = on_file
    review = run_review(plan, settings, model_hooks=hooks)
    wall = time.perf_counter() - start
    return Run(plan, review, list(client.ledger.records), wall, plan_s)


def target_line(name: str, value: str, op: str, limit: str, met: bool) -> str:
    return f"TARGET {name} {value} {op} {limit}: {'met' if met else 'MISSED'}"


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: twenty reviewers connecting at once overflow
    # it, and the kernel retries the dropped connections a whole second later — a harness
    # artefact that would be measured as pipeline latency. A real model endpoint accepts them.
    request_queue_size = 256
    daemon_threads = True


class BenchLLM(ScriptedLLM):
    """ScriptedLLM with a listen backlog that fits twenty simultaneous connections."""

    def start(self) -> BenchLLM:
        server = _Server((self._host, self._port), _make_handler(self))
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self
