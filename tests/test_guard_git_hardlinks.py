"""The rule of git/hardlinks.py: a file with several names is read only when every name is inside
the work tree, found by walking the tree (never through a link, never inside .git). Asserted on
the answer for real hard links, so that inverting any part of the rule fails a test here
(`make mutation MODULES=server/redline/git/hardlinks.py`)."""

from __future__ import annotations

import os
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any

import pytest

from redline.git.hardlinks import all_names_inside, refusal


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "pkg" / "deep").mkdir(parents=True)
    (root / "a.txt").write_text("text\n")
    (root / "pkg" / "other.py").write_text("x = 1\n")  # a file that is not a name of a.txt
    return root


def test_a_file_with_one_name_is_answered_without_walking_the_tree(tmp_path: Path) -> None:
    """Ordinary files cost nothing: even a root that cannot be walked is not looked at."""
    single = tmp_path / "single.txt"
    single.write_text("x")
    assert all_names_inside(tmp_path / "no-such-root", os.stat(single))


def test_a_directory_or_a_link_is_not_a_file_to_check(tree: Path) -> None:
    assert os.stat(tree / "pkg").st_nlink > 1
    assert all_names_inside(tree / "no-such-root", os.stat(tree / "pkg"))
    (tree / "link").symlink_to("a.txt")
    os.link(tree / "a.txt", tree.parent / "outside.txt")
    assert all_names_inside(tree / "no-such-root", os.lstat(tree / "link"))


def test_every_name_inside_the_tree_is_read(tree: Path) -> None:
    os.link(tree / "a.txt", tree / "pkg" / "b.txt")
    os.link(tree / "a.txt", tree / "pkg" / "deep" / "c.txt")
    assert all_names_inside(tree, os.stat(tree / "a.txt"))


def test_a_name_outside_the_tree_is_refused(tree: Path) -> None:
    os.link(tree / "a.txt", tree.parent / "secret.txt")
    assert not all_names_inside(tree, os.stat(tree / "a.txt"))


def test_a_name_inside_the_git_directory_counts_as_outside_the_tree(tree: Path) -> None:
    """.git holds the repository's own files, not the tree's."""
    (tree / ".git").mkdir()
    os.link(tree / "a.txt", tree / ".git" / "planted")
    assert not all_names_inside(tree, os.stat(tree / "a.txt"))


def test_a_nested_dot_git_directory_is_not_walked_either(tree: Path) -> None:
    (tree / "pkg" / ".git").mkdir()
    os.link(tree / "a.txt", tree / "pkg" / ".git" / "x")
    assert not all_names_inside(tree, os.stat(tree / "a.txt"))


def test_names_reached_through_a_linked_directory_are_outside(tree: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.link(tree / "a.txt", elsewhere / "copy.txt")
    (tree / "pkg" / "door").symlink_to(elsewhere)
    assert not all_names_inside(tree, os.stat(tree / "a.txt"))


def test_a_symbolic_link_to_the_file_is_not_one_of_its_names(tree: Path) -> None:
    os.link(tree / "a.txt", tree.parent / "secret.txt")
    (tree / "pointer").symlink_to(tree.parent / "secret.txt")
    assert not all_names_inside(tree, os.stat(tree / "a.txt"))


class _Listing:
    """os.scandir's entries in name order (so a test knows what the walk meets first), with
    the entries named in `fail` raising as an entry that vanishes mid-walk does."""

    def __init__(self, path: Any, fail: Container[str]) -> None:
        with _real_scandir(path) as it:
            self._entries = sorted(it, key=lambda e: e.name)
        self._fail = fail

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        return iter(_Vanished(e) if e.name in self._fail else e for e in self._entries)


class _Vanished:
    def __init__(self, entry: os.DirEntry[str]) -> None:
        self.name, self.path = entry.name, entry.path

    def is_dir(self, **_: object) -> bool:
        raise FileNotFoundError(self.path)


_real_scandir = os.scandir


def ordered_walk(
    monkeypatch: pytest.MonkeyPatch,
    *,
    unlistable: Container[str] = (),
    vanishing: Container[str] = (),
) -> None:
    """Directories are listed in name order (the walk pops the last one first); those named in
    `unlistable` cannot be listed, entries named in `vanishing` fail when looked at."""

    def scandir(path: Any) -> _Listing:
        if Path(path).name in unlistable:
            raise PermissionError(13, "Permission denied", str(path))
        return _Listing(path, vanishing)

    monkeypatch.setattr(os, "scandir", scandir)


def test_the_walk_looks_past_other_files_in_every_directory(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        (tree / f"f{i}.txt").write_text(str(i))
        (tree / "pkg" / f"g{i}.txt").write_text(str(i))
    os.link(tree / "a.txt", tree / "pkg" / "z.txt")
    ordered_walk(monkeypatch)
    assert all_names_inside(tree, os.stat(tree / "a.txt"))


def test_an_entry_that_vanishes_during_the_walk_is_skipped_and_the_walk_goes_on(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tree / "b-gone.txt").write_text("x")
    os.link(tree / "a.txt", tree / "pkg" / "b.txt")
    ordered_walk(monkeypatch, vanishing={"b-gone.txt"})
    assert all_names_inside(tree, os.stat(tree / "a.txt"))


def test_a_directory_that_cannot_be_listed_is_skipped_and_the_walk_goes_on(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tree / "zz-locked").mkdir()  # listed last, so walked first
    os.link(tree / "a.txt", tree / "pkg" / "deep" / "b.txt")
    ordered_walk(monkeypatch, unlistable={"zz-locked"})
    assert all_names_inside(tree, os.stat(tree / "a.txt"))


def test_the_refusal_names_the_file_and_says_why() -> None:
    assert refusal("notes.txt") == (
        "refusing notes.txt: it is a hard link to a file that also has a name outside the "
        "repository"
    )
