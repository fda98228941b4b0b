"""What a `redline review` process imports: only what its path needs.

An offline review never loads litellm, rich, the model stages, the context builder or the
agent's tools; `--estimate` without a model does not load litellm either, and with a model in
litellm's bundled price map it reads the price without importing litellm. Each case runs the
CLI in a fresh interpreter, as a user does, and lists what ended up in sys.modules.

The estimate's bundles are built without the redaction pass (they are measured, never sent):
the prompt tokens must stay what the redacting build gives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from redline.cli.main import main
from redline.config_models import Settings
from redline.requests import ScopeKind, ScopeRequest
from redline.review import estimate
from redline.review.pipeline import plan_review
from redline.tools.sandbox import ToolContext

from gitrepo import GitRepo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

PRICED_MODEL = "openai/gpt-4o-mini"  # in litellm's bundled price map

# Never on the offline review path. (`redline.review.model_review` and `redline.agent` hold
# the model stages and their client; `redline.context` and `redline.tools` what a model reads.)
NOT_OFFLINE = (
    "litellm",
    "openai",
    "httpx",
    "rich",
    "redline.review.estimate",
    "redline.review.model_review",
    "redline.agent",
    "redline.context",
    "redline.tools",
    "redline.debate",
    "redline.lsp",
    "redline.report.terminal",
    # detect-secrets imports it only to verify secrets over the network; the offline review
    # loads the plugins without it (redaction/plugins.py `_inert_requests`).
    "requests",
    "urllib3",
)

# The console script's own entry (redline.entry:main: the whole-process path, gc frozen).
_PROBE = """
import json, sys
from redline.entry import main
sys.argv[0] = "redline"
code = main()
sys.stdout.flush()
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
sys.exit(code)
"""


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo.build_demo_repo(tmp_path_factory.mktemp("demo") / "demo")


def run_cli(repo: Path, *argv: str) -> tuple[int, str, set[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env["REDLINE_CONFIG"] = os.devnull
    env["REDLINE_CACHE_DIR"] = os.environ["REDLINE_CACHE_DIR"]  # conftest's private cache
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv, "--repo", str(repo), "-q"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    out, _, modules = result.stdout.rpartition("\nMODULES ")
    assert modules, result.stderr
    return result.returncode, out, set(json.loads(modules))


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_an_offline_branch_review_imports_no_model_code(demo_repo: Path) -> None:
    code, out, modules = run_cli(demo_repo, "review", "--branch", "main", "--format", "json")
    assert code == 0
    assert json.loads(out)["findings"]  # the analyzers ran: a real offline review
    assert loaded(modules, NOT_OFFLINE) == []


def test_an_offline_review_of_uncommitted_changes_imports_no_model_code(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("src/main.c", "int main(void) { return 0; }\n")
    repo.commit("base")
    repo.write("src/main.c", "int main(void) { return 1; }\n")
    code, out, modules = run_cli(repo.root, "review")
    assert code == 0 and "src/main.c" in out
    assert loaded(modules, NOT_OFFLINE) == []


def test_the_console_script_leaves_the_environment_and_the_collector_as_it_found_them() -> None:
    """redline.entry pauses the collector and pydantic's plugin scan while the CLI loads; the
    tools and model clients the review starts must not inherit the switch."""
    probe = (
        "import gc, os, sys\n"
        "sys.argv = ['redline', '--version']\n"
        "from redline.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(gc.isenabled(), os.environ.get('PYDANTIC_DISABLE_PLUGINS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout.splitlines()[-1] == "True None"
    # A user's own setting is theirs: kept.
    env["PYDANTIC_DISABLE_PLUGINS"] = "logfire"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout.splitlines()[-1] == "True logfire"


def test_an_estimate_without_a_model_imports_no_model_client(demo_repo: Path) -> None:
    code, out, modules = run_cli(demo_repo, "review", "--branch", "main", "--estimate")
    assert code == 0 and "No model is configured" in out
    assert loaded(modules, ("litellm", "openai", "httpx", "rich")) == []


def test_an_estimate_prices_a_known_model_without_importing_litellm(demo_repo: Path) -> None:
    argv = ("review", "--branch", "main", "--estimate", "--model", PRICED_MODEL)
    code, out, modules = run_cli(demo_repo, *argv)
    assert code == 0
    assert "Cost: about $" in out and "Nothing was sent to the model." in out
    assert loaded(modules, ("litellm", "openai", "httpx")) == []


def test_the_bundled_price_is_litellms_price() -> None:
    from redline.agent.llm import load_litellm

    expected = load_litellm().model_cost[PRICED_MODEL.split("/", 1)[-1]]["input_cost_per_token"]
    assert estimate.input_price(PRICED_MODEL) == float(expected)
    # Not in the file: litellm is asked, as before (None: it does not know it either).
    assert estimate.input_price("openai/no-such-model-for-redline") is None


def test_the_estimate_counts_the_tokens_the_redacting_build_counts(
    demo_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings.model_validate({"models": {"model": PRICED_MODEL}})
    plan = plan_review(
        demo_repo, ScopeRequest(ScopeKind.BRANCH, "main"), settings, function_metrics=True
    )
    sized = estimate.estimate_model(plan, settings)
    monkeypatch.setattr(estimate, "_SizingContext", ToolContext)  # the redacting context
    redacted = estimate.estimate_model(plan, settings)
    assert sized is not None and redacted is not None
    assert (sized.calls_min, sized.calls_max) == (redacted.calls_min, redacted.calls_max)
    assert abs(sized.prompt_tokens - redacted.prompt_tokens) <= redacted.prompt_tokens // 100


def test_the_estimate_output_format_is_unchanged(
    demo_repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in list(os.environ):
        if var.startswith("REDLINE_") and var != "REDLINE_CACHE_DIR":
            monkeypatch.delenv(var)
    monkeypatch.setenv("REDLINE_CONFIG", os.devnull)
    argv = ["review", "--branch", "main", "--repo", str(demo_repo), "--estimate", "-q"]
    assert main([*argv, "--model", PRICED_MODEL]) == 0
    lines = capsys.readouterr().out.splitlines()[-6:]
    assert lines[0] == f"Model: {PRICED_MODEL}"
    assert lines[1].startswith("Planned model calls: ") and "with context rounds" in lines[1]
    assert lines[2].endswith(" (llm.max_requests)")
    assert lines[3].startswith("Prompt tokens (first attempt, estimated): ")
    assert lines[4].startswith("Cost: about $") and lines[4].endswith(" (answers extra)")
    assert lines[5] == "Nothing was sent to the model."


def test_plugins_loaded_without_requests_still_find_secrets_and_requests_stays_real() -> None:
    """The stand-in is gone once the plugins are built: secrets that need detect-secrets'
    plugins are still masked, and a later `import requests` gets the real library."""
    probe = """
import sys
from redline.redaction import Redactor
r = Redactor(environment=False)
r.load_plugins(without_requests=True)
assert "requests" not in sys.modules, "stand-in left behind"
stripe = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
slack = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
masked = r.redact(f'stripe = "{stripe}"\\nslack = "{slack}"')
assert stripe not in masked and slack[5:] not in masked, masked
import requests
assert callable(requests.get) and requests.__file__, "not the real requests"
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.stdout.strip() == "ok", result.stderr
