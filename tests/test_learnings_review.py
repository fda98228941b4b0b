"""Learnings applied by reviews: the installed CLI in real git repositories.

- Offline: a learning naming an analyzer rule drops that rule's findings inside its scope only,
  and the report (JSON, Markdown, terminal) says which learning dropped how many.
- The change under review cannot teach Redline to let it through: a branch that adds a learning
  silencing its own finding still gets the finding, and the edit is a High finding.
- With a model (the scripted server on 127.0.0.1): the reviewer prompt of a file in a
  learning's scope carries the learning, a file outside it does not, and the report lists the
  learning with the files the model said it applied it in.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from redline.memory.learnings import COMMITTED_FILE, make_learning, render

from gitrepo import GitRepo
from real_clients import REDLINE, client_env
from review_script import ReviewScript, role_of, user_text
from scripted_llm import ScriptedLLM

# S311 (random for security): in a test it is noise to this team, in the app it is not.
RANDOM_CODE = "import random\n\n\ndef token():\n    return random.random()\n"
EVAL_CODE = "def run(cmd):\n    return eval(cmd)\n"  # S307, High
TESTS_RANDOM = make_learning("Tests may use random for fixtures.", ["tests/**"], None, ["S311"])


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return client_env(tmp_path, XDG_DATA_HOME=str(tmp_path / "data"), **extra)


def _review(
    repo: GitRepo, env: dict[str, str], *args: str, fmt: str | None = "json"
) -> tuple[int, str, str]:
    """`redline review ARGS`; fmt None: the terminal view (`--color always`)."""
    shown = ["--format", fmt] if fmt else ["--color", "always"]
    proc = subprocess.run(
        [str(REDLINE), "review", *args, *shown, "--quiet", "--fail-on", "high"],
        cwd=repo.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


def _rules(report: dict[str, Any], path: str) -> set[str]:
    return {f["rule_id"] for f in report["findings"] if f["file"] == path and f["rule_id"]}


def _base(tmp_path: Path, learnings: str | None) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "def f():\n    return 1\n")
    repo.write("tests/test_app.py", "def test_f():\n    assert True\n")
    if learnings is not None:
        repo.write(COMMITTED_FILE, learnings)
    repo.commit("base")
    repo.checkout("-b", "feature")
    return repo


def test_a_rule_learning_drops_its_findings_only_inside_its_scope(tmp_path: Path) -> None:
    repo = _base(tmp_path, render([TESTS_RANDOM]))
    repo.write("app.py", RANDOM_CODE)
    repo.write("tests/test_app.py", RANDOM_CODE)
    repo.commit("random in the app and in a test")
    env = _env(tmp_path)

    _, out, _ = _review(repo, env, "--branch", "main")
    report = json.loads(out)
    assert "S311" in _rules(report, "app.py")
    assert "S311" not in _rules(report, "tests/test_app.py")
    (use,) = report["coverage"]["learnings"]
    assert use["id"] == TESTS_RANDOM.id
    assert use["text"] == "Tests may use random for fixtures."
    assert (use["source"], use["scope"], use["rules"]) == ("committed", "paths tests/**", ["S311"])
    assert use["findings_dropped"] == 1
    assert use["files_given"] == []  # no model ran

    _, markdown, _ = _review(repo, env, "--branch", "main", fmt="markdown")
    line = f"`{TESTS_RANDOM.id}` (committed; paths tests/**): Tests may use random for fixtures."
    assert f"  - {line} — dropped 1 finding (S311)" in markdown
    _, terminal, _ = _review(repo, env, "--branch", "main", fmt=None)
    terminal = re.sub(r"\x1b\[[0-9;]*m", "", terminal)
    assert "Learnings applied:" in terminal and TESTS_RANDOM.id in terminal
    assert "dropped 1 finding (S311)" in terminal


def test_a_private_learning_applies_too(tmp_path: Path) -> None:
    repo = _base(tmp_path, None)
    repo.write("tests/test_app.py", RANDOM_CODE)
    repo.commit("random in a test")
    env = _env(tmp_path)
    learn = subprocess.run(
        [str(REDLINE), "learn", "random is fine in tests", "--path", "tests/", "--rules",
         "S311", "--private"],
        cwd=repo.root, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert learn.returncode == 0, learn.stderr
    _, out, _ = _review(repo, env, "--branch", "main")
    report = json.loads(out)
    assert "S311" not in _rules(report, "tests/test_app.py")
    (use,) = report["coverage"]["learnings"]
    assert (use["source"], use["findings_dropped"]) == ("private", 1)


SCOPES: dict[str, list[str]] = {
    "branch": ["--branch", "main"],
    "commit": ["--commit", "HEAD"],
    "since": ["--since", "main"],
    "range": ["--range", "main..feature"],
    "pr": ["--pr", "12"],
}


@pytest.mark.parametrize("scope", list(SCOPES))
def test_a_change_cannot_teach_redline_to_let_it_through(tmp_path: Path, scope: str) -> None:
    repo = _base(tmp_path, None)
    repo.write("app.py", EVAL_CODE)
    silencer = make_learning("eval is reviewed elsewhere", ["app.py"], None, ["S307"])
    repo.write(COMMITTED_FILE, render([silencer]))
    repo.commit("eval, and a learning that hides it")
    # Pull request #12 is the branch, read from the local ref (the environment names no gh).
    repo.git("remote", "add", "origin", "https://github.com/acme/widget.git")
    repo.git("update-ref", "refs/pull/12/head", "feature")
    env = _env(tmp_path, REDLINE_GH=str(tmp_path / "no-gh"))

    code, out, err = _review(repo, env, *SCOPES[scope])
    report = json.loads(out)
    assert code == 1, err
    assert "S307" in _rules(report, "app.py")
    assert report["coverage"]["learnings"] == []
    (edit,) = [f for f in report["findings"] if f["file"] == COMMITTED_FILE]
    assert edit["severity"] == "High" and edit["category"] == "Security"
    assert edit["sources"] == ["redline:learnings"]
    assert "drops S307 findings (paths app.py)" in edit["title"]
    assert edit["line"] == 12  # the learning's bullet, after the file's header comment


def test_the_users_own_uncommitted_learning_applies_at_once(tmp_path: Path) -> None:
    repo = _base(tmp_path, None)
    repo.write("tests/test_app.py", RANDOM_CODE)
    repo.write(COMMITTED_FILE, render([TESTS_RANDOM]))
    _, out, _ = _review(repo, _env(tmp_path))  # uncommitted: the work tree is the ground
    report = json.loads(out)
    assert "S311" not in _rules(report, "tests/test_app.py")
    (edit,) = [f for f in report["findings"] if f["file"] == COMMITTED_FILE]
    assert edit["severity"] == "Low"  # the user's own edit; reported, not gating
    assert report["coverage"]["learnings"][0]["findings_dropped"] == 1


# -- with a model ------------------------------------------------------------------------------

_LEARNING_ID = re.compile(r"^- (L-[0-9a-f]{8}): ", re.MULTILINE)


class _LearningScript(ReviewScript):
    """Reviewer answers that say they applied every learning their prompt carried."""

    def _reviewer(self, text: str, path: str) -> dict[str, Any]:
        answer = super()._reviewer(text, path)
        answer["applied_learnings"] = _LEARNING_ID.findall(text)
        return answer


def test_the_model_is_shown_the_learnings_of_each_file_and_the_report_lists_them(
    tmp_path: Path,
) -> None:
    in_tests = make_learning(
        "We use plain asserts in tests; do not suggest unittest.", ["tests/**"]
    )
    go_only = make_learning("Wrap errors with %w.", [], "go")
    repo = _base(tmp_path, render([in_tests, go_only]))
    repo.write("app.py", "def f():\n    return 2\n")
    repo.write("tests/test_app.py", "from app import f\n\n\ndef test_f():\n    assert f() == 2\n")
    repo.commit("change both")
    user = tmp_path / "user.toml"
    user.write_text("[llm]\nmax_retries = 1\ntimeout = 20\n", encoding="utf-8")
    env = _env(tmp_path, REDLINE_CONFIG=str(user), REDLINE_API_KEY="sk-test-key-not-secret")
    with ScriptedLLM(handler=_LearningScript()) as llm:
        code, out, err = _review(
            repo, env, "--branch", "main", "--model", "openai/scripted", "--api-base",
            llm.base_url,
        )  # fmt: skip
        prompts = {
            m.group(1): user_text(body)
            for body in llm.requests
            if role_of(body) == "reviewer"
            and (m := re.search(r"^# File under review: `(.+?)`", user_text(body), re.M))
        }
    assert code == 0, (err, [f["title"] for f in json.loads(out)["findings"]])
    assert set(prompts) == {"app.py", "tests/test_app.py"}
    assert in_tests.id in prompts["tests/test_app.py"]
    assert in_tests.text in prompts["tests/test_app.py"]
    assert in_tests.id not in prompts["app.py"]
    assert go_only.id not in prompts["app.py"] + prompts["tests/test_app.py"]
    report = json.loads(out)
    (use,) = report["coverage"]["learnings"]
    assert use["id"] == in_tests.id
    assert use["files_given"] == ["tests/test_app.py"]
    assert use["files_applied"] == ["tests/test_app.py"]
    assert report["coverage"]["models"]
