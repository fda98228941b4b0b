"""Every package of uv.lock has a wheel for CPython 3.11, 3.12 and 3.13 (scripts/lock_wheels.py),
and the check fails, naming the package, when one does not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "lock_wheels.py"

LOCK = """\
version = 1
requires-python = ">=3.11"

[[package]]
name = "app"
version = "0.1.0"
source = { editable = "." }
dependencies = [
    { name = "compiled" },
    { name = "winonly", marker = "sys_platform == 'win32'" },
    { name = "backport", marker = "python_full_version < '3.12'" },
]

[package.dev-dependencies]
dev = [{ name = "puresdist" }]

[[package]]
name = "compiled"
version = "1.0"
source = { registry = "https://pypi.org/simple" }
wheels = [
    { url = "https://x/compiled-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl" },
    { url = "https://x/compiled-1.0-cp312-abi3-manylinux_2_28_x86_64.whl" },
]

[[package]]
name = "winonly"
version = "1.0"
source = { registry = "https://pypi.org/simple" }
wheels = [{ url = "https://x/winonly-1.0-cp311-abi3-win_amd64.whl" }]

[[package]]
name = "backport"
version = "1.0"
source = { registry = "https://pypi.org/simple" }
wheels = [{ url = "https://x/backport-1.0-cp311-cp311-manylinux_2_34_x86_64.whl" }]

[[package]]
name = "puresdist"
version = "2.0"
source = { registry = "https://pypi.org/simple" }
sdist = { url = "https://x/puresdist-2.0.tar.gz" }
"""


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def test_the_lock_has_a_wheel_for_every_package_on_each_supported_python() -> None:
    out = check()
    assert out.returncode == 0, out.stdout + out.stderr
    for python in ("cp311", "cp312", "cp313"):
        assert f"{python} manylinux_2_28_x86_64: " in out.stdout
    assert "without a wheel" not in out.stdout


def test_a_package_without_a_fitting_wheel_is_named_per_python(tmp_path: Path) -> None:
    lock = tmp_path / "uv.lock"
    lock.write_text(LOCK, encoding="utf-8")
    out = check("--lock", str(lock))
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    # 3.11: the backport (only installed there) needs glibc 2.34; the dev sdist cannot be checked.
    assert lines[:3] == [
        "cp311 manylinux_2_28_x86_64: 3 packages, 2 without a wheel",
        "  backport 1.0: 1 wheels, none for cp311 manylinux_2_28_x86_64",
        "  puresdist 2.0: only an sdist",
    ]
    # 3.12 and 3.13: the abi3 wheel fits, the backport is not installed, the Windows-only
    # package is not installed on Linux.
    assert "cp312 manylinux_2_28_x86_64: 2 packages, 1 without a wheel" in lines
    assert "winonly" not in out.stdout


def test_an_older_glibc_target_names_the_wheels_that_need_a_newer_one() -> None:
    # litellm's compiled wheel is manylinux_2_28: the reason the default target is glibc 2.28.
    out = check("--python", "3.12", "--glibc", "2.17")
    assert out.returncode == 1
    assert "\n  litellm " in out.stdout
    assert "none for cp312 manylinux_2_17_x86_64" in out.stdout
