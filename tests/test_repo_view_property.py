"""Property tests for the pure rules of the repository view's guards.

- git/worktree_guard.py: the diff filter withholds every content line of a withheld file's
  section and nothing else, the same however git's output is cut into chunks, and leaves any
  output alone when nothing is withheld; the grep filter keeps exactly the records of the
  files not withheld, whatever their names hold (newlines included); C-quoted names read back.
- git/gitdir.py: whatever a git directory holds (directories, files, links inside and out,
  FIFOs), check_tree either refuses it or everything git could reach from it by following
  links is a regular file or a directory inside the git directory.
- git/discovery.py: `inside` compares components, never string prefixes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.errors import RepositoryError
from redline.git.discovery import inside, linked_worktree_shape, superproject_candidates
from redline.git.gitdir import GitDirFiles
from redline.git.hardlinks import WITHHELD_MARK
from redline.git.worktree_guard import (
    DiffFilter,
    blame_path,
    diff_reads_worktree,
    filter_grep,
    header_names,
)

# -- the diff filter ----------------------------------------------------------------------------

NAMES = ["a.py", "b c.py", "dir/x.js", "ü.txt", 'q"uote.py', "tab\tname", "new\nline"]
BODY = st.sampled_from(
    [
        " context",
        "+added",
        "-removed",
        "+diff --git a/a.py b/a.py",
        "-diff --git a/x b/x",
        " @@ -1 +1 @@",
        "+--- a/evil",
        "\\ No newline at end of file",
        "+",
        " ",
    ]
)


def quote(name: str) -> str:
    """git's quote_c_style, as it writes names in diff headers."""
    raw = name.encode("utf-8")
    if not any(b < 0x20 or b >= 0x7F or b in b'"\\' for b in raw):
        return name
    out = []
    for b in raw:
        if b in b'"\\':
            out.append("\\" + chr(b))
        elif b == 9:
            out.append("\\t")
        elif b == 10:
            out.append("\\n")
        elif b < 0x20 or b >= 0x7F:
            out.append(f"\\{b:03o}")
        else:
            out.append(chr(b))
    return '"' + "".join(out) + '"'


def section(name: str, body: list[str], token: str) -> tuple[list[str], list[str]]:
    """(header lines, content lines) of one file's section; content lines carry token."""
    a, b = quote("a/" + name), quote("b/" + name)
    tab = "\t" if " " in name and not a.startswith('"') else ""
    header = [
        f"diff --git {a} {b}",
        "index 1234567..89abcde 100644",
        f"--- {a}{tab}",
        f"+++ {b}{tab}",
    ]
    content = [f"@@ -1,{len(body)} +1,{len(body)} @@"] + [f"{line} {token}" for line in body]
    return header, content


diffs = st.lists(
    st.tuples(st.sampled_from(NAMES), st.lists(BODY, min_size=1, max_size=6), st.booleans()),
    min_size=1,
    max_size=6,
)


def run_filter(data: bytes, refused: set[bytes], cuts: list[int]) -> bytes:
    out: list[bytes] = []
    f = DiffFilter(lambda name: "no" if name in refused else None, out.append)
    pos = 0
    for cut in sorted(set(cuts)):
        f.take(data[pos:cut])
        pos = cut
    f.take(data[pos:])
    f.flush()
    return b"".join(out)


@settings(max_examples=300, deadline=None)
@given(diffs, st.lists(st.integers(min_value=0, max_value=4000), max_size=12))
def test_withheld_sections_lose_their_content_and_only_that(
    spec: list[tuple[str, list[str], bool]], cuts: list[int]
) -> None:
    lines: list[str] = []
    expected: list[str] = []
    # One file is either withheld or not, wherever it appears.
    refused = {name.encode() for name, _, withhold in spec if withhold}
    for n, (name, body, _) in enumerate(spec):
        withhold = name.encode() in refused
        header, content = section(name, body, f"T{n}")
        lines += header + content
        if withhold:  # the marker right after the `diff` line, the content gone
            expected += [header[0], f"{WITHHELD_MARK}no", *header[1:]]
        else:
            expected += header + content
    data = ("\n".join(lines) + "\n").encode()
    cuts = [c % (len(data) + 1) for c in cuts]
    got = run_filter(data, refused, cuts).decode()
    assert got == "\n".join(expected) + "\n"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600), st.lists(st.integers(min_value=0, max_value=600), max_size=8))
def test_nothing_withheld_means_output_untouched(data: bytes, cuts: list[int]) -> None:
    assert run_filter(data, set(), cuts) == data


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600), st.lists(st.integers(min_value=0, max_value=600), max_size=8))
def test_the_filter_is_the_same_however_the_output_is_cut(data: bytes, cuts: list[int]) -> None:
    everything = {n.encode() for n in NAMES} | {b"x", b"a", b"b"}
    assert run_filter(data, everything, cuts) == run_filter(data, everything, [])


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 200_000), st.sampled_from([b"", b"\n", b"\nd", b"\ndif"]), st.booleans())
def test_a_long_line_passes_through_while_it_streams(size: int, tail: bytes, drop: bool) -> None:
    """Between sections nothing is held but the few bytes that may begin the next one: a huge
    minified line streams on as it comes (or is dropped as it comes, in a withheld section)."""
    out: list[bytes] = []
    f = DiffFilter(lambda name: "no" if drop else None, out.append)
    head = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n+"
    f.take(head + b"y" * size + tail)
    held = len(f._buf)
    assert held <= 5
    emitted = b"".join(out)
    if not drop:
        assert len(emitted) + held == len(head) + size + len(tail)
    else:
        assert b"yyy" not in emitted and WITHHELD_MARK.encode() in emitted


@given(st.text(min_size=1, max_size=30).filter(lambda s: "\0" not in s))
def test_quoted_names_read_back(name: str) -> None:
    header = [f"--- {quote('a/' + name)}\n".encode(), f"+++ {quote('b/' + name)}\n".encode()]
    assert name.encode() in header_names(header)


# -- the grep filter ----------------------------------------------------------------------------

paths = st.binary(min_size=1, max_size=20).filter(lambda b: b"\0" not in b)
texts = st.binary(max_size=30).filter(lambda b: b"\n" not in b)


@given(st.lists(st.tuples(paths, st.integers(1, 9999), texts), max_size=10), st.data())
def test_grep_keeps_exactly_the_records_not_withheld(
    records: list[tuple[bytes, int, bytes]], data: st.DataObject
) -> None:
    names = sorted({p for p, _, _ in records})
    refused = set(data.draw(st.lists(st.sampled_from(names), unique=True))) if names else set()
    raw = b"".join(p + b"\0" + str(n).encode() + b"\0" + t + b"\n" for p, n, t in records)
    kept = b"".join(
        p + b"\0" + str(n).encode() + b"\0" + t + b"\n" for p, n, t in records if p not in refused
    )
    assert filter_grep(raw, lambda p: "no" if p in refused else None) == kept


# -- which calls read the work tree ----------------------------------------------------------

revs = st.lists(st.sampled_from(["HEAD", "main", "abc1234", "HEAD~1..HEAD", "a...b"]), max_size=3)
flags = st.lists(st.sampled_from(["--stat", "-R", "-M", "--no-color", "-U5", "--cached"]))


@given(flags, revs, st.lists(st.sampled_from(["a.py", "--cached", "x y"]), max_size=3))
def test_a_diff_reads_the_work_tree_unless_of_the_index_or_two_revisions(
    options: list[str], revisions: list[str], pathspecs: list[str]
) -> None:
    args = ["diff", *options, "--end-of-options", *revisions, "--", *pathspecs]
    count = sum(2 if ".." in r else 1 for r in revisions)
    assert diff_reads_worktree(args) == ("--cached" not in options and count < 2)
    # Without the marker revisions cannot be told from option values: the safe answer.
    assert diff_reads_worktree(["diff", *options, *revisions, "--"]) == ("--cached" not in options)


@given(st.lists(st.sampled_from(["-w", "-M", "-L1,2", "--root"])), st.booleans())
def test_blame_reads_the_work_tree_only_without_a_revision(
    options: list[str], with_rev: bool
) -> None:
    args = ["blame", *options, *(["HEAD"] if with_rev else []), "--", "a.py"]
    assert blame_path(args) == (None if with_rev else "a.py")


# -- the git directory --------------------------------------------------------------------------

KINDS = ["dir", "file", "link-in-file", "link-in-dir", "link-out", "link-dangling-in", "fifo"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(KINDS)), max_size=10))
def test_check_tree_refuses_or_everything_reachable_is_inside(
    tmp_path_factory: pytest.TempPathFactory, plan: list[tuple[int, str]]
) -> None:
    base = tmp_path_factory.mktemp("g")
    root, outside = base / "git", base / "outside"
    (root / "refs").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_text("s")
    (root / "HEAD").write_text("ref: refs/heads/main\n")
    dirs = [root / "refs"]
    for n, (where, what) in enumerate(plan):
        parent = dirs[where % len(dirs)]
        path = parent / f"e{n}"
        if what == "dir":
            path.mkdir()
            dirs.append(path)
        elif what == "file":
            path.write_text("x")
        elif what == "link-in-file":
            os.symlink(root / "HEAD", path)
        elif what == "link-in-dir":
            os.symlink(dirs[n % len(dirs)], path)
        elif what == "link-out":
            os.symlink(outside / "secret", path)
        elif what == "link-dangling-in":
            os.symlink(root / "nothing", path)
        else:
            os.mkfifo(path)
    try:
        GitDirFiles(root).check_tree(root / "refs")
    except RepositoryError:
        assert any(k in ("link-out", "fifo") for _, k in plan)
        return
    # Accepted: walk as git would (following links; each directory once, links may loop)
    # and see only what the rule allows.
    seen: set[Path] = set()
    stack = [root / "refs"]
    while stack:
        directory = Path(os.path.realpath(stack.pop()))
        if directory in seen:
            continue
        seen.add(directory)
        for path in directory.iterdir():
            if not path.exists():
                continue  # a dangling link: git finds nothing
            assert inside(Path(os.path.realpath(path)), root)
            mode = os.stat(path).st_mode
            assert stat.S_ISDIR(mode) or stat.S_ISREG(mode)
            if stat.S_ISDIR(mode):
                stack.append(path)


# -- discovery ----------------------------------------------------------------------------------

parts = st.lists(st.sampled_from(["a", "ab", "repo", "repo2", "modules", "worktrees", ".git"]))


@given(parts, parts)
def test_inside_compares_components(a: list[str], b: list[str]) -> None:
    tree, path = Path("/", *a), Path("/", *b)
    assert inside(path, tree) == (path.parts[: len(tree.parts)] == tree.parts)


@given(parts)
def test_superproject_candidates_are_parents_of_modules_directories(p: list[str]) -> None:
    git_dir = Path("/", *p)
    for candidate in superproject_candidates(git_dir):
        modules = candidate / "modules"
        assert git_dir != modules and git_dir.is_relative_to(modules)


@given(parts, st.sampled_from(["w", "x", "wt-2"]))
def test_a_linked_worktree_is_one_level_below_worktrees(p: list[str], name: str) -> None:
    common = Path("/", *p)
    assert linked_worktree_shape(common / "worktrees" / name, common)
    assert not linked_worktree_shape(common / "worktrees" / name / "deeper", common)
    assert not linked_worktree_shape(common / name, common)
