"""A tracked file replaced by a hard link to a file outside the repository.

Path checks see only names, and a hard link's name is inside the tree; its content is the
outside file's. Reads Redline makes itself refused such a file already, but git reads the work
tree on its own — `git diff` of uncommitted changes, `git blame` of the work tree, `git grep` —
so its content went to the model by `review --model` while the report said the file was
skipped, and `ask`'s git diff, blame and search_callers returned it. Each test shows with a
control that plain git reads the outside content, then drives Redline as a user or a model
would and asserts that the content is nowhere: not in the report, not on stderr, not in the
record, not in any request the scripted model server received.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from model_env import isolate_model_env
from redline.agent import ToolExecutor
from redline.git.runner import GitRunner
from redline.tools import ToolContext, build_tool_registry

from gitrepo import _ENV, GitRepo
from review_script import ReviewScript
from scripted_llm import Reply, ScriptedLLM

REDLINE = str(Path(sys.executable).with_name("redline"))
SECRET = "HARDLINK-CANARY-3f9d0b"
SECRET_PY = f'from lib import leaked_helper  # {SECRET}\n\nTOKEN = leaked_helper("{SECRET}")\n'
LIB_PY = "def leaked_helper(value):\n    return value\n"
AGENT_PROMPT_MARK = "You are Redline's review agent"


def redline(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_") or k in KEEP}
    return subprocess.run(
        [REDLINE, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


KEEP = ("REDLINE_CACHE_DIR", "REDLINE_CONFIG", "REDLINE_API_KEY")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_model_env(monkeypatch, tmp_path)


@pytest.fixture
def linked(tmp_path: Path) -> GitRepo:
    """util.py is tracked; in the work tree it is now a hard link to ~/secret.py. app.py has
    an ordinary change, so there is something to review."""
    secret = tmp_path / "home" / "secret.py"
    secret.parent.mkdir()
    secret.write_text(SECRET_PY)
    repo = GitRepo(tmp_path / "repo")
    repo.write("lib.py", LIB_PY)
    repo.write("util.py", "from lib import leaked_helper\n\nTOKEN = leaked_helper('x')\n")
    repo.write("app.py", "def main():\n    return 1\n")
    repo.commit("one")
    (repo.root / "util.py").unlink()
    os.link(secret, repo.root / "util.py")
    repo.write("app.py", "import subprocess\n\n\ndef main(cmd):\n    return subprocess.call(cmd)\n")
    return repo


def cache_text() -> str:
    cache = Path(os.environ["REDLINE_CACHE_DIR"])
    files = [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []
    return "\n".join(p.read_text(errors="replace") for p in files)


def test_control_plain_git_reads_the_outside_content(linked: GitRepo) -> None:
    for args in (["diff"], ["blame", "util.py"], ["grep", "-n", "leaked_helper", "--"]):
        done = subprocess.run(["git", *args], cwd=linked.root, env=_ENV, capture_output=True)
        assert SECRET.encode() in done.stdout


def _report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _withheld(report: dict[str, Any]) -> list[str]:
    """The reasons the report gives for util.py not being reviewed."""
    coverage = report["coverage"]
    reasons = [s["reason"] for s in coverage["skipped"] if s["path"] == "util.py"]
    return reasons + [n for n in coverage["notes"] if "util.py" in n]


@pytest.mark.parametrize("scope", [(), ("--staged",)], ids=["uncommitted", "staged"])
def test_offline_review_says_withheld_and_shows_nothing(
    linked: GitRepo, scope: tuple[str, ...]
) -> None:
    if scope:
        linked.git("add", "app.py")  # staged: the index, not the work tree; util.py unchanged
    done = redline("review", *scope, "--format", "json", cwd=linked.root)
    report = _report(done)
    assert SECRET not in done.stdout + done.stderr + cache_text()
    if not scope:
        assert any("hard link" in r for r in _withheld(report)), report["coverage"]


def test_review_with_a_model_never_sends_it_and_says_so(linked: GitRepo) -> None:
    script = ReviewScript()
    with ScriptedLLM(handler=script) as llm:
        done = redline(
            "review", "--format", "json", "--model", "openai/scripted",
            "--api-base", llm.base_url, cwd=linked.root,
        )  # fmt: skip
        sent = json.dumps(llm.requests)
    report = _report(done)
    assert script.count("reviewer") >= 1 and "app.py" in sent  # the model did review app.py
    assert SECRET not in sent
    assert SECRET not in done.stdout + done.stderr + cache_text()
    reasons = _withheld(report)
    assert reasons and all("hard link" in r for r in reasons), report["coverage"]


def test_a_deleted_definition_search_does_not_quote_it(linked: GitRepo) -> None:
    """Deleting lib.py makes the review grep the work tree for leaked_helper's uses; util.py
    (the hard link) uses it, on the line holding the outside content."""
    (linked.root / "lib.py").unlink()
    done = redline("review", "--format", "json", cwd=linked.root)
    _report(done)
    assert SECRET not in done.stdout + done.stderr + cache_text()


def tool(root: Path, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    ctx = ToolContext(root, runner=GitRunner(), report_dir=root.parent / "reports")
    result = asyncio.run(ToolExecutor(build_tool_registry(ctx)).run(name, args))
    return result.ok, result.content


@pytest.mark.parametrize(
    "command",
    [
        "diff",
        "diff HEAD",
        "diff -R",
        "diff HEAD -- util.py",
        "diff -W HEAD",
        "diff --stat",
        "status",
    ],
)
def test_git_tool_diff_of_the_work_tree_withholds_it(linked: GitRepo, command: str) -> None:
    ok, output = tool(linked.root, "git", {"command": command})
    assert ok, output
    assert SECRET not in output
    if "--stat" not in command and command != "status":
        assert "hard link" in output and "util.py" in output
        if "util.py" not in command:
            assert "subprocess.call" in output  # the rest of the diff is all there


def test_git_tool_blame_of_it_is_refused(linked: GitRepo) -> None:
    ok, output = tool(linked.root, "git", {"command": "blame util.py"})
    assert not ok and SECRET not in output and "hard link" in output
    ok, output = tool(linked.root, "git", {"command": "blame HEAD -- util.py"})
    assert ok and "leaked_helper('x')" in output  # the committed version is the repository's


def test_search_callers_leaves_its_lines_out(linked: GitRepo) -> None:
    ok, output = tool(linked.root, "search_callers", {"symbol": "leaked_helper"})
    assert ok and SECRET not in output
    assert "lib.py" in output  # the definition, in an ordinary file, is still found


def test_grep_through_the_runner_leaves_its_lines_out(linked: GitRepo) -> None:
    """The choke point itself: every work-tree grep (search_callers, the context's searches,
    the deleted-definition search) goes through it."""
    args = ["grep", "-n", "-z", "-I", "-F", "--full-name", "-e", "leaked_helper", "--"]
    result = GitRunner().run_git(linked.root, *args)
    assert result.returncode == 0
    assert SECRET.encode() not in result.stdout and b"lib.py" in result.stdout


def test_ask_with_a_model_sees_none_of_it(linked: GitRepo) -> None:
    steps = [
        Reply.tool("git", {"command": "diff"}),
        Reply.tool("git", {"command": "blame util.py"}),
        Reply.tool("search_callers", {"symbol": "leaked_helper"}),
        Reply.tool("read_file", {"path": "util.py"}),
        Reply.tool("read_function", {"path": "util.py", "name": "TOKEN"}),
        Reply.tool("submit_review", {"summary": "looked", "findings": []}),
    ]
    verifier = ReviewScript()

    def agent(body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        if not messages or AGENT_PROMPT_MARK not in str(messages[0].get("content")):
            return verifier(body)
        step = sum(1 for m in messages if m.get("role") == "assistant")
        return steps[min(step, len(steps) - 1)]

    with ScriptedLLM(handler=agent) as llm:
        done = redline(
            "ask", "review my change", "--format", "json", "--model", "openai/scripted",
            "--api-base", llm.base_url, cwd=linked.root,
        )  # fmt: skip
        sent = json.dumps(llm.requests)
    assert done.returncode == 0, done.stderr
    assert "subprocess.call" in sent  # the agent did see the ordinary change
    assert SECRET not in sent
    assert SECRET not in done.stdout + done.stderr + cache_text()


def test_hard_links_inside_the_tree_are_reviewed_as_usual(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    os.link(repo.root / "a.py", repo.root / "b.py")
    repo.commit("b is a.py's twin")
    (repo.root / "a.py").write_text("import os\nx = 2\n")  # both names change
    ok, output = tool(repo.root, "git", {"command": "diff"})
    assert ok and "+import os" in output and "b.py" in output and "hard link" not in output
    done = redline("review", "--format", "json", cwd=repo.root)
    report = _report(done)
    assert not _withheld(report)
    assert {"a.py", "b.py"} <= set(report["coverage"]["reviewed_files"])
