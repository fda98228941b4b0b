"""Each review scope on small real repositories: exact diffs, file versions and labels."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from redline.git import (
    INDEX_REV,
    FileTooLargeError,
    GitRunner,
    ScopeDiff,
    ScopeRequest,
    resolve_scope,
)
from redline.git.difftext import DIFF_OPTIONS, parse_numstat, stats_from_diff
from redline.model import DiffStats

from gitrepo import GitRepo

A_V1 = "def greet(name):\n    return 'hi ' + name\n"
A_V2 = "def greet(name):\n    return f'hello {name}'\n"


def scope(repo: GitRepo, kind: str, arg: str | None = None) -> ScopeDiff:
    return resolve_scope(
        repo.root, ScopeRequest(kind, arg), runner=GitRunner(gh_path="/nonexistent/gh")
    )


def files_in(diff: ScopeDiff) -> list[str]:
    return [
        line.split(" b/", 1)[1]
        for line in diff.diff_text.splitlines()
        if line.startswith("diff --git ")
    ]


@pytest.fixture
def feature_repo(repo: GitRepo) -> GitRepo:
    """main: a.py v1 + keep.txt. feature: a.py v2 and new b.py (two commits)."""
    repo.write("a.py", A_V1)
    repo.write("keep.txt", "keep\n")
    repo.commit("init")
    repo.checkout("-b", "feature/x")
    repo.write("a.py", A_V2)
    repo.commit("change greeting")
    repo.write("b.py", "print('b')\n")
    repo.commit("add b")
    return repo


def test_uncommitted_includes_staged_unstaged_and_untracked(repo: GitRepo) -> None:
    repo.write(".gitignore", "*.log\n")
    repo.write("a.py", A_V1)
    repo.write("gone.txt", "bye\n")
    repo.commit("init")
    repo.write("a.py", A_V2)  # unstaged
    repo.write("staged.txt", "staged\n")
    repo.git("add", "staged.txt")
    repo.write("new.txt", "brand new\n")  # untracked
    repo.write("debug.log", "ignored\n")  # ignored
    (repo.root / "gone.txt").unlink()
    index_before = (repo.root / ".git" / "index").read_bytes()

    diff = scope(repo, "uncommitted")

    assert files_in(diff) == ["a.py", "gone.txt", "new.txt", "staged.txt"]
    assert "-    return 'hi ' + name\n+    return f'hello {name}'\n" in diff.diff_text
    assert "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+brand new\n" in diff.diff_text
    assert "deleted file mode 100644" in diff.diff_text
    assert "debug.log" not in diff.diff_text
    assert (diff.stats.files, diff.stats.added, diff.stats.removed) == (4, 3, 2)
    assert diff.label == "uncommitted changes on main — 4 files, +3 −2"
    assert diff.old_rev == repo.head() and diff.new_rev is None
    assert diff.read_old("a.py") == A_V1.encode()
    assert diff.read_new("a.py") == A_V2.encode()
    assert diff.read_new("new.txt") == b"brand new\n"
    assert diff.read_old("new.txt") is None
    assert diff.read_new("gone.txt") is None
    # The user's index is untouched: new.txt is still untracked, nothing else got staged.
    assert (repo.root / ".git" / "index").read_bytes() == index_before
    assert repo.git("status", "--porcelain") == " M a.py\n D gone.txt\nA  staged.txt\n?? new.txt\n"


def test_staged_reads_index_versions(repo: GitRepo) -> None:
    repo.write("a.py", A_V1)
    repo.commit("init")
    repo.write("a.py", A_V2)
    repo.git("add", "a.py")
    repo.write("a.py", A_V2 + "# not staged\n")
    repo.write("untracked.txt", "x\n")

    diff = scope(repo, "staged")

    assert files_in(diff) == ["a.py"]
    assert "# not staged" not in diff.diff_text
    assert diff.new_rev == INDEX_REV
    assert diff.read_new("a.py") == A_V2.encode()
    assert diff.read_old("a.py") == A_V1.encode()
    assert diff.read_new("untracked.txt") is None
    assert diff.label == "staged changes on main — 1 file, +1 −1"


def test_branch_with_explicit_and_default_base(feature_repo: GitRepo) -> None:
    main = feature_repo.git("rev-parse", "main").strip()
    explicit = scope(feature_repo, "branch", "main")
    default = scope(feature_repo, "branch")

    for diff in (explicit, default):
        assert files_in(diff) == ["a.py", "b.py"]
        assert diff.old_rev == main and diff.new_rev == feature_repo.head()
        assert diff.label == f"branch feature/x vs main (merge-base {main[:7]}) — 2 files, +2 −1"
        assert diff.read_old("a.py") == A_V1.encode()
        assert diff.read_new("a.py") == A_V2.encode()
        assert diff.read_old("b.py") is None
        assert diff.read_new("b.py") == b"print('b')\n"


def test_branch_uses_merge_base_not_base_tip(feature_repo: GitRepo) -> None:
    fork = feature_repo.git("rev-parse", "main").strip()
    feature_repo.checkout("main")
    feature_repo.write("main_only.txt", "later on main\n")
    feature_repo.commit("main moves on")
    feature_repo.checkout("feature/x")

    diff = scope(feature_repo, "branch", "main")

    assert files_in(diff) == ["a.py", "b.py"]  # main_only.txt is not the branch's change
    assert diff.old_rev == fork


def test_default_base_prefers_origin_head(feature_repo: GitRepo) -> None:
    base = feature_repo.git("rev-parse", "HEAD~1").strip()
    feature_repo.git("update-ref", "refs/remotes/origin/trunk", base)
    feature_repo.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")

    diff = scope(feature_repo, "branch")

    assert files_in(diff) == ["b.py"]
    assert diff.label.startswith(f"branch feature/x vs origin/trunk (merge-base {base[:7]})")


def test_default_base_falls_back_to_master(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r", branch="master")
    repo.write("a.txt", "1\n")
    repo.commit("init")
    repo.checkout("-b", "topic")
    repo.write("a.txt", "2\n")
    repo.commit("change")

    diff = scope(repo, "branch")

    assert diff.label.startswith("branch topic vs master ")
    assert files_in(diff) == ["a.txt"]


def test_commit_scope_is_vs_first_parent(feature_repo: GitRepo) -> None:
    parent = feature_repo.git("rev-parse", "HEAD~2").strip()
    target = feature_repo.git("rev-parse", "HEAD~1").strip()

    diff = scope(feature_repo, "commit", "HEAD~1")

    assert files_in(diff) == ["a.py"]
    assert diff.old_rev == parent and diff.new_rev == target
    assert diff.label == f'commit {target[:7]} "change greeting" — 1 file, +1 −1'
    assert diff.read_new("b.py") is None  # b.py comes one commit later


def test_commit_scope_root_commit_is_vs_empty_tree(feature_repo: GitRepo) -> None:
    root = feature_repo.git("rev-list", "--max-parents=0", "HEAD").strip()

    diff = scope(feature_repo, "commit", root)

    assert diff.old_rev is None
    assert files_in(diff) == ["a.py", "keep.txt"]
    assert "new file mode 100644" in diff.diff_text
    assert diff.read_old("a.py") is None
    assert diff.read_new("a.py") == A_V1.encode()


def test_commit_scope_merge_commit_is_vs_first_parent(feature_repo: GitRepo) -> None:
    feature_repo.checkout("main")
    feature_repo.write("m.txt", "on main\n")
    first_parent = feature_repo.commit("main work")
    feature_repo.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature/x")
    merge = feature_repo.head()

    diff = scope(feature_repo, "commit", "HEAD")

    assert diff.old_rev == first_parent and diff.new_rev == merge
    assert files_in(diff) == ["a.py", "b.py"]
    assert (
        diff.label
        == f'commit {merge[:7]} "merge feature" (merge, vs first parent) — 2 files, +2 −1'
    )


def test_since_scope(feature_repo: GitRepo) -> None:
    main = feature_repo.git("rev-parse", "main").strip()

    diff = scope(feature_repo, "since", main)

    assert files_in(diff) == ["a.py", "b.py"]
    assert diff.old_rev == main and diff.new_rev == feature_repo.head()
    assert diff.label == f"since {main[:7]} (2 commits) — 2 files, +2 −1"
    assert scope(feature_repo, "since", "HEAD~1").label == "since HEAD~1 (1 commit) — 1 file, +1 −0"


def test_range_two_and_three_dots(feature_repo: GitRepo) -> None:
    feature_repo.checkout("main")
    feature_repo.write("main_only.txt", "later on main\n")
    feature_repo.commit("main moves on")

    two = scope(feature_repo, "range", "main..feature/x")
    three = scope(feature_repo, "range", "main...feature/x")

    # Two dots compare the tips: main's own later file shows up as deleted.
    assert files_in(two) == ["a.py", "b.py", "main_only.txt"]
    assert two.label == "range main..feature/x — 3 files, +2 −2"
    assert files_in(three) == ["a.py", "b.py"]
    fork = feature_repo.git("merge-base", "main", "feature/x").strip()
    assert three.old_rev == fork
    assert three.label == f"range main...feature/x (merge-base {fork[:7]}) — 2 files, +2 −1"
    assert three.read_new("a.py") == A_V2.encode()


def test_range_with_omitted_side_means_head(feature_repo: GitRepo) -> None:
    diff = scope(feature_repo, "range", "HEAD~1..")
    assert files_in(diff) == ["b.py"]
    assert diff.new_rev == feature_repo.head()


def test_labels_strip_control_characters_from_commit_subjects(repo: GitRepo) -> None:
    repo.write("a.txt", "1\n")
    repo.commit("evil\x1b[2J\x07 subject\u202e")

    diff = scope(repo, "commit", "HEAD")

    assert diff.label.startswith(f'commit {repo.head()[:7]} "evil[2J subject"')


def test_prefetch_reads_the_same_bytes_as_one_by_one_reads(repo: GitRepo) -> None:
    """Batch reads (one ls-tree + one cat-file --batch) must agree with single reads,
    including binary content, names with spaces, absent paths and oversized files."""
    repo.write("a.py", "print('a')\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("a.py", "print('changed')\n")
    repo.write("dir/with space.txt", "hello\n")
    repo.write("bin.dat", bytes(range(256)) * 4)
    repo.write("big.txt", "x" * 5000 + "\n")
    repo.commit("feature")
    scope = resolve_scope(repo.root, ScopeRequest("branch", "main"), max_file_bytes=4096)
    single = {
        p: scope._read_new_uncached(p) for p in ["a.py", "dir/with space.txt", "bin.dat", "gone.py"]
    }
    scope.prefetch_new(["a.py", "dir/with space.txt", "bin.dat", "gone.py", "big.txt"])
    assert {p: scope.read_new(p) for p in single} == single
    assert single["a.py"] == b"print('changed')\n"
    assert single["gone.py"] is None
    with pytest.raises(FileTooLargeError):
        scope.read_new("big.txt")


def _numstat(repo: GitRepo, *args: str, index_file: Path | None = None) -> DiffStats:
    out = GitRunner().git(
        repo.root, "diff", *DIFF_OPTIONS, "--numstat", "-z", *args, index_file=index_file
    )
    return parse_numstat(out)


def test_stats_counted_from_the_patch_equal_numstat(repo: GitRepo) -> None:
    """Repo.diff counts its totals from the patch text instead of running `git diff --numstat`
    as well; they must be the same numbers for every kind of file section."""
    sub_v1, sub_v2 = "1" * 40, "2" * 40
    repo.write("edit.py", "a = 1\nb = 2\n-- not a header\n++ nor this\n")
    repo.write("crlf.txt", "one\r\ntwo\r\nthree\r\n")
    repo.write("latin1.txt", "caf\xe9\n".encode("latin-1") * 3)
    repo.write("bin.dat", bytes(range(256)))
    repo.write("moved.py", "".join(f"line {i}\n" for i in range(30)))
    repo.write("moved_edit.py", "".join(f"row {i}\n" for i in range(30)))
    repo.write("gone.txt", "bye\nbye\n")
    repo.write("mode.sh", "echo hi\n")
    # Submodules as bare gitlinks (no work tree): `git add -A` must run before them, or it
    # would stage their missing directories as deletions.
    repo.git("add", "-A")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub_v1},sub")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub_v1},sub_gone")
    repo.commit("base", add_all=False)
    repo.checkout("-b", "feature")
    # Lines that look like diff headers once prefixed: "--- ...", "+++ ...", "diff --git".
    repo.write("edit.py", "a = 1\nb = 3\n--- still content\n+++ also content\ndiff --git x y\n")
    repo.write("crlf.txt", "one\r\n2\r\nthree\r\nfour\n")
    repo.write("latin1.txt", "caf\xe9!\n".encode("latin-1") * 2 + b"\xff\xfe\n")
    repo.write("bin.dat", bytes(range(255, -1, -1)))
    repo.write("new_bin.dat", b"\0\1\2" * 10)
    repo.write("empty.txt", "")
    repo.git("mv", "moved.py", "renamed.py")
    repo.git("mv", "moved_edit.py", "renamed_edit.py")
    repo.write("renamed_edit.py", "".join(f"row {i}\n" for i in range(29)) + "changed\n")
    (repo.root / "gone.txt").unlink()
    (repo.root / "mode.sh").chmod(0o755)
    repo.git("add", "-A")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub_v2},sub")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{'3' * 40},sub_new")
    repo.git("update-index", "--force-remove", "sub_gone")
    repo.commit("feature", add_all=False)
    repo.write("edit.py", "uncommitted\n")
    repo.write("untracked.bin", b"\0binary\0")
    repo.write("untracked.txt", "x\ny\n")

    branch = scope(repo, "branch", "main")
    assert "Binary files" in branch.diff_text and "rename from moved.py" in branch.diff_text
    assert "Subproject commit" in branch.diff_text and "old mode 100644" in branch.diff_text
    assert branch.stats == _numstat(repo, "main", "HEAD")
    assert branch.stats.files == 13
    assert stats_from_diff(branch.diff_text) == branch.stats

    uncommitted = scope(repo, "uncommitted")
    # edit.py, the two untracked files, and both gitlinks (no work tree: shown as deleted).
    assert uncommitted.stats.files == 5
    # numstat of the same private-index diff Repo.diff ran (untracked files as intent-to-add).
    repo.git("add", "--intent-to-add", "untracked.bin", "untracked.txt")
    assert uncommitted.stats == _numstat(repo, "HEAD")
    assert scope(repo, "commit", "HEAD").stats == branch.stats
    assert scope(repo, "staged").stats == _numstat(repo, "--cached", "HEAD")


def test_stats_from_diff_on_text_without_sections() -> None:
    assert stats_from_diff("") == DiffStats()
    # A hunk before any "diff --git" line (a bare unified diff) still counts its lines.
    assert stats_from_diff("@@ -1 +1 @@\n-a\n+b\n") == DiffStats(files=0, added=1, removed=1)
    text = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n--b\n+++c\n c\n"
    assert stats_from_diff(text) == DiffStats(files=1, added=1, removed=2)


def test_same_size_edit_in_the_same_second_as_the_commit_is_seen(repo: GitRepo) -> None:
    """ "Racy git": an edit that keeps the size and the stat data of the index entry is only
    visible to git because the index file is not newer than the entry. The uncommitted scope
    works on a copy of the index; the copy must keep the index's mtime, or the edit vanishes."""
    old = (1_600_000_000 * 10**9, 1_600_000_000 * 10**9)  # a fixed past instant
    path = repo.write("a.txt", "aaaa\n")
    os.utime(path, ns=old)
    repo.commit("base")  # the index entry records the old mtime
    repo.write("a.txt", "bbbb\n")  # same size, same inode
    os.utime(path, ns=old)  # same stat data as the entry
    os.utime(repo.root / ".git" / "index", ns=old)  # the index written in that same instant
    assert "+bbbb" in repo.git("diff")  # git itself sees it (racily clean → compares content)

    diff = resolve_scope(repo.root, ScopeRequest("uncommitted"))
    assert "-aaaa\n+bbbb" in diff.diff_text
