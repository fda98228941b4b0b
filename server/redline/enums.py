"""The plain enums of the domain model, without pydantic.

`redline.model` re-exports them; code that must stay cheap to import (the language server
before its first request) imports them from here, so it never pays for pydantic.
"""

from __future__ import annotations

from enum import StrEnum


class Severity(StrEnum):
    CRITICAL = "Critical"
    HIGH = "High"
    MEDIUM = "Medium"
    LOW = "Low"
    INFO = "Info"

    @property
    def rank(self) -> int:
        """Higher is more serious: Critical 4 … Info 0."""
        return _SEVERITY_RANK[self]

    @classmethod
    def parse(cls, text: str) -> Severity:
        for member in cls:
            if member.value.lower() == text.strip().lower():
                return member
        raise ValueError(f"unknown severity {text!r}; expected one of {[m.value for m in cls]}")


_SEVERITY_RANK = {
    Severity.CRITICAL: 4,
    Severity.HIGH: 3,
    Severity.MEDIUM: 2,
    Severity.LOW: 1,
    Severity.INFO: 0,
}


class Category(StrEnum):
    FUNCTIONALITY = "Functionality"
    SECURITY = "Security"
    PERFORMANCE = "Performance"
    QUALITY = "Quality"


class AnchorState(StrEnum):
    EXACT = "exact"
    RELOCATED = "relocated"
    # Placed by a fuzzy match: the quoted code is not in the file (see review/anchoring.py).
    APPROXIMATE = "approximate"
    UNANCHORED = "unanchored"


class FixState(StrEnum):
    """Whether a finding's improved code may be applied as a fix: one verdict, made in the
    pipeline (review/fix_check.py), that every output follows."""

    PARSES = "parses"  # the fixed file parses (a grammar checked it)
    UNCHECKED = "unchecked"  # no grammar for the language, or the file did not parse before
    DOES_NOT_PARSE = "does_not_parse"  # shown as suggested code only, never applied
    NOT_IN_FILE = "not_in_file"  # the quoted code is not in the file: nothing to replace

    @property
    def applicable(self) -> bool:
        return self in (FixState.PARSES, FixState.UNCHECKED)


class PatchType(StrEnum):
    ADD = "add"
    DELETE = "delete"
    MODIFY = "modify"
    RENAME = "rename"


class ContextLevel(StrEnum):
    DIFF_ONLY = "diff_only"
    FUNCTION = "function"
    FILE_CONTEXT = "file_context"
    FULL_FILE = "full_file"

    @property
    def depth(self) -> int:
        return _CONTEXT_DEPTH[self]

    @staticmethod
    def deeper(a: ContextLevel, b: ContextLevel) -> ContextLevel:
        return a if a.depth >= b.depth else b


_CONTEXT_DEPTH = {
    ContextLevel.DIFF_ONLY: 0,
    ContextLevel.FUNCTION: 1,
    ContextLevel.FILE_CONTEXT: 2,
    ContextLevel.FULL_FILE: 3,
}


class Tag(StrEnum):
    SECURITY_SENSITIVE = "security_sensitive"
    ONLY_COMMENTS = "only_comments"
    ONLY_WHITESPACE = "only_whitespace"
    TEST = "test"
    DOCS = "docs"
    CONFIG = "config"
    GENERATED = "generated"
    LOCKFILE = "lockfile"
    VENDORED = "vendored"
    MINIFIED = "minified"  # minified or bundled code: very long lines, or a bundler's runtime
    BINARY = "binary"
    LARGE = "large"
