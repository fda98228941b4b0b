"""The command line's own surface, through the installed `redline` executable: --version, help
for every option, `config validate`, `init`'s template and `history`."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from redline import config
from redline.cli.main import build_parser
from redline.config_models import Settings
from redline.model import Coverage, Finding, Review, Severity
from redline.store import TaskStore

from gitrepo import GitRepo

REDLINE = Path(sys.executable).with_name("redline")
README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The machine's environment without REDLINE_* settings; the cache stays the per-test one
    conftest set, the user file is a path in this test's directory."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    clean["REDLINE_CACHE_DIR"] = os.environ["REDLINE_CACHE_DIR"]
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text("")  # REDLINE_CONFIG must name a file that exists
    clean["REDLINE_CONFIG"] = str(user)
    return clean


def redline(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REDLINE), *args], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )


# --- help and version ------------------------------------------------------------------------


def _parsers(parser: argparse.ArgumentParser, name: str = "redline"):  # type: ignore[no-untyped-def]
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_every_option_of_every_command_has_help_with_its_default() -> None:
    seen = 0
    for name, parser in _parsers(build_parser()):
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            seen += 1
            label = f"{name} {'/'.join(action.option_strings) or action.dest}"
            assert action.help and action.help.strip(), f"{label} has no help text"
            if action.default not in (None, False, argparse.SUPPRESS) and action.option_strings:
                shown = formatter._expand_help(action)
                assert "default" in shown, f"{label}: its default is not stated: {shown!r}"
    assert seen > 60  # the walk reached every subcommand, not just the top level


def test_version_and_help_without_a_command(env: dict[str, str]) -> None:
    shown = redline(env, "--version")
    assert shown.returncode == 0 and shown.stdout == f"redline {version('redline')}\n"

    bare = redline(env)
    assert bare.returncode == 0 and bare.stderr == ""
    assert bare.stdout.startswith("usage: redline")
    for command in ("review", "ask", "debate", "init", "lsp", "history", "config"):
        assert re.search(rf"^\s+{command}\s+\S", bare.stdout, re.MULTILINE), command

    cfg = redline(env, "config")
    assert cfg.returncode == 0 and cfg.stdout.startswith("usage: redline config")
    assert re.search(r"^\s+show\s", cfg.stdout, re.MULTILINE)
    assert re.search(r"^\s+validate\s", cfg.stdout, re.MULTILINE)

    review = redline(env, "review", "--help")
    assert review.returncode == 0
    assert "(default: markdown;" in " ".join(review.stdout.split())


# --- config validate -------------------------------------------------------------------------


def test_config_validate_speaks_to_a_person_and_to_a_program(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = GitRepo(tmp_path / "r")
    user = Path(env["REDLINE_CONFIG"])
    user.write_text('[review]\nfail_on = "high"\n')
    env = {**env, "REDLINE_MODEL": "gpt-4o-mini"}

    ok = redline(env, "config", "validate", cwd=repo.root)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == f"Checked:\n  {user}\nEnvironment: REDLINE_MODEL\nValid.\n"

    # Keys a repository file may not set (or that are no setting at all) are ignored, each
    # named with the file: valid, with warnings.
    (repo.root / ".redline.toml").write_text("[review]\nmax_file_bytes = -3\nbogus = 1\n")
    warned = redline(env, "config", "validate", "--repo", str(repo.root))
    assert warned.returncode == 0, warned.stdout
    lines = warned.stdout.splitlines()
    assert lines[:3] == ["Checked:", f"  {user}", f"  {repo.root / '.redline.toml'}"]
    assert lines[-1] == "Valid."
    assert any(
        line.startswith("warning: repository file ")
        and ".redline.toml" in line
        and "ignored review.max_file_bytes" in line
        for line in lines
    ), lines
    assert any("ignored review.bogus: not a setting" in line for line in lines)

    # A value a repository may set, but invalid: an error naming the file and the key.
    (repo.root / ".redline.toml").write_text(
        '[review]\nfail_on = "severe"\nmin_severity = "bogus"\nmax_file_bytes = -3\n'
    )
    bad = redline(env, "config", "validate", "--repo", str(repo.root))
    assert bad.returncode == 2
    lines = bad.stdout.splitlines()
    assert lines[:3] == ["Checked:", f"  {user}", f"  {repo.root / '.redline.toml'}"]
    assert "Invalid:" in lines
    assert any("review.fail_on" in line for line in lines)
    assert any("review.min_severity" in line for line in lines)

    as_json = json.loads(redline(env, "config", "validate", "--format", "json").stdout)
    assert as_json["valid"] is True and as_json["files"] == [str(user)]
    bad_json = redline(env, "config", "validate", "--repo", str(repo.root), "--format", "json")
    result = json.loads(bad_json.stdout)
    assert bad_json.returncode == 2 and result["valid"] is False
    assert len(result["errors"]) == 2 and all(".redline.toml" in e for e in result["errors"])


# --- init ------------------------------------------------------------------------------------


def _readme_config_sections() -> set[str]:
    """Table names in the TOML blocks of the README's Configuration and debate sections."""
    text = README.read_text(encoding="utf-8")
    parts = [
        _section(text, "## Configuration", "\n## "),
        _section(text, "### Debate", "\n### "),
    ]
    blocks = [b for part in parts for b in re.findall(r"```toml\n(.*?)```", part, re.DOTALL)]
    assert len(blocks) >= 2
    names: set[str] = set()
    for block in blocks:
        names.update(re.findall(r"^\[\[?([a-z_.-]+)\]\]?", block, re.MULTILINE))
    return names


def _section(text: str, heading: str, next_heading: str) -> str:
    start = text.index(heading)
    end = text.find(next_heading, start + len(heading))
    return text[start : end if end != -1 else len(text)]


def _uncomment_keys(template: str) -> str:
    """The template with every example key under a live section header switched on."""
    out, live = [], False
    for line in template.splitlines():
        if line.startswith("["):
            live = True
        elif line.startswith("# ["):
            live = False
        elif live and re.match(r"# [a-z_]+ = ", line):
            line = line[2:]
        out.append(line)
    return "\n".join(out)


def test_init_writes_every_documented_section_and_it_loads(
    tmp_path: Path, env: dict[str, str]
) -> None:
    Path(env["REDLINE_CONFIG"]).unlink()  # `init` writes the file REDLINE_CONFIG names
    result = redline(env, "init", "--repo", str(tmp_path))
    assert result.returncode == 0, result.stderr
    user = Path(env["REDLINE_CONFIG"])
    assert f"wrote {user}" in result.stderr
    text = user.read_text()
    # As written, every value is commented out: it loads as the defaults.
    assert Settings.model_validate(tomllib.loads(text)) == Settings()
    # Every section the README documents is there, live or as a commented example.
    headers = set(re.findall(r"^(?:# )?\[\[?([a-z_.-]+)\]\]?", text, re.MULTILINE))
    documented = _readme_config_sections()
    assert {"models", "llm", "tools", "debate", "review", "analyzers"} <= documented
    missing = {s for s in documented if s not in headers and not s.startswith("debate.reviewers")}
    assert not missing, f"sections the README documents but init does not write: {missing}"
    assert any(h.startswith("debate.reviewers.") for h in headers)
    # The examples are valid settings, so uncommenting one never breaks the file.
    Settings.model_validate(tomllib.loads(_uncomment_keys(text)))
    valid = redline(env, "config", "validate", "--repo", str(tmp_path))
    assert valid.returncode == 0 and valid.stdout.endswith("Valid.\n")


def test_init_repo_file_leaves_out_what_a_repository_may_not_set(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = GitRepo(tmp_path / "r")
    assert redline(env, "init", "--repo-file", "--repo", str(repo.root)).returncode == 0
    text = (repo.root / config.REPO_FILE).read_text()
    data = tomllib.loads(_uncomment_keys(text))
    assert set(data) == {"review", "analyzers"} and "custom" not in data["analyzers"]
    Settings.model_validate(data)
    checked = redline(env, "config", "validate", "--repo", str(repo.root))
    assert checked.returncode == 0 and "warning" not in checked.stdout + checked.stderr


# --- history ---------------------------------------------------------------------------------


def _two_reviewed_repos(tmp_path: Path, env: dict[str, str]) -> tuple[GitRepo, GitRepo]:
    repos = []
    for name, code in (("alpha", "import os\n"), ("beta", "import sys\nimport re\n")):
        repo = GitRepo(tmp_path / name)
        repo.write("a.py", "x = 1\n")
        repo.commit("base")
        repo.write("a.py", code + "x = 1\n")
        result = redline(env, "review", "--quiet", cwd=repo.root)
        assert result.returncode == 0, result.stderr
        repos.append(repo)
    return repos[0], repos[1]


def test_history_lists_the_current_repository_by_default(
    tmp_path: Path, env: dict[str, str]
) -> None:
    alpha, beta = _two_reviewed_repos(tmp_path, env)
    here = redline(env, "history", cwd=alpha.root)
    assert here.returncode == 0, here.stderr
    entries = re.split(r"\n(?=\S)", here.stdout.strip())
    assert len(entries) == 1
    (entry,) = entries
    assert str(alpha.root) in entry and str(beta.root) not in entry
    assert "uncommitted changes on main" in entry
    assert "1 finding (1 Low)" in entry and "offline (no model)" in entry
    task_id = entry.split()[0]

    every = redline(env, "history", "--all", cwd=alpha.root).stdout
    assert str(alpha.root) in every and str(beta.root) in every
    assert "2 findings (2 Low)" in every
    other = redline(env, "history", "--repo", str(beta.root), cwd=alpha.root).stdout
    assert str(beta.root) in other and str(alpha.root) not in other

    listed = json.loads(redline(env, "history", "--all", "--format", "json").stdout)
    assert [e["repository"] for e in listed] == [str(beta.root), str(alpha.root)]
    assert listed[1]["task_id"] == task_id and listed[1]["findings"] == 1
    assert listed[1]["by_severity"] == {"Low": 1} and listed[1]["cost_usd"] is None
    one = json.loads(redline(env, "history", task_id, "--format", "json").stdout)
    assert one["findings"][0]["file"] == "a.py"
    limited = redline(env, "history", "--all", "--limit", "1", "--format", "json")
    assert [e["repository"] for e in json.loads(limited.stdout)] == [str(beta.root)]

    for bad in ("0", "-3", "many"):
        refused = redline(env, "history", "--limit", bad)
        assert refused.returncode == 2 and "--limit" in refused.stderr
        assert refused.stdout == ""


def test_history_shows_what_a_model_run_cost(tmp_path: Path, env: dict[str, str]) -> None:
    store = TaskStore()  # the per-test cache conftest set, as the command sees it
    finding = Finding(
        id="RL-1", file="a.py", line=1, severity=Severity.HIGH, category="Security",
        title="t", comment="c",
    )  # fmt: skip
    review = Review(
        task_id="t-model",
        scope="branch",
        scope_label="branch topic vs main",
        repo=str(tmp_path),
        findings=[finding],
        coverage=Coverage(models=["gpt-4o-mini"], tokens=12345, cost_usd=0.0123),
    )
    record = store.create("t-model", {"scope_label": review.scope_label, "repo": str(tmp_path)})
    record.update("review", review)
    record.set_status("done")
    shown = redline(env, "history", "--all")
    assert "branch topic vs main" in shown.stdout
    assert "1 finding (1 High) · 12,345 tokens, $0.0123" in shown.stdout
    empty = redline(env, "history", "--repo", str(GitRepo(tmp_path / "fresh").root))
    assert empty.returncode == 0 and empty.stdout == ""
    assert "no reviews recorded for" in empty.stderr and "--all" in empty.stderr
