"""A PostgreSQL URL for project memory (`memory.url`): checked, and shown without its password.

The URL is read by libpq's own parser (psycopg.conninfo), so what is shown is where a
connection goes. What is shown is rebuilt from the parsed fields (user, host, port, database)
only: the password, and every other option (which may carry one, e.g. `?password=`), never
appear in a status line, an error or a log.

One spelling is refused outright: an `@` anywhere but between the user part and the host. libpq
reads `postgresql://u:pa/ss@host/db` as host `u`, port `pa`, database `ss@host/db` — the end of
the password would be shown as the database's name. Such a password must be percent-encoded
(`/` as %2F, `@` as %40, `?` as %3F, `#` as %23).
"""

from __future__ import annotations

from typing import Final
from urllib.parse import quote

SCHEMES: Final = ("postgresql://", "postgres://")
UNREADABLE: Final = "postgresql://… (not a URL libpq can read)"


def check_url(url: str) -> str:
    """The URL if it is a PostgreSQL URL libpq can read; ValueError otherwise, whose message
    never contains the URL (it may hold a password)."""
    url = url.strip()
    if not url.lower().startswith(SCHEMES):
        raise ValueError("must be a postgresql:// URL (postgresql://user@host:5432/database)")
    if _fields(url) is None:
        raise ValueError(
            "not a PostgreSQL URL libpq can read; percent-encode a password's @ / ? # % "
            "characters (@ as %40, / as %2F)"
        )
    return url


def url_without_password(url: str) -> str:
    """`postgresql://user@host:port/database`: where the URL connects, and nothing else."""
    fields = _fields(url.strip())
    if fields is None:
        return UNREADABLE
    user = fields.get("user", "")
    host = fields.get("host", "")
    port = fields.get("port", "")
    db = fields.get("dbname", "")
    out = "postgresql://"
    if user:
        out += quote(user, safe="") + "@"
    if host.startswith("/"):  # a Unix socket directory: libpq's spelling is ?host=
        out += f"/{quote(db, safe='')}?host={quote(host, safe='/')}"
        return out + (f"&port={quote(port, safe='')}" if port else "")
    out += quote(
        _bracketed(host), safe=",:[]"
    )  # a multi-host list or an IPv6 address stays legible
    if port:
        out += ":" + quote(port, safe=",")
    return out + ("/" + quote(db, safe="") if db else "")


def host_of(url: str) -> str:
    """The host (or socket directory) a URL names, for an error message."""
    fields = _fields(url.strip())
    if fields is None:
        return "an unreadable URL"
    host = _bracketed(fields.get("host") or "localhost")
    port = fields.get("port")
    return f"{host}:{port}" if port else host


def password_of(url: str) -> str | None:
    """The URL's password (to scrub it from a driver's error text), if it has one."""
    fields = _fields(url.strip())
    return fields.get("password") if fields else None


def _bracketed(hosts: str) -> str:
    """An IPv6 address in brackets (`[::1]`), as a URL spells it, so a port after it reads as
    one; libpq's field holds the bare address. A multi-host list is bracketed host by host."""
    if hosts.startswith("/"):
        return hosts
    return ",".join(f"[{h}]" if ":" in h else h for h in hosts.split(","))


def _fields(url: str) -> dict[str, str] | None:
    if not url.lower().startswith(SCHEMES):
        return None
    rest = url.split("://", 1)[1]
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    # An @ outside the authority means a password with an unencoded / ? or # (see above).
    if rest.count("@") != authority.count("@") or authority.count("@") > 1:
        return None
    # Imported here: psycopg costs ~0.2 s to import, and only a user with a URL pays it.
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        parsed = conninfo_to_dict(url)
    except (ProgrammingError, ValueError):
        return None
    return {k: str(v) for k, v in parsed.items() if v is not None}
