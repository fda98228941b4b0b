"""The one hardened runner for every git, gh and glab process Redline starts.

The repository under review may belong to an attacker (Redline's threat model): its
`.git/config`, hooks and `.gitattributes` can name commands that git would happily run. Every
call here therefore gets a fixed hardened prefix, a clean environment built from an allowlist,
a timeout and an output cap. argv is built by Redline's own code only; the LLM-facing git tool
adds its own flag allowlists on top of this.

What those are — the trusted binary directories, the `-c` overrides, the subcommand allowlist
and its refused write forms, the environment allowlist — is in hardening.py; this module applies
them, and `GitRunner` is the one place every git process is started from (`_run_git_raw` for
the repository's commands, `_config_as_data` for reading its config as data).

What gh and glab may run, and with which variables, is in forge_cli.py; the methods here
(`run_gh`, `run_gh_api`, `run_glab`, ...) delegate to it.

Test hooks: `GitRunner(gh_path=...)` / `glab_path=...` (or the environment variables
`REDLINE_GH` / `REDLINE_GLAB`, absolute paths) select a fake `gh` / `glab`;
`GitRunner(git_path=...)` selects a fake `git`. All are for tests: production code constructs
`GitRunner()` and gets git/gh/glab from the user's `[tools]` settings or their PATH, minus
every directory the reviewed repository or another user could plant a program in
(binaries.py), looked up for the directory each call runs in.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final

from redline.errors import GitCommandError, RepositoryError
from redline.git import forge_cli
from redline.git.binaries import SYSTEM_DIRS, Lookup, avoid_roots, plan_for
from redline.git.discovery import RepoLocation, discover
from redline.git.hardening import (
    HARDENED_CONFIG,
    check_git_args,
    clean_env,
    config_env,
    hardened_argv,
    resolve_binary,
)
from redline.git.process import (
    ProcessResult,
    decode,
    run_process,
)
from redline.git.view import RepoView, views_home
from redline.git.worktree_guard import guard_for
from redline.tool_paths import named_tool

EMPTY_TREE: Final = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

DEFAULT_TIMEOUT: Final = 30.0
DEFAULT_MAX_OUTPUT: Final = 256 * 1024 * 1024
_CONFIG_MAX: Final = 4 * 1024 * 1024


class GitRunner:
    """Runs git, gh and glab with hardened options, a clean environment, a timeout and a cap.

    Not bound to a repository: every call names the directory it runs in. Thread-safe (the
    only state that changes after construction is the filter-name cache, kept under a lock).
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_output: int = DEFAULT_MAX_OUTPUT,
        gh_path: str | os.PathLike[str] | None = None,
        git_path: str | os.PathLike[str] | None = None,
        glab_path: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.timeout = timeout
        self.max_output = max_output
        self._environ: Mapping[str, str] = os.environ if environ is None else environ
        if gh_path is None and self._environ.get("REDLINE_GH"):
            gh_path = self._environ["REDLINE_GH"]
        if glab_path is None and self._environ.get("REDLINE_GLAB"):
            glab_path = self._environ["REDLINE_GLAB"]
        self._explicit_gh = gh_path is not None
        self._explicit_glab = glab_path is not None
        # Paths given in code (tests' fakes) or by REDLINE_GH/REDLINE_GLAB; the rest is looked
        # up per call, from the user's PATH minus what the reviewed repository could plant
        # there (binaries.py), or taken from the user's `[tools]` settings.
        self._explicit: dict[str, str | None] = {}
        if git_path is not None:
            self._explicit["git"] = resolve_binary("git", git_path)
        if gh_path is not None:
            self._explicit["gh"] = resolve_binary("gh", gh_path)
        if glab_path is not None:
            self._explicit["glab"] = resolve_binary("glab", glab_path)
        self._lookups: dict[tuple[str, tuple[Path, ...], str | None], Lookup] = {}
        self._avoid: dict[Path | None, tuple[Path, ...]] = {}
        self._lookup_lock = threading.Lock()
        # One private view per repository (git/view.py), found by the directory a call runs
        # in. The lock is held while a view is built, so calls started together (a scope asks
        # for several revisions at once) wait for one view instead of each building one.
        self._views: dict[Path, RepoView] = {}
        self._located: dict[Path, RepoLocation | None] = {}
        self._view_lock = threading.Lock()

    # -- programs (binaries.py) -------------------------------------------------------------

    def lookup(self, name: str, cwd: Path | None = None) -> Lookup:
        """Where `name` is taken from for a call run in cwd (None: the process's directory)."""
        if name in self._explicit:
            path = self._explicit[name]
            return Lookup(name, path, (), () if path else ((name, "given path not usable"),))
        with self._lookup_lock:
            key_dir = None if cwd is None else Path(cwd)
            avoid = self._avoid.get(key_dir)
            if avoid is None:
                avoid = self._avoid[key_dir] = avoid_roots(key_dir, self._environ)
            key = (name, avoid, named_tool(name))
            found = self._lookups.get(key)
            if found is None:
                found = self._lookups[key] = plan_for(self._environ, avoid).find(name)
            return found

    @property
    def git_path(self) -> str | None:
        return self.lookup("git").path

    @property
    def gh_path(self) -> str | None:
        return self.lookup("gh").path

    @property
    def glab_path(self) -> str | None:
        return self.lookup("glab").path

    # -- environment ----------------------------------------------------------------------

    def child_env(
        self, *, for_gh: bool = False, for_glab: bool = False, cwd: Path | None = None
    ) -> dict[str, str]:
        """The complete environment a child process gets; nothing else is inherited. With
        for_gh/for_glab, also that tool's own auth and config variables (forge_cli.py)."""
        dirs = list(SYSTEM_DIRS)
        git = self.lookup("git", cwd).path
        if git and os.path.dirname(git) not in dirs:
            # gh, glab and git's own helpers find git by PATH: the one Redline chose.
            dirs.insert(0, os.path.dirname(git))
        if for_gh and self._explicit_gh and self.gh_path:
            dirs.insert(0, str(Path(self.gh_path).parent))
        if for_glab and self._explicit_glab and self.glab_path:
            dirs.insert(0, str(Path(self.glab_path).parent))
        env = clean_env(self._environ, dirs)
        for cli, wanted in ((forge_cli.GH, for_gh), (forge_cli.GLAB, for_glab)):
            if wanted:
                env.update(forge_cli.tool_env(cli, self._environ))
        if for_gh or for_glab:
            # gh and glab run git themselves (remote lookup) without our -c prefix; the same
            # overrides reach those children through git's documented GIT_CONFIG_COUNT.
            env.update(config_env(HARDENED_CONFIG))
        return env

    # -- git --------------------------------------------------------------------------------

    def _require_git(self, cwd: Path | None = None) -> str:
        found = self.lookup("git", cwd)
        if not found.path:
            raise RepositoryError("git is not installed", hint=f"install git; {found.where()}")
        return found.path

    # -- the private repository view ------------------------------------------------------

    def location(self, cwd: Path) -> RepoLocation | None:
        """The repository cwd is in, found without git (git/discovery.py); None outside one."""
        key = Path(cwd)
        if key not in self._located:
            # git for reading its config is looked up as for a call in cwd (binaries.py).
            self._located[key] = discover(
                key, lambda data, name: self._read_config_key(data, name, cwd=key)
            )
        return self._located[key]

    def view(self, cwd: Path) -> RepoView | None:
        """The private view of cwd's repository (built on first use); None outside one."""
        location = self.location(cwd)
        if location is None:
            return None
        view = self._views.get(location.worktree)
        if view is None:
            with self._view_lock:
                view = self._views.get(location.worktree)
                if view is None:
                    where = location.worktree
                    view = RepoView(
                        location, lambda data: self._list_config(data, cwd=where), HARDENED_CONFIG
                    )
                    self._views[location.worktree] = view
        return view

    def notes(self, cwd: Path) -> list[str]:
        """What the user should know about how cwd's repository is read (alternates, ...)."""
        view = self.view(cwd)
        return list(view.notes) if view is not None else []

    def close(self) -> None:
        """Remove the private views (also done when the runner is collected, or at exit)."""
        with self._view_lock:
            views, self._views = list(self._views.values()), {}
        for view in views:
            view.close()

    def _config_as_data(self, data: bytes, *args: str, cwd: Path | None = None) -> ProcessResult:
        """`git config --file - …` on a config file's bytes (read by Redline without following
        a link: git/gitdir.py, git/discovery.py), parsed as data and never applied. git opens
        no file of the repository's, and runs outside any repository (in the views' own
        directory), so its discovery reads nothing either."""
        home = views_home()
        env = self.child_env()
        env["GIT_CEILING_DIRECTORIES"] = str(home.parent)
        env["GIT_CONFIG_GLOBAL"] = os.devnull
        return run_process(
            [self._require_git(cwd), "config", "--file", "-", "--no-includes", *args],
            cwd=home,
            env=env,
            timeout=self.timeout,
            max_output=_CONFIG_MAX,
            input=data,
            what="git config",
        )

    def _list_config(self, data: bytes, cwd: Path | None = None) -> bytes:
        result = self._config_as_data(data, "--list", "-z", cwd=cwd)
        if result.returncode != 0:
            # git names the file "-" and the line; never a line's text.
            raise RepositoryError(f"cannot read the repository's config: {result.error_text}")
        return result.stdout

    def _read_config_key(self, data: bytes, key: str, cwd: Path | None = None) -> str | None:
        result = self._config_as_data(data, "--get", key, cwd=cwd)
        return decode(result.stdout).rstrip("\n") if result.returncode == 0 else None

    def run_git(
        self,
        cwd: Path,
        *args: str,
        timeout: float | None = None,
        max_output: int | None = None,
        input: bytes | None = None,
        index_file: Path | None = None,
        on_stdout: Callable[[bytes], None] | None = None,
        stdin_fd: int | None = None,
    ) -> ProcessResult:
        """Run `git <hardened prefix> args…` in cwd and return its result, whatever the exit.

        With `on_stdout`, stdout is handed over chunk by chunk while git is still writing (the
        caller can work on a large diff as it arrives) and the result's stdout is empty; the
        timeout and the output cap apply exactly as without it. With `stdin_fd` (instead of
        `input`), git reads its stdin from that descriptor, typically a pipe another thread
        keeps writing to; the caller still owns and closes it.
        """
        # The subcommand allowlist and its refused write forms (`add` to the real index,
        # `config` writes, `hash-object -w`, `grep -O`): hardening.py.
        check_git_args(args, private_index=index_file is not None)
        sub = args[0]
        extra_env: dict[str, str] = {}
        view = self.view(cwd) if sub != "version" else None
        guard = None
        if view is not None:
            view.refresh()
            extra_env.update(view.env(writes_objects=sub == "add"))
            # What git reads from the work tree itself (uncommitted diffs, blame, grep) passes
            # the hard-link rule, whoever called (worktree_guard.py).
            guard = guard_for(args, view.location.worktree)
        if guard is not None:
            refused = guard.refusal()
            if refused is not None:
                return refused
            if on_stdout is not None:
                on_stdout = guard.stream(on_stdout)
        if index_file is not None:
            extra_env["GIT_INDEX_FILE"] = str(index_file)
        result = self._run_git_raw(
            cwd,
            args,
            extra_env,
            timeout=timeout,
            max_output=max_output,
            input=input,
            on_stdout=on_stdout,
            stdin_fd=stdin_fd,
        )
        return guard.finish(result) if guard is not None else result

    def git(
        self,
        cwd: Path,
        *args: str,
        timeout: float | None = None,
        max_output: int | None = None,
        input: bytes | None = None,
        index_file: Path | None = None,
        on_stdout: Callable[[bytes], None] | None = None,
        stdin_fd: int | None = None,
    ) -> bytes:
        """Like run_git, but a non-zero exit raises GitCommandError with git's message."""
        result = self.run_git(
            cwd,
            *args,
            timeout=timeout,
            max_output=max_output,
            input=input,
            index_file=index_file,
            on_stdout=on_stdout,
            stdin_fd=stdin_fd,
        )
        if result.returncode != 0:
            missing = missing_object(result.error_text)
            if missing is not None:
                raise GitCommandError(
                    f"object {missing} is not in the local repository",
                    hint=f"fetch it first with your own git if you trust this repository's "
                    f"remotes (in a partial clone, `git cat-file -e {missing}`); Redline never "
                    "fetches, and reads only the repository's own objects",
                )
            raise GitCommandError(
                f"git {args[0]} failed (exit {result.returncode}): {result.error_text}"
            )
        return result.stdout

    def _run_git_raw(
        self,
        cwd: Path,
        argv: Sequence[str],
        extra_env: Mapping[str, str],
        *,
        timeout: float | None = None,
        max_output: int | None = None,
        input: bytes | None = None,
        on_stdout: Callable[[bytes], None] | None = None,
        stdin_fd: int | None = None,
    ) -> ProcessResult:
        # The hardened prefix (every HARDENED_CONFIG override as `-c`), and `--no-ext-diff
        # --no-textconv` on diff/log/show, `--no-textconv` on blame: hardening.py.
        full_argv = hardened_argv(self._require_git(cwd), argv)
        env = self.child_env(cwd=cwd)
        env.update(extra_env)
        return run_process(
            full_argv,
            cwd=cwd,
            env=env,
            timeout=self.timeout if timeout is None else timeout,
            max_output=self.max_output if max_output is None else max_output,
            input=input,
            what=f"git {argv[0]}",
            on_stdout=on_stdout,
            stdin_fd=stdin_fd,
        )

    # -- gh and glab (forge_cli.py) ---------------------------------------------------------

    def forge_path(self, name: str, cwd: Path | None = None) -> str | None:
        """The absolute path of `gh` or `glab` for a call in cwd, None when there is none."""
        return self.lookup(name, cwd).path if name in ("gh", "glab") else None

    def gh_available(self, cwd: Path) -> tuple[bool, str]:
        """(usable, reason): gh installed and `gh auth status` succeeds."""
        return forge_cli.cli_available(self, forge_cli.GH, cwd)

    def run_gh(
        self,
        cwd: Path,
        *args: str,
        timeout: float | None = None,
        max_output: int | None = None,
    ) -> ProcessResult:
        """Run an allowlisted, read-only gh subcommand against the workspace's repository."""
        return forge_cli.run_cli(
            self, forge_cli.GH, cwd, args, timeout=timeout, max_output=max_output
        )

    def gh(self, cwd: Path, *args: str, timeout: float | None = None) -> bytes:
        result = self.run_gh(cwd, *args, timeout=timeout)
        return forge_cli.checked_output(result, forge_cli.GH, args)

    def run_gh_api(
        self, cwd: Path, *args: str, input: bytes | None = None, timeout: float | None = None
    ) -> ProcessResult:
        """`gh api …` (only `api`), for Redline's own posting code; input feeds stdin."""
        return forge_cli.run_cli(self, forge_cli.GH_API, cwd, args, timeout=timeout, input=input)

    def glab_available(self, cwd: Path) -> tuple[bool, str]:
        """(usable, reason): glab installed and `glab auth status` succeeds."""
        return forge_cli.cli_available(self, forge_cli.GLAB, cwd)

    def run_glab(
        self, cwd: Path, *args: str, input: bytes | None = None, timeout: float | None = None
    ) -> ProcessResult:
        """Run an allowlisted glab subcommand (`auth status`, `mr view`, `mr diff`, `api`) against
        the workspace's repository; input feeds stdin (`glab api … --input -`)."""
        return forge_cli.run_cli(self, forge_cli.GLAB, cwd, args, timeout=timeout, input=input)

    def glab(self, cwd: Path, *args: str, timeout: float | None = None) -> bytes:
        result = self.run_glab(cwd, *args, timeout=timeout)
        return forge_cli.checked_output(result, forge_cli.GLAB, args)

    # -- repository discovery ---------------------------------------------------------------

    def find_repo_root(self, path: Path) -> Path:
        """The top of the working tree containing path, found by Redline, not git (see
        git/discovery.py: a `.git` file is followed only to a verified worktree or submodule,
        and the repository's core.worktree is never honoured)."""
        path = Path(path)
        if not path.exists():
            raise RepositoryError(f"{path} does not exist")
        location = self.location(path)
        if location is None:
            raise RepositoryError(
                f"{path} is not a git repository",
                hint="run Redline inside a git working tree (or `git init` one)",
            )
        return location.worktree


def find_repo_root(path: Path, *, runner: GitRunner | None = None) -> Path:
    """Module-level convenience for GitRunner.find_repo_root."""
    return (runner or GitRunner()).find_repo_root(path)


_MISSING_OBJECT: Final = re.compile(
    r"(?:unable to read|bad object|missing (?:blob|tree|commit) object|could not read|"
    r"not a valid object name|loose object) ([0-9a-f]{40}(?:[0-9a-f]{24})?)\b",
    re.IGNORECASE,
)


def missing_object(stderr: str) -> str | None:
    """The id of the object git could not find, if that is why it failed."""
    match = _MISSING_OBJECT.search(stderr)
    return match.group(1) if match else None
