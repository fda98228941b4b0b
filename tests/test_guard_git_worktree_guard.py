"""The rules of git/worktree_guard.py: what git reads from the work tree by itself passes the
hard-link rule. Which calls read the work tree, what a withheld diff section becomes, which grep
records are dropped, when blame is refused — one test per rule, in-process on a real tree with
a real hard link, asserting exact outputs, so that inverting any part fails a test here
(`make mutation MODULES=server/redline/git/worktree_guard.py`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from redline.errors import GitCommandError
from redline.git.hardlinks import WITHHELD_MARK
from redline.git.process import ProcessResult
from redline.git.worktree_guard import (
    DiffFilter,
    Guard,
    WorkTree,
    blame_path,
    diff_reads_worktree,
    filter_grep,
    grep_reads_worktree,
    guard_for,
    header_names,
)

REFUSAL = (
    "refusing 'util.py': it is a hard link to a file that also has a name outside the repository"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """util.py: a hard link to a file outside; twin.py/twin2.py: two names, both inside;
    app.py: an ordinary file."""
    root = tmp_path / "tree"
    root.mkdir()
    (tmp_path / "secret.py").write_text("SECRET\n")
    os.link(tmp_path / "secret.py", root / "util.py")
    (root / "twin.py").write_text("t\n")
    os.link(root / "twin.py", root / "twin2.py")
    (root / "app.py").write_text("a\n")
    return root


# -- WorkTree --------------------------------------------------------------------------------------


def test_only_a_hard_link_with_a_name_outside_is_refused(tree: Path) -> None:
    wt = WorkTree(tree)
    assert wt.refused(b"util.py") == REFUSAL
    assert wt.refused(b"twin.py") is None
    assert wt.refused(b"app.py") is None
    assert wt.refused(b"missing.py") is None
    assert wt.refused(b"") is None
    assert wt.refused(b"a\0b") is None


def test_a_directory_or_a_link_is_never_refused(tree: Path) -> None:
    (tree / "d").mkdir()
    (tree / "d" / "x").write_text("x")
    (tree / "ln").symlink_to("util.py")
    wt = WorkTree(tree)
    assert wt.refused(b"d") is None
    assert wt.refused(b"ln") is None


def test_the_answer_is_kept_for_the_call(tree: Path, tmp_path: Path) -> None:
    wt = WorkTree(tree)
    assert wt.refused(b"util.py") == REFUSAL
    (tmp_path / "secret.py").unlink()  # now util.py has one name: a fresh guard reads it
    assert wt.refused(b"util.py") == REFUSAL
    assert WorkTree(tree).refused(b"util.py") is None


def test_the_refusal_shows_a_control_character_free_name(tree: Path, tmp_path: Path) -> None:
    os.link(tmp_path / "secret.py", tree / "evil\x1b[2J.py")
    assert WorkTree(tree).refused(os.fsencode("evil\x1b[2J.py")) == (
        "refusing 'evil[2J.py': it is a hard link to a file that also has a name outside the "
        "repository"
    )


# -- which calls read the work tree ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "reads"),
    [
        (["diff", "--end-of-options", "HEAD", "--"], True),
        (["diff", "--end-of-options", "--"], True),
        (["diff", "--end-of-options", "A", "B", "--"], False),
        (["diff", "--end-of-options", "A..B", "--"], False),
        (["diff", "--end-of-options", "A...B", "--", "x"], False),
        (["diff", "--cached", "--end-of-options", "HEAD", "--"], False),
        (["diff", "--staged", "--"], False),
        (["diff", "--name-status", "-z", "--", "p"], True),
        (["diff", "A", "B"], True),  # no marker: revisions cannot be told, so it reads
        (["diff", "--end-of-options", "HEAD", "--", "--cached"], True),  # a path, not a flag
        (["diff", "--end-of-options", "HEAD"], True),
        (["diff", "--cached"], False),  # no "--": every argument is an option
        (["diff", "--end-of-options", "A..", "--"], False),
    ],
)
def test_which_diffs_read_the_work_tree(args: list[str], reads: bool) -> None:
    assert diff_reads_worktree(args) is reads


@pytest.mark.parametrize(
    ("args", "path"),
    [
        (["blame", "--", "a.py"], "a.py"),
        (["blame", "-w", "-L1,2", "--", "a.py"], "a.py"),
        (["blame", "HEAD", "--", "a.py"], None),
        (["blame", "-w", "abc123", "--", "a.py"], None),
    ],
)
def test_which_blames_read_the_work_tree(args: list[str], path: str | None) -> None:
    assert blame_path(args) == path


@pytest.mark.parametrize("args", [["blame", "a.py"], ["blame", "--", "a", "b"], ["blame"]])
def test_a_blame_whose_file_cannot_be_told_is_refused(args: list[str]) -> None:
    with pytest.raises(GitCommandError) as info:
        blame_path(args)
    assert info.value.message == "git blame takes its file as the one argument after --"


GREP = ["grep", "-n", "-z", "-I"]


@pytest.mark.parametrize(
    ("args", "reads"),
    [
        ([*GREP, "-e", "x", "--"], True),
        ([*GREP, "-w", "-F", "--full-name", "--no-color", "--no-textconv", "-e", "x", "--"], True),
        ([*GREP, "-i", "-e", "-x", "--"], True),  # a pattern starting with '-' is a pattern
        ([*GREP, "--cached", "-e", "x", "--"], False),
        ([*GREP, "-e", "x", "HEAD", "--"], False),
        ([*GREP, "-e", "x", "-e", "y", "abc123", "--"], False),
    ],
)
def test_which_greps_read_the_work_tree(args: list[str], reads: bool) -> None:
    assert grep_reads_worktree(args) is reads


GREP_FORM = (
    "git grep of the work tree takes its patterns with -e, -I -n -z and only --cached "
    "--full-name --no-color --no-textconv -E -F -i -w besides: its output must be records Redline "
    "can read"
)


@pytest.mark.parametrize(
    "args",
    [
        [*GREP, "x", "--"],  # a pattern without -e could not be told from a revision
        [*GREP, "--cached", "x", "--"],
        ["grep", "-n", "-z", "-e", "x", "--"],  # no -I: "Binary file matches" lines
        ["grep", "-z", "-I", "-e", "x", "--"],  # no -n
        ["grep", "-n", "-I", "-e", "x", "--"],  # no -z: names could not be read
        [*GREP, "-C", "-e", "x", "--"],
        [*GREP, "-l", "-e", "x", "--"],
        [*GREP, "--heading", "-e", "x", "--"],
    ],
)
def test_a_work_tree_grep_in_another_format_is_refused(args: list[str]) -> None:
    with pytest.raises(GitCommandError) as info:
        grep_reads_worktree(args)
    assert info.value.message == GREP_FORM


def test_grep_options_after_the_patterns_count_too() -> None:
    assert grep_reads_worktree(["grep", "-e", "x", "-e", "y", "-n", "-z", "-I", "--"])
    assert not grep_reads_worktree(["grep", "abc123", "-e", "x", "-n", "-z", "-I", "--"])
    assert not grep_reads_worktree(["grep", "-e", "x", "-n", "-z", "-I", "HEAD"])  # no --
    # An extended regex (the deleted-file search's alternation) writes the same records.
    assert grep_reads_worktree(["grep", "-n", "-z", "-I", "-w", "-E", "-e", "(a|b)", "--"])


def test_guard_for_picks_the_guard_by_call(tree: Path) -> None:
    assert guard_for(["diff", "--end-of-options", "HEAD", "--"], tree).kind == "diff"  # type: ignore[union-attr]
    assert guard_for(["diff", "--end-of-options", "A", "B", "--"], tree) is None
    assert guard_for([*GREP, "-e", "x", "--"], tree).kind == "grep"  # type: ignore[union-attr]
    assert guard_for([*GREP, "-e", "x", "HEAD", "--"], tree) is None
    for args in (["diff", "--"], [*GREP, "-e", "x", "--"], ["blame", "--", "a"]):
        found = guard_for(args, tree)
        assert found is not None and found.tree.root == tree
    blame = guard_for(["blame", "--", "util.py"], tree)
    assert blame is not None and blame.kind == "blame" and blame.path == "util.py"
    assert guard_for(["blame", "HEAD", "--", "util.py"], tree) is None
    for other in (["log", "-p"], ["show", "HEAD"], ["ls-files", "-m"], ["cat-file", "-p", "x"]):
        assert guard_for(other, tree) is None
    assert guard_for([], tree) is None


# -- the diff filter -------------------------------------------------------------------------------

SECTION = (
    b"diff --git a/{n} b/{n}\n"
    b"index 1111111..2222222 100644\n"
    b"--- a/{n}\n"
    b"+++ b/{n}\n"
    b"@@ -1 +1 @@\n"
    b"-old {n}\n"
    b"+new {n}\n"
)


def section(name: str) -> bytes:
    return SECTION.replace(b"{n}", name.encode())


def withheld(name: str, reason: str = REFUSAL) -> bytes:
    head = f"diff --git a/{name} b/{name}\n".encode()
    mark = f"{WITHHELD_MARK}{reason}\n".encode()
    rest = f"index 1111111..2222222 100644\n--- a/{name}\n+++ b/{name}\n".encode()
    return head + mark + rest


def filtered(tree: Path, data: bytes, chunk: int | None = None) -> bytes:
    out: list[bytes] = []
    f = DiffFilter(WorkTree(tree).refused, out.append)
    step = chunk or len(data) or 1
    for i in range(0, len(data), step):
        f.take(data[i : i + step])
    f.flush()
    return b"".join(out)


@pytest.mark.parametrize("chunk", [None, 1, 7, 64])
def test_a_withheld_section_keeps_its_header_and_loses_its_content(
    tree: Path, chunk: int | None
) -> None:
    data = section("app.py") + section("util.py") + section("twin.py")
    expected = section("app.py") + withheld("util.py") + section("twin.py")
    assert filtered(tree, data, chunk) == expected


def test_the_rename_or_the_old_name_is_enough_to_withhold(tree: Path) -> None:
    data = (
        b"diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from util.py\n"
        b"rename to new.py\n--- a/old.py\n+++ b/new.py\n@@ -1 +1 @@\n-SECRET\n+x\n"
    )
    assert b"SECRET" not in filtered(tree, data)
    reverse = section("util.py").replace(b"+++ b/util.py", b"+++ b/app.py")
    assert b"new util.py" not in filtered(tree, reverse)  # the a/ side is the work tree (-R)


def test_a_section_without_content_is_passed_whole(tree: Path) -> None:
    data = b"diff --git a/util.py b/util.py\nold mode 100644\nnew mode 100755\n" + section("app.py")
    assert filtered(tree, data) == data
    binary = b"diff --git a/util.py b/util.py\nBinary files a/util.py and b/util.py differ\n"
    assert filtered(tree, binary) == binary


def test_a_binary_patch_is_content_too(tree: Path) -> None:
    data = (
        b"diff --git a/util.py b/util.py\nindex 1..2 100644\nGIT binary patch\nliteral 7\n"
        b"SECRETBASE85\n"
    )
    out = filtered(tree, data)
    assert b"SECRETBASE85" not in out and WITHHELD_MARK.encode() in out


def test_what_comes_before_the_first_section_passes(tree: Path) -> None:
    stat = b" util.py | 2 +-\n 1 file changed\n\n"
    assert filtered(tree, stat + section("util.py")) == stat + withheld("util.py")


def test_a_quoted_name_is_read(tree: Path, tmp_path: Path) -> None:
    os.link(tmp_path / "secret.py", tree / "sp ace\t.py")
    data = (
        b'diff --git "a/sp ace\\t.py" "b/sp ace\\t.py"\n--- "a/sp ace\\t.py"\n'
        b'+++ "b/sp ace\\t.py"\n@@ -1 +1 @@\n+SECRET\n'
    )
    assert b"+SECRET" not in filtered(tree, data)


def test_names_come_from_every_header_line(tree: Path) -> None:
    header = [
        b"diff --git a/x b/y\n",
        b"rename from r1\n",
        b"rename to r2\n",
        b"copy from c1\n",
        b"copy to c2\n",
        b"--- a/o\n",
        b"+++ b/n\t\n",
    ]
    assert header_names(header) == [b"r1", b"r2", b"c1", b"c2", b"o", b"a/o", b"n", b"b/n"]
    assert header_names([b"diff --git a/x b/y\n", b"--- /dev/null\n", b"+++ b/n\n"]) == [
        b"n",
        b"b/n",
    ]


def test_quoted_names_are_unquoted_as_git_writes_them() -> None:
    from redline.git.worktree_guard import _unquote, _unquote_prefix

    assert _unquote(b"plain") == b"plain"
    assert _unquote(b'"a\\tb\\nc\\"d\\\\e"') == b'a\tb\nc"d\\e'
    assert _unquote(b'"\\a\\b\\f\\r\\v"') == b"\a\b\f\r\v"
    assert _unquote(b'"\\303\\274"') == "ü".encode()
    assert _unquote(b'"\\q"') == b"q"  # an escape git does not write: the character
    assert _unquote(b'"\\188"') == b"188"  # 8 is no octal digit
    assert _unquote_prefix(b'"ab" rest') == (b"ab", b" rest")
    assert _unquote_prefix(b'"abc') == (b"abc", b"")  # unterminated: what is there
    assert _unquote_prefix(b'"ab\\') == (b"ab\\", b"")  # a backslash at the very end
    assert _unquote_prefix(b'"\\"') == (b'"', b"")


def test_without_other_lines_every_split_of_the_git_line_is_a_name() -> None:
    assert header_names([b"diff --git a/p b/q b/r b/s\n"]) == [
        b"p b/q b/r b/s",
        b"p",
        b"q b/r b/s",
        b"p b/q",
        b"r b/s",
        b"p b/q b/r",
        b"s",
    ]
    assert header_names([b"diff --git a/p b/ b/q\n"]) == [
        b"p b/ b/q",
        b"p",
        b" b/q",
        b"p b/",
        b"q",
    ]
    assert header_names([b'diff --git "a/x"\n']) == [b"x"]  # one name only
    assert header_names([b'diff --git "a/x""b/y"\n']) == [b"x"]  # no space: not a pair
    assert header_names([b"diff --git a/p b/q b/r\n"]) == [
        b"p b/q b/r",
        b"p",
        b"q b/r",
        b"p b/q",
        b"r",
    ]
    assert header_names([b'diff --git "a/\\303\\274.py" "b/\\303\\274.py"\n']) == [
        "ü.py".encode(),
        "ü.py".encode(),
    ]
    assert header_names([]) == []


def test_a_contentless_section_before_a_withheld_one_keeps_its_own_header(tree: Path) -> None:
    mode_only = b"diff --git a/app.py b/app.py\nold mode 100644\nnew mode 100755\n"
    data = mode_only + section("util.py") + mode_only
    for chunk in (None, 1, 5, 9):
        assert filtered(tree, data, chunk) == mode_only + withheld("util.py") + mode_only


def test_every_cut_of_a_section_start_is_found(tree: Path) -> None:
    """ "diff " split by a chunk's end at every place, at the top and after a newline."""
    data = section("app.py") + section("util.py")
    cut = len(section("app.py"))
    for k in range(-1, 7):
        parts = [data[: cut + k], data[cut + k :]]
        out: list[bytes] = []
        f = DiffFilter(WorkTree(tree).refused, out.append)
        for part in parts:
            f.take(part)
        f.flush()
        assert b"".join(out) == section("app.py") + withheld("util.py"), k
    for k in range(1, 6):
        out = []
        f = DiffFilter(WorkTree(tree).refused, out.append)
        f.take(section("util.py")[:k])
        f.take(section("util.py")[k:])
        f.flush()
        assert b"".join(out) == withheld("util.py"), k


def test_a_decided_section_is_passed_on_before_the_end(tree: Path) -> None:
    out: list[bytes] = []
    f = DiffFilter(WorkTree(tree).refused, out.append)
    f.take(section("app.py") + b"diff --git a/util.py b/util.py\n")
    assert b"".join(out) == section("app.py")  # emitted already; the next header is held
    f.take(section("util.py")[len(b"diff --git a/util.py b/util.py\n") :] + b"+more\n")
    assert b"".join(out) == section("app.py") + withheld("util.py")  # before flush
    f.flush()
    assert b"".join(out) == section("app.py") + withheld("util.py")


def test_only_what_may_begin_a_section_is_held_back(tree: Path) -> None:
    """Passing on: the bytes after the last newline are held only while they may still become
    "diff " (at most four); mid-line bytes and anything else go on at once."""
    out: list[bytes] = []
    f = DiffFilter(WorkTree(tree).refused, out.append)
    f.take(section("app.py"))
    for chunk, held in (
        (b"+x\nd", 1),
        (b"if", 3),  # "dif"
        (b"x y\n", 0),  # not "diff " after all: all of it goes on
        (b"diff", 4),
        (b"y", 0),  # "diffy": a line that only starts like it
        (b"zz dif", 0),  # mid-line: never a section start
        (b"f \n", 0),
        (b"zz ", 0),
        (b"dif", 0),  # mid-line again, though it spells the start of "diff "
        (b"\nab", 0),  # short, but not the start of "diff "
        (b"\n", 0),
    ):
        f.take(chunk)
        assert len(f._buf) == held, chunk
    f.flush()
    assert b"".join(out) == section("app.py") + b"+x\ndifx y\ndiffyzz diff \nzz dif\nab\n"


def test_the_held_tail_is_passed_on_at_the_end(tree: Path) -> None:
    for tail in (b"d", b"dif", b"diff", b"x"):
        data = section("app.py") + tail
        assert filtered(tree, data) == data
        assert filtered(tree, data, 3) == data


def test_a_section_right_after_a_hunk_header_is_still_found(tree: Path) -> None:
    """Not what git writes, but nothing between a content line and the next `diff` line may
    hide a section start: after a decided line the next one starts a line."""
    data = b"diff --git a/app.py b/app.py\n@@ -1 +1 @@\n" + section("util.py")
    expected = b"diff --git a/app.py b/app.py\n@@ -1 +1 @@\n" + withheld("util.py")
    for chunk in (None, 1, 41, 42, 43):
        assert filtered(tree, data, chunk) == expected, chunk


def test_a_header_line_cut_off_by_the_end_is_passed_whole(tree: Path) -> None:
    data = b"diff --git a/app.py b/app.py\nold mode 100644\nnew mode"
    assert filtered(tree, data) == data
    assert filtered(tree, data, 3) == data
    assert filtered(tree, b"diff --git a/util.py b/util.py") == b"diff --git a/util.py b/util.py"
    assert filtered(tree, b"") == b""


def test_the_header_limit_is_exact(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    head = b"diff --git a/util.py b/util.py\n"  # 31 bytes
    line = b"index 1111111..2222222 100644\n"  # 30 bytes
    monkeypatch.setattr(DiffFilter, "HEADER_LIMIT", len(head) + len(line))
    mark = f"{WITHHELD_MARK}{REFUSAL}\n".encode()
    # Up to the limit exactly, lines are header lines; the line that would pass it is taken
    # as content (and dropped with the rest).
    data = head + line + b"--- a/util.py\n+++ b/util.py\n@@ -1 +1 @@\n-x\n+SECRET\n"
    assert filtered(tree, data) == head + mark + line
    longer = head + b"index 1111111..2222222 1006440\n--- a/util.py\n+SECRET\n"
    assert filtered(tree, longer) == head + mark
    # A line with no end, over the limit while it streams: decided where it stands.
    out = []
    f = DiffFilter(WorkTree(tree).refused, out.append)
    f.take(head + b"x" * 100)
    assert WITHHELD_MARK.encode() in b"".join(out)
    # A line with no end yet, exactly at the limit: waited for (it may be a hunk header).
    monkeypatch.setattr(DiffFilter, "HEADER_LIMIT", len(head) + 1)
    out = []
    f = DiffFilter(WorkTree(tree).refused, out.append)
    f.take(head + b"@")
    assert out == [] and bytes(f._buf) == b"@"
    f.take(b"@ -1 +1 @@\n+SECRET\n")
    f.flush()
    assert b"".join(out) == head + mark


def test_a_header_that_never_ends_is_decided_where_it_stands(tree: Path) -> None:
    long_line = b"similarity index " + b"9" * (DiffFilter.HEADER_LIMIT + 10) + b"\n"
    data = b"diff --git a/util.py b/util.py\n" + long_line + b"SECRET\n"
    out = filtered(tree, data)
    assert b"SECRET" not in out and WITHHELD_MARK.encode() in out


# -- the grep filter -------------------------------------------------------------------------------


def test_grep_records_of_a_withheld_file_are_dropped(tree: Path) -> None:
    data = b"app.py\x001\x00a\nutil.py\x001\x00SECRET\ntwin.py\x002\x00t\n"
    assert filter_grep(data, WorkTree(tree).refused) == b"app.py\x001\x00a\ntwin.py\x002\x00t\n"


def test_a_name_with_a_newline_does_not_split_its_record(tree: Path, tmp_path: Path) -> None:
    os.link(tmp_path / "secret.py", tree / "a\nb.py")
    (tree / "b.py").write_text("b\n")
    data = b"a\nb.py\x003\x00SECRET\nb.py\x001\x00b\n"
    assert filter_grep(data, WorkTree(tree).refused) == b"b.py\x001\x00b\n"


def test_what_is_not_a_record_ends_the_output(tree: Path) -> None:
    """Nothing unreadable is passed on (with -n -z -I git writes only records; a path may hold
    a newline, so a record is known by its NULs)."""
    refused = WorkTree(tree).refused
    assert filter_grep(b"app.py\x001\x00a\nno nul here\n", refused) == b"app.py\x001\x00a\n"
    assert filter_grep(b"app.py\x00one\x00a\napp.py\x001\x00b\n", refused) == b""
    assert filter_grep(b"app.py\x001\x00last", refused) == b"app.py\x001\x00last"


# -- the guard as the runner uses it ---------------------------------------------------------------


def result(stdout: bytes) -> ProcessResult:
    return ProcessResult(0, stdout, b"")


def test_blame_of_a_withheld_file_is_a_failed_call(tree: Path) -> None:
    refused = Guard(WorkTree(tree), "blame", "util.py").refusal()
    assert refused == ProcessResult(128, b"", b"fatal: " + REFUSAL.encode())
    assert Guard(WorkTree(tree), "blame", "app.py").refusal() is None
    assert Guard(WorkTree(tree), "diff").refusal() is None


def test_the_guard_filters_a_whole_output_or_a_stream(tree: Path) -> None:
    data = section("util.py") + section("app.py")
    expected = withheld("util.py") + section("app.py")
    assert Guard(WorkTree(tree), "diff").finish(result(data)).stdout == expected
    streamed: list[bytes] = []
    guard = Guard(WorkTree(tree), "diff")
    take = guard.stream(streamed.append)
    take(data[:50])
    take(data[50:])
    assert guard.finish(result(b"")) == result(b"")
    assert b"".join(streamed) == expected
    # A whole output whose last section has no content: that header comes at the end.
    mode_only = b"diff --git a/app.py b/app.py\nold mode 100644\nnew mode 100755\n"
    whole = Guard(WorkTree(tree), "diff").finish(result(data + mode_only)).stdout
    assert whole == expected + mode_only
    grep = b"util.py\x001\x00SECRET\napp.py\x001\x00a\n"
    assert Guard(WorkTree(tree), "grep").finish(result(grep)).stdout == b"app.py\x001\x00a\n"
    other = Guard(WorkTree(tree), "blame", "app.py")
    assert other.stream(streamed.append) == streamed.append
    assert other.finish(result(b"x")) == result(b"x")
