"""install.sh's and isolation.sh's rules, fast: what install.sh refuses, what each of its steps
gets (a fake Python and uv record their working directory, arguments and environment), the PATH
rule on generated PATHs, and the launcher on awkward directory names. The same rules run for
real, with a hostile checkout, in tests/test_ci_isolation.py."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_bed import ROOT, base_python, run_bash

INSTALL_SH = ROOT / "ci" / "github" / "install.sh"
ISOLATION_SH = ROOT / "ci" / "github" / "isolation.sh"


# --- install.sh's own checks -------------------------------------------------------------------


def _install(cwd: Path, **values: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], **values}
    return run_bash(f"{str(INSTALL_SH)!r}", cwd, env)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"TOOLS_DIR": ""}, "TOOLS_DIR must name a directory"),
        ({"PYTHON": ""}, "PYTHON must name a Python interpreter"),
        ({"TOOLS_DIR": "tools"}, "TOOLS_DIR must be an absolute path"),
        ({"ACTION_PATH": "redline"}, "ACTION_PATH must be an absolute path"),
        (
            {"TOOLS_DIR": "{checkout}/tools", "GITHUB_WORKSPACE": "{checkout}"},
            "TOOLS_DIR must be outside the checkout",
        ),
        (
            {"TOOLS_DIR": "{checkout}", "CI_PROJECT_DIR": "{checkout}/"},
            "TOOLS_DIR must be outside the checkout",
        ),
        (
            {"TOOLS_DIR": "{link}/tools", "GITHUB_WORKSPACE": "{checkout}"},
            "TOOLS_DIR must be outside the checkout",
        ),
        ({"PYTHON": "no-such-python"}, "PYTHON (no-such-python) is not a command"),
    ],
)
def test_install_refuses_what_would_put_it_in_the_checkout(
    tmp_path: Path, values: dict[str, str], message: str
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (tmp_path / "link").symlink_to(checkout)
    env = {"PYTHON": base_python(), "ACTION_PATH": str(ROOT), "TOOLS_DIR": str(tmp_path / "t")}
    env.update({k: v.format(checkout=checkout, link=tmp_path / "link") for k, v in values.items()})
    out = _install(checkout, **env)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"redline install: {message}" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "t").exists()


# --- install.sh's steps, through a fake Python and uv ----------------------------------------

FAKE_PYTHON = r"""#!/bin/bash
# Records each call (working directory and arguments); acts just enough for install.sh.
printf 'python\t%s\t%s\n' "$PWD" "$*" >> "$FAKE_LOG"
case "$1 $2 $3" in
  "-I -c "*) echo "$FAKE_PYTHON" ;;
  "-I -m venv") mkdir -p "${@: -1}/bin" && cp "$FAKE_PYTHON" "${@: -1}/bin/python" &&
    cp "$FAKE_UV" "${@: -1}/bin/uv" ;;
  "-I -m pip") ;;
  *) [[ "$1" == -I && -f "$2" ]] && echo "redline 0.1.0" ;;
esac
"""

FAKE_UV = r"""#!/bin/bash
# Records its call and the UV_* and PYTHON* variables it got; makes the environment uv would.
printf 'uv\t%s\t%s\n' "$PWD" "$*" >> "$FAKE_LOG"
env | grep -E '^(UV_|PYTHON)' | sort > "$FAKE_LOG.uv-env"
mkdir -p "$UV_PROJECT_ENVIRONMENT/bin"
cp "$FAKE_PYTHON" "$UV_PROJECT_ENVIRONMENT/bin/python"
touch "$UV_PROJECT_ENVIRONMENT/bin/redline"
"""


@dataclass
class FakeInstall:
    result: subprocess.CompletedProcess[str]
    calls: list[tuple[str, str, str]]  # (program, working directory, arguments)
    uv_env: dict[str, str]
    tools: Path


def _fake_install(tmp_path: Path, **job: str) -> FakeInstall:
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    for name, text in (("python3", FAKE_PYTHON), ("uv", FAKE_UV)):
        (fakes / name).write_text(text)
        (fakes / name).chmod(0o755)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    log = tmp_path / "log"
    tools = tmp_path / "tools"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "FAKE_LOG": str(log),
        "FAKE_PYTHON": str(fakes / "python3"),
        "FAKE_UV": str(fakes / "uv"),
        "PYTHON": str(fakes / "python3"),
        "ACTION_PATH": str(ROOT),
        "TOOLS_DIR": str(tools),
        "GITHUB_WORKSPACE": str(checkout),
    }
    env.update({k: v.format(checkout=checkout, tmp=tmp_path) for k, v in job.items()})
    result = run_bash(f"{str(INSTALL_SH)!r}", checkout, env)
    calls = [tuple(line.split("\t", 2)) for line in log.read_text().splitlines()]
    uv_env = dict(line.split("=", 1) for line in Path(f"{log}.uv-env").read_text().splitlines())
    return FakeInstall(result, calls, uv_env, tools)  # type: ignore[arg-type]


def test_install_runs_every_step_outside_the_checkout_and_isolated(tmp_path: Path) -> None:
    """The job's settings point into the checkout: none of them reaches uv or a Python."""
    fake = _fake_install(
        tmp_path,
        PYTHONPATH=".",
        PYTHONSTARTUP="{checkout}/startup.py",
        PYTHONUSERBASE="{checkout}",
        UV_CONFIG_FILE="{checkout}/uv.toml",
        UV_CACHE_DIR="{checkout}/.uv-cache",
        UV_FIND_LINKS="{checkout}/wheels",
        UV_INDEX_URL="http://127.0.0.1:9/simple",
        UV_PYTHON="{checkout}/python3",
        UV_PROJECT="{checkout}",
        UV_OFFLINE="1",
    )
    assert fake.result.returncode == 0, fake.result.stderr
    assert "redline 0.1.0" in fake.result.stdout
    checkout = str(tmp_path / "checkout")
    assert all(checkout not in cwd for _, cwd, _ in fake.calls), fake.calls
    pythons = [args for program, _, args in fake.calls if program == "python"]
    assert pythons and all(args.startswith("-I ") for args in pythons), pythons
    [(_, uv_cwd, uv_args)] = [c for c in fake.calls if c[0] == "uv"]
    assert uv_cwd == str(fake.tools)
    python = str(tmp_path / "fakes" / "python3")
    assert uv_args == (
        f"sync --frozen --no-dev --no-editable --no-config --python {python} --project {ROOT}"
    )
    # Only what tunes downloads passes; the cache in the checkout is named and dropped.
    assert fake.uv_env == {
        "UV_COMPILE_BYTECODE": "1",
        "UV_NO_PROGRESS": "1",
        "UV_OFFLINE": "1",
        "UV_PROJECT_ENVIRONMENT": str(fake.tools / "venv"),
    }
    assert "not using UV_CACHE_DIR" in fake.result.stderr
    launcher = fake.tools / "bin" / "redline"
    venv = fake.tools / "venv" / "bin"
    assert launcher.read_text().splitlines()[-1] == (
        f"exec '{venv / 'python'}' -I '{venv / 'redline'}' \"$@\""
    )


def test_install_keeps_a_uv_cache_outside_the_checkout(tmp_path: Path) -> None:
    fake = _fake_install(tmp_path, UV_CACHE_DIR="{tmp}/uv-cache", UV_NATIVE_TLS="1")
    assert fake.result.returncode == 0, fake.result.stderr
    assert fake.uv_env["UV_CACHE_DIR"] == str(tmp_path / "uv-cache")
    assert fake.uv_env["UV_NATIVE_TLS"] == "1"
    assert "not using" not in fake.result.stderr


# --- isolation.sh: the PATH rule ---------------------------------------------------------------


def _trusted_path(cwd: Path, path: str, **values: str) -> list[str]:
    script = (
        f"source {str(ISOLATION_SH)!r}; "
        'redline_checkouts "$(pwd -P)" "$GITHUB_WORKSPACE" "$CI_PROJECT_DIR"; redline_trusted_path'
    )
    env = {"PATH": path, **values}
    out = subprocess.run(
        ["/bin/bash", "--noprofile", "--norc", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split(":") if out.stdout else []


@pytest.fixture(scope="module")
def path_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("pathrule")
    dirs = {
        "checkout": base / "checkout",
        "checkout/bin": base / "checkout" / "bin",
        "workspace": base / "workspace",
        "workspace/bin": base / "workspace" / "bin",
        "project/bin": base / "project" / "bin",
        "outside/bin": base / "outside" / "bin",
        "outside/sbin": base / "outside" / "sbin",
        "checkout-sibling/bin": base / "checkout-sibling" / "bin",
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    # A link from outside into the checkout is inside it; one from inside to outside is not.
    (base / "outside" / "to-checkout").symlink_to(dirs["checkout/bin"])
    dirs["link-in"] = base / "outside" / "to-checkout"
    (dirs["checkout"] / "to-outside").symlink_to(dirs["outside/bin"])
    dirs["link-out"] = dirs["checkout"] / "to-outside"
    return dirs


# Inside a checkout: spelled inside one (link-out, though it leads outside: the pull request
# chose where it leads), or leading into one (link-in).
INSIDE = {"checkout", "checkout/bin", "workspace/bin", "project/bin", "link-in", "link-out"}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "checkout", "checkout/bin", "workspace/bin", "project/bin", "outside/bin",
                    "outside/sbin", "checkout-sibling/bin", "link-in", "link-out",
                ]
            ).map(lambda k: ("abs", k)),
            st.sampled_from([".", "", "bin", "./bin", "..", "checkout/bin", "~/bin"]).map(
                lambda r: ("rel", r)
            ),
            st.just(("abs", "/nonexistent/bin")),
        ),
        max_size=8,
    )
)  # fmt: skip
def test_trusted_path_keeps_only_absolute_directories_outside_every_checkout(
    path_dirs: dict[str, Path], entries: list[tuple[str, str]]
) -> None:
    """Generated PATHs: relative entries, directories of the checkout (the working directory,
    GITHUB_WORKSPACE, CI_PROJECT_DIR) or linked into it, and missing ones are dropped; the rest
    keep their order and spelling."""

    def spell(kind: str, key: str) -> str:
        return key if kind == "rel" or key.startswith("/") else str(path_dirs[key])

    path = ":".join(spell(k, v) for k, v in entries)
    kept = _trusted_path(
        path_dirs["checkout"],
        path,
        GITHUB_WORKSPACE=str(path_dirs["workspace"]),
        CI_PROJECT_DIR=str(path_dirs["project/bin"].parent),
    )
    expected = [
        spell(k, v) for k, v in entries if k == "abs" and not v.startswith("/") and v not in INSIDE
    ]
    assert kept == expected


# --- the launcher ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["plain", "with space", "quote'd", "dollar$HOME`x`", 'dq"x'])
def test_the_launcher_starts_python_isolated_whatever_the_path(tmp_path: Path, name: str) -> None:
    """The `redline` the install writes runs Redline's Python with -I and the console script,
    for any directory name (quoted for /bin/sh, never expanded)."""
    venv = tmp_path / name / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text('#!/bin/sh\nfor a in "$0" "$@"; do printf "%s\\n" "$a"; done\n')
    python.chmod(0o755)
    launcher = tmp_path / name / "bin" / "redline"
    script = (
        f"source {str(ISOLATION_SH)!r}; "
        f"redline_write_launcher {str(python)!r} {str(venv / 'bin' / 'redline')!r} "
        f"{str(launcher)!r}"
    )
    out = run_bash(script, tmp_path, {"PATH": os.environ["PATH"]})
    assert out.returncode == 0, out.stderr
    assert launcher.read_text().startswith("#!/bin/sh\n")
    ran = subprocess.run(
        [str(launcher), "review", "--pr", "7 $x"], capture_output=True, text=True, check=True
    )
    assert ran.stdout.splitlines() == [
        str(python), "-I", str(venv / "bin" / "redline"), "review", "--pr", "7 $x"
    ]  # fmt: skip
