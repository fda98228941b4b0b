"""The CI recipe for project memory (docs/ci/github-memory.yml, README "In CI"): valid against
GitHub's workflow schema, the README's copy is the file, only the default branch's push job
saves the cache (a pull request's job restores and never saves), and the recipe works: an index
built in one job's cache directory and carried to another's, as actions/cache does, is found by
the next checkout at the same path, and that job's review reports it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from test_ci_files import REDLINE, ROOT, check_jsonschema

from gitrepo import GitRepo
from readme_snippets import snippet

RECIPE = ROOT / "docs" / "ci" / "github-memory.yml"


def _workflow() -> dict[Any, Any]:
    data = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _uses(job: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(s["uses"], s.get("with", {})) for s in job["steps"] if "uses" in s]


def test_the_recipe_is_a_valid_workflow_and_the_readme_shows_it(tmp_path: Path) -> None:
    result = check_jsonschema("vendor.github-workflows", RECIPE, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert snippet("The workflow with project memory", "yaml") == RECIPE.read_text("utf-8")


def test_only_the_default_branch_push_saves_the_index() -> None:
    workflow = _workflow()
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1: on → True
    assert triggers["push"]["branches"] == ["main"] and "pull_request" in triggers
    assert "pull_request_target" not in triggers
    jobs = workflow["jobs"]
    savers = {
        name
        for name, job in jobs.items()
        for uses, _ in _uses(job)
        if uses.startswith(("actions/cache/save@", "actions/cache@"))
    }
    assert savers == {"memory"}
    assert jobs["memory"]["if"] == "github.event_name == 'push'"
    # The pull request's job: restore only, from the keys the push job saves under.
    review = jobs["review"]
    assert review["if"] == "github.event_name == 'pull_request'"
    (saved,) = [w for u, w in _uses(jobs["memory"]) if u.startswith("actions/cache/save@")]
    restores = [w for u, w in _uses(review) if u.startswith("actions/cache/restore@")]
    assert len(restores) == 1
    prefix = restores[0]["restore-keys"]
    assert saved["key"].startswith(prefix) and restores[0]["path"] == saved["path"]
    assert prefix.startswith("redline-memory-v0.1.0-")  # another Redline version: another key
    # The cache directory is outside the checkout, in both jobs.
    for job in (jobs["memory"], review):
        text = json.dumps(job)
        assert "REDLINE_CACHE_DIR=$RUNNER_TEMP/redline-cache" in text
    assert saved["path"] == "${{ runner.temp }}/redline-cache/memory"


def _run(args: list[str], cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, REDLINE_CACHE_DIR=str(cache))
    return subprocess.run(
        [str(REDLINE), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_an_index_carried_to_the_next_job_is_used_by_its_review(tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.write(
        "billing.py",
        'def charge(card, amount):\n    """Charge the card."""\n    return card.pay(amount)\n\n\n'
        "def refund(card, amount):\n    return charge(card, -amount)\n",
    )
    origin.commit("init")
    workspace = tmp_path / "runner" / "work" / "app"  # $GITHUB_WORKSPACE: the same every job

    # The push job: check out, build, and "save" (actions/cache archives the directory).
    subprocess.run(["git", "clone", "-q", str(origin.root), str(workspace)], check=True)
    first_cache = tmp_path / "job1-temp" / "redline-cache"
    built = _run(["memory", "build", "--repo", str(workspace)], tmp_path, first_cache)
    assert built.returncode == 0, built.stderr
    saved = tmp_path / "actions-cache"
    shutil.copytree(first_cache / "memory", saved)

    # The pull request's job, on a fresh runner: a new checkout at the same path, a new temp
    # directory, the index restored into it; the pull request changes a function.
    shutil.rmtree(workspace)
    subprocess.run(["git", "clone", "-q", str(origin.root), str(workspace)], check=True)
    (workspace / "billing.py").write_text(
        (workspace / "billing.py").read_text() + "\n\ndef void(card):\n    return refund(card, 0)\n"
    )
    second_cache = tmp_path / "job2-temp" / "redline-cache"
    shutil.copytree(saved, second_cache / "memory")
    status = _run(
        ["memory", "status", "--repo", str(workspace), "--format", "json"], tmp_path, second_cache
    )
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["built"] is True
    review = _run(["review", "--format", "json"], workspace, second_cache)
    assert review.returncode in (0, 1), review.stderr
    coverage = json.loads(review.stdout)["coverage"]
    assert coverage["memory"].startswith("2 symbols, built"), coverage
