"""Scopes on awkward repositories and hostile input: each case fails with a specific message."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from redline.errors import RepositoryError, UsageError
from redline.git import FileTooLargeError, GitRunner, ScopeDiff, ScopeRequest, resolve_scope

from gitrepo import GitRepo


def scope(repo: GitRepo | Path, kind: str, arg: str | None = None, **kw: int) -> ScopeDiff:
    root = repo.root if isinstance(repo, GitRepo) else repo
    runner = GitRunner(gh_path="/nonexistent/gh")
    return resolve_scope(root, ScopeRequest(kind, arg), runner=runner, **kw)


@pytest.fixture
def committed(repo: GitRepo) -> GitRepo:
    repo.write("a.txt", "one\ntwo\n")
    repo.commit("init")
    return repo


# -- repository state ---------------------------------------------------------------------


def test_not_a_git_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(RepositoryError, match=r"plain is not a git repository"):
        scope(plain, "uncommitted")


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(RepositoryError, match=r"does not exist"):
        scope(tmp_path / "nope", "uncommitted")


def test_git_dir_in_environment_is_not_followed(
    tmp_path: Path, committed: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("GIT_DIR", str(committed.root / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(committed.root))
    with pytest.raises(RepositoryError, match=r"is not a git repository"):
        scope(plain, "uncommitted")


def test_empty_repository_is_empty_not_an_error(repo: GitRepo) -> None:
    for kind in ("uncommitted", "staged"):
        diff = scope(repo, kind)
        assert diff.diff_text == "" and diff.is_empty
        assert diff.stats.files == 0
        assert diff.label == f"{kind} changes on main (no commits yet) — no changes"


def test_unborn_head_uncommitted_is_vs_empty_tree(repo: GitRepo) -> None:
    repo.write("first.py", "x = 1\n")
    repo.write("staged.py", "y = 2\n")
    repo.git("add", "staged.py")

    diff = scope(repo, "uncommitted")

    assert diff.old_rev is None
    assert "+++ b/first.py\n@@ -0,0 +1 @@\n+x = 1\n" in diff.diff_text
    assert "+++ b/staged.py\n@@ -0,0 +1 @@\n+y = 2\n" in diff.diff_text
    assert diff.read_old("first.py") is None
    assert diff.read_new("first.py") == b"x = 1\n"
    staged = scope(repo, "staged")
    assert "staged.py" in staged.diff_text and "first.py" not in staged.diff_text
    assert staged.read_new("staged.py") == b"y = 2\n"


def test_unborn_head_in_a_sha256_repository(tmp_path: Path) -> None:
    root = tmp_path / "sha256"
    root.mkdir()
    GitRepo(tmp_path / "seed").git("init", "-q", "--object-format=sha256", "-b", "main", str(root))
    (root / "f.txt").write_text("hello\n")

    diff = scope(root, "uncommitted")

    assert "+++ b/f.txt\n@@ -0,0 +1 @@\n+hello\n" in diff.diff_text
    assert diff.read_new("f.txt") == b"hello\n"


def test_unborn_head_branch_is_a_clear_error(repo: GitRepo) -> None:
    repo.write("first.py", "x = 1\n")
    with pytest.raises(RepositoryError, match=r"main \(no commits yet\): there are no commits"):
        scope(repo, "branch", "main")
    with pytest.raises(RepositoryError, match=r"no commits"):
        scope(repo, "since", "HEAD")


def test_nothing_to_review(committed: GitRepo) -> None:
    diff = scope(committed, "uncommitted")
    assert diff.diff_text == ""
    assert diff.label == "uncommitted changes on main — no changes"
    assert scope(committed, "branch", "main").diff_text == ""


def test_detached_head(committed: GitRepo) -> None:
    committed.checkout("-b", "side")
    committed.write("a.txt", "one\nTWO\n")
    head = committed.commit("edit")
    committed.checkout("--detach", "HEAD")

    branch = scope(committed, "branch", "main")
    assert branch.label.startswith(f"branch detached HEAD at {head[:7]} vs main ")
    assert "+TWO" in branch.diff_text
    assert "+TWO" in scope(committed, "commit", "HEAD").diff_text
    assert "+TWO" in scope(committed, "since", "main").diff_text
    assert "+TWO" in scope(committed, "range", "main..HEAD").diff_text
    committed.write("a.txt", "changed\n")
    assert scope(committed, "uncommitted").label.startswith(
        f"uncommitted changes on detached HEAD at {head[:7]} —"
    )


def test_unknown_base_branch_lists_branches(committed: GitRepo) -> None:
    committed.git("branch", "develop")
    with pytest.raises(RepositoryError) as info:
        scope(committed, "branch", "nope")
    assert info.value.message == "base branch 'nope' does not exist"
    assert info.value.hint == "available branches: develop, main"


def test_no_default_base(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r", branch="trunk")
    repo.write("a", "1\n")
    repo.commit()
    with pytest.raises(RepositoryError, match=r"cannot find a base branch") as info:
        scope(repo, "branch")
    assert info.value.hint is not None and "trunk" in info.value.hint


def test_unknown_revision(committed: GitRepo) -> None:
    with pytest.raises(RepositoryError, match=r"unknown revision 'nope'"):
        scope(committed, "commit", "nope")
    with pytest.raises(RepositoryError, match=r"unknown revision 'nope'"):
        scope(committed, "range", "HEAD..nope")


@pytest.mark.parametrize(
    ("kind", "arg"),
    [
        ("commit", "--output={out}"),
        ("commit", "-p"),
        ("commit", "HEAD --output=x"),
        ("commit", "HEAD:a.txt"),
        ("commit", "HEAD\n"),
        ("since", "--all"),
        ("branch", "--output={out}"),
        ("range", "--output={out}..HEAD"),
        ("range", "HEAD..--output={out}"),
        ("range", "HEAD"),
    ],
)
def test_malicious_revisions_are_rejected(
    committed: GitRepo, tmp_path: Path, kind: str, arg: str
) -> None:
    out = tmp_path / "written-by-git"
    before = set(os.listdir(committed.root))
    with pytest.raises(UsageError, match=r"invalid (revision|range)"):
        scope(committed, kind, arg.format(out=out))
    assert set(os.listdir(committed.root)) == before
    assert not out.exists()


def test_unknown_scope_and_missing_arguments(committed: GitRepo) -> None:
    with pytest.raises(UsageError, match=r"unknown scope 'everything'"):
        scope(committed, "everything")
    with pytest.raises(UsageError, match=r"the commit scope needs a revision"):
        scope(committed, "commit")
    with pytest.raises(UsageError, match=r"the staged scope takes no argument"):
        scope(committed, "staged", "HEAD")


# -- awkward content ----------------------------------------------------------------------


def test_binary_files(committed: GitRepo) -> None:
    blob = bytes(range(256)) * 4
    committed.write("img.bin", blob)
    committed.commit("add binary")
    committed.write("img.bin", blob[::-1])
    committed.write("untracked.bin", b"\x00\x01\x02binary")

    diff = scope(committed, "uncommitted")

    assert "Binary files a/img.bin and b/img.bin differ" in diff.diff_text
    assert "Binary files /dev/null and b/untracked.bin differ" in diff.diff_text
    assert diff.stats.files == 2 and diff.stats.added == 0
    assert diff.read_new("img.bin") == blob[::-1]
    assert diff.read_old("img.bin") == blob
    commit = scope(committed, "commit", "HEAD")
    assert "Binary files /dev/null and b/img.bin differ" in commit.diff_text
    assert commit.read_new("img.bin") == blob


def test_latin1_and_crlf_content(committed: GitRepo) -> None:
    committed.write("latin.txt", "café\n".encode("latin-1"))
    committed.write("dos.txt", b"line one\r\nline two\r\n")
    committed.commit("encodings")

    diff = scope(committed, "commit", "HEAD")

    assert "+caf\ufffd\n" in diff.diff_text  # decoded with errors="replace"
    assert "+line one\r\n+line two\r\n" in diff.diff_text
    assert diff.read_new("latin.txt") == b"caf\xe9\n"
    assert diff.read_new("dos.txt") == b"line one\r\nline two\r\n"


def test_rename_and_deletion(committed: GitRepo) -> None:
    body = "".join(f"line {i}\n" for i in range(20))
    committed.write("old_name.py", body)
    committed.write("doomed.txt", "last words\n")
    committed.commit("files")
    committed.git("mv", "old_name.py", "new_name.py")
    committed.write("new_name.py", body + "line 20\n")
    committed.git("rm", "-q", "doomed.txt")
    committed.commit("rename and delete")

    diff = scope(committed, "commit", "HEAD")

    assert "rename from old_name.py\nrename to new_name.py\n" in diff.diff_text
    assert "diff --git a/doomed.txt b/doomed.txt\ndeleted file mode 100644\n" in diff.diff_text
    assert diff.stats.files == 2
    assert diff.read_old("old_name.py") == body.encode()
    assert diff.read_new("new_name.py") == (body + "line 20\n").encode()
    assert diff.read_new("old_name.py") is None
    assert diff.read_new("doomed.txt") is None
    assert diff.read_old("doomed.txt") == b"last words\n"


def test_submodule_change(tmp_path: Path, committed: GitRepo) -> None:
    sub = GitRepo(tmp_path / "sub")
    sub.write("lib.txt", "v1\n")
    sub.commit("sub v1")
    committed.git(
        "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.root), "sub"
    )
    committed.commit("add submodule")
    old = committed.git("rev-parse", "HEAD:sub").strip()
    inner = GitRepo.__new__(GitRepo)
    inner.root = committed.root / "sub"
    inner.write("lib.txt", "v2\n")
    new = inner.commit("sub v2")
    committed.git("add", "sub")

    staged = scope(committed, "staged")
    assert f"-Subproject commit {old}\n+Subproject commit {new}\n" in staged.diff_text
    assert staged.read_new("sub") is None
    uncommitted = scope(committed, "uncommitted")
    assert f"+Subproject commit {new}" in uncommitted.diff_text
    assert uncommitted.read_new("sub") is None
    committed.commit("bump submodule")
    commit = scope(committed, "commit", "HEAD")
    assert f"+Subproject commit {new}" in commit.diff_text
    assert commit.read_new("sub") is None


def test_file_over_the_size_limit(committed: GitRepo) -> None:
    committed.write("big.txt", "x" * 100 + "\n")
    committed.write("small.txt", "ok\n")

    diff = scope(committed, "uncommitted", max_file_bytes=50)

    assert diff.read_new("small.txt") == b"ok\n"
    with pytest.raises(
        FileTooLargeError, match=r"big.txt is 101 bytes, over the 50-byte read limit"
    ):
        diff.read_new("big.txt")
    committed.commit("big")
    commit = scope(committed, "commit", "HEAD", max_file_bytes=50)
    with pytest.raises(FileTooLargeError, match=r"over the 50-byte read limit"):
        commit.read_new("big.txt")


def test_file_names_with_spaces_quotes_and_newlines(committed: GitRepo) -> None:
    names = [
        "with space.txt",
        'quo"te.txt',
        "new\nline.txt",
        "tab\there.txt",
        "ünï.txt",
        "-rf.txt",
        "*.txt",
    ]
    for i, name in enumerate(names):
        committed.write(name, f"content {i}\n")

    for diff in (scope(committed, "uncommitted"), _committed_scope(committed)):
        assert "diff --git a/with space.txt b/with space.txt" in diff.diff_text
        assert '"b/quo\\"te.txt"' in diff.diff_text
        assert '"b/new\\nline.txt"' in diff.diff_text
        assert '"b/tab\\there.txt"' in diff.diff_text
        assert "b/ünï.txt" in diff.diff_text  # core.quotePath=false: no octal escapes
        assert "diff --git a/-rf.txt b/-rf.txt" in diff.diff_text
        assert "diff --git a/*.txt b/*.txt" in diff.diff_text
        assert diff.stats.files == len(names)
        for i, name in enumerate(names):
            assert diff.read_new(name) == f"content {i}\n".encode()


def _committed_scope(repo: GitRepo) -> ScopeDiff:
    repo.commit("odd names")
    return scope(repo, "commit", "HEAD")


# -- reads that would leave the repository ------------------------------------------------


def test_worktree_reads_refuse_escapes(committed: GitRepo, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    os.symlink(secret, committed.root / "link.txt")
    (committed.root / "outside").symlink_to(tmp_path)
    os.mkfifo(committed.root / "pipe")
    committed.write("a.txt", "changed\n")

    diff = scope(committed, "uncommitted")

    # A symlink reads as its link text, the way git stores it; it is never followed.
    assert diff.read_new("link.txt") == os.fsencode(secret)
    assert "+" + str(secret) in diff.diff_text
    for bad in ("../secret.txt", "/etc/passwd", "a/../../x", "", "a//b", "./a.txt"):
        with pytest.raises(RepositoryError, match=r"invalid repository path"):
            diff.read_new(bad)
    with pytest.raises(RepositoryError, match=r"'outside' is a symbolic link"):
        diff.read_new("outside/secret.txt")
    with pytest.raises(RepositoryError, match=r"not a regular file"):
        diff.read_new("pipe")
    for git_path in (".git/config", ".GIT/config", "sub/.git./HEAD"):
        with pytest.raises(RepositoryError, match=r"refusing to read inside \.git"):
            diff.read_new(git_path)
    assert "pipe" not in diff.diff_text  # FIFOs are never listed as untracked files
