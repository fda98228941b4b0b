"""Check, offline, that every package uv.lock installs has a wheel for each supported Python.

For each target (CPython 3.11, 3.12, 3.13 on Linux x86_64 with glibc >= 2.28 by default), the
packages installed there are found by walking the lock from the project through its runtime and
dev dependencies, evaluating each dependency's environment marker for that target; each must
have a wheel whose tags the target accepts (a manylinux or pure-Python `py3-none-any` wheel).
An sdist alone is reported too: whether it builds cannot be known without building it.

    python scripts/lock_wheels.py [--lock uv.lock] [--python 3.11 ...] [--glibc 2.28]

Exit 0 when every target is covered, else 1 with one line per package that is not.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.markers import Marker
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import parse_wheel_filename

SUPPORTED = ("3.11", "3.12", "3.13")
# litellm's compiled wheel is manylinux_2_28: glibc 2.28 (Debian 10, Ubuntu 20.04, RHEL 8).
DEFAULT_GLIBC = "2.28"
# The manylinux names from before PEP 600, by the glibc version they stand for.
LEGACY_MANYLINUX = {(2, 17): "manylinux2014", (2, 12): "manylinux2010", (2, 5): "manylinux1"}


@dataclass(frozen=True)
class Target:
    python: tuple[int, int]
    glibc: tuple[int, int]
    machine: str = "x86_64"

    def __str__(self) -> str:
        return f"{self.abi} manylinux_{self.glibc[0]}_{self.glibc[1]}_{self.machine}"

    def platforms(self) -> list[str]:
        major, newest = self.glibc
        names: list[str] = []
        for minor in range(newest, 4, -1):
            names.append(f"manylinux_{major}_{minor}_{self.machine}")
            if (major, minor) in LEGACY_MANYLINUX:
                names.append(f"{LEGACY_MANYLINUX[major, minor]}_{self.machine}")
        return names

    @property
    def abi(self) -> str:
        return f"cp{self.python[0]}{self.python[1]}"

    def tags(self) -> set[Tag]:
        platforms = self.platforms()
        return set(cpython_tags(self.python, [self.abi], platforms)) | set(
            compatible_tags(self.python, self.abi, platforms)
        )

    def environment(self) -> dict[str, str]:
        version = f"{self.python[0]}.{self.python[1]}"
        return {
            "implementation_name": "cpython",
            "implementation_version": f"{version}.0",
            "os_name": "posix",
            "platform_machine": self.machine,
            "platform_python_implementation": "CPython",
            "platform_release": "",
            "platform_system": "Linux",
            "platform_version": "",
            "python_full_version": f"{version}.0",
            "python_version": version,
            "sys_platform": "linux",
            "extra": "",
        }


def _version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def _applies(dep: dict[str, Any], env: dict[str, str]) -> bool:
    marker = dep.get("marker")
    return marker is None or Marker(str(marker)).evaluate(env)


def installed(lock: dict[str, Any], target: Target) -> Iterator[dict[str, Any]]:
    """The registry packages installed for `target`: the project's runtime and dev dependencies,
    transitively, where their markers hold."""
    packages: list[dict[str, Any]] = lock["package"]
    by_name: dict[str, list[dict[str, Any]]] = {}
    for package in packages:
        by_name.setdefault(str(package["name"]), []).append(package)
    env = target.environment()
    # The project itself: installed from the checkout, not from the registry.
    roots = [p for p in packages if "editable" in p["source"] or "virtual" in p["source"]]
    todo = [dep for root in roots for dep in _dependencies(root)]
    seen: set[tuple[str, str]] = set()
    while todo:
        dep = todo.pop()
        if not _applies(dep, env):
            continue
        candidates = by_name[str(dep["name"])]
        if "version" in dep:
            candidates = [p for p in candidates if p["version"] == dep["version"]]
        package = candidates[0]
        key = (str(package["name"]), str(package["version"]))
        if key in seen:
            continue
        seen.add(key)
        todo.extend(_dependencies(package))
        if "registry" in package["source"]:
            yield package


def _dependencies(package: dict[str, Any]) -> list[dict[str, Any]]:
    deps: list[dict[str, Any]] = list(package.get("dependencies", []))
    for group in package.get("dev-dependencies", {}).values():
        deps.extend(group)
    return deps


def uncovered(lock: dict[str, Any], target: Target) -> list[str]:
    """One line per package installed for `target` that has no wheel it accepts."""
    accepted = target.tags()
    problems = []
    for package in sorted(installed(lock, target), key=lambda p: str(p["name"])):
        wheels = [str(w["url"]).rsplit("/", 1)[-1] for w in package.get("wheels", [])]
        if any(parse_wheel_filename(name)[3] & accepted for name in wheels):
            continue
        what = "only an sdist" if not wheels else f"{len(wheels)} wheels, none for {target}"
        problems.append(f"{package['name']} {package['version']}: {what}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lock", type=Path, default=Path(__file__).parents[1] / "uv.lock")
    parser.add_argument("--python", action="append", help=f"default: {' '.join(SUPPORTED)}")
    parser.add_argument("--glibc", default=DEFAULT_GLIBC, help="oldest glibc to install on")
    args = parser.parse_args(argv)
    lock = tomllib.loads(args.lock.read_text(encoding="utf-8"))
    failed = False
    for python in args.python or SUPPORTED:
        target = Target(python=_version(python), glibc=_version(args.glibc))
        count = sum(1 for _ in installed(lock, target))
        problems = uncovered(lock, target)
        failed |= bool(problems)
        verdict = "a wheel for each" if not problems else f"{len(problems)} without a wheel"
        print(f"{target}: {count} packages, {verdict}")
        for problem in problems:
            print(f"  {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
