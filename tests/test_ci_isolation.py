"""The shipped CI runs nothing from the pull request (issue 23, section 1).

The action's install and review steps (action.yml, as the runner runs them) and the GitLab
example's job lines (docs/ci/gitlab-ci.yml, in one bash as GitLab runs them) are run for real, in
a checkout that plants everything a step could execute or read: Python modules (`venv.py`,
`pip/__main__.py`, `sitecustomize.py`, ...), `.pth` files, a `pyvenv.cfg`, uv's configuration,
a `.python-version`, and programs on a PATH that names the checkout (tests/ci_bed.py). The job's
environment points into the checkout the way many Python workflows do (`PYTHONPATH=.`). After
each run no marker may exist, and the install and the review must have worked. The rules
behind it, each on its own and fast: tests/test_ci_install_rules.py.

Speed: each run installs Redline from uv.lock into a fresh environment. uv works offline from
the cache `make setup-dev` filled (UV_OFFLINE=1); pip fetches the one hash-pinned uv wheel. One
run per CI flavour per session (module-scoped), about 20 s each, most of it compiling bytecode.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from ci_bed import (
    ROOT,
    base_python,
    job_env,
    markers_left,
    plant,
    real_uv_cache,
    redline_upstream,
    run_bash,
    version_of,
)
from forge_bed import Forge, github_forge
from gitrepo import GitRepo

ACTION = ROOT / "action.yml"
GITLAB = ROOT / "docs" / "ci" / "gitlab-ci.yml"

INJECTION = '''"""Export reports."""
import subprocess


def export(name: str, target_dir: str) -> int:
    command = f"zip -r {target_dir}/{name}.zip reports/{name}"
    return subprocess.call(command, shell=True)
'''


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@dataclass
class Run:
    """One CI job run in a hostile checkout."""

    tree: Path
    markers: Path
    results: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    forge: Forge | None = None

    def log(self) -> str:
        return "\n".join(f"--- {k}\n{r.stdout}\n{r.stderr}" for k, r in self.results.items())


def hostile_pull_request(root: Path, markers: Path, origin: str) -> GitRepo:
    """A repository whose branch `feature` (checked out) adds a shell injection and every
    planted file on top of main."""
    markers.mkdir()
    repo = GitRepo(root)
    repo.write("README.md", "# App\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    plant(repo.root, markers)
    repo.write("app/reports.py", INJECTION)
    repo.commit("the pull request")
    repo.git("remote", "add", "origin", origin)
    return repo


@pytest.fixture(scope="module")
def uv_cache(pytestconfig: pytest.Config) -> Path | None:
    from private_env import STASH_KEY

    env = pytestconfig.stash.get(STASH_KEY, None)
    return real_uv_cache(env.saved if env is not None else {})


# --- the GitHub Action -------------------------------------------------------------------------


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@pytest.fixture(scope="module")
def github_run(tmp_path_factory: pytest.TempPathFactory, uv_cache: Path | None) -> Run:
    """The action's install and review steps, as the runner runs them, on a pull request."""
    base = tmp_path_factory.mktemp("github")
    repo = hostile_pull_request(
        base / "workspace", base / "markers", "https://github.com/acme/widgets.git"
    )
    forge = github_forge(base / "forge", repo, "acme/widgets", valid={})
    runner_temp = base / "runner-temp"
    runner_temp.mkdir()
    env = job_env(
        repo.root,
        uv_cache,
        RUNNER_TEMP=str(runner_temp),
        GITHUB_WORKSPACE=str(repo.root),
        GITHUB_ACTION_PATH=str(ROOT),
        REDLINE_GH=str(forge.root / "gh"),
    )
    expressions = {
        "${{ steps.python.outputs.python-path }}": base_python(),
        "${{ github.action_path }}": str(ROOT),
        "${{ github.event.pull_request.number }}": "7",
        "${{ inputs.fail-on }}": "high",
        "${{ inputs.model }}": "",
        "${{ inputs.post }}": "false",
        "${{ inputs.inline }}": "false",
        "${{ inputs.sarif-file }}": "redline.sarif",
        "${{ inputs.token }}": "ghs_test",
    }
    run = Run(repo.root, base / "markers", forge=forge)
    steps = {s.get("id"): s for s in load(ACTION)["runs"]["steps"]}
    for step_id in ("install", "review"):
        step = steps[step_id]
        output = base / f"output-{step_id}"
        output.write_text("")
        step_env = dict(env, GITHUB_OUTPUT=str(output))
        for name, value in step.get("env", {}).items():
            step_env[name] = expressions[value] if "${{" in value else value
        run.results[step_id] = run_bash(step["run"], repo.root, step_env)
        run.outputs[step_id] = _outputs(output)
        if step_id == "install":
            redline = run.outputs[step_id].get("redline", "")
            expressions["${{ steps.install.outputs.redline }}"] = redline
    return run


def test_the_action_runs_nothing_from_the_pull_request(github_run: Run) -> None:
    assert markers_left(github_run.markers) == [], github_run.log()


def test_the_action_installs_and_reviews_in_a_hostile_checkout(github_run: Run) -> None:
    install, review = github_run.results["install"], github_run.results["review"]
    assert install.returncode == 0, github_run.log()
    assert "redline 0.1.0" in install.stdout
    redline = Path(github_run.outputs["install"]["redline"])
    assert redline.is_file() and os.access(redline, os.X_OK)
    assert github_run.tree not in redline.parents
    assert review.returncode == 0, github_run.log()  # deferred to the action's last step
    assert github_run.outputs["review"] == {"exit-code": "1", "sarif-file": "redline.sarif"}
    sarif = json.loads((github_run.tree / "redline.sarif").read_text())
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    }
    assert "app/reports.py" in uris


def test_the_action_builds_its_environment_with_the_python_it_was_given(
    github_run: Run,
) -> None:
    redline = Path(github_run.outputs["install"]["redline"])
    assert version_of(str(redline.parent.parent / "venv" / "bin" / "python")) == version_of(
        base_python()
    )


def test_the_installed_command_imports_nothing_from_the_working_directory(
    github_run: Run, uv_cache: Path | None
) -> None:
    """Run again in the checkout, with PYTHONPATH=. and a user base inside it."""
    redline = github_run.outputs["install"]["redline"]
    env = job_env(github_run.tree, uv_cache)
    out = run_bash(f"{redline!r} --version", github_run.tree, env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "redline 0.1.0"
    assert markers_left(github_run.markers) == []


# --- the GitLab example ------------------------------------------------------------------------

GITLAB_PROJECT = "acme/tools/widgets"


@pytest.fixture(scope="module")
def gitlab_run(tmp_path_factory: pytest.TempPathFactory, uv_cache: Path | None) -> Run:
    """The example job's before_script and script, in one bash as GitLab runs them, in a merge
    request pipeline with GITLAB_TOKEN set. Redline's repository is a local copy of this work
    tree at the example's tag (no network); everything else is the job's lines as shipped."""
    base = tmp_path_factory.mktemp("gitlab")
    job = load(GITLAB)["redline"]
    variables = {name: str(value) for name, value in job["variables"].items()}
    upstream = redline_upstream(base / "upstream", variables["REDLINE_VERSION"])
    repo = hostile_pull_request(
        base / "project", base / "markers", f"https://gitlab.example.com/{GITLAB_PROJECT}.git"
    )
    main = repo.git("rev-parse", "main").strip()
    refs = {"base_sha": main, "head_sha": repo.head(), "start_sha": main}
    forge = Forge(
        base / "forge",
        {
            "project_id": "acme%2Ftools%2Fwidgets", "number": 7, "login": "redline-bot",
            "next_id": 500,
            "mr": {"iid": 7, "title": "Export", "source_branch": "feature",
                   "target_branch": "main", "sha": repo.head(), "diff_refs": refs},
            "diff": repo.git("diff", "main...feature"), "valid": {},
            "issue_comments": [], "review_comments": [],
        },
    )  # fmt: skip
    tmpdir = base / "tmp"
    tmpdir.mkdir()
    variables["REDLINE_REPO"] = f"file://{upstream}"
    env = job_env(
        repo.root,
        uv_cache,
        **variables,
        CI_PIPELINE_SOURCE="merge_request_event",
        CI_PROJECT_DIR=str(repo.root),
        CI_MERGE_REQUEST_IID="7",
        GITLAB_TOKEN="glpat-secret-token-value",
        REDLINE_GLAB=str(forge.root / "glab"),
        TMPDIR=str(tmpdir),
    )
    lines = [*job["before_script"], *job["script"]]
    run = Run(repo.root, base / "markers", forge=forge)
    run.results["job"] = run_bash("\n".join(lines), repo.root, env)
    return run


def test_the_gitlab_job_runs_nothing_from_the_merge_request(gitlab_run: Run) -> None:
    assert markers_left(gitlab_run.markers) == [], gitlab_run.log()


def test_the_gitlab_job_installs_reviews_and_posts(gitlab_run: Run) -> None:
    job = gitlab_run.results["job"]
    assert job.returncode == 1, gitlab_run.log()  # the injection is at or above high
    assert "redline 0.1.0" in job.stdout
    sarif = json.loads((gitlab_run.tree / "redline.sarif").read_text())
    assert sarif["runs"][0]["results"]
    assert gitlab_run.forge is not None
    [note] = gitlab_run.forge.state()["issue_comments"]
    assert "<!-- redline:summary:review -->" in note["body"]


def test_the_gitlab_job_installs_with_the_images_python_not_the_checkouts(
    gitlab_run: Run,
) -> None:
    """`PYTHON=python3` is looked up outside the checkout: a pyenv shim there would pick the
    `.python-version` the merge request planted (2.7.18)."""
    [venv_python] = gitlab_run.tree.parent.glob("tmp/tmp.*/tools/venv/bin/python")
    image = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]}
    assert version_of(str(venv_python)) == version_of("python3", Path("/"), image)


def test_the_gitlab_job_leaves_the_checkout_as_it_found_it(gitlab_run: Run) -> None:
    status = subprocess.run(
        ["git", "-C", str(gitlab_run.tree), "status", "--porcelain", "--ignored"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert status == ["?? redline.sarif"]  # the artifact, and nothing else
