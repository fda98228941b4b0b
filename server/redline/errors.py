"""Errors a user can act on. Each carries a message and, where useful, what to do next.

The CLI turns every `RedlineError` into exit code 2 with its message on stderr; nothing else
about it is printed (no traceback), because the message is the interface.
"""

from __future__ import annotations


class RedlineError(Exception):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class UsageError(RedlineError):
    """The request itself is malformed (bad flag combination, bad revision syntax)."""


class ConfigError(RedlineError):
    """A configuration file or variable is invalid; the message names the file and key."""


class RepositoryError(RedlineError):
    """The repository cannot serve the request (not a repo, unknown base, unborn HEAD, ...)."""


class GitCommandError(RepositoryError):
    """A git/gh process failed, timed out, or produced more output than allowed."""


class FileTooLargeError(RepositoryError):
    """A file version is larger than the configured read limit."""
