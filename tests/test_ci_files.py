"""The CI files: the GitHub Action (action.yml, ci/github/*.sh) and the example workflows in
docs/ci, checked against the schemas check-jsonschema ships (offline, from the dev group), the
README's CI section against them, and the action's review script run for real on a temporary
repository, with the environment GitHub gives a step."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitrepo import GitRepo
from readme_snippets import README, snippet

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CHECK_JSONSCHEMA = BIN / "check-jsonschema"
REDLINE = BIN / "redline"
ACTION = ROOT / "action.yml"
REVIEW_SH = ROOT / "ci" / "github" / "review.sh"
INSTALL_SH = ROOT / "ci" / "github" / "install.sh"
ISOLATION_SH = ROOT / "ci" / "github" / "isolation.sh"
WORKFLOW = ROOT / "docs" / "ci" / "github-workflow.yml"
GITLAB = ROOT / "docs" / "ci" / "gitlab-ci.yml"

SCHEMAS = [
    ("vendor.github-actions", ACTION),
    ("vendor.github-workflows", WORKFLOW),
    ("vendor.gitlab-ci", GITLAB),
]

# The demo's shell injection: input formatted into a shell line (bandit B602/B604, high).
INJECTION = '''"""Export reports."""
import subprocess


def export(name: str, target_dir: str) -> int:
    command = f"zip -r {target_dir}/{name}.zip reports/{name}"
    return subprocess.call(command, shell=True)
'''
CLEAN = '''"""Export reports."""
import subprocess


def export(name: str, target_dir: str) -> int:
    return subprocess.call(["zip", "-r", f"{target_dir}/{name}.zip", f"reports/{name}"])
'''


def check_jsonschema(schema: str, path: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    """The vendored schema only: no download, no cache of fetched schemas."""
    return subprocess.run(
        [str(CHECK_JSONSCHEMA), "--no-cache", "--builtin-schema", schema, str(path)],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def step(
    action: dict[str, Any], step_id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    for item in action["runs"]["steps"]:
        if (step_id and item.get("id") == step_id) or (name and item.get("name") == name):
            return item
    raise AssertionError(f"action.yml has no step {step_id or name}")


# --- the schemas -----------------------------------------------------------------------------


@pytest.mark.parametrize(("schema", "path"), SCHEMAS, ids=[p.name for _, p in SCHEMAS])
def test_ci_file_is_valid_against_its_schema(schema: str, path: Path, tmp_path: Path) -> None:
    out = check_jsonschema(schema, path, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok -- validation done" in out.stdout


# Each file broken the way a typo would break it: the validation must say no.
BREAKAGES = {
    "action.yml": ("using: composite", "using: compost"),
    "github-workflow.yml": ("runs-on: ubuntu-latest", "runs_on: ubuntu-latest"),
    "gitlab-ci.yml": ("when: always", "when: sometimes"),
}


@pytest.mark.parametrize(("schema", "path"), SCHEMAS, ids=[p.name for _, p in SCHEMAS])
def test_a_broken_copy_fails_validation(schema: str, path: Path, tmp_path: Path) -> None:
    old, new = BREAKAGES[path.name]
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    broken = tmp_path / path.name
    broken.write_text(text.replace(old, new), encoding="utf-8")
    out = check_jsonschema(schema, broken, tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Schema validation errors" in out.stdout + out.stderr


# --- the action's structure ------------------------------------------------------------------


def test_action_inputs_and_outputs() -> None:
    action = load(ACTION)
    defaults = {name: spec.get("default") for name, spec in action["inputs"].items()}
    assert defaults["fail-on"] == "high"
    assert defaults["model"] == ""
    assert defaults["post"] == "false"
    assert defaults["inline"] == "false"
    assert defaults["token"] == "${{ github.token }}"
    assert {"sarif-file", "category"} <= defaults.keys()
    assert all(spec.get("description") for spec in action["inputs"].values())
    # API keys come from the caller's env, never an input that could be echoed.
    assert not [name for name in defaults if "key" in name.lower()]
    assert set(action["outputs"]) == {"sarif-file", "exit-code"}


def test_no_expression_is_interpolated_into_a_shell_line() -> None:
    """Inputs and event fields reach the scripts through env: only (script injection)."""
    for item in load(ACTION)["runs"]["steps"]:
        if "run" in item:
            assert "${{" not in item["run"], item["name"]
            assert item["shell"] == "bash", item["name"]


def test_action_pins_its_dependencies() -> None:
    action = load(ACTION)
    setup = step(action, "python")
    assert re.fullmatch(r"actions/setup-python@v\d+", setup["uses"])
    upload = step(action, name="Upload SARIF to code scanning")
    assert upload["uses"] == "github/codeql-action/upload-sarif@v3"
    install = INSTALL_SH.read_text(encoding="utf-8")
    assert 'uv" sync --frozen --no-dev --no-editable --no-config' in install
    assert "--require-hashes" in install
    # The uv the action installs is the Makefile's, pinned by hash.
    pinned = re.search(r"uv==([0-9.]+)", (ROOT / "Makefile").read_text())
    assert pinned is not None
    makefile_uv = pinned.group(1)
    requirements = (ROOT / "ci" / "github" / "uv-requirements.txt").read_text()
    assert f"uv=={makefile_uv} " in requirements
    assert len(re.findall(r"--hash=sha256:[0-9a-f]{64}", requirements)) >= 2


def test_sarif_is_uploaded_always_under_the_pull_requests_head() -> None:
    action = load(ACTION)
    upload = step(action, name="Upload SARIF to code scanning")
    assert upload["if"].startswith("always()")
    assert upload["with"]["sha"] == "${{ github.event.pull_request.head.sha || github.sha }}"
    assert "refs/pull/{0}/head" in upload["with"]["ref"]
    review = step(action, "review")
    assert review["env"]["DEFER_EXIT"] == "true"
    assert review["env"]["GH_TOKEN"] == "${{ inputs.token }}"
    assert "ci/github/review.sh" in review["run"]


@pytest.mark.parametrize(("code", "expected"), [("0", 0), ("1", 1), ("3", 3), ("", 2)])
def test_last_step_fails_with_the_reviews_exit_code(code: str, expected: int) -> None:
    """The action's last step, run as GitHub runs it (bash, EXIT_CODE from the review's output;
    empty when the review never ran)."""
    last = load(ACTION)["runs"]["steps"][-1]
    assert last["if"] == "always()"
    assert last["env"]["EXIT_CODE"] == "${{ steps.review.outputs.exit-code }}"
    env = {"PATH": os.environ["PATH"], "EXIT_CODE": code}
    out = subprocess.run(
        ["bash", "-e", "-c", last["run"]], env=env, capture_output=True, text=True, check=False
    )
    assert out.returncode == expected, out.stdout + out.stderr
    assert ("::error" in out.stdout) == (expected != 0)


def test_example_workflow_uses_the_action_with_the_permissions_it_needs() -> None:
    workflow = load(WORKFLOW)
    assert "pull_request" in workflow[True]  # (YAML 1.1 reads the key `on` as true)
    assert workflow["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
        "security-events": "write",
    }
    steps = workflow["jobs"]["review"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    assert steps[0]["with"]["fetch-depth"] == 0
    assert re.fullmatch(r"OWNER/redline@v[0-9.]+", steps[1]["uses"])
    assert set(steps[1]["with"]) <= set(load(ACTION)["inputs"])


def test_gitlab_example_reviews_the_merge_request() -> None:
    job = load(GITLAB)["redline"]
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    script = " ".join(job["script"])
    for part in (
        '--mr "$CI_MERGE_REQUEST_IID"',
        "--format sarif --output redline.sarif",
        "--fail-on high",
        "--post",
    ):
        assert part in script
    assert "ci/github/install.sh" in " ".join(job["before_script"])
    # Out of the checkout before any program starts; the review through the isolated launcher
    # (the hostile run is tests/test_ci_isolation.py).
    assert job["before_script"][0].startswith("cd / && ")
    assert script.startswith('"$REDLINE_DIR/tools/bin/redline" review ')
    assert job["artifacts"]["paths"] == ["redline.sarif"]
    assert job["artifacts"]["when"] == "always"


def test_readme_ci_section_is_the_example_workflow() -> None:
    embedded = snippet("The workflow in .github/workflows/redline.yml", "yaml")
    assert embedded == WORKFLOW.read_text(encoding="utf-8")
    text = README.read_text(encoding="utf-8")
    section = text[text.index("\n## In CI\n") : text.index("\n## In VS Code\n")]
    assert text.index("\n## Before commit\n") < text.index("\n## In CI\n")
    assert "docs/ci/gitlab-ci.yml" in section
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", section, re.MULTILINE))
    assert documented == set(load(ACTION)["inputs"])


# --- the review script, for real ---------------------------------------------------------------


def _step_env(tmp: Path, **values: str) -> dict[str, str]:
    """What GitHub gives the review step: the inputs as env, a GITHUB_OUTPUT file; no model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDLINE_", "GITHUB_"))}
    env["REDLINE_CACHE_DIR"] = os.environ["REDLINE_CACHE_DIR"]
    user = tmp / "user-config.toml"
    user.write_text("")
    env["REDLINE_CONFIG"] = str(user)
    env["GITHUB_OUTPUT"] = str(tmp / "github-output")
    (tmp / "github-output").write_text("")
    env.update(REDLINE=str(REDLINE), FAIL_ON="high", MODEL="", POST="false", INLINE="false")
    env.update(values)
    return env


def _outputs(tmp: Path) -> dict[str, str]:
    lines = (tmp / "github-output").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def _review(cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(REVIEW_SH)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def pr_repo(tmp_path: Path) -> GitRepo:
    """A repository whose branch `feature` adds a shell injection on top of main."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "# App\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app/reports.py", INJECTION)
    repo.commit("export reports")
    return repo


def test_review_script_writes_sarif_and_fails_on_the_injection(
    pr_repo: GitRepo, tmp_path: Path
) -> None:
    sarif = tmp_path / "out" / "redline.sarif"
    sarif.parent.mkdir()
    env = _step_env(tmp_path, REVIEW_SCOPE="--branch main", SARIF_FILE=str(sarif))

    out = _review(pr_repo.root, env)

    assert out.returncode == 1, out.stdout + out.stderr
    assert _outputs(tmp_path) == {"exit-code": "1", "sarif-file": str(sarif)}
    report = json.loads(sarif.read_text(encoding="utf-8"))
    assert report["version"] == "2.1.0"
    results = report["runs"][0]["results"]
    places = [
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["level"],
        )
        for r in results
    ]
    assert ("app/reports.py", 7, "error") in places, places
    assert "fail-on threshold high" in out.stderr
    # Nothing written into the repository under review.
    assert pr_repo.git("status", "--porcelain") == ""


def test_review_script_defers_its_exit_for_the_upload(pr_repo: GitRepo, tmp_path: Path) -> None:
    env = _step_env(
        tmp_path, REVIEW_SCOPE="--branch main", SARIF_FILE="../r.sarif", DEFER_EXIT="true"
    )
    out = _review(pr_repo.root, env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert _outputs(tmp_path) == {"exit-code": "1", "sarif-file": "../r.sarif"}
    assert json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"]


def test_review_script_passes_a_clean_change(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "# App\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app/reports.py", CLEAN)
    repo.commit("export reports")
    env = _step_env(tmp_path, REVIEW_SCOPE="--branch main", SARIF_FILE=str(tmp_path / "r.sarif"))
    out = _review(repo.root, env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert _outputs(tmp_path)["exit-code"] == "0"
    report = json.loads((tmp_path / "r.sarif").read_text())
    assert not [r for r in report["runs"][0]["results"] if r["level"] == "error"]


@pytest.fixture
def fake_redline(tmp_path: Path) -> Path:
    """A stand-in that records its arguments one per line, writes a SARIF file where --output
    says, and exits with FAKE_EXIT: the script's own logic, without the flags it forwards
    (--post, --inline) having to exist in this Redline."""
    fake = tmp_path / "fake-redline"
    fake.write_text(
        "#!/usr/bin/env bash\n"
        'printf "%s\\n" "$@" > "$FAKE_ARGS"\n'
        "while [[ $# -gt 0 ]]; do\n"
        '  if [[ "$1" == --output && -z "${FAKE_NO_SARIF:-}" ]]; then echo "{}" > "$2"; fi\n'
        "  shift\n"
        "done\n"
        'exit "${FAKE_EXIT:-0}"\n'
    )
    fake.chmod(0o755)
    return fake


def _fake_env(tmp: Path, fake: Path, **values: str) -> dict[str, str]:
    return _step_env(tmp, REDLINE=str(fake), FAKE_ARGS=str(tmp / "args"), **values)


def test_review_script_builds_the_pr_command(fake_redline: Path, tmp_path: Path) -> None:
    hostile = "gpt-4o-mini; touch pwned $(touch pwned2)"
    env = _fake_env(
        tmp_path,
        fake_redline,
        PR_NUMBER="12",
        MODEL=hostile,
        POST="true",
        INLINE="true",
        FAIL_ON="medium",
        SARIF_FILE="my report.sarif",
        FAKE_EXIT="3",
    )
    out = _review(tmp_path, env)
    assert out.returncode == 3, out.stdout + out.stderr
    args = (tmp_path / "args").read_text().splitlines()
    assert args == [
        "review",
        "--pr",
        "12",
        "--format",
        "sarif",
        "--output",
        "my report.sarif",
        "--fail-on",
        "medium",
        "--model",
        hostile,
        "--post",
        "--inline",
    ]
    assert not list(tmp_path.glob("pwned*"))
    assert _outputs(tmp_path) == {"exit-code": "3", "sarif-file": "my report.sarif"}


def test_review_script_defaults_post_nothing(fake_redline: Path, tmp_path: Path) -> None:
    env = _fake_env(tmp_path, fake_redline, PR_NUMBER="7")
    for name in ("FAIL_ON", "MODEL", "POST", "INLINE"):
        env.pop(name)
    out = _review(tmp_path, env)
    assert out.returncode == 0, out.stdout + out.stderr
    args = (tmp_path / "args").read_text().splitlines()
    assert args == [
        "review",
        "--pr",
        "7",
        "--format",
        "sarif",
        "--output",
        "redline.sarif",
        "--fail-on",
        "high",
    ]


def test_review_script_reports_no_sarif_when_none_was_written(
    fake_redline: Path, tmp_path: Path
) -> None:
    env = _fake_env(tmp_path, fake_redline, PR_NUMBER="7", FAKE_EXIT="2", FAKE_NO_SARIF="1")
    out = _review(tmp_path, env)
    assert out.returncode == 2
    assert _outputs(tmp_path) == {"exit-code": "2"}
    assert "no SARIF report was written" in out.stderr


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"PR_NUMBER": "12", "FAIL_ON": "severe"}, "fail-on must be"),
        ({"PR_NUMBER": "12", "POST": "yes"}, "post must be true or false"),
        ({"PR_NUMBER": "12", "INLINE": "1"}, "inline must be true or false"),
        ({"PR_NUMBER": "12; rm -rf /"}, "no pull request to review"),
        ({}, "no pull request to review"),
    ],
)
def test_review_script_refuses_bad_inputs(
    fake_redline: Path, tmp_path: Path, values: dict[str, str], message: str
) -> None:
    env = _fake_env(tmp_path, fake_redline, DEFER_EXIT="true", **values)
    out = _review(tmp_path, env)
    assert out.returncode == 0  # deferred: the action's last step fails with the code
    assert _outputs(tmp_path) == {"exit-code": "2"}
    assert message in out.stderr
    assert not (tmp_path / "args").exists()  # redline never ran


@pytest.mark.parametrize("script", [REVIEW_SH, INSTALL_SH], ids=lambda p: p.name)
def test_ci_scripts_are_strict_bash(script: Path) -> None:
    text = script.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert os.access(script, os.X_OK)
    # Sourced before any program starts: the PATH rule of tests/test_ci_install_rules.py.
    assert 'source "$' in text and "isolation.sh" in text
    if shutil.which("shellcheck"):
        # From elsewhere: the scripts' `source` directives must not depend on where it runs.
        out = subprocess.run(
            ["shellcheck", str(script), str(ISOLATION_SH)],
            cwd="/",
            capture_output=True,
            text=True,
            check=False,
        )
        assert out.returncode == 0, out.stdout


def test_review_script_inline_alone_still_posts(fake_redline: Path, tmp_path: Path) -> None:
    env = _fake_env(tmp_path, fake_redline, PR_NUMBER="7", POST="false", INLINE="true")
    out = _review(tmp_path, env)
    assert out.returncode == 0, out.stdout + out.stderr
    args = (tmp_path / "args").read_text().splitlines()
    assert args[-2:] == ["--post", "--inline"]  # redline refuses --inline without --post


def test_the_action_posts_a_pull_request_review_for_real(tmp_path: Path) -> None:
    """The action's review step with the real Redline and a fake `gh` (tests/fake_forge.py):
    the PR is reviewed, its SARIF written, the summary and inline comments posted, the step's
    outputs set and the job's exit code deferred to the last step."""
    from forge_bed import github_forge

    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(
        "app.py", "import subprocess\n\n\ndef run(cmd):\n    subprocess.call(cmd, shell=True)\n"
    )
    repo.commit("feature")
    repo.git("remote", "add", "origin", "https://github.com/acme/widgets.git")
    forge = github_forge(
        tmp_path / "forge", repo, "acme/widgets", valid={"app.py": [1, 2, 3, 4, 5]}
    )
    env = _step_env(
        tmp_path, PR_NUMBER="7", POST="true", INLINE="true", DEFER_EXIT="true",
        REDLINE_GH=str(forge.root / "gh"), GH_TOKEN="ghs_test", SARIF_FILE="out.sarif",
    )  # fmt: skip
    out = _review(repo.root, env)
    assert out.returncode == 0, out.stdout + out.stderr  # deferred: the last step fails the job
    assert _outputs(tmp_path)["exit-code"] == "1"  # the shell injection is at/above high
    sarif = json.loads((repo.root / "out.sarif").read_text())
    assert sarif["runs"][0]["results"]
    [summary] = forge.state()["issue_comments"]
    assert "<!-- redline:summary:review -->" in summary["body"]
    [comment] = forge.state()["review_comments"]
    assert (comment["path"], comment["line"]) == ("app.py", 5)
    gh_env = {name for call in forge.calls() for name in call["env"]}
    assert "GH_TOKEN" in gh_env  # gh got the action's token
