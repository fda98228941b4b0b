"""A test run that leaves no trace: a pytest plugin (loaded by conftest.py, or `-p private_env`).

At start-up, before any test module is imported, the whole session — and every subprocess it
starts, since they inherit os.environ — gets a private HOME, XDG_* directories and Redline cache
in a temporary directory, and none of the developer's REDLINE_* settings. A fixture that builds
an environment from scratch, or forgets REDLINE_CACHE_DIR, then still writes into that private
home, never into the user's.

As a check that this holds, the user's own Redline cache and config directories (resolved from
the real environment before it is replaced) are listed at start-up and again at the end. A file
added or changed there that names one of this run's temporary directories (a task record of a
test's repository, a cached answer about it) was written by the run: the run fails and names
it. Other changes are listed without failing the run — on a developer's machine an editor's
Redline may well review something while the tests run.
"""

from __future__ import annotations

import getpass
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


def run_roots(env: PrivateEnv) -> list[str]:
    """Directories only this test run writes under: its private home, and pytest's temporary
    directories (the default root, or --basetemp)."""
    roots = [str(env.root), str(Path(tempfile.gettempdir()) / f"pytest-of-{getpass.getuser()}")]
    return roots


def written_by_run(path: Path, roots: list[str], basetemp: str | None) -> bool:
    try:
        text = path.read_bytes()[:2_000_000].decode("utf-8", errors="replace")
    except OSError:
        return False
    return any(root in text for root in [*roots, *([basetemp] if basetemp else [])])


def pytest_sessionfinish(session: pytest.Session) -> None:
    env = session.config.stash.get(STASH_KEY, None)
    if env is None:
        return
    after = listing(env.watched)
    found = changes(env.before, after)
    if not found:
        return
    basetemp = session.config.getoption("basetemp", None)
    roots = run_roots(env)
    touched = sorted(
        p for p in after if env.before.get(p) != after[p]
    )  # added or changed: readable now
    ours = [p for p in touched if written_by_run(p, roots, str(basetemp) if basetemp else None)]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if ours:
        message = "the test run wrote into the user's Redline directories:\n  " + "\n  ".join(
            f"{'added' if p not in env.before else 'changed'} {p}" for p in ours
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        message = (
            "the user's Redline directories changed during the run, not by a test (nothing "
            "there names this run's directories):\n  " + "\n  ".join(found)
        )
    if reporter is not None:
        reporter.write_line(message, red=bool(ours), bold=bool(ours))


def pytest_unconfigure(config: pytest.Config) -> None:
    env = config.stash.get(STASH_KEY, None)
    if env is not None:
        leave(env)
