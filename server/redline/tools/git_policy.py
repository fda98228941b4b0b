"""What the model may ask of git: subcommands, flags, option values, preset formats.

The policy half of the `git` tool (the parser is tools/git_command.py, the handlers
tools/git_tool.py). Every subcommand has an exact flag allowlist (`Spec`): plain flags, and
flags taking a value with the validator that checks it. Spellings are exact: git accepts
abbreviations and `=`-joined forms, Redline accepts only what is listed here. Output formats
are git's built-in presets only; dates, counts and search texts are matched by strict patterns,
revisions by git/names.py's `validate_revision`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from redline.agent.toolkit import ToolError
from redline.errors import RedlineError
from redline.git.names import validate_revision
from redline.tools.names import shown

ALLOWED_SUBCOMMANDS: Final = (
    "diff",
    "log",
    "show",
    "status",
    "blame",
    "branch",
    "rev-parse",
    "ls-files",
)

# git's built-in pretty formats. None of them shows signatures (`%G?` would run gpg.program).
PRETTY_PRESETS: Final = frozenset(
    {"oneline", "short", "medium", "full", "fuller", "reference", "raw"}
)
DATE_PRESETS: Final = frozenset(
    {"relative", "local", "iso", "iso8601", "iso-strict", "rfc", "short", "raw", "human", "unix"}
)
MAX_REVISIONS: Final = 10
MAX_PATHS: Final = 50

COUNT: Final = re.compile(r"[0-9]{1,6}")
_DATE: Final = re.compile(r"[A-Za-z0-9 :.,/+-]{1,40}")
_DIFF_FILTER: Final = re.compile(r"[ACDMRTUXBacdmrtuxb*]{1,12}")
_BLAME_RANGE: Final = re.compile(r"[1-9][0-9]{0,6}(?:,[+-]?[0-9]{1,7})?|,[+-]?[1-9][0-9]{0,6}")
REF_PATTERN: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/*?-]{0,200}")

Validator = Callable[[str], str]

# -- pins: options every call gets, whatever the model asked ----------------------------------

# diff/log/show (and the diffs behind `status`): a submodule is only ever its pointer change
# (`Subproject commit <id>` lines, `M sub`). Without `--ignore-submodules=dirty` git runs
# `git status` inside a checked-out submodule to see whether it is dirty, and with
# `--submodule=diff` (the repository can default to it: diff.submodule) `git diff` inside it;
# those children read the submodule's own .git/config and .gitattributes, whose filters and
# diff drivers neither the hardened -c prefix nor --no-ext-diff reach. Explicit values also
# override `ignore = all` in a committed .gitmodules, which would hide a pointer change from
# the reviewer. The model cannot pass either option itself (DANGEROUS_HINTS).
SUBMODULE_PINS: Final = ("--ignore-submodules=dirty", "--submodule=short")

# log/show: the format is always chosen here, never by the repository's `format.pretty`
# (`%G?` there runs gpg.program, gpg.x509.program or gpg.ssh.program).
DEFAULT_PRETTY: Final = "--pretty=medium"
SIGNATURE_PINS: Final = ("--no-show-signature",)


def chooses_format(flags: list[str]) -> bool:
    """Whether the model's (checked) flags already name a preset format."""
    return any(f == "--oneline" or f.startswith(("--format=", "--pretty=")) for f in flags)


def _count(value: str) -> str:
    if not COUNT.fullmatch(value):
        raise ToolError(f"expected a number, got {shown(value)}")
    return value


def _date(value: str) -> str:
    if not _DATE.fullmatch(value):
        raise ToolError(f"invalid date {shown(value)} (e.g. 2.weeks.ago, 2026-01-31)")
    return value


def _text(value: str) -> str:
    if not value or len(value) > 200:
        raise ToolError("search text must be 1 to 200 characters")
    return value


def _pretty(value: str) -> str:
    if value not in PRETTY_PRESETS:
        presets = ", ".join(sorted(PRETTY_PRESETS))
        raise ToolError(
            f"format {shown(value)} is not allowed; use one of the presets: {presets} "
            "(custom format strings are not allowed)"
        )
    return value


def _date_format(value: str) -> str:
    if value not in DATE_PRESETS:
        raise ToolError(f"date format must be one of {', '.join(sorted(DATE_PRESETS))}")
    return value


def _diff_filter(value: str) -> str:
    if not _DIFF_FILTER.fullmatch(value):
        raise ToolError("--diff-filter takes letters from ACDMRTUXB")
    return value


def _blame_range(value: str) -> str:
    if not _BLAME_RANGE.fullmatch(value):
        raise ToolError("-L takes <start>,<end> line numbers (regex and :funcname forms are off)")
    return value


def _abbrev(value: str) -> str:
    if not COUNT.fullmatch(value) or not 4 <= int(value) <= 64:
        raise ToolError("abbreviation length must be between 4 and 64")
    return value


def check_revision(value: str) -> str:
    try:
        return validate_revision(value)
    except RedlineError as exc:
        raise ToolError(exc.message) from None


@dataclass(frozen=True)
class Spec:
    flags: frozenset[str] = frozenset()
    valued: dict[str, Validator] = field(default_factory=dict)  # flag → validator


_DIFF_COMMON: Final = frozenset(
    {
        "--stat",
        "--numstat",
        "--shortstat",
        "--name-only",
        "--name-status",
        "--summary",
        "-w",
        "--ignore-all-space",
        "-b",
        "--ignore-space-change",
        "--ignore-blank-lines",
        "-M",
        "--find-renames",
        "--no-renames",
        "--patience",
        "--histogram",
        "--minimal",
        "-W",
        "--function-context",
        "--no-color",
        "-R",
    }
)
_DIFF_VALUED: Final[dict[str, Validator]] = {
    "-U": _count,
    "--unified": _count,
    "--diff-filter": _diff_filter,
}

SPECS: Final[dict[str, Spec]] = {
    "diff": Spec(
        flags=_DIFF_COMMON | {"--cached", "--staged", "--merge-base", "--raw"},
        valued=dict(_DIFF_VALUED),
    ),
    "log": Spec(
        flags=_DIFF_COMMON
        | {
            "--oneline",
            "-p",
            "--patch",
            "--no-patch",
            "--no-merges",
            "--merges",
            "--first-parent",
            "--graph",
            "--decorate",
            "--no-decorate",
            "--all",
            "--reverse",
            "--follow",
            "--abbrev-commit",
            "--no-abbrev-commit",
            "--date-order",
            "--topo-order",
            "-i",
            "--regexp-ignore-case",
            "-F",
            "--fixed-strings",
        },
        valued={
            **_DIFF_VALUED,
            "-n": _count,
            "--max-count": _count,
            "--skip": _count,
            "--since": _date,
            "--after": _date,
            "--until": _date,
            "--before": _date,
            "--author": _text,
            "--committer": _text,
            "--grep": _text,
            "--format": _pretty,
            "--pretty": _pretty,
            "--date": _date_format,
        },
    ),
    "show": Spec(
        flags=_DIFF_COMMON
        | {"--oneline", "--no-patch", "-s", "--abbrev-commit", "--first-parent", "-p", "--patch"},
        valued={**_DIFF_VALUED, "--format": _pretty, "--pretty": _pretty, "--date": _date_format},
    ),
    "blame": Spec(
        flags=frozenset(
            {
                "-w",
                "-M",
                "-C",
                "-s",
                "-e",
                "--show-email",
                "-l",
                "-t",
                "-f",
                "--show-name",
                "-n",
                "--show-number",
                "--root",
                "-p",
                "--porcelain",
                "--line-porcelain",
                "-b",
            }
        ),
        valued={"-L": _blame_range, "--date": _date_format},
    ),
    "rev-parse": Spec(
        flags=frozenset(
            {"--short", "--abbrev-ref", "--symbolic-full-name", "--verify", "-q", "--quiet"}
        ),
        valued={"--short": _abbrev},
    ),
    "ls-files": Spec(
        flags=frozenset(
            {
                "-c",
                "--cached",
                "-o",
                "--others",
                "-m",
                "--modified",
                "-d",
                "--deleted",
                "-s",
                "--stage",
                "-u",
                "--unmerged",
                "-t",
                "--exclude-standard",
                "--error-unmatch",
            }
        ),
    ),
    "status": Spec(flags=frozenset({"--porcelain", "--short", "-s", "-b", "--branch"})),
    "branch": Spec(
        flags=frozenset(
            {
                "--list",
                "-l",
                "-a",
                "--all",
                "-r",
                "--remotes",
                "-v",
                "-vv",
                "--verbose",
                "--show-current",
            }
        ),
        valued={
            "--contains": check_revision,
            "--no-contains": check_revision,
        },
    ),
}

# Options that exist only to write, execute, read outside the repository or reach the network:
# refused by the allowlist anyway, named here so the model is told why.
DANGEROUS_HINTS: Final = {
    "--output": "writes a file",
    "-o": "writes a file",
    "--no-index": "reads files outside the repository",
    "--contents": "reads an arbitrary file",
    "--ignore-revs-file": "reads an arbitrary file",
    "--ignore-rev": "is not needed for review",
    "-S": "reads an arbitrary file (blame) or searches with a pickaxe",
    "--ext-diff": "runs an external program",
    "--textconv": "runs a conversion program",
    "--exec": "runs a program",
    "--upload-pack": "runs a program",
    "--show-signature": "runs gpg",
    "-O": "runs a program",
    "--open-files-in-pager": "runs a program",
    "--submodule": "would run git inside submodules, with their own configuration",
    "--ignore-submodules": "would run git inside submodules, with their own configuration",
    "--recurse-submodules": "would run git inside submodules, with their own configuration",
}
BRANCH_WRITES: Final = frozenset(
    {
        "-d",
        "-D",
        "--delete",
        "-m",
        "-M",
        "--move",
        "-c",
        "-C",
        "--copy",
        "-f",
        "--force",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "-t",
        "--track",
        "--no-track",
        "--create-reflog",
    }
)

# Filters of a branch listing, passed on to for-each-ref (which has the same options).
REF_FILTERS: Final = frozenset({"--contains", "--no-contains", "--merged", "--no-merged"})
