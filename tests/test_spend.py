"""Spending less time and fewer tokens on the model (issue 10): what a user waits for and pays."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from redline.agent.llm import LLMClient
from redline.config_models import LLMSettings, ModelSettings, Settings
from redline.model import Category, Finding, Severity
from redline.review.verifier import BATCH, verify

from gitrepo import GitRepo
from review_script import BATCH_MARK, ReviewScript, review_branch, role_of, user_text
from scripted_llm import Reply, ScriptedLLM


def _finding(n: int) -> Finding:
    return Finding(
        id=f"RL-{n:012x}",
        file="a.py",
        line=n + 1,
        severity=Severity.HIGH,
        category=Category.FUNCTIONALITY,
        title=f"Problem {n}",
        comment="c",
        existing_code=f"x{n} = 1",
        sources=["model:openai/scripted"],
    )


def test_verifier_batches_run_at_once() -> None:
    findings = [_finding(n) for n in range(2 * BATCH + 5)]  # three batches
    script = ReviewScript(delay=0.3)
    with ScriptedLLM(handler=script) as llm:
        settings = Settings(
            models=ModelSettings(model="openai/scripted", api_base=llm.base_url, api_key="k"),
            llm=LLMSettings(max_retries=0, timeout=20),
        )
        text = "\n".join(f"x{n} = 1" for n in range(len(findings)))
        result = asyncio.run(verify(LLMClient(settings), findings, {"a.py": text}.get))
        peak = llm.max_in_flight
    assert script.count("verifier") == 3 and peak == 3
    assert [f.id for f in result.kept] == [f.id for f in findings]
    assert all(f.verification and f.verification.verdict == "CORRECT" for f in result.kept)


# Run in a fresh interpreter (this one has imported litellm long ago): the CLI reviews a branch
# with a model; the analyzers stage records whether litellm is being imported meanwhile.
_CLI_RUN = """
import json, sys, time
import redline.review.pipeline as pipeline
from redline.cli.main import main
seen = {}
original = pipeline.run_analyzers
def analyzers(*args, **kwargs):
    deadline = time.monotonic() + 20
    while "litellm" not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.01)
    seen["litellm_during_analyzers"] = "litellm" in sys.modules
    return original(*args, **kwargs)
pipeline.run_analyzers = analyzers
code = main(["review", "--repo", sys.argv[1], "--branch", "main", "--quiet",
             "--model", "openai/scripted", "--api-base", sys.argv[2], "--format", "json"])
print(json.dumps({"code": code, **seen}), file=sys.stderr)
"""


def test_a_model_review_imports_litellm_while_git_and_the_analyzers_work(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write("app.py", "def f(x):\n    return x\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    repo.write("app.py", "def f(x):\n    return x + 1\n")
    repo.commit("feature")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env |= {
        "REDLINE_CONFIG": os.devnull,
        "REDLINE_CACHE_DIR": str(tmp_path / "cache"),
        "REDLINE_API_KEY": "k",
    }
    with ScriptedLLM(handler=ReviewScript()) as llm:
        proc = subprocess.run(
            [sys.executable, "-c", _CLI_RUN, str(repo.root), llm.base_url],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
    result = json.loads(proc.stderr.strip().splitlines()[-1])
    assert result == {"code": 0, "litellm_during_analyzers": True}, proc.stderr


def test_reviewer_prompts_show_each_code_line_once_after_a_shared_prefix(repo: GitRepo) -> None:
    # Short functions changed in one hunk each: the diff already shows them whole.
    for i in range(3):
        repo.write(f"m{i}.py", f"def f{i}(x):\n    return x + {i}\n")
    repo.write("AGENTS.md", "Prefer explicit errors.\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(3):
        repo.write(f"m{i}.py", f"def f{i}(x):\n    return x - {i}\n")
    repo.commit("feature")
    with ScriptedLLM(handler=ReviewScript()) as llm:
        review_branch(repo.root, llm)
        bodies = [b for b in llm.requests if role_of(b) == "reviewer"]
    assert len(bodies) == 3
    prefixes = set()
    for body in bodies:
        text = user_text(body)
        numbered = [ln for ln in text.splitlines() if re.match(r"^ *\d+ [ +]\| ", ln)]
        assert len(numbered) == len(set(numbered)), text  # no line sent twice
        assert "Code lines are shown as" not in text  # said once, in the instructions
        prefixes.add(text[: text.index("# File under review")])
    assert len(prefixes) == 1 and "Prefer explicit errors." in prefixes.pop()


def _wide_change(repo: GitRepo, files: int) -> None:
    for i in range(files):
        repo.write(f"pkg/m{i}.py", f"def f{i}(x, limit=10):\n    return x + {i}\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(files):
        repo.write(f"pkg/m{i}.py", f"def f{i}(x, limit=10):\n    return x - {i}\n")
    repo.commit("feature")


def _finding_in(i: int) -> dict[str, object]:
    return {
        "file": f"pkg/m{i}.py",
        "severity": "High",
        "category": "Functionality",
        "title": f"Sign flip in f{i}",
        "comment": "Subtracts instead of adding.",
        "existing_code": f"    return x - {i}",
        "confidence": 0.8,
    }


def test_small_files_of_a_wide_change_share_reviewer_calls(repo: GitRepo) -> None:
    _wide_change(repo, 10)
    script = ReviewScript(findings={"pkg/m0.py": [_finding_in(0)], "pkg/m7.py": [_finding_in(7)]})
    with ScriptedLLM(handler=script) as llm:
        first, calls = review_branch(repo.root, llm)
        assert calls["reviewer"] == 2  # ten small files, five a call
        assert sorted((f.file, f.line) for f in first.findings) == [
            ("pkg/m0.py", 2),
            ("pkg/m7.py", 2),
        ]
        assert len(first.coverage.reviewed_files) == 10 and not first.coverage.skipped

        # Each file's answer was kept on its own: a one-line edit costs one single-file call.
        repo.write("pkg/m3.py", "def f3(x, limit=20):\n    return x - 3\n")
        repo.commit("tweak")
        again, calls = review_branch(repo.root, llm)
        assert calls == {"reviewer": 1}
        assert BATCH_MARK not in user_text(llm.requests[-1])
    assert [f.id for f in again.findings] == [f.id for f in first.findings]


class _LeavesOneOut(ReviewScript):
    def _reviewer(self, text: str, path: str) -> dict[str, object]:
        answer = super()._reviewer(text, path)
        if BATCH_MARK in text:
            answer["files"] = answer["files"][:-1]  # type: ignore[index]
        return answer


def test_a_file_a_batched_answer_leaves_out_is_reviewed_on_its_own(repo: GitRepo) -> None:
    _wide_change(repo, 10)
    script = _LeavesOneOut(findings={"pkg/m9.py": [_finding_in(9)]})
    with ScriptedLLM(handler=script) as llm:
        review, calls = review_branch(repo.root, llm)
    assert calls["reviewer"] == 4  # two batches, and the file each left out, alone
    assert [f.file for f in review.findings] == ["pkg/m9.py"]
    assert len(review.coverage.reviewed_files) == 10 and not review.coverage.skipped


def test_a_context_request_that_names_nothing_costs_no_round(repo: GitRepo) -> None:
    repo.write("app.py", "def f(x):\n    return x + 1\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    repo.write("app.py", "def f(x):\n    return x - 1\n")
    repo.commit("feature")
    finding = dict(_finding_in(0), file="app.py", existing_code="    return x - 1")
    vague = {"findings": [finding], "need_context": [{"kind": "callers", "target": " "}]}
    script = ReviewScript(faults={("reviewer", "app.py"): [Reply.text(json.dumps(vague))]})
    with ScriptedLLM(handler=script) as llm:
        review, calls = review_branch(repo.root, llm)
    assert calls["reviewer"] == 1  # the answer with its findings is final
    assert [(f.file, f.line) for f in review.findings] == [("app.py", 2)]


def test_the_estimate_plans_the_reviewer_calls_the_review_makes(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    from redline.cli.main import main

    _wide_change(repo, 10)
    with ScriptedLLM(handler=ReviewScript()) as llm:
        args = ["review", "--branch", "main", "--repo", str(repo.root), "--model"]
        args += ["openai/scripted", "--api-base", llm.base_url]
        assert main([*args, "--estimate"]) == 0
        out = capsys.readouterr().out
        assert llm.requests == []
        _, calls = review_branch(repo.root, llm)
    # planner + two calls of five small files + verifier + summary, as the review then made
    assert "Planned model calls: 5 " in out and calls["reviewer"] == 2
    # The cap still allows one call per file: an unusable batch is reviewed file by file.
    assert "Model request cap: 46 (llm.max_requests)" in out
