"""Checks on the names Redline hands to git: revisions, object ids and repository paths.

A revision typed by a user (or a model) must match a strict pattern before git sees it, and a
path must stay inside the repository; both are attacker text until checked here.
"""

from __future__ import annotations

import re
from typing import Final

from redline.errors import RepositoryError, UsageError
from redline.git.process import strip_control

# A revision as a person types it: names, ids, ~N, ^N, @{...}. No whitespace, no ':' (blob and
# message-search syntax), no leading '-', no '..' (ranges are split before this check).
_REV_RE: Final = re.compile(r"[A-Za-z0-9_@][A-Za-z0-9._/@{}^~+-]{0,254}")
_OID_RE: Final = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def is_valid_revision(text: str) -> bool:
    """Whether text may be passed to git as a revision (validate_revision without the error)."""
    return bool(_REV_RE.fullmatch(text)) and ".." not in text


def validate_revision(text: str) -> str:
    if not is_valid_revision(text):
        raise UsageError(
            f"invalid revision {strip_control(text)[:80]!r}",
            hint="use a branch, tag or commit id (e.g. main, v1.2, 1a2b3c4, HEAD~2)",
        )
    return text


def is_oid(text: str) -> bool:
    return bool(_OID_RE.fullmatch(text))


def short(oid: str) -> str:
    return oid[:7]


def check_rel_path(path: str) -> list[str]:
    """Components of a repository-relative path; refuses anything that could leave the repo."""
    if not path or "\0" in path or path.startswith("/") or "\\" in path:
        raise RepositoryError(f"invalid repository path {strip_control(path)[:200]!r}")
    parts = path.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise RepositoryError(f"invalid repository path {strip_control(path)[:200]!r}")
    return parts


__all__ = ["check_rel_path", "is_oid", "is_valid_revision", "short", "validate_revision"]
