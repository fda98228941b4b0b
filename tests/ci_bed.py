"""A hostile pull-request checkout for the CI isolation tests (tests/test_ci_isolation.py), and
the environment a CI job gives the steps that run in it.

Every file planted here does something observable when it is executed, imported or read as
configuration: it writes a marker named after itself into a directory outside the checkout (a
Python module or `.pth` line writes it; a program on PATH writes it and exits 97; a uv
configuration file names the marker as uv's cache directory, which uv then creates; a
`.python-version` names Python 2.7, on which nothing of the install can work). After a CI run,
the markers directory must be empty.

The job's environment is the kind a Python project's workflow often has: `PYTHONPATH=.`, relative
and checkout directories on PATH, a user base inside the checkout. The author of the workflow
set those, not the attacker; what the attacker controls is the checkout they point into.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[1]

# Python modules a step would import from the working directory or PYTHONPATH: `python -m venv`
# and `-m pip`, what venv runs (ensurepip), `-m uv`, Redline itself (a console script that
# imported `redline.entry` from the checkout), and the modules `site` imports at every start.
PLANTED_MODULES = [
    "venv.py",
    "pip/__init__.py",
    "pip/__main__.py",
    "ensurepip/__init__.py",
    "ensurepip/__main__.py",
    "uv/__init__.py",
    "uv/__main__.py",
    "redline/__init__.py",
    "redline/__main__.py",
    "redline/entry.py",
    "sitecustomize.py",
    "usercustomize.py",
]

# Programs a step would find on a PATH that names the checkout (relative entries, or the
# checkout's bin/ directory), at the top of the checkout and in bin/ and .venv/bin/.
PLANTED_PROGRAMS = [
    "bash", "sh", "env", "python", "python3", "pip", "pip3", "uv", "git", "gh", "glab", "pyenv",
    "mkdir", "mktemp", "rm", "cp", "chmod", "cat", "dirname", "readlink",
]  # fmt: skip

PYTHON_VERSIONS = ["3.11", "3.12", "3.13"]


def marker_name(planted: str) -> str:
    return planted.replace("/", "__")


def _python_payload(marker: Path) -> str:
    return f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"


def plant(tree: Path, markers: Path) -> list[str]:
    """Write the hostile files into `tree` (a git work tree); return their paths."""
    planted: list[str] = []

    def write(rel: str, text: str, *, executable: bool = False) -> None:
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if executable:
            path.chmod(0o755)
        planted.append(rel)

    for rel in PLANTED_MODULES:
        body = _python_payload(markers / marker_name(rel))
        if rel == "redline/entry.py":
            body += "\n\ndef main() -> int:\n    return 0\n"
        write(rel, body)
    # A `.pth` line starting with `import` runs in every Python whose site directory holds it:
    # at the top (a site directory if the checkout were one) and in a user base inside the
    # checkout (PYTHONUSERBASE), for every supported version.
    pth = "zz_planted.pth"
    write(pth, _python_payload(markers / marker_name(pth)))
    for version in PYTHON_VERSIONS:
        site = f"userbase/lib/python{version}/site-packages"
        for name in ("usercustomize.py", pth):
            write(f"{site}/{name}", _python_payload(markers / marker_name(f"{site}/{name}")))
    for folder in ("", "bin/", ".venv/bin/"):
        for name in PLANTED_PROGRAMS:
            rel = f"{folder}{name}"
            if (tree / rel).is_dir():  # pip/ and uv/ at the top are the planted packages
                continue
            marker = shlex.quote(str(markers / marker_name(rel)))
            write(rel, f"#!/bin/sh\necho ran > {marker}\nexit 97\n", executable=True)
    # A virtual environment's configuration next to the planted interpreters: only read by an
    # interpreter in the checkout, which PATH must never offer.
    cfg = f"home = {tree / 'bin'}\ninclude-system-site-packages = true\nversion = 3.11.0\n"
    write("pyvenv.cfg", cfg)
    write(".venv/pyvenv.cfg", cfg)
    # uv's configuration: read from the working directory (and its parents) by a uv that is not
    # told which project and settings to use. A cache directory is created when read.
    write("uv.toml", f'cache-dir = "{markers / "uv.toml"}"\n')
    write(
        "pyproject.toml",
        '[project]\nname = "widgets"\nversion = "0"\n\n[tool.uv]\n'
        f'cache-dir = "{markers / "pyproject.toml"}"\n\n'
        '[[tool.uv.index]]\nurl = "http://127.0.0.1:9/simple"\ndefault = true\n',
    )
    # pyenv's shim picks the interpreter named here when started in the checkout.
    write(".python-version", "2.7.18\n")
    return planted


def markers_left(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir()) if markers.exists() else []


def real_uv_cache(saved: dict[str, str | None]) -> Path | None:
    """The uv cache `make setup-dev` filled (resolved from the environment the session had
    before tests/private_env.py replaced HOME and XDG_CACHE_HOME), if there is one."""
    if os.environ.get("UV_CACHE_DIR"):
        path = Path(os.environ["UV_CACHE_DIR"])
    elif saved.get("XDG_CACHE_HOME"):
        path = Path(str(saved["XDG_CACHE_HOME"])) / "uv"
    elif saved.get("HOME"):
        path = Path(str(saved["HOME"])) / ".cache" / "uv"
    else:
        return None
    return path if path.is_dir() else None


def job_env(tree: Path, uv_cache: Path | None, **values: str) -> dict[str, str]:
    """The job's environment: this session's (private HOME, Redline cache) with the PATH,
    PYTHON* and uv settings of a workflow that points into its checkout, and no model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REDLINE_", "GITHUB_", "CI_"))}
    env["REDLINE_CACHE_DIR"] = os.environ["REDLINE_CACHE_DIR"]
    user = tree.parent / "user-config.toml"
    user.write_text("")
    env["REDLINE_CONFIG"] = str(user)
    env["PATH"] = os.pathsep.join([".", "bin", "", str(tree / "bin"), os.environ["PATH"]])
    env["PYTHONPATH"] = os.pathsep.join([".", str(tree)])
    env["PYTHONUSERBASE"] = str(tree / "userbase")
    env["UV_CONFIG_FILE"] = str(tree / "uv.toml")
    if uv_cache is not None:
        # The warm cache, and no network for uv: the install is the lock's, from the cache.
        # Named through XDG_CACHE_HOME where it can be: UV_CACHE_DIR would beat the `cache-dir`
        # of a uv.toml that uv wrongly read, and hide its marker. pip's cache stays private.
        if uv_cache.name == "uv":
            env["XDG_CACHE_HOME"] = str(uv_cache.parent)
            env["PIP_CACHE_DIR"] = str(tree.parent / "pip-cache")
        else:
            env["UV_CACHE_DIR"] = str(uv_cache)
        env["UV_OFFLINE"] = "1"
    env.update(values)
    return env


def run_bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A step's lines, as a runner runs them: bash by absolute path (the runner resolves its
    shell itself), no profile, stopping at the first failure."""
    return subprocess.run(
        ["/bin/bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def redline_upstream(dest: Path, tag: str) -> Path:
    """A git repository holding this work tree's files (as they are now, tracked and new) at
    `tag`: what a job clones instead of Redline's repository, with no network."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    repo = GitRepo(dest)
    for rel in filter(None, listed.split("\0")):
        source = ROOT / rel
        if source.is_file() and not source.is_symlink():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    repo.commit("redline")
    repo.git("tag", tag)
    return dest


def base_python() -> str:
    """The interpreter the action's setup-python step would hand over: a real one, by path."""
    return os.path.realpath(sys.executable)


def version_of(python: str, cwd: Path = Path("/"), env: dict[str, str] | None = None) -> str:
    """The full version of the interpreter `python` starts (a path, or a name on env's PATH)."""
    out = subprocess.run(
        [python, "-I", "-c", "import sys; print(sys.version.split()[0])"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()
