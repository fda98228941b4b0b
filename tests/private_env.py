"""A test run that leaves no trace: a pytest plugin (loaded by conftest.py, or `-p private_env`).

At start-up, before any test module is imported, the whole session — and every subprocess it
starts, since they inherit os.environ — gets a private HOME, XDG_* directories and Redline cache
in a temporary directory, and none of the developer's REDLINE_* settings. A fixture that builds
an environment from scratch, or forgets REDLINE_CACHE_DIR, then still writes into that private
home, never into the user's.

As a check that this holds, the user's own Redline cache and config directories (resolved from
the real environment before it is replaced) are listed at start-up and again at the end: if a
file there was added, changed or removed, the run fails and names it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs
import pytest

# (size, mtime in ns) of each file under a watched directory, by path.
Listing = dict[Path, tuple[int, int]]

XDG_DIRS = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_CACHE_HOME": ".cache",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
}


@dataclass
class PrivateEnv:
    root: Path
    saved: dict[str, str | None]
    watched: list[Path]
    before: Listing = field(default_factory=dict)


def user_dirs() -> list[Path]:
    """The user's Redline directories as the current environment resolves them: the cache
    (REDLINE_CACHE_DIR if set, else the platform's) and the config directory."""
    dirs = [platformdirs.user_cache_path("redline"), platformdirs.user_config_path("redline")]
    override = os.environ.get("REDLINE_CACHE_DIR", "").strip()
    if override:
        dirs.append(Path(override).expanduser())
    return dirs


def listing(dirs: list[Path]) -> Listing:
    files: Listing = {}
    for top in dirs:
        if not top.is_dir():
            continue
        for path in top.rglob("*"):
            if path.is_file():
                st = path.stat()
                files[path] = (st.st_size, st.st_mtime_ns)
    return files


def changes(before: Listing, after: Listing) -> list[str]:
    """One line per file added, changed or removed between two listings."""
    lines = [f"added {p}" for p in sorted(after.keys() - before.keys())]
    lines += [f"changed {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    lines += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    return lines


def enter() -> PrivateEnv:
    """Record the user's directories, then point the process's environment at a private home."""
    watched = user_dirs()
    root = Path(tempfile.mkdtemp(prefix="redline-test-home-"))
    home = root / "home"
    private = {"HOME": str(home), "REDLINE_CACHE_DIR": str(root / "redline-cache")}
    private |= {var: str(home / sub) for var, sub in XDG_DIRS.items()}
    for path in private.values():
        Path(path).mkdir(parents=True, exist_ok=True)
    saved: dict[str, str | None] = {var: os.environ.get(var) for var in private}
    for var in [v for v in os.environ if v.startswith("REDLINE_") and v not in private]:
        saved[var] = os.environ.pop(var)
    os.environ.update(private)
    return PrivateEnv(root=root, saved=saved, watched=watched, before=listing(watched))


def leave(env: PrivateEnv) -> None:
    for var, value in env.saved.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    shutil.rmtree(env.root, ignore_errors=True)


STASH_KEY = pytest.StashKey[PrivateEnv]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[STASH_KEY] = enter()


def pytest_sessionfinish(session: pytest.Session) -> None:
    env = session.config.stash.get(STASH_KEY, None)
    if env is None:
        return
    found = changes(env.before, listing(env.watched))
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = (
            "the test run wrote into the user's Redline directories (by a test, or by another "
            "process running at the same time):\n  " + "\n  ".join(found)
        )
        if reporter is not None:
            reporter.write_line(message, red=True, bold=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    env = config.stash.get(STASH_KEY, None)
    if env is not None:
        leave(env)
