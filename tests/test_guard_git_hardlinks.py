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

from redline.git.hardlinks import WITHHELD_MARK, LinkCensus, all_names_inside, refusal


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


# -- LinkCensus: the same answers, many questions, one walk ---------------------------------------


def census(root: Path, st: os.stat_result) -> bool:
    return LinkCensus(root).all_names_inside(st)


def test_the_census_gives_the_same_answers(tree: Path, tmp_path: Path) -> None:
    os.link(tree / "a.txt", tree / "pkg" / "deep" / "b.txt")
    assert census(tree, os.stat(tree / "a.txt"))
    os.link(tree / "a.txt", tmp_path / "outside.txt")
    assert not census(tree, os.stat(tree / "a.txt"))


def test_the_census_leaves_out_git_directories_and_linked_ones(tree: Path, tmp_path: Path) -> None:
    (tree / ".git").mkdir()
    (tree / "pkg" / ".git").mkdir()
    os.link(tree / "a.txt", tree / ".git" / "planted")
    assert not census(tree, os.stat(tree / "a.txt"))
    os.unlink(tree / ".git" / "planted")
    os.link(tree / "a.txt", tree / "pkg" / ".git" / "x")
    assert not census(tree, os.stat(tree / "a.txt"))
    os.unlink(tree / "pkg" / ".git" / "x")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.link(tree / "a.txt", elsewhere / "copy.txt")
    (tree / "door").symlink_to(elsewhere)
    (tree / "pointer").symlink_to(elsewhere / "copy.txt")
    assert not census(tree, os.stat(tree / "a.txt"))


def test_the_census_answers_single_files_directories_and_links_without_walking(
    tree: Path, tmp_path: Path
) -> None:
    os.link(tree / "a.txt", tmp_path / "outside.txt")
    nowhere = LinkCensus(tmp_path / "no-such-root")
    assert nowhere.all_names_inside(os.stat(tree / "pkg" / "other.py"))  # one name
    assert nowhere.all_names_inside(os.stat(tree / "pkg"))  # a directory
    (tree / "link").symlink_to("a.txt")
    assert nowhere.all_names_inside(os.lstat(tree / "link"))  # a link is no file to check


def test_the_census_walks_once_for_many_questions(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.link(tree / "a.txt", tree / "pkg" / "b.txt")
    (tree / "c.txt").write_text("c")
    os.link(tree / "c.txt", tmp_path / "c-outside.txt")
    listed: list[str] = []

    def counting(path: Any) -> Any:
        listed.append(str(path))
        return _real_scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    answers = LinkCensus(tree)
    assert answers.all_names_inside(os.stat(tree / "a.txt"))
    walked = len(listed)
    assert not answers.all_names_inside(os.stat(tree / "c.txt"))
    assert answers.all_names_inside(os.stat(tree / "pkg" / "b.txt"))
    assert len(listed) == walked == 3  # tree, pkg, pkg/deep: once each (and nothing more)


def test_the_census_counts_names_against_the_link_count_of_the_question(
    tree: Path, tmp_path: Path
) -> None:
    """Asked again after a name appeared outside: the names it knows no longer make up the
    link count, so the answer changes."""
    os.link(tree / "a.txt", tree / "pkg" / "b.txt")
    answers = LinkCensus(tree)
    assert answers.all_names_inside(os.stat(tree / "a.txt"))
    os.link(tree / "a.txt", tmp_path / "late.txt")
    assert not answers.all_names_inside(os.stat(tree / "a.txt"))


def test_the_census_skips_names_gone_since_and_directories_it_cannot_list(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.link(tree / "a.txt", tree / "pkg" / "b.txt")
    (tree / "zz-locked").mkdir()
    (tree / "b-gone.txt").write_text("x")
    ordered_walk(monkeypatch, unlistable={"zz-locked"}, vanishing={"b-gone.txt"})
    answers = LinkCensus(tree)
    assert answers.all_names_inside(os.stat(tree / "a.txt"))
    os.unlink(tree / "pkg" / "b.txt")  # known to the census, gone now: not counted
    st = os.stat(tree / "a.txt")
    assert st.st_nlink == 1 and answers.all_names_inside(st)


def test_the_withheld_marker_is_a_line_git_never_writes_in_a_header() -> None:
    assert WITHHELD_MARK == "\\ Redline: withheld: "


def test_the_census_knows_no_name_of_a_file_outside_the_tree(tree: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("x")
    os.link(elsewhere, tmp_path / "elsewhere2.txt")
    assert not LinkCensus(tree).all_names_inside(os.stat(elsewhere))


def test_the_census_passes_over_a_name_gone_since_and_counts_the_rest(tree: Path) -> None:
    os.link(tree / "a.txt", tree / "b.txt")
    os.link(tree / "a.txt", tree / "c.txt")
    answers = LinkCensus(tree)
    assert answers.all_names_inside(os.stat(tree / "a.txt"))
    ino = os.stat(tree / "a.txt").st_ino
    os.unlink(tree / "c.txt")
    known = answers._by_inode
    assert known is not None
    known[ino] = sorted(known[ino], key=lambda p: not p.endswith("c.txt"))
    assert known[ino][0].endswith("c.txt")  # the gone name is met first
    assert answers.all_names_inside(os.stat(tree / "a.txt"))


def test_the_census_counts_a_name_only_while_it_is_still_the_same_file(
    tree: Path, tmp_path: Path
) -> None:
    os.link(tree / "a.txt", tree / "c.txt")
    answers = LinkCensus(tree)
    assert answers.all_names_inside(os.stat(tree / "a.txt"))
    os.unlink(tree / "c.txt")
    (tree / "c.txt").write_text("another file now, same device")
    os.link(tree / "a.txt", tmp_path / "outside.txt")
    assert not answers.all_names_inside(os.stat(tree / "a.txt"))
