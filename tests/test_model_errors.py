"""A model that cannot be used is not a clean run: through the real `redline` command (a
subprocess), with a scripted OpenAI-compatible server that refuses the key, a port where nothing
listens, a hosted model with no key, and a local server with no key (which must now work).

Each case asserts the exit code (3: "the model could not be used; the report holds the
analyzers' findings only"), the one line on stderr, and how many requests were sent."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from redline.agent.keys import PLACEHOLDER_KEY, placeholder_key

from gitrepo import GitRepo
from review_script import ReviewScript
from scripted_llm import Reply, ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

REDLINE = str(Path(sys.executable).with_name("redline"))
SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
TEST_KEY = "sk-test-key-not-secret"


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo.build_demo_repo(tmp_path_factory.mktemp("demo") / "demo")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No REDLINE_* and no provider key of the developer's; a user file with fast retries (two
    retries, so "not retried" is visible), the cache in the test's directory."""
    user = tmp_path / "user.toml"
    user.write_text("[llm]\nmax_retries = 2\ntimeout = 20\n", encoding="utf-8")
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("REDLINE_") and not k.endswith(("_API_KEY", "_BASE_URL", "_API_BASE"))
    }
    return base | {"REDLINE_CONFIG": str(user), "REDLINE_CACHE_DIR": str(tmp_path / "cache")}


def redline(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [REDLINE, *argv], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def review_json(
    env: dict[str, str], repo: Path, *flags: str
) -> tuple[subprocess.CompletedProcess[str], dict]:  # type: ignore[type-arg]
    result = redline(
        env, "review", "--branch", "main", "--repo", str(repo), "--quiet", "--format", "json",
        *flags,
    )  # fmt: skip
    return result, json.loads(result.stdout)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_key_exits_3_in_one_line_after_one_request(
    demo_repo: Path, env: dict[str, str]
) -> None:
    with ScriptedLLM(default=Reply.error(401, "Incorrect API key provided")) as llm:
        result, report = review_json(
            env | {"REDLINE_API_KEY": TEST_KEY},
            demo_repo,
            "--model", "openai/scripted", "--api-base", llm.base_url,
        )  # fmt: skip
    line = f"model openai/scripted at {llm.base_url}: the key was refused (401)"
    assert result.returncode == 3, result.stderr
    assert error_lines(result.stderr) == [f"redline: error: {line}"]
    assert len(llm.requests) == 1  # not retried, and no reviewer asked again after the planner
    assert report["model_error"] == line and report["failure"] is None
    # The analyzers' findings are the report.
    assert any(f["file"] == "app/reports.py" and f["line"] == 21 for f in report["findings"])


def test_nothing_listening_exits_3_after_one_retry(
    demo_repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    base = f"http://127.0.0.1:{free_port()}/v1"
    sarif_path = tmp_path / "out.sarif"
    result, report = review_json(
        env | {"REDLINE_API_KEY": TEST_KEY},
        demo_repo,
        "--model", "openai/local", "--api-base", base,
    )  # fmt: skip
    line = f"model openai/local at {base}: nothing is listening there"
    assert result.returncode == 3, result.stderr
    assert error_lines(result.stderr) == [f"redline: error: {line}"]
    assert report["coverage"]["model_calls"] == 2  # the first try and one retry, not three

    # SARIF for CI: valid, not a successful execution, and the line is its first notification.
    result = redline(
        env | {"REDLINE_API_KEY": TEST_KEY},
        "review", "--branch", "main", "--repo", str(demo_repo), "--quiet", "--format", "sarif",
        "--model", "openai/local", "--api-base", base, "-o", str(sarif_path),
    )  # fmt: skip
    assert result.returncode == 3
    sarif = json.loads(sarif_path.read_text())
    jsonschema.validate(sarif, json.loads(SCHEMA.read_text()))
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    first = invocation["toolExecutionNotifications"][0]
    assert first["level"] == "error" and line in first["message"]["text"]
    assert sarif["runs"][0]["results"]  # the analyzers' findings


def test_a_hosted_model_without_a_key_sends_nothing_and_says_which_variable(
    demo_repo: Path, env: dict[str, str]
) -> None:
    # Had litellm sent the request, it would have gone to this server (OPENAI_BASE_URL is the
    # OpenAI client's own override): it must receive nothing.
    with ScriptedLLM(default=Reply.text("never")) as llm:
        result, report = review_json(
            env | {"OPENAI_BASE_URL": llm.base_url}, demo_repo, "--model", "gpt-4o-mini"
        )
    line = "model gpt-4o-mini: no OPENAI_API_KEY set — set it or REDLINE_API_KEY"
    assert result.returncode == 3, result.stderr
    assert error_lines(result.stderr) == [f"redline: error: {line}"]
    assert llm.requests == []
    assert report["coverage"]["model_calls"] == 1  # one attempt, refused before sending


def test_a_local_server_needs_no_key(demo_repo: Path, env: dict[str, str]) -> None:
    with ScriptedLLM(handler=ReviewScript(findings={})) as llm:
        result, report = review_json(
            env, demo_repo, "--model", "openai/scripted", "--api-base", llm.base_url
        )
    assert result.returncode == 0, result.stderr
    assert report["model_error"] is None
    assert llm.requests, "the local server received nothing"
    assert {h.get("authorization") for h in llm.headers} == {f"Bearer {PLACEHOLDER_KEY}"}


def test_the_placeholder_never_goes_to_a_hosted_address() -> None:
    assert placeholder_key("openai/x", "http://localhost:8080/v1", {}) == PLACEHOLDER_KEY
    assert placeholder_key("openai/x", "http://10.1.2.3:8000/v1", {}) == PLACEHOLDER_KEY
    assert placeholder_key("openai/x", "http://vllm:8000/v1", {}) == PLACEHOLDER_KEY
    assert placeholder_key("openai/x", "https://api.together.xyz/v1", {}) is None
    assert placeholder_key("anthropic/x", "http://127.0.0.1:9/v1", {}) is None
    # The user's own key for the provider is used, not replaced.
    assert placeholder_key("openai/x", "http://127.0.0.1:9/v1", {"OPENAI_API_KEY": "k"}) is None


def test_ask_with_a_refused_key_exits_3(demo_repo: Path, env: dict[str, str]) -> None:
    with ScriptedLLM(default=Reply.error(401, "Incorrect API key provided")) as llm:
        result = redline(
            env | {"REDLINE_API_KEY": TEST_KEY},
            "ask", "review the current branch", "--repo", str(demo_repo), "--quiet",
            "--model", "openai/scripted", "--api-base", llm.base_url,
        )  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert error_lines(result.stderr) == [
        f"redline: error: model openai/scripted at {llm.base_url}: the key was refused (401)"
    ]
    assert "**The model could not be used:**" in result.stdout
    assert len(llm.requests) == 1


# -- settings that do nothing -----------------------------------------------------------------


def test_api_base_and_max_requests_without_a_model_are_warned_about(
    demo_repo: Path, env: dict[str, str]
) -> None:
    result = redline(
        env | {"REDLINE_MAX_REQUESTS": "5"},
        "review", "--branch", "main", "--repo", str(demo_repo), "--quiet",
        "--api-base", "http://127.0.0.1:9/v1",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    warnings = error_lines(result.stderr)
    assert len(warnings) == 2
    assert warnings[0].startswith("redline: warning: flag --api-base sets an API base but no model")
    assert "environment REDLINE_MAX_REQUESTS sets a model request cap" in warnings[1]


def test_redline_config_naming_a_missing_file_is_an_error(
    demo_repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "nope" / "config.toml"
    result = redline(env | {"REDLINE_CONFIG": str(missing)}, "review", "--repo", str(demo_repo))
    assert result.returncode == 2
    assert f"REDLINE_CONFIG names {missing}, which does not exist" in result.stderr
    assert result.stdout == ""


# -- always a valid report --------------------------------------------------------------------


def test_nothing_to_review_still_writes_a_valid_report(env: dict[str, str], tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    out = tmp_path / "out"
    for fmt in ("sarif", "json", "markdown"):
        result = redline(
            env, "review", "--repo", str(repo.root), "--format", fmt, "-o", str(out / fmt)
        )
        assert result.returncode == 0, result.stderr
    sarif = json.loads((out / "sarif").read_text())
    jsonschema.validate(sarif, json.loads(SCHEMA.read_text()))
    assert sarif["runs"][0]["results"] == []
    report = json.loads((out / "json").read_text())
    assert report["findings"] == [] and report["failure"] is None
    assert "**Nothing to review.**" in (out / "markdown").read_text()


def test_fail_on_names_where_the_threshold_came_from(demo_repo: Path, env: dict[str, str]) -> None:
    result = redline(
        env | {"REDLINE_FAIL_ON": "HIGH"},
        "review", "--branch", "main", "--repo", str(demo_repo), "--quiet",
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().endswith(
        "at or above the fail-on threshold high (set by environment REDLINE_FAIL_ON)"
    )
