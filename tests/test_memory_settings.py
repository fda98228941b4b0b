"""The `[memory]` settings: the user's alone, and a PostgreSQL URL never shown with its password."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.config import describe, load_settings
from redline.config_repo import REPO_SETTINGS
from redline.errors import ConfigError
from redline.memory.url import UNREADABLE, check_url, host_of, url_without_password

MARK = "Zq9Xv"  # in every generated password, nowhere else in the URL


def test_a_repository_file_cannot_choose_where_memory_goes_or_raise_its_caps(
    tmp_path: Path,
) -> None:
    user = tmp_path / "user.toml"
    user.write_text("[memory]\nmax_symbols = 1000\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".redline.toml").write_text(
        '[memory]\nurl = "postgresql://attacker@evil.example/steal"\n'
        "max_symbols = 99999999\nmax_index_mb = 99999999\n"
        '[review]\nexclude = ["gen/*"]\n'
    )
    loaded = load_settings(repo, environ={}, user_file=user)
    assert loaded.settings.memory.url is None
    assert loaded.settings.memory.max_symbols == 1000
    assert loaded.settings.memory.max_index_mb == 1024
    assert loaded.settings.review.exclude == ["gen/*"]  # the rest of the file still applies
    for key in ("memory.url", "memory.max_symbols", "memory.max_index_mb"):
        assert not any(k.startswith("memory") for k in REPO_SETTINGS)
        assert any(
            f"ignored {key}: where project memory is stored" in w and "your user file" in w
            for w in loaded.warnings
        ), loaded.warnings


def test_the_url_comes_from_the_user_file_or_the_environment_and_is_shown_without_password(
    tmp_path: Path,
) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[memory]\nurl = "postgresql://team:hunter2pw@db.example:6543/redline"\n')
    loaded = load_settings(None, environ={}, user_file=user)
    assert loaded.settings.memory.url == "postgresql://team:hunter2pw@db.example:6543/redline"
    shown = describe(loaded)
    assert "hunter2pw" not in shown
    assert "postgresql://team@db.example:6543/redline" in shown
    assert "hunter2pw" not in repr(loaded.settings)

    env = {"REDLINE_MEMORY_URL": "postgresql://ci:s3cretpw@ci-db/redline"}
    loaded = load_settings(None, environ=env, user_file=tmp_path / "none.toml")
    assert loaded.sources["memory.url"] == "environment REDLINE_MEMORY_URL"
    assert "s3cretpw" not in describe(loaded)


def test_a_url_that_is_not_postgresql_is_refused_without_echoing_it(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    for bad in ("mysql://u:hunter2pw@h/db", "postgresql://u:hunter2/pw@h/db"):
        user.write_text(f'[memory]\nurl = "{bad}"\n')
        with pytest.raises(ConfigError) as info:
            load_settings(None, environ={}, user_file=user)
        assert "memory.url" in str(info.value)
        assert "hunter2" not in str(info.value)


def test_the_url_shown_names_user_host_port_and_database_only() -> None:
    assert (
        url_without_password("postgresql://u:p%40ss@db.example:5433/mem?sslmode=require")
        == "postgresql://u@db.example:5433/mem"
    )
    assert url_without_password("postgres://db.example/mem") == "postgresql://db.example/mem"
    assert (
        url_without_password("postgresql:///mem?host=/run/pg&password=topsecret")
        == "postgresql:///mem?host=/run/pg"
    )
    assert url_without_password("postgresql://u:pa/ss@host/db") == UNREADABLE
    assert host_of("postgresql://u:pw@db.example:5433/mem") == "db.example:5433"
    assert check_url(" postgresql://h/db ") == "postgresql://h/db"


_text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20)


@given(user=_text, password=_text, host=_text, db=_text, encode=st.booleans())
def test_no_url_is_shown_with_its_password(
    user: str, password: str, host: str, db: str, encode: bool
) -> None:
    secret = MARK + password
    user, host, db = (x.replace(MARK, "") for x in (user, host, db))
    spelled = quote(secret, safe="") if encode else secret
    url = (
        f"postgresql://{quote(user, safe='')}:{spelled}@{quote(host, safe='')}/{quote(db, safe='')}"
    )
    for candidate in (url, f"postgresql://{quote(host, safe='')}/db?password={spelled}"):
        shown = url_without_password(candidate) + host_of(candidate)
        assert MARK not in shown
        assert quote(MARK) not in shown
