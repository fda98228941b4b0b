"""The rules of git/gitdir.py and how the view applies them: what the private view links, names
or copies from a repository's git directory is a regular file or a directory inside it once
links are resolved (every entry below refs/, logs/, objects/ included), and HEAD, config and
alternates are read without following a link. One test per rule, in-process, asserting the
exact refusal, so that inverting any part fails a test here
(`make mutation MODULES=server/redline/git/gitdir.py`, and view.py's own guard tests).
"""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest

from redline.errors import RepositoryError
from redline.git.discovery import discover
from redline.git.gitdir import WALKED, GitDirFiles, shown
from redline.git.hardening import HARDENED_CONFIG
from redline.git.view import RepoView

from gitrepo import GitRepo


@pytest.fixture
def gd(tmp_path: Path) -> Path:
    """A git directory's real path, with a file, a directory and a place outside it."""
    root = tmp_path.resolve() / "g"
    (root / "refs" / "heads").mkdir(parents=True)
    (root / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    (root / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s\n")
    return root


def outside(gd: Path) -> Path:
    return gd.parent / "outside"


def refusal(path: Path, what: str) -> str:
    return f"refusing {path}: {what}"


# -- resolve ------------------------------------------------------------------------------------


def test_resolve_answers_none_for_nothing_there(gd: Path) -> None:
    assert GitDirFiles(gd).resolve(gd / "missing") is None


def test_resolve_gives_the_real_path_inside(gd: Path) -> None:
    (gd / "alias").symlink_to("refs")
    assert GitDirFiles(gd).resolve(gd / "alias") == gd / "refs"
    assert GitDirFiles(gd).resolve(gd) == gd  # the git directory itself is inside


def test_resolve_refuses_a_link_out_naming_both_ends(gd: Path) -> None:
    (gd / "packed-refs").symlink_to(outside(gd) / "secret")
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).resolve(gd / "packed-refs")
    assert info.value.message == (
        f"refusing {gd / 'packed-refs'}: it is a symbolic link to {outside(gd) / 'secret'}, "
        f"outside the repository's git directory {gd}"
    )
    assert "git worktree add" in (info.value.hint or "")


def test_a_sibling_whose_name_starts_like_the_git_directory_is_outside(gd: Path) -> None:
    """Components, not string prefixes: /x/g2 is not inside /x/g."""
    sibling = gd.parent / (gd.name + "2")
    sibling.mkdir()
    (gd / "shallow").symlink_to(sibling)
    with pytest.raises(RepositoryError, match="outside the repository's git directory"):
        GitDirFiles(gd).resolve(gd / "shallow")


# -- check_file -----------------------------------------------------------------------------------


def test_a_regular_file_passes_and_nothing_there_is_none(gd: Path) -> None:
    files = GitDirFiles(gd)
    assert files.check_file(gd / "HEAD") == gd / "HEAD"
    assert files.check_file(gd / "shallow") is None


def test_a_link_inside_to_a_file_passes_as_its_target(gd: Path) -> None:
    (gd / "packed-refs").symlink_to("HEAD")
    assert GitDirFiles(gd).check_file(gd / "packed-refs") == gd / "HEAD"


def test_a_dangling_link_inside_is_nothing(gd: Path) -> None:
    (gd / "shallow").symlink_to("nothing-here")
    assert GitDirFiles(gd).check_file(gd / "shallow") is None


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda p: p.mkdir(), "a directory"),
        (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
    ],
    ids=["directory", "fifo"],
)
def test_anything_but_a_regular_file_is_refused_by_kind(gd: Path, make: object, what: str) -> None:
    make(gd / "shallow")  # type: ignore[operator]
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).check_file(gd / "shallow")
    assert info.value.message == refusal(gd / "shallow", f"it is {what}, not a regular file")
    assert info.value.hint == "a git directory holds only regular files and directories"


def test_a_socket_is_refused(gd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        monkeypatch.chdir(gd)  # a relative name: a socket's path is limited to 107 bytes
        sock.bind("index")
        with pytest.raises(RepositoryError, match="it is a socket, not a regular file"):
            GitDirFiles(gd).check_file(gd / "index")


def test_a_link_loop_is_a_clear_error(gd: Path) -> None:
    (gd / "a").symlink_to("b")
    (gd / "b").symlink_to("a")
    with pytest.raises(RepositoryError, match=f"cannot read {gd / 'a'}"):
        GitDirFiles(gd).check_file(gd / "a")


# -- check_tree -----------------------------------------------------------------------------------


def test_a_tree_of_files_and_directories_passes(gd: Path) -> None:
    (gd / "refs" / "tags" / "v1").mkdir(parents=True)
    (gd / "refs" / "tags" / "v1" / "x").write_text("y")
    assert GitDirFiles(gd).check_tree(gd / "refs") == gd / "refs"
    assert GitDirFiles(gd).check_tree(gd / "logs") is None


def test_a_tree_behind_a_loop_is_named(gd: Path) -> None:
    (gd / "logs").symlink_to("logs")
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).check_tree(gd / "logs")
    assert info.value.message.startswith(f"cannot read {gd / 'logs'}: ")


def test_a_tree_that_is_a_file_is_refused(gd: Path) -> None:
    (gd / "logs").write_text("not a directory")
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).check_tree(gd / "logs")
    assert info.value.message == refusal(gd / "logs", "it is a regular file, not a directory")


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_a_fifo_anywhere_below_is_refused(gd: Path, depth: int) -> None:
    where = gd / "refs" / "heads"
    for n in range(depth):
        where = where / f"d{n}"
        where.mkdir()
        (where / "ok").write_text("x")  # ordinary neighbours are passed over, not stopped at
    os.mkfifo(where / "feature")
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).check_tree(gd / "refs")
    assert info.value.message == refusal(
        where / "feature", "it is a FIFO (named pipe), not a regular file"
    )


def test_a_link_out_anywhere_below_is_refused(gd: Path) -> None:
    (gd / "refs" / "heads" / "theirs").symlink_to(outside(gd) / "secret")
    with pytest.raises(RepositoryError, match=f"refusing {gd / 'refs' / 'heads' / 'theirs'}"):
        GitDirFiles(gd).check_tree(gd / "refs")


def test_a_link_inside_to_a_directory_is_walked_too(gd: Path) -> None:
    stash = gd / "stash"
    stash.mkdir()
    (stash / "pack-1.pack").symlink_to(outside(gd) / "secret")
    (gd / "refs" / "remotes").symlink_to("../stash")
    with pytest.raises(RepositoryError, match=f"refusing {stash / 'pack-1.pack'}"):
        GitDirFiles(gd).check_tree(gd / "refs")


def test_a_link_inside_to_a_fifo_is_refused(gd: Path) -> None:
    os.mkfifo(gd / "pipe")
    (gd / "refs" / "heads" / "x").symlink_to("../../pipe")
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).check_tree(gd / "refs")
    assert info.value.message == refusal(
        gd / "refs" / "heads" / "x", "it is a FIFO (named pipe), not a regular file"
    )


def test_a_link_loop_below_is_named(gd: Path) -> None:
    (gd / "refs" / "heads" / "a").symlink_to("b")
    (gd / "refs" / "heads" / "b").symlink_to("a")
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).check_tree(gd / "refs")
    assert info.value.message.startswith(f"cannot read {gd / 'refs' / 'heads' / 'a'}: ")


def test_a_directory_seen_again_does_not_end_the_walk(gd: Path) -> None:
    """Entries are walked in name order, the stack last-in first-out: "zz" (a link back to
    refs, seen already) is taken before "aa", which must still be looked into."""
    (gd / "refs" / "zz").symlink_to(".")
    (gd / "refs" / "aa").mkdir()
    (gd / "refs" / "aa" / "bad").symlink_to(outside(gd) / "secret")
    with pytest.raises(RepositoryError, match=f"refusing {gd / 'refs' / 'aa' / 'bad'}"):
        GitDirFiles(gd).check_tree(gd / "refs")


def test_a_directory_that_cannot_be_listed_is_a_clear_error(
    gd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_scandir = os.scandir

    def scandir(path: object) -> object:
        if Path(str(path)).name == "heads":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).check_tree(gd / "refs")
    assert info.value.message == f"cannot read {gd / 'refs' / 'heads'}: Permission denied"


def test_links_that_loop_through_directories_end(gd: Path) -> None:
    (gd / "refs" / "heads" / "up").symlink_to("..")
    (gd / "refs" / "heads" / "dangling").symlink_to("nowhere")
    assert GitDirFiles(gd).check_tree(gd / "refs") == gd / "refs"


def test_the_walked_directories_are_those_git_opens_anything_in() -> None:
    assert WALKED == ("refs", "logs", "reftable", "objects")


# -- read -----------------------------------------------------------------------------------------


def test_read_gives_the_bytes_up_to_the_limit(gd: Path) -> None:
    files = GitDirFiles(gd)
    assert files.read(gd / "HEAD", 21) == b"ref: refs/heads/main\n"
    assert files.read(gd / "missing", 10) is None
    with pytest.raises(RepositoryError) as info:
        files.read(gd / "HEAD", 20)
    assert info.value.message == refusal(gd / "HEAD", "it is 21 bytes, over 20")


def test_read_follows_a_link_inside(gd: Path) -> None:
    (gd / "config").symlink_to("HEAD")
    assert GitDirFiles(gd).read(gd / "config", 100) == b"ref: refs/heads/main\n"


def test_read_names_the_path_and_says_how_redline_reads(gd: Path) -> None:
    os.mkfifo(gd / "config")
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).read(gd / "config", 100)
    assert info.value.hint is not None and "its own git directory" in info.value.hint


def test_read_reports_a_failing_read(gd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import redline.git.gitdir as gitdir

    def broken(*_args: object) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(gitdir, "read_file", broken)
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).read(gd / "HEAD", 100)
    assert info.value.message == f"cannot read {gd / 'HEAD'}: Input/output error"


def test_read_refuses_a_link_out_and_a_fifo(gd: Path) -> None:
    (gd / "config").symlink_to(outside(gd) / "secret")
    with pytest.raises(RepositoryError, match="outside the repository's git directory"):
        GitDirFiles(gd).read(gd / "config", 100)
    os.mkfifo(gd / "alternates")
    with pytest.raises(RepositoryError) as info:
        GitDirFiles(gd).read(gd / "alternates", 100)
    assert info.value.message == refusal(
        gd / "alternates", "it is a FIFO (named pipe), not a regular file"
    )


def test_shown_strips_control_characters() -> None:
    assert shown("/x/\x1b[2Jrefs\x07") == "/x/[2Jrefs"


# -- the view applies it to everything it takes ---------------------------------------------------


@pytest.fixture
def committed(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    return repo


def build_view(repo: GitRepo) -> RepoView:
    location = discover(repo.root, lambda _data, _key: None)
    assert location is not None
    return RepoView(location, lambda _data: b"", HARDENED_CONFIG)


TAKEN = [
    "refs",
    "packed-refs",
    "logs",
    "shallow",
    "info/exclude",
    "ORIG_HEAD",
    "sharedindex.0123",
    "index",
    "objects",
    "objects/pack",
    "config",
]


@pytest.mark.parametrize("name", TAKEN)
def test_every_part_the_view_takes_is_refused_when_it_links_out(
    committed: GitRepo, tmp_path: Path, name: str
) -> None:
    git_dir = committed.root.resolve() / ".git"
    part = git_dir / name
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "f").write_text("f\n")
    if part.is_dir():
        os.rename(part, tmp_path / "moved")
    elif part.exists():
        part.unlink()
    part.parent.mkdir(parents=True, exist_ok=True)
    part.symlink_to(target if name in ("refs", "logs", "objects", "objects/pack") else target / "f")
    with pytest.raises(RepositoryError) as info:
        build_view(committed)
    assert info.value.message.startswith(f"refusing {part}: it is a symbolic link to ")


def test_head_as_a_link_to_a_branch_reads_as_that_branch(committed: GitRepo) -> None:
    head = committed.root / ".git" / "HEAD"
    head.unlink()
    head.symlink_to("refs/heads/main")
    view = build_view(committed)
    try:
        assert (view.git_dir / "HEAD").read_text() == "ref: refs/heads/main\n"
    finally:
        view.close()


def test_head_as_a_link_to_anything_else_is_refused(committed: GitRepo, tmp_path: Path) -> None:
    head = committed.root.resolve() / ".git" / "HEAD"
    head.unlink()
    head.symlink_to("packed-refs")
    (head.parent / "packed-refs").write_text("")
    with pytest.raises(RepositoryError) as info:
        build_view(committed)
    assert info.value.message == (
        f"refusing {head}: it is a symbolic link to packed-refs, not to a branch (refs/heads/...)"
    )
    head.unlink()
    theirs = tmp_path / "refs" / "heads" / "main"  # named like a branch, but outside
    theirs.parent.mkdir(parents=True)
    theirs.write_text("0" * 40 + "\n")
    head.symlink_to(theirs)
    with pytest.raises(RepositoryError, match="outside the repository's git directory"):
        build_view(committed)


def test_a_head_link_to_a_branch_that_leaves_is_refused(committed: GitRepo, tmp_path: Path) -> None:
    git_dir = committed.root.resolve() / ".git"
    (tmp_path / "theirs").write_text("0" * 40 + "\n")
    (git_dir / "refs" / "heads" / "evil").symlink_to(tmp_path / "theirs")
    head = git_dir / "HEAD"
    head.unlink()
    head.symlink_to("refs/heads/evil")
    with pytest.raises(RepositoryError, match="outside the repository's git directory"):
        build_view(committed)


def test_a_view_that_cannot_be_built_leaves_nothing_behind(
    committed: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))  # views_home() of its own
    (committed.root / ".git" / "shallow").symlink_to(tmp_path)
    with pytest.raises(RepositoryError):
        build_view(committed)
    assert [os.listdir(d) for d in private_tmp.iterdir()] == [[]]
