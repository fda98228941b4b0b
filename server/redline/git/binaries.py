"""Where git, gh and glab come from: the user's PATH, minus every directory the change's author
(or another user of the machine) could have put a program in.

Looking only in /usr/local/bin, /usr/bin, /bin and /opt/homebrew/bin missed gh in ~/.local/bin,
Nix profiles, Linuxbrew, conda, snap or mise, and git on NixOS. PATH is the user's own choice of
programs, but some of its entries hand the choice to someone else; those are skipped:

- **Relative entries** (`""`, `.`, `bin`): they resolve in the working directory, which is the
  repository under review.
- **Entries inside a repository or workspace under review**, as spelled or once links are
  followed: the repository a call runs in and every repository enclosing it (a `.git` entry in
  the directory or an ancestor), the process's working directory's, and a CI job's checkout
  (GITHUB_WORKSPACE, CI_PROJECT_DIR). A link spelled inside is skipped even when it leads out:
  the change chose where it leads.
- **Directories others can write**, checked on the real path: the directory must be owned by
  root or the user and writable by no one else — not world-writable, and group-writable only
  when its group is root's (gid 0), an administrators' group (admin, wheel, sudo: its members
  can become root anyway) or the user's private group (gid the user's primary and named as the
  user; not macOS's shared `staff`). Every directory above it
  must be owned by root or the user, and when others can write one it must be sticky (then
  they cannot rename what leads to ours: /tmp, Nix's /nix/store). The program found there (its
  real path) passes the same rules, and must not lead into a repository under review either.

After PATH come the usual system directories (SYSTEM_DIRS) not already searched, under the same
rules, so a stripped PATH (an editor's) still finds the system's git. The user can name a program
in their own settings (`[tools] git = "/path"`; tool_paths.py): an absolute path to an executable
file, taken as given — their choice, never a repository's. When nothing is found, the error lists
the directories searched and the ones skipped with why.
"""

from __future__ import annotations

import contextlib
import functools
import grp
import os
import pwd
import stat
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from redline.tool_paths import named_tool

SYSTEM_DIRS: Final[tuple[str, ...]] = ("/usr/local/bin", "/usr/bin", "/bin", "/opt/homebrew/bin")
# Variables that name a CI job's checkout: its programs are the change's.
WORKSPACE_VARS: Final = ("GITHUB_WORKSPACE", "CI_PROJECT_DIR")


@dataclass(frozen=True)
class Identity:
    """Whose writes are trusted: root's and this user's (and their primary group's)."""

    uid: int
    gid: int

    @classmethod
    def current(cls) -> Identity:
        return cls(os.geteuid(), os.getegid())


@dataclass(frozen=True)
class Lookup:
    """One program's lookup: where it was found (None: not found), the directories searched in
    order, and the PATH entries skipped with why."""

    name: str
    path: str | None
    searched: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    named: bool = False  # the user named it in their settings

    def where(self) -> str:
        """Where it looked, for an error message."""
        parts = [f"looked in {os.pathsep.join(self.searched) or 'no directory'}"]
        if self.skipped:
            shown = "; ".join(f"{d or '(empty)'}: {why}" for d, why in self.skipped[:8])
            more = f" and {len(self.skipped) - 8} more" if len(self.skipped) > 8 else ""
            parts.append(f"skipped {shown}{more}")
        example = f'[tools] {self.name} = "/path/to/{self.name}"'
        parts.append(f"or name it in your user settings: {example}")
        return "; ".join(parts)


def enclosing_repositories(start: Path) -> list[Path]:
    """start and every directory above it that holds a `.git` entry (a work tree's top), as
    absolute paths, innermost first; start itself is always included."""
    start = Path(os.path.abspath(start))
    found = [start]
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git") and directory not in found:
            found.append(directory)
    return found


def avoid_roots(
    call_dir: Path | None, environ: Mapping[str, str], extra: Iterable[Path] = ()
) -> tuple[Path, ...]:
    """The directories no program may come from for a call run in call_dir: the repositories
    enclosing it and the process's working directory, a CI checkout, and `extra`."""
    roots: list[Path] = []
    if call_dir is not None:
        roots += enclosing_repositories(call_dir)
    with contextlib.suppress(OSError):  # the working directory is gone: nothing to add
        roots += enclosing_repositories(Path.cwd())
    for var in WORKSPACE_VARS:
        value = environ.get(var, "")
        if os.path.isabs(value):
            roots.append(Path(value))
    roots += [Path(os.path.abspath(p)) for p in extra]
    return tuple(dict.fromkeys(roots))


def _inside(path: str, roots: Sequence[str]) -> bool:
    """Whether path is one of roots or below one, compared by whole components (roots are
    normalised absolute paths)."""
    return any(path == r or path.startswith(r if r.endswith("/") else r + "/") for r in roots)


@dataclass(frozen=True)
class Avoid:
    """The roots no program may come from, as spelled and with links resolved (computed once
    per lookup, not per PATH entry)."""

    spelled: tuple[str, ...]
    real: tuple[str, ...]

    @classmethod
    def of(cls, roots: Sequence[Path]) -> Avoid:
        spelled = tuple(dict.fromkeys(os.path.normpath(str(r)) for r in roots))
        return cls(spelled, tuple(dict.fromkeys(os.path.realpath(r) for r in spelled)))

    def holds(self, path: str) -> bool:
        return _inside(path, self.spelled) or _inside(path, self.real)


def _others_can_write(st: os.stat_result, me: Identity) -> str | None:
    """Why someone other than root or the user can change this entry, or None."""
    if st.st_uid not in (0, me.uid):
        return f"owned by another user (uid {st.st_uid})"
    if st.st_mode & stat.S_IWOTH:
        return "writable by every user"
    if st.st_mode & stat.S_IWGRP and not _trusted_group(st.st_gid, me):
        return f"writable by group {st.st_gid}"
    return None


# Groups whose members can become root anyway (sudo rights): a directory they may write is as
# safe as root's own. macOS's Homebrew on Intel leaves /usr/local/bin group-writable by `admin`.
_ADMIN_GROUPS: Final = frozenset({"admin", "wheel", "sudo"})


@functools.lru_cache(maxsize=64)
def _trusted_group(gid: int, me: Identity) -> bool:
    """Whether a directory writable by group gid is writable by no one but root, the user and
    administrators: root's group, an administrators' group, or the user's private group (named
    as the user: Debian's and Fedora's default). Not just "the user's primary group": on macOS
    that is `staff`, which every local user shares."""
    if gid == 0:
        return True
    try:
        name = grp.getgrgid(gid).gr_name
    except (KeyError, OverflowError):
        return False
    if name in _ADMIN_GROUPS:
        return True
    try:
        user = pwd.getpwuid(me.uid).pw_name
    except (KeyError, OverflowError):
        return False
    return gid == me.gid and name == user


def _chain_problem(real: str, me: Identity, *, last_may_be_sticky: bool) -> str | None:
    """Why the directory `real` (no links in it) or one above it can be changed by others."""
    path = Path(real)
    for i, directory in enumerate((path, *path.parents)):
        try:
            st = os.stat(directory)
        except OSError as exc:
            return f"cannot be checked ({exc.strerror or exc})"
        why = _others_can_write(st, me)
        if why is None:
            continue
        sticky = bool(st.st_mode & stat.S_ISVTX) and st.st_uid in (0, me.uid)
        # A sticky directory lets others add entries but not rename or remove ours: fine above
        # the directory searched, not for the directory itself (a new `gh` could appear there).
        if sticky and (i > 0 or last_may_be_sticky):
            continue
        return why if i == 0 else f"{directory} is {why}"
    return None


def dir_problem(entry: str, avoid: Sequence[Path] | Avoid, me: Identity) -> str | None:
    """Why the PATH entry must not be searched, or None when it may."""
    if not entry or not os.path.isabs(entry):
        return "relative entry (it resolves in the working directory)"
    roots = avoid if isinstance(avoid, Avoid) else Avoid.of(avoid)
    spelled = os.path.normpath(entry)
    if roots.holds(spelled):
        return "inside a repository under review"
    real = os.path.realpath(spelled)
    if roots.holds(real):
        return "leads into a repository under review"
    if not os.path.isdir(real):
        return "not a directory"
    return _chain_problem(real, me, last_may_be_sticky=False)


def program_problem(candidate: str, avoid: Sequence[Path] | Avoid, me: Identity) -> str | None:
    """Why a program found in a searched directory must not run, or None."""
    roots = avoid if isinstance(avoid, Avoid) else Avoid.of(avoid)
    real = os.path.realpath(candidate)
    if roots.holds(real):
        return "leads into a repository under review"
    try:
        st = os.stat(real)
    except OSError as exc:
        return f"cannot be checked ({exc.strerror or exc})"
    if not stat.S_ISREG(st.st_mode) or not os.access(real, os.X_OK):
        return "not an executable file"
    why = _others_can_write(st, me)
    if why is not None:
        return why
    return _chain_problem(str(Path(real).parent), me, last_may_be_sticky=True)


def search_dirs(
    path_var: str, avoid: Sequence[Path] | Avoid, me: Identity
) -> tuple[list[str], list[tuple[str, str]]]:
    """(directories to search in order, PATH entries skipped with why): PATH's usable entries,
    then SYSTEM_DIRS not already among them (those that exist and pass the same rules)."""
    avoid = avoid if isinstance(avoid, Avoid) else Avoid.of(avoid)
    searched: list[str] = []
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    entries = path_var.split(os.pathsep) if path_var else []
    for entry in [*entries, *SYSTEM_DIRS]:
        system = entry in SYSTEM_DIRS
        why = dir_problem(entry, avoid, me)
        if why is not None:
            if not (system and why == "not a directory") and (entry, why) not in skipped:
                skipped.append((entry, why))
            continue
        key = os.path.realpath(entry)
        if os.path.normpath(entry) in seen or key in seen:
            continue  # the same directory again (as spelled, or once links are followed)
        seen.update({os.path.normpath(entry), key})
        searched.append(os.path.normpath(entry))
    return searched, skipped


@dataclass(frozen=True)
class SearchPlan:
    """The directories one lookup searches, made once for git, gh and glab alike."""

    avoid: Avoid
    me: Identity
    searched: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]

    @classmethod
    def make(
        cls, environ: Mapping[str, str], avoid: Sequence[Path], me: Identity | None = None
    ) -> SearchPlan:
        me = me or Identity.current()
        roots = Avoid.of(avoid)
        searched, skipped = search_dirs(environ.get("PATH", ""), roots, me)
        return cls(roots, me, tuple(searched), tuple(skipped))

    def find(self, name: str) -> Lookup:
        """The user's named path for `name` if they set one, else the first usable program in
        the searched directories."""
        named = named_tool(name)
        if named is not None:
            ok = os.path.isabs(named) and os.path.isfile(named) and os.access(named, os.X_OK)
            bad = () if ok else ((named, "named in your settings, but not an executable file"),)
            return Lookup(name, named if ok else None, (), bad, named=True)
        skipped = list(self.skipped)
        for directory in self.searched:
            candidate = os.path.join(directory, name)
            if not os.path.lexists(candidate):
                continue
            why = program_problem(candidate, self.avoid, self.me)
            if why is None:
                return Lookup(name, candidate, self.searched, tuple(skipped))
            skipped.append((candidate, why))
        return Lookup(name, None, self.searched, tuple(skipped))


# Plans are shared by every runner of the process for a while: runners are made per request
# (the language server's queries) and a plan stats every PATH entry's directories. Short enough
# that a directory made writable by others, or a PATH entry added, counts within seconds.
_PLAN_TTL: Final = 30.0
_plans: dict[tuple[str, tuple[Path, ...], Identity], tuple[float, SearchPlan]] = {}
_plans_lock = threading.Lock()


def plan_for(environ: Mapping[str, str], avoid: Sequence[Path]) -> SearchPlan:
    """SearchPlan.make, reused for _PLAN_TTL seconds for the same PATH, roots and user."""
    me = Identity.current()
    key = (environ.get("PATH", ""), tuple(avoid), me)
    now = time.monotonic()
    with _plans_lock:
        cached = _plans.get(key)
        if cached is not None and now - cached[0] < _PLAN_TTL:
            return cached[1]
    plan = SearchPlan.make(environ, avoid, me)
    with _plans_lock:
        if len(_plans) > 64:
            _plans.clear()
        _plans[key] = (now, plan)
    return plan


def find(
    name: str,
    *,
    environ: Mapping[str, str],
    avoid: Sequence[Path],
    me: Identity | None = None,
) -> Lookup:
    """Look `name` up: the user's named path if they set one, else the first usable program on
    the filtered PATH (see the module docstring)."""
    return SearchPlan.make(environ, avoid, me).find(name)
