"""What a PostgreSQL memory URL shows (memory/url.py), exactly: where it connects and nothing
else — for every spelling libpq reads, and the refusals. test_memory_settings.py checks with
hypothesis that no password ever appears; this table pins what does appear."""

from __future__ import annotations

import pytest

from redline.memory.url import UNREADABLE, check_url, host_of, password_of, url_without_password

UNREADABLE_HOST = "an unreadable URL"

# url → (shown, host_of, password_of)
SHOWN = {
    "postgresql://alice:s3cret@db.example.com:5433/memory": (
        "postgresql://alice@db.example.com:5433/memory",
        "db.example.com:5433",
        "s3cret",
    ),
    "postgres://alice@db.example.com/memory": (
        "postgresql://alice@db.example.com/memory",
        "db.example.com",
        None,
    ),
    "postgresql://db.example.com": ("postgresql://db.example.com", "db.example.com", None),
    "postgresql://": ("postgresql://", "localhost", None),
    "postgresql://alice:pw@/memory?host=/var/run/postgresql&port=5433": (
        "postgresql://alice@/memory?host=/var/run/postgresql&port=5433",
        "/var/run/postgresql:5433",
        "pw",
    ),
    "postgresql://alice:pw@/memory?host=/var/run/postgresql": (
        "postgresql://alice@/memory?host=/var/run/postgresql",
        "/var/run/postgresql",
        "pw",
    ),
    "postgresql://a%40b:p%2Fw@h1:5432,h2:5433/db%20x": (
        "postgresql://a%40b@h1,h2:5432,5433/db%20x",
        "h1,h2:5432,5433",
        "p/w",
    ),
    "postgresql://u:pw@[::1]:5432/db": ("postgresql://u@[::1]:5432/db", "[::1]:5432", "pw"),
    "postgresql://u@host/db?password=hunter2": ("postgresql://u@host/db", "host", "hunter2"),
    "  postgresql://u:pw@host/db  ": ("postgresql://u@host/db", "host", "pw"),
    # A / in a user or database name stays encoded: it must not read as a path.
    "postgresql://a%2Fb:pw@host/db%2Fx": ("postgresql://a%2Fb@host/db%2Fx", "host", "pw"),
    "postgresql://u:pw@/d%2Fb?host=/run/pg": (
        "postgresql://u@/d%2Fb?host=/run/pg",
        "/run/pg",
        "pw",
    ),
    "postgresql://u@h1:5432,[::1]:5433/db": (
        "postgresql://u@h1,[::1]:5432,5433/db",
        "h1,[::1]:5432,5433",
        None,
    ),
}

# A password with an unencoded / ? # or a second @: libpq would read the end of it as the
# database's name (shown), so the URL is refused whole.
REFUSED = [
    "postgresql://u:pa/ss@host/db",
    "postgresql://u:pa?ss@host/db",
    "postgresql://u:pa#ss@host/db",
    "postgresql://u:p@ss@host/db",
    "postgresql://u:pw@host/db#frag@x",
    "postgresql://u:pw@host/db?x=@y",
    "postgresql://u:pw@host:notaport/db?sslmode=nonsense&&",
]


@pytest.mark.parametrize("url", list(SHOWN))
def test_a_url_shows_where_it_connects_and_nothing_else(url: str) -> None:
    shown, host, password = SHOWN[url]
    assert url_without_password(url) == shown
    assert host_of(url) == host
    assert password_of(url) == password
    assert check_url(url) == url.strip()


@pytest.mark.parametrize("url", REFUSED)
def test_a_password_libpq_would_split_is_refused_and_never_shown(url: str) -> None:
    assert url_without_password(url) == UNREADABLE
    assert host_of(url) == UNREADABLE_HOST
    assert password_of(url) is None
    with pytest.raises(ValueError) as refused:
        check_url(url)
    assert str(refused.value) == (
        "not a PostgreSQL URL libpq can read; percent-encode a password's @ / ? # % "
        "characters (@ as %40, / as %2F)"
    )
    assert "pa" not in str(refused.value).replace("password", "").replace("percent", "")


@pytest.mark.parametrize("url", ["mysql://u:pw@host/db", "host=db user=u", "", "postgresql:/x"])
def test_another_scheme_is_refused_by_name(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        check_url(url)
    assert str(refused.value) == (
        "must be a postgresql:// URL (postgresql://user@host:5432/database)"
    )
    assert url_without_password(url) == UNREADABLE
    assert password_of(url) is None
