"""Which changed files each native analyzer takes: the per-file verdict (diff/file_kind.py)
decides the language; `select` only leaves out what a tool cannot check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from redline.diff.file_kind import FileKind, files_for, kind_with_content, takes

# The shells shellcheck understands (`--shell`): a zsh or fish script is not one of them, and
# shellcheck would only report that it cannot check it (SC1071).
_SHELLS = frozenset({"sh", "bash", "dash", "ksh", "busybox"})
_SHEBANG = re.compile(rb"#![ \t]*(\S+)(?:[ \t]+(\S+))?")


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


def select(
    paths: list[str],
    head: Callable[[str], bytes],
    verdicts: Mapping[str, FileKind] | None = None,
) -> dict[str, list[str]]:
    """Each native analyzer's files among `paths`: those whose verdict (diff/file_kind.py, the
    one place a file's kind is decided; `verdicts`, else from the path and `head`) takes the
    analyzer, less what the tool itself cannot check — declarations for oxlint, a script whose
    `#!` names a shell shellcheck does not know (`head(path)`: the file's first bytes)."""
    kinds = [(verdicts or {}).get(p) or kind_with_content(p, head(p)) for p in paths]
    return {
        "oxlint": [k.path for k in kinds if takes("oxlint", k) and not k.stub],
        "shellcheck": [
            k.path
            for k in kinds
            if takes("shellcheck", k) and shebang_shell(head(k.path)) in (None, *_SHELLS)
        ],
        "hadolint": files_for("hadolint", kinds),
        "zizmor": files_for("zizmor", kinds),
    }
