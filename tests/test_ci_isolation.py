"""The shipped CI runs nothing from the pull request (issue 23, section 1).

The action's install and review steps (action.yml, as the runner runs them) and the GitLab
example's job lines (docs/ci/gitlab-ci.yml, in one bash as GitLab runs them) are run for real, in
a checkout that plants everything a step could execute or read: Python modules (`venv.py`,
`pip/__main__.py`, `sitecustomize.py`, ...), `.pth` files, a `pyvenv.cfg`, uv's configuration,
a `.python-version`, and programs on a PATH that names the checkout (tests/ci_bed.py). The job's
environment points into the checkout the way many Python workflows do (`PYTHONPATH=.`). After
each run no marker may exist, and the install and the review must have worked.

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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
INSTALL_SH = ROOT / "ci" / "github" / "install.sh"
ISOLATION_SH = ROOT / "ci" / "github" / "isolation.sh"

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


# --- install.sh's own checks -------------------------------------------------------------------


def _install(cwd: Path, **values: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], **values}
    return run_bash(f"{str(INSTALL_SH)!r}", cwd, env)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"TOOLS_DIR": "tools"}, "TOOLS_DIR must be an absolute path"),
        ({"ACTION_PATH": "redline"}, "ACTION_PATH must be an absolute path"),
        (
            {"TOOLS_DIR": "{checkout}/tools", "GITHUB_WORKSPACE": "{checkout}"},
            "TOOLS_DIR must be outside the checkout",
        ),
        (
            {"TOOLS_DIR": "{checkout}", "CI_PROJECT_DIR": "{checkout}/"},
            "TOOLS_DIR must be outside the checkout",
        ),
        (
            {"TOOLS_DIR": "{link}/tools", "GITHUB_WORKSPACE": "{checkout}"},
            "TOOLS_DIR must be outside the checkout",
        ),
        ({"PYTHON": "no-such-python"}, "PYTHON (no-such-python) is not a command"),
    ],
)
def test_install_refuses_what_would_put_it_in_the_checkout(
    tmp_path: Path, values: dict[str, str], message: str
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (tmp_path / "link").symlink_to(checkout)
    env = {"PYTHON": base_python(), "ACTION_PATH": str(ROOT), "TOOLS_DIR": str(tmp_path / "t")}
    env.update({k: v.format(checkout=checkout, link=tmp_path / "link") for k, v in values.items()})
    out = _install(checkout, **env)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"redline install: {message}" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "t").exists()


# --- install.sh's steps, through a fake Python and uv ----------------------------------------

FAKE_PYTHON = r"""#!/bin/bash
# Records each call (working directory and arguments); acts just enough for install.sh.
printf 'python\t%s\t%s\n' "$PWD" "$*" >> "$FAKE_LOG"
case "$1 $2 $3" in
  "-I -c "*) echo "$FAKE_PYTHON" ;;
  "-I -m venv") mkdir -p "${@: -1}/bin" && cp "$FAKE_PYTHON" "${@: -1}/bin/python" &&
    cp "$FAKE_UV" "${@: -1}/bin/uv" ;;
  "-I -m pip") ;;
  *) [[ "$1" == -I && -f "$2" ]] && echo "redline 0.1.0" ;;
esac
"""

FAKE_UV = r"""#!/bin/bash
# Records its call and the UV_* and PYTHON* variables it got; makes the environment uv would.
printf 'uv\t%s\t%s\n' "$PWD" "$*" >> "$FAKE_LOG"
env | grep -E '^(UV_|PYTHON)' | sort > "$FAKE_LOG.uv-env"
mkdir -p "$UV_PROJECT_ENVIRONMENT/bin"
cp "$FAKE_PYTHON" "$UV_PROJECT_ENVIRONMENT/bin/python"
touch "$UV_PROJECT_ENVIRONMENT/bin/redline"
"""


@dataclass
class FakeInstall:
    result: subprocess.CompletedProcess[str]
    calls: list[tuple[str, str, str]]  # (program, working directory, arguments)
    uv_env: dict[str, str]
    tools: Path


def _fake_install(tmp_path: Path, **job: str) -> FakeInstall:
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    for name, text in (("python3", FAKE_PYTHON), ("uv", FAKE_UV)):
        (fakes / name).write_text(text)
        (fakes / name).chmod(0o755)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    log = tmp_path / "log"
    tools = tmp_path / "tools"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "FAKE_LOG": str(log),
        "FAKE_PYTHON": str(fakes / "python3"),
        "FAKE_UV": str(fakes / "uv"),
        "PYTHON": str(fakes / "python3"),
        "ACTION_PATH": str(ROOT),
        "TOOLS_DIR": str(tools),
        "GITHUB_WORKSPACE": str(checkout),
    }
    env.update({k: v.format(checkout=checkout, tmp=tmp_path) for k, v in job.items()})
    result = run_bash(f"{str(INSTALL_SH)!r}", checkout, env)
    calls = [tuple(line.split("\t", 2)) for line in log.read_text().splitlines()]
    uv_env = dict(
        line.split("=", 1) for line in Path(f"{log}.uv-env").read_text().splitlines()
    )
    return FakeInstall(result, calls, uv_env, tools)  # type: ignore[arg-type]


def test_install_runs_every_step_outside_the_checkout_and_isolated(tmp_path: Path) -> None:
    """The job's settings point into the checkout: none of them reaches uv or a Python."""
    fake = _fake_install(
        tmp_path,
        PYTHONPATH=".",
        PYTHONSTARTUP="{checkout}/startup.py",
        PYTHONUSERBASE="{checkout}",
        UV_CONFIG_FILE="{checkout}/uv.toml",
        UV_CACHE_DIR="{checkout}/.uv-cache",
        UV_FIND_LINKS="{checkout}/wheels",
        UV_INDEX_URL="http://127.0.0.1:9/simple",
        UV_PYTHON="{checkout}/python3",
        UV_PROJECT="{checkout}",
        UV_OFFLINE="1",
    )
    assert fake.result.returncode == 0, fake.result.stderr
    assert "redline 0.1.0" in fake.result.stdout
    checkout = str(tmp_path / "checkout")
    assert all(checkout not in cwd for _, cwd, _ in fake.calls), fake.calls
    pythons = [args for program, _, args in fake.calls if program == "python"]
    assert pythons and all(args.startswith("-I ") for args in pythons), pythons
    [(_, uv_cwd, uv_args)] = [c for c in fake.calls if c[0] == "uv"]
    assert uv_cwd == str(fake.tools)
    python = str(tmp_path / "fakes" / "python3")
    assert uv_args == (
        f"sync --frozen --no-dev --no-editable --no-config --python {python} --project {ROOT}"
    )
    # Only what tunes downloads passes; the cache in the checkout is named and dropped.
    assert fake.uv_env == {
        "UV_COMPILE_BYTECODE": "1",
        "UV_NO_PROGRESS": "1",
        "UV_OFFLINE": "1",
        "UV_PROJECT_ENVIRONMENT": str(fake.tools / "venv"),
    }
    assert "not using UV_CACHE_DIR" in fake.result.stderr
    launcher = fake.tools / "bin" / "redline"
    venv = fake.tools / "venv" / "bin"
    assert launcher.read_text().splitlines()[-1] == (
        f"exec '{venv / 'python'}' -I '{venv / 'redline'}' \"$@\""
    )


def test_install_keeps_a_uv_cache_outside_the_checkout(tmp_path: Path) -> None:
    fake = _fake_install(tmp_path, UV_CACHE_DIR="{tmp}/uv-cache", UV_NATIVE_TLS="1")
    assert fake.result.returncode == 0, fake.result.stderr
    assert fake.uv_env["UV_CACHE_DIR"] == str(tmp_path / "uv-cache")
    assert fake.uv_env["UV_NATIVE_TLS"] == "1"
    assert "not using" not in fake.result.stderr


# --- isolation.sh: the PATH rule ---------------------------------------------------------------


def _trusted_path(cwd: Path, path: str, **values: str) -> list[str]:
    script = (
        f"source {str(ISOLATION_SH)!r}; "
        'redline_checkouts "$(pwd -P)" "$GITHUB_WORKSPACE" "$CI_PROJECT_DIR"; redline_trusted_path'
    )
    env = {"PATH": path, **values}
    out = subprocess.run(
        ["/bin/bash", "--noprofile", "--norc", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split(":") if out.stdout else []


@pytest.fixture(scope="module")
def path_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("pathrule")
    dirs = {
        "checkout": base / "checkout",
        "checkout/bin": base / "checkout" / "bin",
        "workspace": base / "workspace",
        "workspace/bin": base / "workspace" / "bin",
        "project/bin": base / "project" / "bin",
        "outside/bin": base / "outside" / "bin",
        "outside/sbin": base / "outside" / "sbin",
        "checkout-sibling/bin": base / "checkout-sibling" / "bin",
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    # A link from outside into the checkout is inside it; one from inside to outside is not.
    (base / "outside" / "to-checkout").symlink_to(dirs["checkout/bin"])
    dirs["link-in"] = base / "outside" / "to-checkout"
    (dirs["checkout"] / "to-outside").symlink_to(dirs["outside/bin"])
    dirs["link-out"] = dirs["checkout"] / "to-outside"
    return dirs


# Inside a checkout: spelled inside one (link-out, though it leads outside: the pull request
# chose where it leads), or leading into one (link-in).
INSIDE = {"checkout", "checkout/bin", "workspace/bin", "project/bin", "link-in", "link-out"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "checkout", "checkout/bin", "workspace/bin", "project/bin", "outside/bin",
                    "outside/sbin", "checkout-sibling/bin", "link-in", "link-out",
                ]
            ).map(lambda k: ("abs", k)),
            st.sampled_from([".", "", "bin", "./bin", "..", "checkout/bin", "~/bin"]).map(
                lambda r: ("rel", r)
            ),
            st.just(("abs", "/nonexistent/bin")),
        ),
        max_size=8,
    )
)  # fmt: skip
def test_trusted_path_keeps_only_absolute_directories_outside_every_checkout(
    path_dirs: dict[str, Path], entries: list[tuple[str, str]]
) -> None:
    """Generated PATHs: relative entries, directories of the checkout (the working directory,
    GITHUB_WORKSPACE, CI_PROJECT_DIR) or linked into it, and missing ones are dropped; the rest
    keep their order and spelling."""

    def spell(kind: str, key: str) -> str:
        return key if kind == "rel" or key.startswith("/") else str(path_dirs[key])

    path = ":".join(spell(k, v) for k, v in entries)
    kept = _trusted_path(
        path_dirs["checkout"],
        path,
        GITHUB_WORKSPACE=str(path_dirs["workspace"]),
        CI_PROJECT_DIR=str(path_dirs["project/bin"].parent),
    )
    expected = [
        spell(k, v)
        for k, v in entries
        if k == "abs" and not v.startswith("/") and v not in INSIDE
    ]
    assert kept == expected


# --- the launcher ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["plain", "with space", "quote'd", "dollar$HOME`x`", 'dq"x'])
def test_the_launcher_starts_python_isolated_whatever_the_path(tmp_path: Path, name: str) -> None:
    """The `redline` the install writes runs Redline's Python with -I and the console script,
    for any directory name (quoted for /bin/sh, never expanded)."""
    venv = tmp_path / name / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text('#!/bin/sh\nfor a in "$0" "$@"; do printf "%s\\n" "$a"; done\n')
    python.chmod(0o755)
    launcher = tmp_path / name / "bin" / "redline"
    script = (
        f"source {str(ISOLATION_SH)!r}; "
        f"redline_write_launcher {str(python)!r} {str(venv / 'bin' / 'redline')!r} "
        f"{str(launcher)!r}"
    )
    out = run_bash(script, tmp_path, {"PATH": os.environ["PATH"]})
    assert out.returncode == 0, out.stderr
    assert launcher.read_text().startswith("#!/bin/sh\n")
    ran = subprocess.run(
        [str(launcher), "review", "--pr", "7 $x"], capture_output=True, text=True, check=True
    )
    assert ran.stdout.splitlines() == [
        str(python), "-I", str(venv / "bin" / "redline"), "review", "--pr", "7 $x"
    ]  # fmt: skip
