"""Hardened git/gh access and the review scopes (diff text + both file versions)."""

from redline.errors import FileTooLargeError
from redline.git.pr import UNAVAILABLE_REV
from redline.git.process import ProcessResult, decode
from redline.git.repo import DEFAULT_MAX_FILE_BYTES
from redline.git.runner import EMPTY_TREE, GitRunner, find_repo_root
from redline.git.scopes import (
    INDEX_REV,
    ScopeDiff,
    ScopeRequest,
    resolve_scope,
)

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "EMPTY_TREE",
    "INDEX_REV",
    "UNAVAILABLE_REV",
    "FileTooLargeError",
    "GitRunner",
    "ProcessResult",
    "ScopeDiff",
    "ScopeRequest",
    "decode",
    "find_repo_root",
    "resolve_scope",
]
