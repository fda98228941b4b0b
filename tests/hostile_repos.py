"""Fixture builders: repositories written by an attacker, for the tool attack suite.

`build_hostile_repo` makes a repository whose `.git/config`, `.gitattributes` and hooks name a
marker script for every command git could be tricked into running (fsmonitor, external diff,
textconv, clean/smudge/process filters, pager, gpg, hooks, ssh, askpass), plus symlinks out of
the repository and into `.git`, a FIFO, a `.env` with fake keys, and a secret file outside the
repository. Any marker file appearing in `markers/` means code ran. The hostile configuration
is installed *after* the last commit: building the fixture with plain git must not trip it.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from gitrepo import GitRepo

# Fake secrets. Each is unique so a test can search every captured payload for it.
FAKE_OPENAI_KEY = "sk-proj-FAKEfakeFAKEfake0123456789abcdefABCDEF"
FAKE_GITHUB_TOKEN = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"
PLAIN_ENV_SECRET = "Plain-Env-Value-7f3a9c1e"  # matches no key pattern: only .env scanning masks it
OUTSIDE_SECRET = "OUTSIDE-SECRET-d41d8cd98f00b204"
PASSWD_MARK = "root:x:0:0"

ALL_SECRETS = (FAKE_OPENAI_KEY, FAKE_GITHUB_TOKEN, PLAIN_ENV_SECRET, OUTSIDE_SECRET)

APP_PY = '''\
import os


def helper(value):
    """Double a value."""
    return value * 2


class Service:
    def __init__(self, name):
        self.name = name

    def run(self, n):
        total = 0
        for i in range(n):
            total += helper(i)
        return total


def main():
    svc = Service("x")
    return svc.run(3) + helper(1)
'''

APP_PY_V1 = """\
def helper(value):
    return value + value
"""

UTIL_JS = """\
function greet(name) {
  return "hi " + name;
}

class Box {
  open() {
    return greet("box");
  }
}

module.exports = { greet, Box };
"""


@dataclass
class HostileRepo:
    repo: GitRepo
    root: Path
    markers: Path  # a marker appearing here means attacker code ran
    outside: Path  # directory outside the repository holding OUTSIDE_SECRET
    outside_secret: Path
    first_commit: str
    head: str
    fifo: Path | None = None
    marker_names: list[str] = field(default_factory=list)

    def markers_present(self) -> list[str]:
        return sorted(os.listdir(self.markers))

    def snapshot(self) -> dict[str, tuple[int, int, int]]:
        """Every path under the repository (and .git) with type, size and mtime."""
        return snapshot_tree(self.root)


def snapshot_tree(root: Path) -> dict[str, tuple[int, int, int]]:
    found: dict[str, tuple[int, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode):
                found[os.path.relpath(path, root)] = (st.st_mode, 0, 0)
            else:
                found[os.path.relpath(path, root)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return found


def _marker_script(path: Path, marker: Path, tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\ntouch "{marker}"\n{tail}')
    path.chmod(0o755)
    return path


def build_hostile_repo(base: Path) -> HostileRepo:
    markers = base / "markers"
    markers.mkdir(parents=True)
    outside = base / "outside"
    outside.mkdir()
    outside_secret = outside / "secret.txt"
    outside_secret.write_text(f"TOKEN={OUTSIDE_SECRET}\n")

    repo = GitRepo(base / "repo")
    root = repo.root
    repo.write("app.py", APP_PY_V1)
    repo.write("util.js", UTIL_JS)
    repo.write("README.md", "# demo\n")
    first = repo.commit("first")
    repo.write("app.py", APP_PY)
    # A committed .env (an accident that happens): its diff must never reach the model.
    repo.write(".env", f"OPENAI_API_KEY={FAKE_OPENAI_KEY}\nPLAIN={PLAIN_ENV_SECRET}\n")
    repo.write("config/deploy.key", f"{PLAIN_ENV_SECRET}\n")
    # Committed symlinks: git stores their text, the work tree follows them.
    os.symlink("/etc/passwd", root / "passwd_link")
    os.symlink(str(outside_secret), root / "secret_link")
    os.symlink(".git/config", root / "config_link")
    os.symlink(".git/hooks", root / "hooks")
    os.symlink(".env", root / "innocent.txt")
    os.symlink(str(outside), root / "outside_dir")
    head = repo.commit("second")

    # -- after the last commit: hostile configuration and work-tree state --------------------
    names = [
        "fsmonitor",
        "external-diff",
        "textconv",
        "filter-clean",
        "filter-smudge",
        "filter-process",
        "pager",
        "gpg",
        "ssh",
        "askpass",
        "editor",
        "sequence-editor",
    ]
    scripts = {n: _marker_script(base / "evil" / f"{n}.sh", markers / n) for n in names}
    scripts["textconv"] = _marker_script(
        base / "evil" / "textconv.sh", markers / "textconv", 'cat "$1"\n'
    )
    scripts["filter-clean"] = _marker_script(
        base / "evil" / "filter-clean.sh", markers / "filter-clean", "cat\n"
    )
    config = f"""
[core]
\tfsmonitor = {scripts["fsmonitor"]}
\tpager = {scripts["pager"]}
\tsshCommand = {scripts["ssh"]}
\taskPass = {scripts["askpass"]}
\teditor = {scripts["editor"]}
\thooksPath = .git/hooks
[diff]
\texternal = {scripts["external-diff"]}
[diff "evil"]
\ttextconv = {scripts["textconv"]}
\tcommand = {scripts["external-diff"]}
[filter "evil"]
\tclean = {scripts["filter-clean"]}
\tsmudge = {scripts["filter-smudge"]}
\tprocess = {scripts["filter-process"]}
\trequired = true
[gpg]
\tprogram = {scripts["gpg"]}
[log]
\tshowSignature = true
[pager]
\tlog = {scripts["pager"]}
\tdiff = {scripts["pager"]}
[sequence]
\teditor = {scripts["sequence-editor"]}
[alias]
\tst = !touch {markers / "alias"}
[remote "origin"]
\turl = https://github.com/acme/widget.git
"""
    with open(root / ".git" / "config", "a") as fh:
        fh.write(config)
    hooks = [
        "post-index-change",
        "reference-transaction",
        "post-checkout",
        "pre-commit",
        "post-commit",
        "pre-push",
        "post-merge",
        "pre-auto-gc",
        "post-rewrite",
        "fsmonitor-watchman",
    ]
    for hook in hooks:
        _marker_script(root / ".git" / "hooks" / hook, markers / f"hook-{hook}")
    (root / ".gitattributes").write_text("* diff=evil filter=evil\n")
    # Dirty work tree so diff/status/blame have something to read through the filters.
    (root / "app.py").write_text(APP_PY + "\n# local edit\n")
    (root / "untracked.py").write_text("def untracked():\n    return helper(2)\n")
    (root / ".env.local").write_text(f"GITHUB_TOKEN={FAKE_GITHUB_TOKEN}\n")
    fifo: Path | None = None
    if hasattr(os, "mkfifo"):
        fifo = root / "pipe"
        os.mkfifo(fifo)
    return HostileRepo(
        repo=repo,
        root=root,
        markers=markers,
        outside=outside,
        outside_secret=outside_secret,
        first_commit=first,
        head=head,
        fifo=fifo,
        marker_names=[*names, *(f"hook-{h}" for h in hooks), "alias"],
    )


def build_plain_repo(base: Path) -> HostileRepo:
    """A well-behaved repository with two commits, for the functional tests."""
    outside = base / "outside"
    outside.mkdir(parents=True)
    markers = base / "markers"
    markers.mkdir()
    repo = GitRepo(base / "repo")
    repo.write("app.py", APP_PY_V1)
    repo.write("util.js", UTIL_JS)
    repo.write("README.md", "# demo\n")
    first = repo.commit("first commit")
    repo.git("branch", "feature")
    repo.write("app.py", APP_PY)
    repo.write("pkg/mod.py", "from app import helper\n\n\ndef use():\n    return helper(3)\n")
    head = repo.commit("second commit")
    return HostileRepo(
        repo=repo,
        root=repo.root,
        markers=markers,
        outside=outside,
        outside_secret=outside / "none",
        first_commit=first,
        head=head,
    )


# -- a repository whose git directory reaches into another one (tests/test_gitdir_attacks.py) --

OTHER_CANARY = "OTHER-REPO-CANARY-9b2e71"


@dataclass
class Neighbours:
    """The repository under review (an archive its author made) and somebody else's repository
    on the same disk, whose code must never reach anything Redline shows or sends."""

    repo: GitRepo
    other: GitRepo
    other_head: str

    @property
    def git_dir(self) -> Path:
        return self.repo.root / ".git"

    @property
    def other_git(self) -> Path:
        return self.other.root / ".git"


def build_neighbours(base: Path, *, packed: bool = False) -> Neighbours:
    """Two repositories side by side: `other` holds OTHER_CANARY; with packed, its objects and
    refs are packed (`git gc`), else loose."""
    other = GitRepo(base / "other")
    other.write("private.py", f"TOKEN = '{OTHER_CANARY}'\n")
    other_head = other.commit("private")
    if packed:
        other.git("gc", "-q", "--prune=now")
    repo = GitRepo(base / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("mine")
    repo.write("app.py", "x = 2\n")
    repo.commit("mine again")
    return Neighbours(repo, other, other_head)


def _swap_for_link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def _their_ref(n: Neighbours) -> None:
    """refs/heads/theirs: the other repository's commit id, written as a plain ref file (an id
    is no secret; reading their objects through it is the escape)."""
    (n.git_dir / "refs" / "heads" / "theirs").write_text(f"{n.other_head}\n")


def _loose_objects(git_dir: Path) -> list[Path]:
    objects = git_dir / "objects"
    return [p for d in sorted(objects.iterdir()) if len(d.name) == 2 for p in sorted(d.iterdir())]


def link_objects_dir(n: Neighbours) -> str:
    _swap_for_link(n.git_dir / "objects", n.other_git / "objects")
    _their_ref(n)
    return ".git/objects"


def link_refs_and_objects(n: Neighbours) -> str:
    _swap_for_link(n.git_dir / "refs", n.other_git / "refs")
    _swap_for_link(n.git_dir / "objects", n.other_git / "objects")
    return ".git/"


def link_pack_and_packed_refs(n: Neighbours) -> str:
    """Needs `packed`: their pack directory, and their packed-refs in place of the own refs."""
    _swap_for_link(n.git_dir / "objects" / "pack", n.other_git / "objects" / "pack")
    _swap_for_link(n.git_dir / "packed-refs", n.other_git / "packed-refs")
    (n.git_dir / "refs" / "heads" / "main").unlink()  # the packed one wins
    return ".git/"


def link_loose_dirs(n: Neighbours) -> str:
    """Their objects/?? fan-out directories (files one by one where the own store has the
    directory already)."""
    for obj in _loose_objects(n.other_git):
        mine = n.git_dir / "objects" / obj.parent.name
        if not mine.exists():
            os.symlink(obj.parent, mine)
        elif not mine.is_symlink():
            os.symlink(obj, mine / obj.name)
    _their_ref(n)
    return ".git/objects/"


def link_loose_files(n: Neighbours) -> str:
    for obj in _loose_objects(n.other_git):
        mine = n.git_dir / "objects" / obj.parent.name
        mine.mkdir(exist_ok=True)
        os.symlink(obj, mine / obj.name)
    _their_ref(n)
    return ".git/objects/"


def link_ref_file(n: Neighbours) -> str:
    """One ref file linked to theirs; their objects copied in (so the link is what tells
    which commit to show)."""
    for obj in _loose_objects(n.other_git):
        mine = n.git_dir / "objects" / obj.parent.name
        mine.mkdir(exist_ok=True)
        if not (mine / obj.name).exists():
            shutil.copyfile(obj, mine / obj.name)
    os.symlink(n.other_git / "refs" / "heads" / "main", n.git_dir / "refs" / "heads" / "theirs")
    return ".git/refs/heads/theirs"


def link_through_an_inside_directory(n: Neighbours) -> str:
    """Needs `packed`: objects/pack links to a directory inside .git (allowed on its own),
    whose files link to their pack: the walk must follow the inside link and look inside."""
    stash = n.git_dir / "stash"
    stash.mkdir()
    for entry in (n.other_git / "objects" / "pack").iterdir():
        os.symlink(entry, stash / entry.name)
    _swap_for_link(n.git_dir / "objects" / "pack", Path("../stash"))
    _their_ref(n)
    return ".git/stash/"


def link_logs(n: Neighbours) -> str:
    _swap_for_link(n.git_dir / "logs", n.other_git / "logs")
    return ".git/logs"


def link_index(n: Neighbours) -> str:
    _swap_for_link(n.git_dir / "index", n.other_git / "index")
    return ".git/index"


GITDIR_LINKS = {
    # name: (plant the links → the path Redline must name, other repository packed?)
    "objects": (link_objects_dir, False),
    "refs-and-objects": (link_refs_and_objects, False),
    "pack-and-packed-refs": (link_pack_and_packed_refs, True),
    "loose-dirs": (link_loose_dirs, False),
    "loose-files": (link_loose_files, False),
    "ref-file": (link_ref_file, False),
    "through-inside-dir": (link_through_an_inside_directory, True),
    "logs": (link_logs, False),
    "index": (link_index, False),
}
