"""What every git process Redline starts is allowed to run, and with which options and variables.

The policy half of the hardened runner: the trusted directories git/gh/glab come from, the fixed
`-c` overrides, the subcommand allowlist and the write forms refused inside it, and the
environment allowlist. Nothing here starts a process: runner.py's `GitRunner` is still the one
place every git invocation goes through, and it applies all of this to every call (see
security.md for why each item is here).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

from redline.errors import GitCommandError, RepositoryError
from redline.git.binaries import SYSTEM_DIRS

# The system directories a child process's PATH holds (and where a lookup ends when PATH has
# nothing usable): never the workspace. Programs themselves are found by binaries.py.
TRUSTED_DIRS: Final[tuple[str, ...]] = SYSTEM_DIRS

# Overrides every configuration knob that can make a read-only git command run a program,
# write a file, talk to the network or change the output format we parse.
HARDENED_CONFIG: Final[tuple[tuple[str, str], ...]] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.quotePath", "false"),
    ("core.splitIndex", "false"),
    ("core.untrackedCache", "false"),
    ("diff.external", ""),
    ("diff.noprefix", "false"),
    ("diff.mnemonicPrefix", "false"),
    ("diff.relative", "false"),
    ("diff.orderFile", "/dev/null"),
    ("gpg.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("log.showSignature", "false"),
    ("safe.bareRepository", "explicit"),
    ("protocol.allow", "never"),
    ("credential.helper", ""),
    ("color.ui", "false"),
)

# Applied to diff/log/show so neither external diff drivers nor textconv filters run.
_NO_EXT_DIFF_SUBCOMMANDS: Final = frozenset({"diff", "log", "show"})

# Internal allowlist: the runner serves code-built argv, but a typo or a future caller should
# not be able to reach a writing or network subcommand through it.
_GIT_SUBCOMMANDS: Final = frozenset(
    {
        "add",  # only with a private index file, see check_git_args
        "blame",
        "cat-file",
        "config",
        "diff",
        "for-each-ref",
        # grep: for the search_callers tool (tools/code_tools.py). `-O`/`--open-files-in-pager`
        # runs a program, so check_git_args refuses it whatever the caller builds.
        "grep",
        "hash-object",  # only without -w, see check_git_args
        "log",
        "ls-files",
        "ls-tree",
        "merge-base",
        "rev-list",
        "rev-parse",
        "show",
        "symbolic-ref",
        "version",
    }
)
_CONFIG_READ_FLAGS: Final = frozenset({"--get", "--get-all", "--get-regexp"})
_CONFIG_WRITE_FLAGS: Final = frozenset(
    {
        "--add",
        "--replace-all",
        "--unset",
        "--unset-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
        "-f",
        "--file",
        "--blob",
        "--global",
        "--system",
    }
)

# Variables copied from the parent environment when present. Everything else is dropped:
# API keys, GH_TOKEN and GITLAB_TOKEN (only gh/glab get them: forge_cli.py), GIT_DIR,
# GIT_WORK_TREE, GIT_CONFIG_*, PAGER, ...
_PASS_ENV: Final = ("HOME", "TMPDIR", "USER", "LOGNAME")
_FIXED_ENV: Final[Mapping[str, str]] = {
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "false",
}


def resolve_binary(name: str, explicit: str | os.PathLike[str] | None) -> str | None:
    """The absolute path of `name`: the explicit one (tests' fakes; must be absolute), else
    found in TRUSTED_DIRS only; None when there is none. GitRunner looks programs up with
    binaries.find (the user's PATH, filtered); this is for explicit paths."""
    if explicit is not None:
        path = Path(explicit)
        if not path.is_absolute():
            raise RepositoryError(f"{name} path must be absolute, got {str(path)!r}")
        return str(path) if os.access(path, os.X_OK) and path.is_file() else None
    return shutil.which(name, path=os.pathsep.join(TRUSTED_DIRS))


def clean_env(environ: Mapping[str, str], path_dirs: Sequence[str]) -> dict[str, str]:
    """The environment a git child gets, built from the allowlist above: PATH of path_dirs,
    the few passed variables, and the fixed ones. Nothing else is inherited."""
    env = {"PATH": os.pathsep.join(path_dirs)}
    for key in _PASS_ENV:
        value = environ.get(key)
        if value:
            env[key] = value
    env.setdefault("HOME", "/nonexistent")
    env.update(_FIXED_ENV)
    return env


def config_env(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """`pairs` as git's documented GIT_CONFIG_COUNT/KEY_n/VALUE_n variables."""
    env: dict[str, str] = {}
    count = 0
    for key, value in pairs:
        env[f"GIT_CONFIG_KEY_{count}"] = key
        env[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    if count:
        env["GIT_CONFIG_COUNT"] = str(count)
    return env


def check_git_args(args: Sequence[str], *, private_index: bool) -> None:
    """Refuse argv outside the subcommand allowlist and the write forms of allowed ones."""
    if not args or args[0] not in _GIT_SUBCOMMANDS:
        raise GitCommandError(f"git subcommand not allowed: {args[:1]!r}")
    sub = args[0]
    if sub == "add" and not private_index:
        # Adding to the user's real index would change what they are about to commit.
        raise GitCommandError("git add is only allowed on a private index file")
    if sub == "config":
        _check_config_args(args[1:])
    if sub == "hash-object" and any(a == "-w" or a.startswith("--w") for a in args[1:]):
        raise GitCommandError("git hash-object may not write objects")
    if sub == "grep" and any(_is_grep_pager_option(a) for a in args[1:]):
        raise GitCommandError("git grep may not open files in a pager")


def hardened_argv(git_path: str, args: Sequence[str]) -> list[str]:
    """The full argv for `git args…`: the fixed hardened prefix, then args with
    `--no-ext-diff --no-textconv` (diff/log/show) or `--no-textconv` (blame) added."""
    prefix = [git_path, "--no-pager", "--literal-pathspecs"]
    for key, value in HARDENED_CONFIG:
        prefix += ["-c", f"{key}={value}"]
    argv = list(args)
    if argv and argv[0] in _NO_EXT_DIFF_SUBCOMMANDS:
        argv[1:1] = ["--no-ext-diff", "--no-textconv"]
    elif argv and argv[0] == "blame":
        argv[1:1] = ["--no-textconv"]
    return [*prefix, *argv]


def _is_grep_pager_option(arg: str) -> bool:
    # git accepts any unambiguous prefix of a long option (`--open`, `--op=vi`).
    name = arg.split("=", 1)[0]
    return arg.startswith("-O") or (len(name) > 3 and "--open-files-in-pager".startswith(name))


def _check_config_args(args: Sequence[str]) -> None:
    if any(a in _CONFIG_WRITE_FLAGS for a in args) or not any(
        a in _CONFIG_READ_FLAGS for a in args
    ):
        raise GitCommandError("git config is only allowed for reading (--get/--get-regexp)")
