"""A private view of a repository: git never reads configuration the repository controls.

Denylisting configuration keys failed three times (a repository's `protocol.<name>.allow` beats
`-c protocol.allow=never`; `format.pretty` plus `gpg.ssh.program`; a submodule's own filters),
so every git process Redline starts runs against a git directory that Redline wrote:

    <view>/git/config          written here: object format and ref storage copied, a few
                               file-system facts (filemode, ignorecase, autocrlf, ...), remote
                               URLs for gh, and the hardened defaults — nothing else
    <view>/git/HEAD            a copy of the real HEAD (git refuses a HEAD symlink), refreshed
                               before every call
    <view>/git/refs, packed-refs, logs, shallow, info/exclude, ORIG_HEAD, ...
                               symbolic links to the real ones (read-only use)
    <view>/git/objects/        private and writable (`add --intent-to-add` writes the empty
                               blob here), borrowing the real store through info/alternates;
                               reads go straight to the real store (GIT_OBJECT_DIRECTORY) when
                               it has no alternates file of its own, else through:
    <view>/mirror/             links to the real store's packs, loose fan-out directories and
                               commit-graph, but *not* its info/alternates
    <view>/global-config       empty: GIT_CONFIG_GLOBAL, with GIT_CONFIG_NOSYSTEM=1

with the real index named by GIT_INDEX_FILE and the work tree by GIT_WORK_TREE. Consequences
that hold whatever the repository contains: no filter, driver, pager, hook path, fsmonitor,
signature program or format default of the author's runs or applies; there is no promisor
remote, so a missing object is an error, never a fetch; objects borrowed from other repositories
(alternates) are not read; replace refs are ignored.

Everything linked, named or copied is looked at first (gitdir.py): a regular file or a
directory inside the repository's git directory once links are resolved, every entry of refs/,
logs/ and objects/ included; HEAD and config are read without following a link. A link out of
the git directory, a FIFO, a device or a HEAD that is none of git's forms is a RepositoryError
naming the path, before git runs at all.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from redline.errors import RepositoryError
from redline.git.discovery import RepoLocation
from redline.git.gitdir import WALKED, GitDirFiles, shown
from redline.git.names import is_valid_revision

# Settings copied from the repository's config when their value is one of the listed ones:
# facts about the file system and line endings the checkout was made with, which change what a
# work-tree diff shows but cannot name a program, a file or a network address.
_COPIED_FACTS: Final[dict[str, frozenset[str]]] = {
    "core.filemode": frozenset({"true", "false"}),
    "core.ignorecase": frozenset({"true", "false"}),
    "core.precomposeunicode": frozenset({"true", "false"}),
    "core.symlinks": frozenset({"true", "false"}),
    "core.autocrlf": frozenset({"true", "false", "input"}),
    "core.eol": frozenset({"lf", "crlf", "native"}),
}
_OBJECT_FORMATS: Final = frozenset({"sha1", "sha256"})
_REF_STORAGE: Final = frozenset({"files", "reftable"})

# gh finds the GitHub repository from the remotes. Only a URL's plain characters are copied,
# never `remote.<r>.promisor`, `uploadpack`, `receivepack`, `proxy`, ...
_REMOTE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_REMOTE_URL: Final = re.compile(
    r"(?:https?|ssh|git)://[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]{1,1000}"
    r"|[A-Za-z0-9._-]{1,100}@[A-Za-z0-9.-]{1,253}:[A-Za-z0-9._~/-]{1,1000}"
)
_GH_RESOLVED: Final = re.compile(r"base|[A-Za-z0-9._-]{1,100}/[A-Za-z0-9._-]{1,100}")

# Pseudo-refs a user may name (`--commit ORIG_HEAD`); linked so they stay current.
_PSEUDO_REFS: Final = ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD")
_HEAD_MAX: Final = 4096
_CONFIG_MAX: Final = 4 * 1024 * 1024
_ALTERNATES_MAX: Final = 1024 * 1024


@dataclass
class RealConfig:
    """What the view takes from the repository's own config file (read as data by git)."""

    object_format: str | None = None
    ref_storage: str | None = None
    facts: dict[str, str] = field(default_factory=dict)
    remotes: dict[str, dict[str, str]] = field(default_factory=dict)
    partial_clone: bool = False


def parse_real_config(listing: bytes) -> RealConfig:
    """RealConfig from `git config --file <config> --no-includes --list -z` output."""
    real = RealConfig()
    for record in listing.split(b"\0"):
        if not record:
            continue
        raw_key, _, raw_value = record.partition(b"\n")
        key = os.fsdecode(raw_key)
        value = os.fsdecode(raw_value)
        lowered = value.strip().lower()
        if key == "extensions.objectformat" and lowered in _OBJECT_FORMATS:
            real.object_format = lowered
        elif key == "extensions.refstorage" and lowered in _REF_STORAGE:
            real.ref_storage = lowered
        elif key == "extensions.partialclone" or key.endswith(".promisor"):
            real.partial_clone = real.partial_clone or lowered not in ("", "false")
        elif key in _COPIED_FACTS and lowered in _COPIED_FACTS[key]:
            real.facts[key] = lowered
        elif key.startswith("remote.") and key.count(".") >= 2:
            name, var = key[len("remote.") :].rsplit(".", 1)
            if not _REMOTE_NAME.fullmatch(name):
                continue
            if var == "url" and _REMOTE_URL.fullmatch(value):
                real.remotes.setdefault(name, {}).setdefault("url", value)
            elif var == "gh-resolved" and _GH_RESOLVED.fullmatch(value):
                real.remotes.setdefault(name, {})["gh-resolved"] = value
    return real


def render_config(real: RealConfig, hardened: Iterable[tuple[str, str]]) -> str:
    """The view's config file. Every value here was checked against a fixed pattern or set."""
    sections: dict[str, list[tuple[str, str]]] = {}

    def put(key: str, value: str) -> None:
        section, _, name = key.rpartition(".")
        sections.setdefault(section, []).append((name, value))

    extensions = [("objectformat", real.object_format), ("refstorage", real.ref_storage)]
    used = [(k, v) for k, v in extensions if v is not None]
    put("core.repositoryformatversion", "1" if used else "0")
    put("core.bare", "false")
    put("core.logallrefupdates", "false")
    for key, value in sorted(real.facts.items()):
        put(key, value)
    for key, value in used:
        put(f"extensions.{key}", value)
    for key, value in hardened:
        put(key, value)
    # Submodules are never entered: their own config would apply inside them.
    put("diff.ignoresubmodules", "dirty")
    put("diff.submodule", "short")
    put("status.submodulesummary", "false")
    put("submodule.recurse", "false")
    put("gc.auto", "0")
    put("maintenance.auto", "false")
    for name, values in sorted(real.remotes.items()):
        for var, value in sorted(values.items()):
            put(f"remote.{name}.{var}", value)

    lines: list[str] = []
    for section, items in sections.items():
        head, dot, sub = section.partition(".")
        lines.append(f'[{head} "{sub}"]' if dot else f"[{head}]")
        lines += [f"\t{name} = {_quote(value)}" for name, value in items]
    return "\n".join(lines) + "\n"


def _quote(value: str) -> str:
    if any(c in value for c in "\n\r\0"):
        raise ValueError("config values never contain line breaks")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# Runs `git config --file - --no-includes --list -z` on these bytes (the config file's, read by
# Redline) with a safe environment.
ConfigLister = Callable[[bytes], bytes]


class RepoView:
    """A private git directory for one repository; see the module docstring.

    Built once per runner and repository, removed by close() (or when the runner is collected,
    or at exit). `notes` says what the user should know (borrowed objects not read, partial
    clone never fetched).
    """

    def __init__(
        self,
        location: RepoLocation,
        list_config: ConfigLister,
        hardened: Iterable[tuple[str, str]],
    ) -> None:
        self.location = location
        self.notes: list[str] = []
        # Every path below is checked against the common directory: a linked worktree's own
        # directory (HEAD, index) is inside it, a submodule's is it.
        self.files = GitDirFiles(location.common_dir)
        self._head_identity: tuple[int, int, int, int] | None = None
        self.root = Path(tempfile.mkdtemp(prefix=f"view-{os.getpid()}-", dir=views_home()))
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.root, True)
        try:
            self.git_dir = self.root / "git"
            self._build(list_config, list(hardened))
            self.refresh()
        except BaseException:
            self.close()
            raise

    def _build(self, list_config: ConfigLister, hardened: list[tuple[str, str]]) -> None:
        loc = self.location
        common, git_dir = loc.common_dir, loc.git_dir
        files = self.files
        config = files.read(common / "config", _CONFIG_MAX)
        real = parse_real_config(list_config(config)) if config else RealConfig()
        view = self.git_dir
        (view / "objects" / "info").mkdir(parents=True)
        (view / "info").mkdir()
        real_objects = common / "objects"
        files.check_tree(real_objects)
        borrowed = _alternates(files, real_objects)
        store = self._mirror(real_objects) if borrowed is not None else real_objects
        (view / "objects" / "info" / "alternates").write_text(f"{store}\n")
        # Reading through an alternate costs git a failed lookup in the private directory per
        # object (~15% on a large diff of loose objects), so reads go straight to the real
        # store when it borrows from nowhere; writes never do (see env()).
        self._read_store = real_objects if borrowed is None else None
        links = {
            "refs": common / "refs",
            "packed-refs": common / "packed-refs",
            "logs": common / "logs",
            "shallow": common / "shallow",
            "info/exclude": common / "info" / "exclude",
        }
        if real.ref_storage == "reftable":
            links["reftable"] = common / "reftable"
        with contextlib.suppress(OSError):
            for entry in os.scandir(git_dir):
                # Pseudo-refs a user may name, and a split index's shared part.
                if entry.name in _PSEUDO_REFS or entry.name.startswith("sharedindex."):
                    links[entry.name] = git_dir / entry.name
        for name, target in links.items():
            if name in WALKED:
                files.check_tree(target)
            else:
                files.check_file(target)
            os.symlink(target, view / name)
        # Not linked but named to git (GIT_INDEX_FILE): the same rule.
        files.check_file(git_dir / "index")
        (view / "config").write_text(render_config(real, hardened))
        (self.root / "global-config").write_bytes(b"")
        if borrowed:
            self.notes.append(
                "the repository borrows objects from "
                + ", ".join(strip_names(borrowed[:3]))
                + (" …" if len(borrowed) > 3 else "")
                + " (objects/info/alternates); Redline reads only the repository's own objects, "
                "so anything stored only there is reported missing"
            )
        if real.partial_clone:
            self.notes.append(
                "the repository is a partial clone; Redline never fetches, so an object that is "
                "not local is reported missing (fetch it first)"
            )

    def _mirror(self, real_objects: Path) -> Path:
        """The real object store without its info/alternates, as links: git follows
        alternates recursively, so borrowing the real directory itself would read theirs too.
        Only built for a repository that has an alternates file (links cost ~0.1 ms each)."""
        mirror = self.root / "mirror"
        (mirror / "info").mkdir(parents=True)
        for name in [f"{i:02x}" for i in range(256)] + ["pack"]:
            os.symlink(real_objects / name, mirror / name)
        for name in ("commit-graph", "commit-graphs"):
            os.symlink(real_objects / "info" / name, mirror / "info" / name)
        return mirror

    def refresh(self) -> None:
        """Copy the real HEAD again if it changed since the last call (an lstat when it did
        not). HEAD is read without following a link: a HEAD that is not a small regular file
        (or a link to a branch, below) is a RepositoryError naming it."""
        real = self.location.git_dir / "HEAD"
        try:
            st = os.lstat(real)
        except OSError:
            return  # git reports the broken repository itself
        identity = (st.st_ino, st.st_mtime_ns, st.st_size, st.st_mode)
        if identity == self._head_identity:
            return
        data = self._read_head(real, st)
        tmp = self.git_dir / "HEAD.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, self.git_dir / "HEAD")
        self._head_identity = identity

    def _read_head(self, head: Path, st: os.stat_result) -> bytes:
        if stat.S_ISLNK(st.st_mode):
            # core.preferSymlinkRefs: HEAD links to refs/heads/<branch>, which is what it means.
            target = os.readlink(head)
            if target.startswith("refs/heads/") and is_valid_revision(target):
                self.files.check_file(head)  # resolves inside the git directory, or refused
                return f"ref: {target}\n".encode()
            self.files.resolve(head)  # a link out is refused with where it leads
            raise RepositoryError(
                f"refusing {shown(head)}: it is a symbolic link to {shown(target)}, not to a "
                "branch (refs/heads/...)"
            )
        data = self.files.read(head, _HEAD_MAX)
        return data if data is not None else b""

    def env(self, *, writes_objects: bool = False) -> dict[str, str]:
        """The variables that point git at the view instead of the repository's own directory.

        With writes_objects (`add --intent-to-add` writes the empty blob), objects land in the
        view's private store; otherwise reads may go straight to the real one.
        """
        env = {
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.location.worktree),
            "GIT_INDEX_FILE": str(self.location.git_dir / "index"),
            "GIT_CONFIG_GLOBAL": str(self.root / "global-config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_NO_LAZY_FETCH": "1",  # git >= 2.45; older gits have no promisor here anyway
        }
        if self._read_store is not None and not writes_objects:
            env["GIT_OBJECT_DIRECTORY"] = str(self._read_store)
        return env

    def close(self) -> None:
        self._finalizer()


def _alternates(files: GitDirFiles, objects: Path) -> list[str] | None:
    """The entries of the real store's info/alternates; None when there is no such file (an
    empty list when there is one git may read but it names nothing Redline can show)."""
    info = objects / "info"
    if not os.path.lexists(info / "alternates") and not os.path.islink(info):
        return None
    data = files.read(info / "alternates", _ALTERNATES_MAX) or b""
    text = data.decode(errors="replace")
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def strip_names(names: list[str]) -> list[str]:
    return [repr(n[:200]) for n in names]


def views_home() -> Path:
    """<tmp>/redline-views-<uid>, private to the user; views left by dead processes removed."""
    home = Path(tempfile.gettempdir()) / f"redline-views-{os.getuid()}"
    home.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(home)
    if not os.path.isdir(home) or os.path.islink(home) or st.st_uid != os.getuid():
        # Someone else's directory (or a link) at our name: use a fresh private one instead.
        return Path(tempfile.mkdtemp(prefix="redline-views-"))
    _sweep(home)
    return home


def _sweep(home: Path) -> None:
    with contextlib.suppress(OSError):
        for entry in os.scandir(home):
            parts = entry.name.split("-")
            dead = len(parts) >= 3 and parts[0] == "view" and parts[1].isdigit()
            if dead and not _alive(int(parts[1])):
                shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


__all__ = ["RealConfig", "RepoView", "parse_real_config", "render_config", "views_home"]
