"""A hostile *repository* (not a hostile model): git must never read configuration the
repository's author controls, never leave the repository, never fetch.

Every class here got through an independent attack run before the private repository view
(server/redline/git/view.py) existed. Each test builds the hostile repository with plain git,
proves with a control that plain git really does run the attacker's program or read outside
(so the test can fail), then drives Redline the way a user does — the `redline` command in a
subprocess, or the model's git tool — and asserts on effects: no marker file, no outside text
in anything Redline printed.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from redline.agent import ToolExecutor
from redline.errors import RepositoryError
from redline.git.runner import GitRunner
from redline.git.view import parse_real_config, render_config
from redline.tools import ToolContext, build_tool_registry

from gitrepo import _ENV, GitRepo

REDLINE = str(Path(sys.executable).with_name("redline"))
OUTSIDE_TEXT = "OUTSIDE-REPO-CANARY-5e1f0c"


def marker_script(path: Path, marks: Path) -> Path:
    """An executable that leaves `marks/<its name>` behind when anything runs it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\ntouch "{marks}/{path.name}"\nexit 1\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def redline(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env["REDLINE_CACHE_DIR"] = os.environ["REDLINE_CACHE_DIR"]
    env["REDLINE_CONFIG"] = os.devnull  # no user file
    return subprocess.run(
        [REDLINE, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def git_tool(root: Path, command: str) -> tuple[bool, str]:
    ctx = ToolContext(root, runner=GitRunner(), report_dir=root.parent / "reports")
    result = asyncio.run(ToolExecutor(build_tool_registry(ctx)).run("git", {"command": command}))
    return result.ok, result.content


def plain_git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=_ENV, capture_output=True, timeout=20)


# -- 1. lazy fetch from a promisor remote: code runs with no model at all ---------------------


@dataclass
class PartialClone:
    repo: GitRepo
    marks: Path
    missing: str  # the blob the new commit needs and the repository does not have


def _partial_clone(tmp_path: Path, transport: str) -> PartialClone:
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    repo.write("a.py", "x = 2\n")
    repo.commit("two")
    missing = repo.git("rev-parse", "HEAD:a.py").strip()
    (repo.root / ".git" / "objects" / missing[:2] / missing[2:]).unlink()
    program = marker_script(tmp_path / "bin" / f"fetch-{transport}", marks)
    settings = {
        "core.repositoryformatversion": "1",
        "extensions.partialClone": "evil",
        "remote.evil.promisor": "true",
        "remote.evil.fetch": "+refs/heads/*:refs/remotes/evil/*",
    }
    if transport == "ext":
        settings |= {"remote.evil.url": f"ext::{program}", "protocol.ext.allow": "always"}
    elif transport == "file":
        upstream = GitRepo(tmp_path / "upstream")
        upstream.commit("u")
        settings |= {
            "remote.evil.url": f"file://{upstream.root}",
            "remote.evil.uploadpack": str(program),
            "protocol.file.allow": "always",
        }
    else:  # ssh
        settings |= {
            "remote.evil.url": "ssh://attacker.invalid/repo.git",
            "core.sshCommand": str(program),
            "protocol.ssh.allow": "always",
        }
    for key, value in settings.items():
        repo.git("config", key, value)
    return PartialClone(repo, marks, missing)


TRANSPORTS = ["ext", "file", "ssh"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_control_plain_git_lazily_fetches_through_the_attackers_remote(
    tmp_path: Path, transport: str
) -> None:
    clone = _partial_clone(tmp_path, transport)
    plain_git(clone.repo.root, "-c", "protocol.allow=never", "diff", "HEAD~1", "HEAD")
    assert os.listdir(clone.marks) == [f"fetch-{transport}"]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    "argv",
    [
        ("review", "--commit", "HEAD"),
        ("review", "--commit", "HEAD", "--estimate"),
        ("review", "--since", "HEAD~1", "--format", "json"),
        ("review",),  # uncommitted: the work-tree diff needs HEAD's missing blob
    ],
    ids=["commit", "estimate", "since", "uncommitted"],
)
def test_review_never_fetches_and_names_the_missing_object(
    tmp_path: Path, transport: str, argv: tuple[str, ...]
) -> None:
    clone = _partial_clone(tmp_path, transport)
    clone.repo.write("a.py", "x = 3\n")
    done = redline(*argv, cwd=clone.repo.root)
    assert os.listdir(clone.marks) == []
    assert done.returncode == 2, done.stderr
    assert f"object {clone.missing} is not in the local repository" in done.stderr
    assert "fetch it first" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("command", ["show HEAD", "diff HEAD~1 HEAD", "log -p -n 1", "status"])
def test_git_tool_never_fetches(tmp_path: Path, transport: str, command: str) -> None:
    clone = _partial_clone(tmp_path, transport)
    clone.repo.write("a.py", "x = 3\n")
    git_tool(clone.repo.root, command)
    assert os.listdir(clone.marks) == []


def test_partial_clone_is_named_in_the_coverage_notes(tmp_path: Path) -> None:
    clone = _partial_clone(tmp_path, "ext")
    clone.repo.write("b.py", "y = 1\n")  # a change that needs no missing object
    done = redline("review", "--format", "json", cwd=clone.repo.root)
    assert done.returncode == 0, done.stderr
    assert "partial clone" in done.stdout and "never fetches" in done.stdout
    assert os.listdir(clone.marks) == []


# -- 3. a format or signature program from the repository's config --------------------------


SIGNATURES = {
    # name: (signature block in the commit, config that makes plain `git log` run the program)
    "x509-format-pretty": (
        "-----BEGIN SIGNED MESSAGE-----\n MIAGCSqGSIb3DQEHAqCAMIACAQEx\n"
        " -----END SIGNED MESSAGE-----",
        {"format.pretty": "%G? %H", "gpg.x509.program": "{program}"},
    ),
    "openpgp-pretty-alias": (
        "-----BEGIN PGP SIGNATURE-----\n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----",
        {"pretty.sig": "%G? %H", "format.pretty": "sig", "gpg.program": "{program}"},
    ),
    "openpgp-show-signature": (
        "-----BEGIN PGP SIGNATURE-----\n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----",
        {"log.showSignature": "true", "gpg.program": "{program}"},
    ),
}


def _signed_repo(tmp_path: Path, variant: str) -> tuple[GitRepo, Path]:
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    repo.write("a.py", "x = 2\n")
    repo.commit("two")
    signature, settings = SIGNATURES[variant]
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    parent = repo.git("rev-parse", "HEAD~1").strip()
    body = (
        f"tree {tree}\nparent {parent}\n"
        "author A <a@example.invalid> 1767225600 +0000\n"
        "committer A <a@example.invalid> 1767225600 +0000\n"
        f"gpgsig {signature}\n\nsigned change\n"
    )
    commit = repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=body.encode()).strip()
    repo.git("update-ref", "refs/heads/main", commit)
    program = marker_script(tmp_path / "bin" / f"sig-{variant}", marks)
    for key, value in settings.items():
        repo.git("config", key, value.format(program=program))
    return repo, marks


@pytest.mark.parametrize("variant", list(SIGNATURES))
def test_control_plain_git_log_runs_the_signature_program(tmp_path: Path, variant: str) -> None:
    repo, marks = _signed_repo(tmp_path, variant)
    plain_git(repo.root, "log", "-1")
    assert os.listdir(marks) == [f"sig-{variant}"]


@pytest.mark.parametrize("variant", list(SIGNATURES))
def test_no_signature_program_runs(tmp_path: Path, variant: str) -> None:
    repo, marks = _signed_repo(tmp_path, variant)
    for command in ("log", "log -n 1", "show", "show HEAD --stat", "log -p -n 2"):
        ok, output = git_tool(repo.root, command)
        assert ok, output
        assert "signed change" in output
    done = redline("review", "--commit", "HEAD", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert os.listdir(marks) == []


# -- 4. reads outside the repository ----------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> GitRepo:
    """Somebody else's repository on the same disk, with a worktree and a submodule."""
    other = GitRepo(tmp_path / "other")
    other.write("private.txt", f"{OUTSIDE_TEXT}\n")
    other.commit("private")
    other.git("worktree", "add", "-q", str(tmp_path / "other-wt"), "-b", "wt")
    sub = GitRepo(tmp_path / "subsrc")
    sub.write("s.txt", f"{OUTSIDE_TEXT}\n")
    sub.commit("s")
    other.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.root), "mod")
    return other


def _attacker_tree(tmp_path: Path) -> Path:
    """An extracted archive: files of the attacker's choosing, and a .git entry."""
    tree = tmp_path / "attacker"
    tree.mkdir()
    (tree / "app.py").write_text("print('hello')\n")
    return tree


GITFILE_TARGETS = {
    "repository": lambda other: other.root / ".git",
    "worktree": lambda other: other.root / ".git" / "worktrees" / "other-wt",
    "submodule": lambda other: other.root / ".git" / "modules" / "mod",
}


@pytest.mark.parametrize("target", list(GITFILE_TARGETS))
def test_gitfile_pointing_at_another_repository_is_refused(
    tmp_path: Path, outside: GitRepo, target: str
) -> None:
    tree = _attacker_tree(tmp_path)
    (tree / ".git").write_text(f"gitdir: {GITFILE_TARGETS[target](outside)}\n")
    control = subprocess.run(
        ["git", "log", "-p", "--all"], cwd=tree, env=_ENV, capture_output=True, text=True
    )
    assert OUTSIDE_TEXT in control.stdout  # plain git follows it
    for argv in (("review",), ("review", "--commit", "HEAD"), ("review", "--estimate")):
        done = redline(*argv, cwd=tree)
        assert done.returncode == 2
        assert "cannot verify" in done.stderr and "Traceback" not in done.stderr
        assert OUTSIDE_TEXT not in done.stdout + done.stderr
    with pytest.raises(RepositoryError, match="cannot verify"):
        GitRunner().find_repo_root(tree)


def test_dot_git_symlink_out_of_the_tree_is_refused(tmp_path: Path, outside: GitRepo) -> None:
    tree = _attacker_tree(tmp_path)
    (tree / ".git").symlink_to(outside.root / ".git")
    done = redline("review", "--commit", "HEAD", cwd=tree)
    assert done.returncode == 2 and "outside the working tree" in done.stderr
    assert OUTSIDE_TEXT not in done.stdout + done.stderr


def test_genuine_worktree_and_submodule_are_reviewed(tmp_path: Path, outside: GitRepo) -> None:
    worktree = tmp_path / "other-wt"
    (worktree / "new.py").write_text("import os\nos.system('ls')\n")
    done = redline("review", cwd=worktree)
    assert done.returncode == 0, done.stderr
    assert "new.py" in done.stdout
    module = outside.root / "mod"
    (module / "extra.py").write_text("y = 2\n")
    done = redline("review", "--format", "json", cwd=module)
    assert done.returncode == 0, done.stderr
    assert "extra.py" in done.stdout


def _borrowing_repo(tmp_path: Path, outside: GitRepo, how: str) -> GitRepo:
    """A repository whose alternates lead into `outside`, with a ref to its private commit."""
    repo = GitRepo(tmp_path / "borrower")
    repo.write("a.py", "x = 1\n")
    repo.commit("mine")
    objects = outside.root / ".git" / "objects"
    info = repo.root / ".git" / "objects" / "info"
    if how == "absolute":
        (info / "alternates").write_text(f"{objects}\n")
    elif how == "relative":
        (info / "alternates").write_text(f"{os.path.relpath(objects, info.parent)}\n")
    else:  # chained: through an innocent-looking store of its own that borrows in turn
        hop = tmp_path / "hop" / "objects"
        (hop / "info").mkdir(parents=True)
        (hop / "info" / "alternates").write_text(f"{objects}\n")
        (info / "alternates").write_text(f"{hop}\n")
    repo.git("update-ref", "refs/heads/theirs", outside.head())
    return repo


@pytest.mark.parametrize("how", ["absolute", "relative", "chained"])
def test_alternates_into_another_repository_are_not_read(
    tmp_path: Path, outside: GitRepo, how: str
) -> None:
    repo = _borrowing_repo(tmp_path, outside, how)
    control = subprocess.run(
        ["git", "show", "theirs"], cwd=repo.root, env=_ENV, capture_output=True, text=True
    )
    assert OUTSIDE_TEXT in control.stdout
    done = redline("review", "--commit", "theirs", cwd=repo.root)
    # The ref names a commit that is not among the repository's own objects.
    assert done.returncode == 2 and "unknown revision 'theirs'" in done.stderr
    assert OUTSIDE_TEXT not in done.stdout + done.stderr
    for command in ("show theirs", "log -p theirs", "diff main theirs", "show theirs:private.txt"):
        ok, output = git_tool(repo.root, command)
        assert not ok and OUTSIDE_TEXT not in output
    # A review of the repository's own change goes on, and says what it did not read.
    repo.write("b.py", "y = 1\n")
    done = redline("review", "--format", "json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert "borrows objects" in done.stdout and OUTSIDE_TEXT not in done.stdout


@pytest.mark.parametrize("where", ["top", "nested", "untracked-review"])
def test_hard_link_to_an_outside_file_is_not_read(tmp_path: Path, where: str) -> None:
    secret = tmp_path / "home" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text(f"{OUTSIDE_TEXT}\n")
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("app")
    name = "notes.txt" if where != "nested" else "docs/deep/notes.txt"
    (repo.root / name).parent.mkdir(parents=True, exist_ok=True)
    os.link(secret, repo.root / name)
    if where == "untracked-review":
        repo.write("app.py", "x = 2\n")
        done = redline("review", "--format", "json", cwd=repo.root)
        assert done.returncode == 0, done.stderr
        assert OUTSIDE_TEXT not in done.stdout + done.stderr
        assert "hard link" in done.stdout
        return
    ctx = ToolContext(repo.root, runner=GitRunner(), report_dir=tmp_path / "reports")
    executor = ToolExecutor(build_tool_registry(ctx))
    for tool, args in (
        ("read_file", {"path": name}),
        ("read_function", {"path": name, "name": "x"}),
    ):
        result = asyncio.run(executor.run(tool, args))
        assert not result.ok and OUTSIDE_TEXT not in result.content
    assert "hard link" in asyncio.run(executor.run("read_file", {"path": name})).content


def test_hard_links_inside_the_tree_are_read(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.txt", "shared text\n")
    os.link(repo.root / "a.txt", repo.root / "b.txt")
    ctx = ToolContext(repo.root, runner=GitRunner(), report_dir=tmp_path / "reports")
    result = asyncio.run(ToolExecutor(build_tool_registry(ctx)).run("read_file", {"path": "b.txt"}))
    assert result.ok and "shared text" in result.content


# -- the view itself ---------------------------------------------------------------------------


def test_views_are_private_and_removed(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    runner = GitRunner()
    view = runner.view(repo.root)
    assert view is not None and view.root.is_dir()
    assert stat.S_IMODE(os.stat(view.root.parent).st_mode) == 0o700
    config = (view.git_dir / "config").read_text()
    assert "fsmonitor" in config and "promisor" not in config
    runner.close()
    assert not view.root.exists()
    assert (repo.root / ".git" / "HEAD").is_file()  # removing a view touches nothing real


def test_a_review_writes_nothing_into_the_repository(tmp_path: Path) -> None:
    """`add --intent-to-add` (untracked files in the uncommitted scope) writes the empty blob:
    into the view's private store, never the repository's."""
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    repo.write("new.py", "y = 2\n")
    before = sorted(p for p in (repo.root / ".git").rglob("*") if p.is_file())
    done = redline("review", "--format", "json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert "new.py" in done.stdout
    assert sorted(p for p in (repo.root / ".git").rglob("*") if p.is_file()) == before


def test_view_config_copies_facts_and_nothing_that_runs() -> None:
    listing = b"\0".join(
        [
            b"core.autocrlf\ntrue",
            b"core.filemode\nfalse",
            b"core.fsmonitor\n/tmp/evil",
            b"core.sshcommand\n/tmp/evil",
            b"extensions.objectformat\nsha256",
            b"remote.origin.url\nhttps://github.com/acme/widget.git",
            b"remote.origin.uploadpack\n/tmp/evil",
            b"remote.origin.promisor\ntrue",
            b"remote.evil.url\next::sh -c touch% /tmp/pwned",
            b"remote.up.url\ngit@github.com:acme/widget.git",
            b'remote.x"]\n[core]\nfsmonitor=y.url\nhttps://a.example/b',
            b"protocol.ext.allow\nalways",
            b"include.path\n/tmp/evil.cfg",
        ]
    )
    real = parse_real_config(listing)
    assert real.partial_clone and real.object_format == "sha256"
    text = render_config(real, [("core.fsmonitor", "false")])
    assert "/tmp/evil" not in text and "ext::" not in text and "always" not in text
    assert "promisor" not in text and "uploadpack" not in text and "include" not in text
    assert 'autocrlf = "true"' in text and 'objectformat = "sha256"' in text
    assert '[remote "origin"]' in text and "git@github.com:acme/widget.git" in text
    assert text.count("fsmonitor") == 1


def test_sha256_repository_is_reviewed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    subprocess.run(
        ["git", "init", "-q", "--object-format=sha256", "-b", "main", str(root)],
        env=_ENV,
        check=True,
    )
    repo = GitRepo.__new__(GitRepo)
    repo.root = root
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    repo.write("a.py", "import os\nx = 2\n")
    repo.commit("two")
    done = redline("review", "--commit", "HEAD", "--format", "json", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "a.py" in done.stdout and "F401" in done.stdout
