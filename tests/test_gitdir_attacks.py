"""A hostile *git directory*: links, FIFOs and devices inside `.git`, and `.git` files that name a
git directory the author built inside the tree.

The private view (server/redline/git/view.py) takes refs, objects, packed-refs, logs, shallow,
the index and HEAD from the repository's git directory. Each was once linked or copied without
a look at what it is, so a symbolic link inside `.git` made Redline review another repository,
`.git/shallow` linked to any file put that file's first line into a git error, and
`.git/HEAD` linked to `/proc/self/pagemap` crashed. Every test builds the repository with plain
git, shows with a control that plain git really does follow the link, then drives Redline the
way a user does and asserts on what the user sees: a clear one-line error naming the path,
exit code 2, and nothing of the other repository or the outside file anywhere.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from redline.agent import ToolExecutor
from redline.errors import RepositoryError
from redline.git.runner import GitRunner
from redline.tools import ToolContext, build_tool_registry

from gitrepo import _ENV, GitRepo
from hostile_repos import GITDIR_LINKS, OTHER_CANARY, Neighbours, build_neighbours

REDLINE = str(Path(sys.executable).with_name("redline"))
SECRET_LINE = "OUTSIDE-FIRST-LINE-7c41aa"


def redline(*argv: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env["REDLINE_CACHE_DIR"] = os.environ["REDLINE_CACHE_DIR"]
    env["REDLINE_CONFIG"] = os.devnull
    return subprocess.run(
        [REDLINE, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def plain_git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=repo, env=_ENV, capture_output=True, text=True, timeout=20
    )


def git_tool(root: Path, command: str) -> tuple[bool, str]:
    ctx = ToolContext(root, runner=GitRunner(), report_dir=root.parent / "reports")
    result = asyncio.run(ToolExecutor(build_tool_registry(ctx)).run("git", {"command": command}))
    return result.ok, result.content


def assert_refused(done: subprocess.CompletedProcess[str], named: str, *, secret: str) -> None:
    """Exit 2 with Redline's one-line error naming the path; no traceback, no secret."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "redline: error:" in done.stderr and named in done.stderr, done.stderr
    assert secret not in done.stdout + done.stderr


# -- links inside .git into another repository -------------------------------------------------


def _planted(tmp_path: Path, variant: str) -> tuple[Neighbours, str, str]:
    plant, packed = GITDIR_LINKS[variant]
    n = build_neighbours(tmp_path, packed=packed)
    named = plant(n)
    rev = "theirs" if os.path.lexists(n.git_dir / "refs" / "heads" / "theirs") else "HEAD"
    return n, named, rev


@pytest.mark.parametrize("variant", list(GITDIR_LINKS))
def test_control_plain_git_follows_links_out_of_the_git_directory(
    tmp_path: Path, variant: str
) -> None:
    n, _named, rev = _planted(tmp_path, variant)
    if variant == "logs":
        shown = plain_git(n.repo.root, "rev-parse", "main@{0}").stdout.strip()
        assert shown == n.other_head
    elif variant == "index":
        assert "private.py" in plain_git(n.repo.root, "ls-files").stdout
    else:
        assert OTHER_CANARY in plain_git(n.repo.root, "show", f"{rev}:private.py").stdout


@pytest.mark.parametrize("variant", list(GITDIR_LINKS))
def test_links_out_of_the_git_directory_are_refused(tmp_path: Path, variant: str) -> None:
    n, named, rev = _planted(tmp_path, variant)
    for argv in (
        ("review", "--commit", rev, "--format", "json"),
        ("review", "--format", "json"),
        ("review", "--staged", "--estimate"),
    ):
        done = redline(*argv, cwd=n.repo.root)
        assert_refused(done, named, secret=OTHER_CANARY)
        assert "symbolic link" in done.stderr and "outside" in done.stderr
    for command in (f"show {rev}:private.py", "log -p -n 3", "diff --cached", "status"):
        ok, output = git_tool(n.repo.root, command)
        assert not ok and OTHER_CANARY not in output
        assert "symbolic link" in output
    with pytest.raises(RepositoryError, match="symbolic link"):
        GitRunner().view(n.repo.root)


def test_a_link_that_stays_inside_the_git_directory_is_followed(tmp_path: Path) -> None:
    """Links are not refused as such: one that resolves inside .git, to a regular file, is
    read like the file itself."""
    n = build_neighbours(tmp_path)
    info = n.git_dir / "info"
    (info / "exclude.real").write_text("*.log\n")
    (info / "exclude").unlink()
    os.symlink("exclude.real", info / "exclude")
    n.repo.write("debug.log", "noise\n")
    n.repo.write("app.py", "x = 3\n")
    done = redline("review", "--format", "json", cwd=n.repo.root)
    assert done.returncode == 0, done.stderr
    assert "app.py" in done.stdout and "debug.log" not in done.stdout


# -- shallow: any file's first line in a git error -----------------------------------------------


@pytest.fixture
def shallow_secret(tmp_path: Path) -> tuple[GitRepo, Path]:
    secret = tmp_path / "home" / "notes.txt"
    secret.parent.mkdir()
    secret.write_text(f"{SECRET_LINE}\nsecond line\n")
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    repo.write("app.py", "x = 2\n")
    repo.commit("two")
    os.symlink(secret, repo.root / ".git" / "shallow")
    return repo, secret


def test_control_plain_git_quotes_the_linked_shallow_file(
    shallow_secret: tuple[GitRepo, Path],
) -> None:
    repo, _ = shallow_secret
    assert SECRET_LINE in plain_git(repo.root, "log", "-1").stderr


def test_shallow_linked_out_is_refused_and_never_quoted(
    shallow_secret: tuple[GitRepo, Path],
) -> None:
    repo, _ = shallow_secret
    for argv in (("review", "--commit", "HEAD"), ("review",), ("review", "--since", "HEAD~1")):
        assert_refused(redline(*argv, cwd=repo.root), ".git/shallow", secret=SECRET_LINE)
    for command in ("log -n 1", "show HEAD", "status", "blame app.py"):
        ok, output = git_tool(repo.root, command)
        assert not ok and SECRET_LINE not in output and ".git/shallow" in output


def test_shallow_through_ask_reaches_neither_the_model_nor_the_record(
    shallow_secret: tuple[GitRepo, Path], tmp_path: Path
) -> None:
    from scripted_llm import Reply, ScriptedLLM

    repo, _ = shallow_secret
    cache = Path(os.environ["REDLINE_CACHE_DIR"])
    steps = [Reply.tool("git", {"command": "log -n 1"}), Reply.tool("git", {"command": "show"})]
    with ScriptedLLM(steps + [Reply.text("done")] * 5) as llm:
        done = redline(
            "ask", "what changed?", "--model", "openai/scripted", "--api-base", llm.base_url,
            cwd=repo.root,
        )  # fmt: skip
        sent = repr(llm.requests)
    assert_refused(done, ".git/shallow", secret=SECRET_LINE)
    assert SECRET_LINE not in sent
    for path in cache.rglob("*") if cache.exists() else []:
        if path.is_file():
            assert SECRET_LINE.encode() not in path.read_bytes(), path


# -- HEAD, and things that are not files -------------------------------------------------------


def test_head_linked_to_proc_pagemap_is_a_clear_error(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    head = repo.root / ".git" / "HEAD"
    head.unlink()
    os.symlink("/proc/self/pagemap", head)
    for argv in (("review",), ("review", "--commit", "HEAD"), ("review", "--estimate")):
        assert_refused(redline(*argv, cwd=repo.root, timeout=60), ".git/HEAD", secret="\0")


def test_head_too_large_or_binary_is_a_clear_error(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    (repo.root / ".git" / "HEAD").write_bytes(b"ref: refs/heads/main\n" + b"x" * 100_000)
    done = redline("review", cwd=repo.root)
    assert_refused(done, ".git/HEAD", secret="xxxxxxxx")


def test_legacy_symlink_head_to_a_branch_is_read_as_that_branch(tmp_path: Path) -> None:
    """core.preferSymlinkRefs repositories: HEAD is a link to refs/heads/<branch>, inside."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    head = repo.root / ".git" / "HEAD"
    head.unlink()
    os.symlink("refs/heads/main", head)
    repo.write("app.py", "import os\nx = 2\n")
    done = redline("review", "--format", "json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert "uncommitted changes on main" in done.stdout


SPECIAL_PLACES = [
    "packed-refs",
    "shallow",
    "refs/heads/feature",
    "HEAD",
    "index",
    "objects/pack/pack-evil.pack",
    "objects/ab",
    "logs/HEAD",
    "info/exclude",
    "config",
]


@pytest.mark.parametrize("place", SPECIAL_PLACES)
def test_a_fifo_inside_git_is_refused_at_once(tmp_path: Path, place: str) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    repo.write("app.py", "x = 2\n")
    target = repo.root / ".git" / place
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    os.mkfifo(target)
    started = time.monotonic()
    done = redline("review", cwd=repo.root, timeout=90)
    assert time.monotonic() - started < 20  # not git's (or Redline's) 30 s timeout
    assert_refused(done, f".git/{place}", secret="\0")
    assert "FIFO" in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
@pytest.mark.parametrize("place", ["shallow", "packed-refs", "objects/pack/pack-dev.idx"])
def test_a_device_inside_git_is_refused(tmp_path: Path, place: str) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    target = repo.root / ".git" / place
    if target.exists():
        target.unlink()
    os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero
    done = redline("review", "--commit", "HEAD", cwd=repo.root, timeout=60)
    assert_refused(done, f".git/{place}", secret="\0")
    assert "device" in done.stderr


def test_a_link_to_a_device_is_refused(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    os.symlink("/dev/zero", repo.root / ".git" / "packed-refs")
    done = redline("review", "--commit", "HEAD", cwd=repo.root, timeout=60)
    assert_refused(done, ".git/packed-refs", secret="\0")


# -- .git files naming a git directory built inside the tree -------------------------------------


def _attacker_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "attacker"
    tree.mkdir()
    (tree / "app.py").write_text("print('hello')\n")
    return tree


def _bare_copy(n: Neighbours, where: Path) -> Path:
    """A copy of the other repository's objects and refs as a bare git directory at where."""
    where.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--no-local", str(n.other.root), str(where)],
        env=_ENV,
        check=True,
        capture_output=True,
    )
    return where


def plant_worktree_inside(tree: Path, n: Neighbours) -> None:
    common = _bare_copy(n, tree / ".shadow")
    wt = common / "worktrees" / "w"
    wt.mkdir(parents=True)
    (wt / "HEAD").write_text("ref: refs/heads/main\n")
    (wt / "commondir").write_text("../..\n")
    (wt / "gitdir").write_text("../../../.git\n")
    (tree / ".git").write_text("gitdir: .shadow/worktrees/w\n")


def plant_submodule_inside(tree: Path, n: Neighbours) -> None:
    module = _bare_copy(n, tree / ".shadow" / "modules" / "m")
    subprocess.run(
        ["git", "config", "--file", str(module / "config"), "core.worktree", "../../.."],
        check=True,
        env=_ENV,
    )
    subprocess.run(
        ["git", "config", "--file", str(module / "config"), "core.bare", "false"],
        check=True,
        env=_ENV,
    )
    (tree / ".git").write_text("gitdir: .shadow/modules/m\n")


def plant_modules_of_no_repository(tree: Path, n: Neighbours) -> None:
    """Outside the tree, but `modules/<name>` of a directory that is no git directory."""
    module = _bare_copy(n, tree.parent / "stash" / "modules" / "m")
    for key, value in (("core.worktree", str(tree)), ("core.bare", "false")):
        subprocess.run(
            ["git", "config", "--file", str(module / "config"), key, value], check=True, env=_ENV
        )
    (tree / ".git").write_text(f"gitdir: {module}\n")


GITFILES = {
    "worktree-inside-the-tree": (plant_worktree_inside, "inside the working tree"),
    "submodule-inside-the-tree": (plant_submodule_inside, "inside the working tree"),
    "modules-of-no-repository": (plant_modules_of_no_repository, "cannot verify"),
}


@pytest.mark.parametrize("variant", list(GITFILES))
def test_gitfile_naming_a_fabricated_git_directory_is_refused(tmp_path: Path, variant: str) -> None:
    plant, message = GITFILES[variant]
    n = build_neighbours(tmp_path)
    tree = _attacker_tree(tmp_path)
    plant(tree, n)
    control = plain_git(tree, "show", "HEAD:private.py")
    assert OTHER_CANARY in control.stdout  # plain git takes it as the repository
    for argv in (("review", "--commit", "HEAD"), ("review",), ("review", "--estimate")):
        done = redline(*argv, cwd=tree)
        assert_refused(done, ".git", secret=OTHER_CANARY)
        assert message in done.stderr
    with pytest.raises(RepositoryError, match=message):
        GitRunner().find_repo_root(tree)


def test_worktree_inside_its_main_repository_is_reviewed(tmp_path: Path) -> None:
    """`git worktree add ./wt` inside the main tree: the worktree's git directory is inside the
    *main* tree, not inside the worktree reviewed, and that is the genuine structure."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    repo.git("worktree", "add", "-q", str(repo.root / "wt"), "-b", "wt")
    (repo.root / "wt" / "new.py").write_text("import os\nos.system('ls')\n")
    done = redline("review", "--format", "json", cwd=repo.root / "wt")
    assert done.returncode == 0, done.stderr
    assert "new.py" in done.stdout


def test_submodule_with_a_slash_in_its_name_and_a_nested_one_are_reviewed(tmp_path: Path) -> None:
    leaf = GitRepo(tmp_path / "leaf")
    leaf.write("leaf.py", "z = 1\n")
    leaf.commit("leaf")
    middle = GitRepo(tmp_path / "middle")
    middle.write("m.py", "y = 1\n")
    middle.commit("m")
    add = ("-c", "protocol.file.allow=always", "submodule", "add", "-q")
    middle.git(*add, str(leaf.root), "deps/leaf")
    middle.commit("leaf added")
    top = GitRepo(tmp_path / "top")
    top.write("t.py", "x = 1\n")
    top.commit("t")
    top.git(*add, str(middle.root), "libs/middle")
    top.git(
        "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive"
    )
    assert (top.root / ".git" / "modules" / "libs" / "middle" / "modules").is_dir()
    for where, name in (("libs/middle", "extra.py"), ("libs/middle/deps/leaf", "more.py")):
        (top.root / where / name).write_text("w = 2\n")
        done = redline("review", "--format", "json", cwd=top.root / where)
        assert done.returncode == 0, done.stderr
        assert name in done.stdout


def test_git_directory_link_inside_the_tree_still_works(tmp_path: Path) -> None:
    """A `.git` symbolic link to a directory inside the tree (kept from before): its contents
    are checked like any git directory's."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    shutil.move(repo.root / ".git", repo.root / "gitstore")
    os.symlink("gitstore", repo.root / ".git")
    repo.write("app.py", "x = 2\n")
    done = redline("review", "--format", "json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
