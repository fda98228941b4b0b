"""The repository layer is an allowlist (config_repo.REPO_SETTINGS): what a repository's file
may set, and how it merges with the user's own settings. Property-based over generated TOML
documents (nothing outside the allowlist survives the layer; what survives only adds to the
user's settings or makes them stricter), and by example for each rule."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline import config_repo
from redline.cli.main import main
from redline.config import REPO_TEMPLATE, LoadedSettings, load_settings
from redline.config_models import AnalyzerSettings, LLMSettings, ReviewSettings, Settings
from redline.config_repo import REPO_SETTINGS, filter_table, parse_layer
from redline.errors import ConfigError
from redline.model import Severity
from redline.review.settings_change import _key_line

from gitrepo import GitRepo


def _flat(settings: Settings) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for section, values in settings.model_dump(mode="json").items():
        for name, value in values.items():
            out[f"{section}.{name}"] = value
    return out


ALL_KEYS = sorted(_flat(Settings()))
NAMES = sorted({part for key in ALL_KEYS for part in key.split(".")})

# Keys: the real section and setting names (so the generated documents hit them), names that
# look like them, and any text at all (dots, quotes, escapes, invisible characters).
key_text = st.one_of(
    st.sampled_from(NAMES),
    st.sampled_from(["review.exclude", "REVIEW", "review ", "exclude\u200b", "tool", "redline"]),
    st.text(min_size=1, max_size=12).filter(lambda k: "\x7f" not in k),
)
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["critical", "high", "low", "info", "Severe", "*", "S", "E9", "PL"]),
    st.text(max_size=10).filter(lambda t: "\x7f" not in t),
)
values = st.one_of(
    scalars, st.lists(st.one_of(st.sampled_from(["*", "S", "gen/*"]), scalars), max_size=4)
)
tables = st.recursive(
    st.dictionaries(key_text, values, max_size=4),
    lambda inner: st.dictionaries(key_text, st.one_of(values, inner), max_size=4),
    max_leaves=16,
)
user_settings = st.builds(
    Settings,
    review=st.builds(
        ReviewSettings,
        fail_on=st.one_of(st.none(), st.sampled_from(list(Severity))),
        min_severity=st.sampled_from(list(Severity)),
        exclude=st.lists(st.sampled_from(["a/*", "b/*", "*"]), max_size=2, unique=True),
        max_file_bytes=st.integers(1, 10**7),
        cache=st.booleans(),
    ),
    analyzers=st.builds(
        AnalyzerSettings,
        ruff=st.booleans(),
        bandit=st.booleans(),
        ruff_select=st.lists(st.sampled_from(["F", "S", "B", "E9"]), max_size=4, unique=True),
    ),
    llm=st.builds(
        LLMSettings,
        max_retries=st.integers(0, 10),
        budget_tokens=st.one_of(st.none(), st.integers(1, 10**6)),
    ),
)


def _toml(table: dict[str, Any]) -> str:
    """A TOML document for `table`, every key as a quoted dotted key (JSON's string escapes are
    TOML's basic-string escapes)."""
    lines: list[str] = []

    def walk(node: dict[str, Any], path: list[str]) -> None:
        for key, value in node.items():
            here = [*path, json.dumps(key)]
            if isinstance(value, dict):
                if value:
                    walk(value, here)
                else:
                    lines.append(f"{'.'.join(here)} = {{}}")
            else:
                lines.append(f"{'.'.join(here)} = {json.dumps(value)}")

    walk(table, [])
    return "\n".join(lines) + "\n"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables)
def test_nothing_outside_the_allowlist_survives_the_filter(table: dict[str, Any]) -> None:
    kept, ignored = filter_table(table)
    assert set(kept) <= set(REPO_SETTINGS)
    for key in kept:  # kept exactly where a plain two-level path names it
        section, name = key.split(".")
        assert table[section][name] == kept[key]
    for key in ignored:  # every name shown to a person is one printable line
        assert key.isprintable() and "\n" not in key


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables, user_settings, st.booleans())
def test_a_repository_file_only_adds_to_or_tightens_the_users_settings(
    table: dict[str, Any], user: Settings, in_pyproject: bool
) -> None:
    document = {"tool": {"redline": table}} if in_pyproject else table
    text = _toml(document)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return  # a key both a value and a table ("a" = 1 and "a"."b" = 2): not TOML at all
    file = config_repo.PYPROJECT if in_pyproject else config_repo.REPO_FILE
    try:
        layer = parse_layer(text.encode(), file, "repository file X")
    except ConfigError as exc:
        # Only an allowed key's value can be invalid; the message names the file.
        assert "repository file X" in str(exc)
        return
    assert set(layer.values) <= set(REPO_SETTINGS)
    merged = LoadedSettings.of(user).with_repository(layer).settings
    before, after = _flat(user), _flat(merged)
    for key in ALL_KEYS:
        if key not in REPO_SETTINGS:
            assert after[key] == before[key], key
    assert set(before["review.exclude"]) <= set(after["review.exclude"])
    assert set(before["analyzers.ruff_select"]) <= set(after["analyzers.ruff_select"])
    for key in ("review.fail_on", "review.min_severity"):
        b = None if before[key] is None else Severity(before[key])
        a = None if after[key] is None else Severity(after[key])
        assert config_repo.strictness(key, a) >= config_repo.strictness(key, b), key


@pytest.mark.parametrize("key", [k for k in ALL_KEYS if k not in REPO_SETTINGS])
def test_every_other_setting_is_ignored_with_a_warning_naming_key_and_file(
    tmp_path: Path, key: str
) -> None:
    (tmp_path / ".redline.toml").write_text(f'{key} = 12345\nreview.exclude = ["gen/*"]\n')
    loaded = load_settings(tmp_path, environ={}, user_file=tmp_path / "none.toml")
    assert _flat(loaded.settings)[key] == _flat(Settings())[key]
    (warning,) = [w for w in loaded.warnings if f"ignored {key}:" in w]
    assert str(tmp_path / ".redline.toml") in warning
    assert loaded.settings.review.exclude == ["gen/*"]  # the rest of the file still applies


def test_the_allowed_keys_merge_by_their_rule(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text(
        '[review]\nfail_on = "high"\nmin_severity = "low"\nexclude = ["mine/*"]\n'
        '[analyzers]\nruff_select = ["F", "S"]\n'
    )
    (tmp_path / ".redline.toml").write_text(
        '[review]\nfail_on = "critical"\nmin_severity = "info"\nexclude = ["gen/*"]\n'
        '[analyzers]\nruff_select = ["S", "PL"]\n'
    )
    loaded = load_settings(tmp_path, environ={}, user_file=user)
    s = loaded.settings
    assert s.review.exclude == ["mine/*", "gen/*"]  # added to the user's
    assert s.analyzers.ruff_select == ["F", "S", "PL"]  # added, none removed
    assert s.review.fail_on is Severity.HIGH  # the repository's looser gate is not taken
    assert s.review.min_severity is Severity.INFO  # its lower floor is
    assert loaded.sources["review.exclude"] == (
        f"user file {user} + repository file {tmp_path / '.redline.toml'}"
    )
    assert loaded.sources["review.fail_on"] == f"user file {user}"
    assert any("review.fail_on = 'critical' not applied" in w for w in loaded.warnings)
    assert any("cannot remove them: ['F'] still apply" in w for w in loaded.warnings)
    # A stricter gate from the repository applies; the user's flags and environment still win.
    (tmp_path / ".redline.toml").write_text('[review]\nfail_on = "medium"\n')
    loaded = load_settings(tmp_path, environ={}, user_file=user)
    assert loaded.settings.review.fail_on is Severity.MEDIUM
    env = {"REDLINE_FAIL_ON": "critical"}
    loaded = load_settings(tmp_path, environ=env, user_file=user)
    assert loaded.settings.review.fail_on is Severity.CRITICAL
    assert loaded.sources["review.fail_on"] == "environment REDLINE_FAIL_ON"


def test_a_quoted_dotted_key_is_not_the_setting_it_spells(tmp_path: Path) -> None:
    (tmp_path / ".redline.toml").write_text(
        '"review.exclude" = ["*"]\n[review]\n"exclude\\u200b" = ["*"]\n'
    )
    loaded = load_settings(tmp_path, environ={}, user_file=tmp_path / "none.toml")
    assert loaded.settings.review.exclude == []
    assert any('ignored "review.exclude": not a setting' in w for w in loaded.warnings)
    # The invisible character is shown, not passed to the terminal.
    assert any('"exclude\\u200b"' in w for w in loaded.warnings), loaded.warnings


def test_ruff_selectors_are_checked() -> None:
    with pytest.raises(ConfigError, match="not ruff rule selectors"):
        parse_layer(b'[analyzers]\nruff_select = ["S", "--config=x"]\n', ".redline.toml", "R")


def test_a_settings_file_that_is_a_link_or_a_fifo_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text('[review]\nexclude = ["*"]\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".redline.toml").symlink_to(outside)
    loaded = load_settings(repo, environ={}, user_file=tmp_path / "none.toml")
    assert loaded.settings.review.exclude == []
    assert any("symbolic link" in w and ".redline.toml" in w for w in loaded.warnings)
    (repo / ".redline.toml").unlink()
    os.mkfifo(repo / ".redline.toml")
    loaded = load_settings(repo, environ={}, user_file=tmp_path / "none.toml")  # no hang
    assert any("not a regular file" in w for w in loaded.warnings)


def test_a_settings_file_linked_in_the_base_is_not_read(tmp_path: Path) -> None:
    from redline.git.repo import Repo
    from redline.git.runner import GitRunner
    from redline.review.ground import revision_ground

    repo = GitRepo(tmp_path / "repo")
    repo.write("shared.toml", '[review]\nexclude = ["*"]\n')
    (repo.root / ".redline.toml").symlink_to("shared.toml")
    head = repo.commit("linked settings")
    ground = revision_ground(Repo(repo.root, GitRunner()), head)
    layer = ground.repo_layer()
    assert layer is not None and not layer.values
    assert any("symbolic link" in w for w in layer.warnings)


def test_the_repository_template_holds_exactly_the_allowed_keys() -> None:
    commented = "\n".join(
        line.removeprefix("# ") for line in REPO_TEMPLATE.splitlines()
        if line.startswith("[") or (line.startswith("# ") and " = " in line)
    )  # fmt: skip
    kept, ignored = filter_table(tomllib.loads(commented))
    assert set(kept) == set(REPO_SETTINGS) and not ignored


def test_config_show_names_the_layer_and_its_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write(".redline.toml", '[llm]\nbudget_usd = 1000.0\n[review]\nexclude = ["gen/*"]\n')
    monkeypatch.setenv("REDLINE_CONFIG", os.devnull)
    assert main(["config", "show", "--repo", str(repo.root)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("review.exclude"))
    assert "repository file" in line and ".redline.toml" in line
    assert "# warning: repository file" in out and "ignored llm.budget_usd" in out
    assert "base revision" in out  # reviews of commits read the file from their base


@pytest.mark.parametrize(
    ("text", "key", "file", "line"),
    [
        ('[review]\nfail_on = "high"\nexclude = ["*"]\n', "review.exclude", ".redline.toml", 3),
        ('review.exclude = ["*"]\n', "review.exclude", ".redline.toml", 1),
        ('[tool.x]\na = 1\n[tool.redline.review]\n# c\nexclude = []\n', "review.exclude",
         "pyproject.toml", 5),
        ('[review]\nfail_on = "high"\n', "review.exclude", ".redline.toml", 1),
        ('[analyzers]\n\n[review]\n"min_severity" = "low"\n', "review.min_severity",
         ".redline.toml", 4),
    ],
)  # fmt: skip
def test_a_settings_finding_is_on_the_line_that_sets_the_key(
    text: str, key: str, file: str, line: int
) -> None:
    assert _key_line(text, key, file)[0] == line
