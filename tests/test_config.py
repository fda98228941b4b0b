"""Configuration layers, provenance and the rule that the reviewed repository cannot choose
where code is sent or what runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from redline.cli.main import main
from redline.config import load_settings
from redline.errors import ConfigError
from redline.model import Severity

from gitrepo import GitRepo


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    return tmp_path / "user" / "config.toml"


def test_layers_merge_in_order_and_record_their_source(tmp_path: Path, user_file: Path) -> None:
    user_file.parent.mkdir()
    user_file.write_text('[review]\nfail_on = "low"\nmin_severity = "Low"\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".redline.toml").write_text('[review]\nfail_on = "medium"\n')
    loaded = load_settings(
        repo,
        flags={"review.min_severity": "High"},
        environ={"REDLINE_FAIL_ON": "critical"},
        user_file=user_file,
    )
    assert loaded.settings.review.fail_on is Severity.CRITICAL
    assert loaded.sources["review.fail_on"] == "environment REDLINE_FAIL_ON"
    assert loaded.settings.review.min_severity is Severity.HIGH
    assert loaded.sources["review.min_severity"] == "flag --min-severity"
    assert loaded.sources["review.max_file_bytes"] == "default"


def test_pyproject_tool_section_is_a_repository_file(tmp_path: Path, user_file: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.redline.review]\nexclude = ["gen/*"]\n')
    loaded = load_settings(tmp_path, environ={}, user_file=user_file)
    assert loaded.settings.review.exclude == ["gen/*"]
    assert "repository file" in loaded.sources["review.exclude"]


def test_repository_file_cannot_choose_the_model_or_commands(
    tmp_path: Path, user_file: Path
) -> None:
    (tmp_path / ".redline.toml").write_text(
        '[models]\nmodel = "openai/exfil"\napi_base = "http://attacker.invalid"\n'
        '[[analyzers.custom]]\nname = "pwn"\ncommand = ["sh", "-c", "touch /tmp/x"]\n'
        '[review]\nexclude = ["gen/*"]\n'
    )
    loaded = load_settings(tmp_path, environ={}, user_file=user_file)
    assert loaded.settings.models.model is None
    assert loaded.settings.models.api_base is None
    assert loaded.settings.analyzers.custom == []
    assert loaded.settings.review.exclude == ["gen/*"]  # the rest still applies
    assert any("models.model" in w for w in loaded.warnings)
    assert any("analyzers.custom" in w for w in loaded.warnings)


def test_invalid_value_names_the_file_and_key(tmp_path: Path, user_file: Path) -> None:
    (tmp_path / ".redline.toml").write_text('[review]\nmin_severity = "Severe"\n')
    with pytest.raises(ConfigError) as exc:
        load_settings(tmp_path, environ={}, user_file=user_file)
    assert str(tmp_path / ".redline.toml") in str(exc.value)
    assert "review.min_severity" in str(exc.value)


def test_unknown_key_is_an_error_not_silently_ignored(tmp_path: Path, user_file: Path) -> None:
    user_file.parent.mkdir()
    user_file.write_text("[review]\nfail_onn = 'high'\n")
    with pytest.raises(ConfigError) as exc:
        load_settings(None, environ={}, user_file=user_file)
    assert "review.fail_onn" in str(exc.value) and str(user_file) in str(exc.value)


def test_broken_toml_names_the_file(tmp_path: Path, user_file: Path) -> None:
    (tmp_path / ".redline.toml").write_text("[review\n")
    with pytest.raises(ConfigError) as exc:
        load_settings(tmp_path, environ={}, user_file=user_file)
    assert ".redline.toml" in str(exc.value) and "TOML" in str(exc.value)


def test_invalid_environment_value_names_the_variable(tmp_path: Path, user_file: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load_settings(None, environ={"REDLINE_API_BASE": "file:///etc"}, user_file=user_file)
    assert "REDLINE_API_BASE" in str(exc.value)


def test_cli_config_error_exits_2_with_the_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("a.py", "x = 1\n")
    repo.commit()
    repo.write(".redline.toml", '[review]\nfail_on = "severe"\n')
    monkeypatch.setenv("REDLINE_CONFIG", os.devnull)
    code = main(["review", "--repo", str(repo.root)])
    err = capsys.readouterr().err
    assert code == 2
    assert "configuration error" in err and "review.fail_on" in err
    assert ".redline.toml (work tree)" in err


def test_init_then_show_and_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    user = tmp_path / "cfg" / "config.toml"
    monkeypatch.setenv("REDLINE_CONFIG", str(user))
    monkeypatch.setenv("REDLINE_API_KEY", "sk-secret-value-123")
    assert main(["init"]) == 0
    text = user.read_text()
    assert "[review]" in text and "[models]" in text
    # The template is all comments: it loads as defaults.
    assert main(["config", "validate", "--repo", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["init"]) == 2  # refuses to overwrite
    assert "already exists" in capsys.readouterr().err

    assert main(["config", "show", "--repo", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "review.fail_on" in out and "default" in out
    assert "models.api_key" in out and "environment REDLINE_API_KEY" in out
    assert "sk-secret-value-123" not in out


def test_init_repo_file_has_no_model_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo(tmp_path / "r")
    monkeypatch.setenv("REDLINE_CONFIG", os.devnull)
    assert main(["init", "--repo-file", "--repo", str(repo.root)]) == 0
    text = (repo.root / ".redline.toml").read_text()
    assert "[review]" in text and "[models]" not in text
    assert main(["config", "validate", "--repo", str(repo.root), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["valid"] is True


def test_debaters_and_the_summarizer_have_their_models_checked_like_roles() -> None:
    import pydantic

    from redline.config_models import Settings

    bad = [
        {"reviewers": {"a": {"model": "not a model", "prompt": "x"}, "b": {"prompt": "y"}}},
        {"reviewers": {"a": {"api_base": "ftp://x", "prompt": "x"}, "b": {"prompt": "y"}}},
        {"summarizer": {"model": "has space"}},
        {"summarizer": {"api_base": "127.0.0.1:8000"}},
    ]
    for debate in bad:
        with pytest.raises(pydantic.ValidationError):
            Settings.model_validate({"debate": debate})
    ok = Settings.model_validate(
        {"debate": {"summarizer": {"model": "openai/m", "api_base": "http://127.0.0.1:8000/v1/"}}}
    )
    assert ok.debate.summarizer.api_base == "http://127.0.0.1:8000/v1"
