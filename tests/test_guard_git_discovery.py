"""The rules of git/discovery.py: Redline finds the repository itself and accepts a `.git` only
when it can verify it belongs to this work tree. Asserted on the location found and on the
refusals, so that inverting any rule fails a test here
(`make mutation MODULES=server/redline/git/discovery.py`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from redline.errors import RepositoryError
from redline.git.discovery import RepoLocation, discover, looks_like_git_dir

from gitrepo import _ENV, GitRepo


def no_config(_data: bytes, _key: str) -> str | None:
    return None


def config_of(values: dict[str, str]):  # type: ignore[no-untyped-def]
    """A config reader that answers from `values` and records what it was asked: the config
    file's bytes (read by discovery itself, never through a link) and the key."""
    asked: list[tuple[bytes, str]] = []

    def read(data: bytes, key: str) -> str | None:
        asked.append((data, key))
        return values.get(key)

    read.asked = asked  # type: ignore[attr-defined]
    return read


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("pkg/a.py", "x = 1\n")
    repo.commit("one")
    return repo


def fake_git_dir(path: Path, *, objects: bool = True, commondir: bool = False) -> Path:
    """The parts looks_like_git_dir wants: HEAD, objects (or commondir) and refs; and a config
    file (a submodule's back-pointer is read from it)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "refs").mkdir(exist_ok=True)
    (path / "config").write_text("[core]\n")
    if objects:
        (path / "objects").mkdir(exist_ok=True)
    if commondir:
        (path / "commondir").write_text("../..\n")
    return path


def module_dir(tmp_path: Path, name: str = "m") -> Path:
    """A submodule's git directory as git makes it: <super>/modules/<name> of a git
    directory <super> (here tmp_path/store)."""
    return fake_git_dir(fake_git_dir(tmp_path / "store") / "modules" / name)


# -- what a git directory looks like -------------------------------------------------------


def test_a_git_directory_has_head_objects_and_refs(tmp_path: Path) -> None:
    assert looks_like_git_dir(fake_git_dir(tmp_path / "g"))
    assert looks_like_git_dir(fake_git_dir(tmp_path / "wt", objects=False, commondir=True))


@pytest.mark.parametrize("missing", ["HEAD", "objects", "refs"])
def test_a_directory_missing_a_part_is_not_a_git_directory(tmp_path: Path, missing: str) -> None:
    g = fake_git_dir(tmp_path / "g")
    target = g / missing
    if target.is_dir():
        target.rmdir()
    else:
        target.unlink()
    assert not looks_like_git_dir(g)


def test_parts_of_the_wrong_kind_do_not_make_a_git_directory(tmp_path: Path) -> None:
    g = tmp_path / "g"
    (g / "HEAD").mkdir(parents=True)  # a directory, not a file
    (g / "objects").mkdir()
    (g / "refs").mkdir()
    assert not looks_like_git_dir(g)
    h = tmp_path / "h"
    h.mkdir()
    (h / "HEAD").write_text("x")
    (h / "objects").write_text("not a directory")
    (h / "refs").mkdir()
    assert not looks_like_git_dir(h)
    (h / "objects").unlink()
    (h / "commondir").mkdir()  # a directory, not a file
    assert not looks_like_git_dir(h)
    (h / "commondir").rmdir()
    (h / "objects").mkdir()
    (h / "refs").rmdir()
    (h / "refs").write_text("not a directory")
    assert not looks_like_git_dir(h)


# -- an ordinary repository --------------------------------------------------------------


def test_a_repository_is_found_from_its_top_a_subdirectory_and_a_file(repo: GitRepo) -> None:
    top = repo.root.resolve()
    expected = RepoLocation(top, top / ".git", top / ".git")
    assert discover(repo.root, no_config) == expected
    assert discover(repo.root / "pkg", no_config) == expected
    assert discover(repo.root / "pkg" / "a.py", no_config) == expected
    assert expected.kind == "repository"


def test_a_path_outside_any_repository_has_no_location(tmp_path: Path) -> None:
    (tmp_path / "plain" / "dir").mkdir(parents=True)
    assert discover(tmp_path / "plain" / "dir", no_config) is None


def test_the_repository_config_is_not_read_for_a_plain_repository(repo: GitRepo) -> None:
    reader = config_of({"core.worktree": "/elsewhere"})
    location = discover(repo.root / "pkg", reader)
    assert location is not None and location.worktree == repo.root.resolve()
    assert reader.asked == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("where", [".git", ".git/refs", ".git/objects"])
def test_a_path_inside_the_git_directory_is_not_a_work_tree(repo: GitRepo, where: str) -> None:
    with pytest.raises(RepositoryError, match="is not inside a git working tree") as info:
        discover(repo.root / where, no_config)
    assert info.value.hint == "run Redline in the repository's working tree"


def test_a_bare_repository_is_not_a_work_tree(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], env=_ENV, check=True)
    assert looks_like_git_dir(bare)
    with pytest.raises(RepositoryError, match=r"bare repository or \.git directory"):
        discover(bare, no_config)
    with pytest.raises(RepositoryError, match="bare repository"):
        discover(bare / "refs", no_config)


def test_a_directory_named_dot_git_that_is_no_git_directory_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / ".git").mkdir(parents=True)
    with pytest.raises(
        RepositoryError, match=r"is not a git directory \(no HEAD, objects or refs\)"
    ):
        discover(tree, no_config)


def test_a_plain_directory_named_dot_git_in_the_path_is_passed_over(tmp_path: Path) -> None:
    """Only a .git that looks like a git directory makes the path "inside a git directory"."""
    inner = tmp_path / "box" / ".git" / "inner"
    inner.mkdir(parents=True)
    # The walk finds box/.git (a directory) first: refused as no git directory, not as inside.
    with pytest.raises(RepositoryError, match="is not a git directory"):
        discover(inner, no_config)


def test_a_dot_git_that_is_neither_file_nor_directory_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    os.mkfifo(tree / ".git")
    with pytest.raises(RepositoryError, match="is neither a directory nor a file"):
        discover(tree, no_config)


# -- a .git symbolic link ----------------------------------------------------------------


def test_a_dot_git_link_inside_the_work_tree_is_followed(tmp_path: Path, repo: GitRepo) -> None:
    root = repo.root.resolve()
    (root / ".git").rename(root / "store")
    (root / ".git").symlink_to("store")
    location = discover(root / "pkg", no_config)
    assert location == RepoLocation(root, root / "store", root / "store")


def test_a_dot_git_link_leaving_the_work_tree_is_refused(tmp_path: Path, repo: GitRepo) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").symlink_to(repo.root / ".git")
    with pytest.raises(
        RepositoryError, match=r"is a symbolic link to .*, outside the working tree"
    ):
        discover(tree, no_config)


def test_a_dot_git_link_to_a_file_is_read_as_a_git_file(tmp_path: Path, repo: GitRepo) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "gitfile").write_text("no gitdir here\n")
    (tree / ".git").symlink_to("gitfile")
    with pytest.raises(RepositoryError, match=r"is not a valid \.git file"):
        discover(tree, no_config)


# -- a linked worktree ---------------------------------------------------------------------


@pytest.fixture
def worktree(tmp_path: Path, repo: GitRepo) -> Path:
    wt = tmp_path / "wt"
    repo.git("worktree", "add", "-q", str(wt), "-b", "wt")
    return wt.resolve()


def test_a_linked_worktree_is_found_with_its_own_and_the_common_git_dir(
    worktree: Path, repo: GitRepo
) -> None:
    common = repo.root.resolve() / ".git"
    location = discover(worktree, no_config)
    assert location == RepoLocation(worktree, common / "worktrees" / "wt", common)
    assert location.kind == "linked worktree"


def test_a_worktree_whose_back_pointer_names_another_git_file_is_refused(
    worktree: Path, repo: GitRepo
) -> None:
    back = repo.root / ".git" / "worktrees" / "wt" / "gitdir"
    back.write_text(str(repo.root / "elsewhere" / ".git") + "\n")
    with pytest.raises(RepositoryError, match="cannot verify") as info:
        discover(worktree, no_config)
    assert "points back at" in (info.value.hint or "")


def test_a_worktree_without_a_back_pointer_is_refused(worktree: Path, repo: GitRepo) -> None:
    (repo.root / ".git" / "worktrees" / "wt" / "gitdir").unlink()
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(worktree, no_config)


def test_a_worktree_git_dir_outside_common_worktrees_is_refused(
    tmp_path: Path, worktree: Path, repo: GitRepo
) -> None:
    """commondir may name any repository; the git dir must be <common>/worktrees/<name>."""
    planted = tmp_path / "planted" / "wt"
    planted.mkdir(parents=True)
    (planted / "HEAD").write_text("ref: refs/heads/wt\n")
    (planted / "commondir").write_text(str(repo.root.resolve() / ".git") + "\n")
    (planted / "gitdir").write_text(str(worktree / ".git") + "\n")
    (worktree / ".git").write_text(f"gitdir: {planted}\n")
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(worktree, no_config)


def test_a_worktree_whose_common_dir_is_no_repository_is_refused(
    tmp_path: Path, worktree: Path, repo: GitRepo
) -> None:
    fake_common = tmp_path / "fake-common"
    (fake_common / "worktrees").mkdir(parents=True)
    git_dir = fake_git_dir(fake_common / "worktrees" / "wt", objects=False, commondir=True)
    (git_dir / "gitdir").write_text(str(worktree / ".git") + "\n")
    (worktree / ".git").write_text(f"gitdir: {git_dir}\n")
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(worktree, no_config)


def test_a_worktrees_own_git_dir_used_as_dot_git_is_refused(tmp_path: Path) -> None:
    """A .git directory with a commondir file is a linked worktree's git dir, not a repository."""
    tree = tmp_path / "tree"
    (tree / "inside").mkdir(parents=True)
    fake_git_dir(tree / ".git", objects=False, commondir=True)
    with pytest.raises(RepositoryError, match="linked worktree's git directory") as info:
        discover(tree / "inside", no_config)
    assert info.value.hint == "open the worktree itself (the directory its .git file is in)"


# -- a submodule ---------------------------------------------------------------------------


@pytest.fixture
def submodule(tmp_path: Path, repo: GitRepo) -> Path:
    sub = GitRepo(tmp_path / "subsrc")
    sub.write("s.txt", "s\n")
    sub.commit("s")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.root), "mod")
    return (repo.root / "mod").resolve()


def test_a_submodule_is_found_through_its_core_worktree_back_pointer(
    submodule: Path, repo: GitRepo
) -> None:
    git_dir = repo.root.resolve() / ".git" / "modules" / "mod"
    reader = config_of({"core.worktree": "../../../mod"})
    location = discover(submodule, reader)
    assert location == RepoLocation(submodule, git_dir, git_dir)
    assert location.kind == "submodule"
    asked = [((git_dir / "config").read_bytes(), "core.worktree")]
    assert reader.asked == asked  # type: ignore[attr-defined]


def test_a_submodule_whose_core_worktree_names_another_tree_is_refused(submodule: Path) -> None:
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(submodule, config_of({"core.worktree": "../../../elsewhere"}))


def test_a_submodule_without_core_worktree_is_refused(submodule: Path) -> None:
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(submodule, no_config)


def test_a_git_file_to_a_repository_outside_any_modules_directory_is_refused(
    tmp_path: Path, repo: GitRepo
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {repo.root / '.git'}\n")
    reader = config_of({"core.worktree": str(tree)})
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(tree, reader)
    assert reader.asked == []  # type: ignore[attr-defined]


def test_a_directory_named_modules_must_be_above_the_git_dir(tmp_path: Path) -> None:
    """`.../modules` itself (the git dir named "modules") is not a submodule's directory."""
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = fake_git_dir(tmp_path / "store" / "modules")
    (tree / ".git").write_text(f"gitdir: {git_dir}\n")
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(tree, config_of({"core.worktree": str(tree)}))


def test_a_modules_directory_that_is_no_git_directory_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = fake_git_dir(tmp_path / "store" / "modules" / "m", objects=False)
    (tree / ".git").write_text(f"gitdir: {git_dir}\n")
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(tree, config_of({"core.worktree": str(tree)}))


def test_a_relative_gitdir_is_read_from_the_work_tree(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = module_dir(tmp_path)
    (tree / ".git").write_text("gitdir: ../store/modules/m\r\nsecond line\n")
    location = discover(tree, config_of({"core.worktree": "../../../tree"}))
    assert location == RepoLocation(tree.resolve(), git_dir.resolve(), git_dir.resolve())


# -- the .git file itself ----------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"", b"gitdir:\n", b"gitdir: \n", b"GITDIR: x\n", b"gitdir:x\n", b"gitdir: a\0b\n"],
)
def test_a_git_file_without_a_gitdir_line_is_refused(tmp_path: Path, content: bytes) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").write_bytes(content)
    with pytest.raises(RepositoryError, match=r"is not a valid \.git file \(no 'gitdir:' line\)"):
        discover(tree, no_config)


def test_an_oversized_git_file_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = module_dir(tmp_path)
    line = f"gitdir: {git_dir}\n".encode()
    (tree / ".git").write_bytes(line + b"#" * (4097 - len(line)))
    with pytest.raises(RepositoryError, match=r"not a valid \.git file"):
        discover(tree, config_of({"core.worktree": str(tree)}))
    (tree / ".git").write_bytes(line + b"#" * (4096 - len(line)))
    assert discover(tree, config_of({"core.worktree": str(tree)})) is not None


def test_a_git_file_naming_a_missing_directory_or_one_without_head_is_refused(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {tmp_path / 'nowhere' / 'modules' / 'm'}\n")
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(tree, config_of({"core.worktree": str(tree)}))
    headless = fake_git_dir(tmp_path / "store" / "modules" / "m")
    (headless / "HEAD").unlink()
    (headless / "HEAD").mkdir()
    (tree / ".git").write_text(f"gitdir: {headless}\n")
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(tree, config_of({"core.worktree": str(tree)}))


def test_a_commondir_that_is_a_fifo_is_not_read(tmp_path: Path) -> None:
    """A FIFO as commondir would block a reader: it is skipped, and the submodule rules apply."""
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = module_dir(tmp_path)
    os.mkfifo(git_dir / "commondir")
    (tree / ".git").write_text(f"gitdir: {git_dir}\n")
    location = discover(tree, config_of({"core.worktree": str(tree)}))
    assert location == RepoLocation(tree.resolve(), git_dir.resolve(), git_dir.resolve())


# -- messages, limits and the walk's edges ---------------------------------------------------


def test_an_unverifiable_git_file_is_refused_with_the_whole_reason_and_how_to_fix_it(
    tmp_path: Path, repo: GitRepo
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {repo.root / '.git'}\n")
    with pytest.raises(RepositoryError) as info:
        discover(tree, no_config)
    real = tree.resolve() / ".git"
    assert info.value.message == (
        f"{real} points to {repo.root.resolve() / '.git'}, which Redline cannot verify as this "
        "work tree's linked worktree or submodule"
    )
    assert info.value.hint == (
        "a .git file is accepted only when the git directory it names points back at this work "
        "tree (`git worktree add` and `git submodule` set that up)"
    )


def test_a_dot_git_link_out_of_the_tree_says_how_redline_reviews(
    tmp_path: Path, repo: GitRepo
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").symlink_to(repo.root / ".git")
    with pytest.raises(RepositoryError) as info:
        discover(tree, no_config)
    assert info.value.hint == "Redline reviews a repository only through its own .git directory"


def test_a_worktree_git_dir_without_head_is_refused(worktree: Path, repo: GitRepo) -> None:
    (repo.root / ".git" / "worktrees" / "wt" / "HEAD").unlink()
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(worktree, no_config)


def test_a_path_inside_a_linked_in_git_directory_is_not_a_work_tree(repo: GitRepo) -> None:
    root = repo.root.resolve()
    (root / ".git").rename(root / "store")
    (root / ".git").symlink_to("store")
    with pytest.raises(RepositoryError, match="is not inside a git working tree"):
        discover(root / "store" / "refs", no_config)


def test_inside_a_dot_git_directory_is_said_so_before_its_parent_is_judged(
    tmp_path: Path,
) -> None:
    """A worktree's git dir copied in as .git: a path inside it is "not a work tree", not the
    parent's "linked worktree's git directory used as a repository"."""
    tree = tmp_path / "tree"
    fake_git_dir(tree / ".git", objects=False, commondir=True)
    with pytest.raises(RepositoryError, match="is not inside a git working tree"):
        discover(tree / ".git" / "refs", no_config)


def test_a_dot_git_that_cannot_be_looked_at_is_a_clear_error(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_lstat = os.lstat

    def lstat(path: os.PathLike[str] | str, *args: object, **kwargs: object) -> os.stat_result:
        if Path(path).name == ".git":
            raise PermissionError(13, "Permission denied", str(path))
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", lstat)
    with pytest.raises(RepositoryError) as info:
        discover(repo.root, no_config)
    assert info.value.message == f"cannot read {repo.root.resolve() / '.git'}: Permission denied"


def test_a_gitdir_line_keeps_its_trailing_spaces_as_git_does(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = module_dir(tmp_path)
    (tree / ".git").write_text(f"gitdir: {git_dir} \n")
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(tree, config_of({"core.worktree": str(tree)}))


def test_only_a_carriage_return_is_taken_off_the_gitdir_line(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = module_dir(tmp_path, "subX")
    (tree / ".git").write_text(f"gitdir: {git_dir}\r\n")
    location = discover(tree, config_of({"core.worktree": str(tree)}))
    assert location is not None and location.git_dir == git_dir.resolve()


def test_a_git_file_is_read_no_further_than_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").write_bytes(b"gitdir: x\n" + b"#" * 100_000)
    asked: list[int | None] = []
    real_fdopen = os.fdopen

    class Recording:
        def __init__(self, fh: object) -> None:
            self._fh = fh

        def __enter__(self) -> Recording:
            return self

        def __exit__(self, *exc: object) -> None:
            self._fh.close()  # type: ignore[attr-defined]

        def fileno(self) -> int:
            return self._fh.fileno()  # type: ignore[attr-defined, no-any-return]

        def read(self, size: int | None = -1) -> bytes:
            asked.append(size)
            return self._fh.read(size)  # type: ignore[attr-defined, no-any-return]

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: Recording(real_fdopen(fd, *a, **k)))
    with pytest.raises(RepositoryError, match="not a valid"):
        discover(tree, no_config)
    assert asked and all(isinstance(n, int) and 0 < n <= 4097 for n in asked)


# -- git directories built inside the tree, and the genuine shapes (issue 23) -----------------


def test_a_git_file_naming_a_directory_inside_the_tree_is_refused_as_built_inside(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    git_dir = fake_git_dir(fake_git_dir(tree / ".shadow") / "modules" / "m")
    (tree / ".git").write_text("gitdir: .shadow/modules/m\n")
    reader = config_of({"core.worktree": "../../.."})
    with pytest.raises(RepositoryError) as info:
        discover(tree, reader)
    assert info.value.message == (
        f"{tree.resolve() / '.git'} points to {git_dir.resolve()}, a git directory inside the "
        "working tree"
    )
    assert info.value.hint == (
        "a linked worktree's or submodule's git directory lives in its main repository's or "
        "superproject's .git, outside the tree it serves; one inside was built by the tree's "
        "author, so Redline does not read it"
    )
    assert reader.asked == []  # type: ignore[attr-defined]


def test_the_work_tree_itself_as_git_directory_is_built_inside(tmp_path: Path) -> None:
    tree = fake_git_dir(tmp_path / "tree")
    (tree / ".git").write_text("gitdir: .\n")
    with pytest.raises(RepositoryError, match="inside the working tree"):
        discover(tree, config_of({"core.worktree": "."}))


def test_a_worktree_whose_common_dir_is_inside_the_tree_is_refused(
    tmp_path: Path, worktree: Path, repo: GitRepo
) -> None:
    """The worktree's own directory outside, its common directory inside: still built."""
    common = fake_git_dir(worktree / "inner")
    planted = fake_git_dir(tmp_path / "out" / "wt", objects=False)
    (planted / "commondir").write_text(f"{common}\n")
    (planted / "gitdir").write_text(str(worktree / ".git") + "\n")
    (worktree / ".git").write_text(f"gitdir: {planted}\n")
    with pytest.raises(RepositoryError) as info:
        discover(worktree, no_config)
    assert info.value.message == (
        f"{worktree / '.git'} points to {common}, a git directory inside the working tree"
    )


def test_a_worktree_added_inside_the_main_tree_is_genuine(repo: GitRepo) -> None:
    repo.git("worktree", "add", "-q", str(repo.root / "wt"), "-b", "inner")
    top = repo.root.resolve()
    location = discover(repo.root / "wt", no_config)
    assert location == RepoLocation(top / "wt", top / ".git" / "worktrees" / "wt", top / ".git")


def test_a_worktree_git_dir_deeper_than_worktrees_name_is_refused(
    tmp_path: Path, worktree: Path, repo: GitRepo
) -> None:
    common = repo.root.resolve() / ".git"
    deeper = fake_git_dir(common / "worktrees" / "wt" / "deeper", objects=False)
    (deeper / "commondir").write_text("../../..\n")
    (deeper / "gitdir").write_text(str(worktree / ".git") + "\n")
    (worktree / ".git").write_text(f"gitdir: {deeper}\n")
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(worktree, no_config)


@pytest.mark.parametrize("name", ["libs/m", "modules/m", "a/b/c"])
def test_a_submodule_name_may_hold_slashes(tmp_path: Path, name: str) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = fake_git_dir(fake_git_dir(tmp_path / "store") / "modules" / name)
    (tree / ".git").write_text(f"gitdir: {git_dir}\n")
    location = discover(tree, config_of({"core.worktree": str(tree)}))
    assert location == RepoLocation(tree.resolve(), git_dir.resolve(), git_dir.resolve())


def test_a_nested_submodule_has_a_submodule_as_its_superproject(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    middle = fake_git_dir(fake_git_dir(tmp_path / "store") / "modules" / "mid")
    git_dir = fake_git_dir(middle / "modules" / "leaf")
    (tree / ".git").write_text(f"gitdir: {git_dir}\n")
    assert discover(tree, config_of({"core.worktree": str(tree)})) is not None


def test_a_modules_directory_of_no_git_directory_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = fake_git_dir(tmp_path / "stash" / "modules" / "m")  # stash: no git directory
    (tree / ".git").write_text(f"gitdir: {git_dir}\n")
    reader = config_of({"core.worktree": str(tree)})
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(tree, reader)
    assert reader.asked == []  # type: ignore[attr-defined]


def test_a_submodule_config_that_is_a_link_is_not_read(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = module_dir(tmp_path)
    (tmp_path / "elsewhere.cfg").write_text("[core]\n\tworktree = x\n")
    (git_dir / "config").unlink()
    (git_dir / "config").symlink_to(tmp_path / "elsewhere.cfg")
    (tree / ".git").write_text(f"gitdir: {git_dir}\n")
    reader = config_of({"core.worktree": str(tree)})
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(tree, reader)
    assert reader.asked == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("part", ["commondir", "gitdir"])
def test_a_worktree_pointer_that_is_a_link_is_not_read(
    tmp_path: Path, worktree: Path, repo: GitRepo, part: str
) -> None:
    pointer = repo.root / ".git" / "worktrees" / "wt" / part
    copy = tmp_path / f"{part}.copy"
    copy.write_bytes(pointer.read_bytes())
    pointer.unlink()
    pointer.symlink_to(copy)
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(worktree, no_config)


def test_a_submodule_config_may_be_longer_than_a_git_file(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = module_dir(tmp_path)
    (git_dir / "config").write_text("[core]\n" + "# padding\n" * 1000)  # 10 kB
    (tree / ".git").write_text(f"gitdir: {git_dir}\n")
    assert discover(tree, config_of({"core.worktree": str(tree)})) is not None


def test_a_git_dir_inside_another_that_is_no_modules_directory_is_refused(
    tmp_path: Path,
) -> None:
    """Only a `modules` directory's parent counts as the superproject, not any git directory
    above."""
    tree = tmp_path / "tree"
    tree.mkdir()
    git_dir = fake_git_dir(fake_git_dir(tmp_path / "store") / "sub" / "m")
    (tree / ".git").write_text(f"gitdir: {git_dir}\n")
    with pytest.raises(RepositoryError, match="cannot verify"):
        discover(tree, config_of({"core.worktree": str(tree)}))


def test_a_head_link_that_leads_nowhere_is_no_git_directory(tmp_path: Path) -> None:
    """A link is not what a FIFO is: a dangling HEAD link means no HEAD."""
    tree = tmp_path / "tree"
    git_dir = fake_git_dir(tree / ".git")
    (git_dir / "HEAD").unlink()
    (git_dir / "HEAD").symlink_to("nowhere")
    with pytest.raises(RepositoryError) as info:
        discover(tree, no_config)
    assert info.value.message == (
        f"{git_dir.resolve()} is not a git directory (no HEAD, objects or refs)"
    )


def test_a_head_that_is_a_fifo_is_named_as_one(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    git_dir = fake_git_dir(tree / ".git")
    (git_dir / "HEAD").unlink()
    os.mkfifo(git_dir / "HEAD")
    with pytest.raises(RepositoryError) as info:
        discover(tree, no_config)
    assert (
        info.value.message
        == f"refusing {git_dir.resolve() / 'HEAD'}: it is a FIFO (named pipe), not a regular file"
    )
    assert info.value.hint == "a git directory holds only regular files and directories"
