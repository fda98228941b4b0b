"""Which changed files each native analyzer takes: one small predicate per analyzer, here only.

A stand-in for the per-file verdict of issue 26's "decide once, per file, what it is": the
lead swaps these for that verdict at merge, so every rule about a file's kind stays in this
module. The rules use the path and, for shell scripts without a suffix, the first line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

OXLINT_SUFFIXES = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
SHELL_SUFFIXES = (".sh", ".bash")
# The shells shellcheck understands (`--shell`): a zsh or fish script is not one of them, and
# shellcheck would only report that it cannot check it (SC1071).
_SHELLS = frozenset({"sh", "bash", "dash", "ksh", "busybox"})
_SHEBANG = re.compile(rb"#![ \t]*(\S+)(?:[ \t]+(\S+))?")
_DOCKERFILE_NAMES = ("dockerfile", "containerfile")


def is_oxlint_file(path: str) -> bool:
    """JavaScript and TypeScript sources (`.d.ts` declarations hold no code to lint)."""
    lower = path.lower()
    return lower.endswith(OXLINT_SUFFIXES) and not lower.endswith((".d.ts", ".d.mts", ".d.cts"))


def shebang_shell(head: bytes) -> str | None:
    """The shell a `#!` line names (`/bin/sh`, `/usr/bin/env bash`), else None."""
    first = head.split(b"\n", 1)[0].rstrip(b"\r")
    match = _SHEBANG.match(first)
    if match is None:
        return None
    program = match.group(1).rsplit(b"/", 1)[-1]
    if program == b"env" and match.group(2) is not None:
        program = match.group(2)
    return program.decode("ascii", "replace")


def is_shell_file(path: str, head: bytes) -> bool:
    """A `.sh`/`.bash` file unless its `#!` names another shell (zsh), or a file without a
    suffix whose `#!` names one shellcheck knows."""
    shell = shebang_shell(head)
    name = path.rsplit("/", 1)[-1]
    if name.lower().endswith(SHELL_SUFFIXES):
        return shell is None or shell in _SHELLS
    return "." not in name and shell in _SHELLS


def is_dockerfile(path: str) -> bool:
    """`Dockerfile`, `Containerfile`, `Dockerfile.<x>`, `<x>.Dockerfile` (any case)."""
    name = path.rsplit("/", 1)[-1].lower()
    return any(
        name == base or name.startswith(base + ".") or name.endswith("." + base)
        for base in _DOCKERFILE_NAMES
    )


def is_workflow_file(path: str) -> bool:
    """A GitHub Actions workflow (`.github/workflows/*.yml|yaml`, at any depth zizmor reads
    them: directly in that directory) or an action definition (`action.yml|yaml`)."""
    parts = path.split("/")
    name = parts[-1]
    if not name.endswith((".yml", ".yaml")):
        return False
    if len(parts) >= 3 and parts[-3:-1] == [".github", "workflows"]:
        return True
    return name in ("action.yml", "action.yaml")


def select(paths: list[str], head: Callable[[str], bytes]) -> dict[str, list[str]]:
    """Each native analyzer's files among `paths` (`head(path)`: the file's first bytes)."""
    return {
        "oxlint": [p for p in paths if is_oxlint_file(p)],
        "shellcheck": [p for p in paths if is_shell_file(p, head(p))],
        "hadolint": [p for p in paths if is_dockerfile(p)],
        "zizmor": [p for p in paths if is_workflow_file(p)],
    }
