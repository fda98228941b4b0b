"""The per-file cap on a diff as it is read (git/section_cap.py, git/stream.py), on generated
diffs fed in generated chunks.

A section within the cap is kept byte for byte; one over it keeps its header and a marker, and
parses as a cut file with no hunks — whether it arrives in one chunk or a thousand, and
whatever the bytes around its boundaries. The totals still count the cut lines, content that
looks like the marker never cuts anything, and a section over the cap is never held whole.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.config_models import ReviewSettings
from redline.diff.parse import parse_git_diff
from redline.diff.units import build_units
from redline.git import GitRunner, ScopeRequest, resolve_scope
from redline.git.difftext import stats_from_diff
from redline.git.process import decode
from redline.git.section_cap import HEADER_MAX, section_cap
from redline.git.stream import DiffStream, capped_diff
from redline.requests import ScopeKind

from gitrepo import GitRepo

# Body lines that look like headers, markers and section starts, and bytes that are not UTF-8.
LINES = [
    b" context",
    b"+added \xc3\xa9",
    b"-removed \xff",
    b"+diff --git a/x b/x",
    b"+\\ Redline: section cut, 5 bytes over the 10-byte cap",
    b"-@@ -1 +1 @@",
    b" \\ Redline: section cut, 5 bytes over the 10-byte cap",
]


@st.composite
def diffs(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    sections: list[bytes] = []
    for i in range(draw(st.integers(1, 6))):
        picks = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=8))
        # Some sections are repeated until they pass HEADER_MAX, so the cut while streaming
        # (not only of a whole section in one chunk) is exercised.
        body = picks * draw(st.sampled_from([1, 1, 3, 40, 1500]))
        old = sum(1 for line in body if not line.startswith(b"+"))
        new = sum(1 for line in body if not line.startswith(b"-"))
        header = b"diff --git a/f%d.py b/f%d.py\nindex 1111111..2222222 100644\n" % (i, i)
        header += b"--- a/f%d.py\n+++ b/f%d.py\n@@ -1,%d +1,%d @@\n" % (i, i, old, new)
        sections.append(header + b"".join(line + b"\n" for line in body))
    return b"".join(sections), sections


def stream(data: bytes, cap: int, steps: list[int]) -> DiffStream:
    """`data` through a stream with `cap`, in chunks of the sizes in `steps`, in turn (at
    least 1/500 of the data: a few hundred calls cover the boundaries as well as a million)."""
    s = DiffStream(None, None, cap)
    pos = i = 0
    while pos < len(data):
        step = max(steps[i % len(steps)], len(data) // 500)
        s.take(data[pos : pos + step])
        pos += step
        i += 1
    s.flush()
    return s


def summary(text: str) -> list[tuple[str, bool, list[list[str]]]]:
    return [(f.path, f.cut is not None, [h.lines for h in f.hunks]) for f in parse_git_diff(text)]


@settings(max_examples=100, deadline=None)
@given(
    diff=diffs(),
    cap=st.integers(40, 200_000),
    steps=st.lists(st.integers(1, 70_000), min_size=1, max_size=6),
)
def test_streamed_in_any_chunks_the_cut_is_the_whole_texts(
    diff: tuple[bytes, list[bytes]], cap: int, steps: list[int]
) -> None:
    data, sections = diff
    streamed = stream(data, cap, steps)
    text, stats = capped_diff(data, cap)
    assert streamed.text() == text
    assert streamed.stats() == stats == stats_from_diff(decode(data))  # cut lines still count
    original = parse_git_diff(decode(data))
    kept = parse_git_diff(text)
    assert [f.path for f in kept] == [f.path for f in original]
    for section, before, after in zip(sections, original, kept, strict=True):
        if len(section) <= cap:
            assert decode(section) in text
            assert after.cut is None and after.hunks == before.hunks
        else:
            assert after.cut == (len(section), cap)
            assert after.hunks == [] and after.new_blob == before.new_blob
    # What is kept of a cut section is its header and the marker line.
    bound = sum(len(x) if len(x) <= cap else min(len(x), HEADER_MAX) + 80 for x in sections)
    assert len(text) <= bound


@settings(max_examples=50, deadline=None)
@given(diff=diffs(), steps=st.lists(st.integers(1, 70_000), min_size=1, max_size=6))
def test_content_that_looks_like_the_marker_cuts_nothing(
    diff: tuple[bytes, list[bytes]], steps: list[int]
) -> None:
    data, _ = diff
    assert all(f.cut is None for f in parse_git_diff(decode(data)))
    uncapped = stream(data, len(data) + 1, steps)
    assert uncapped.text() == decode(data)
    assert summary(uncapped.text()) == summary(decode(data))


def test_a_section_over_the_cap_is_never_held_whole() -> None:
    header = b"diff --git a/big.py b/big.py\nnew file mode 100644\nindex 0000000..1234567\n"
    header += b"--- /dev/null\n+++ b/big.py\n@@ -0,0 +1,1000000 @@\n"
    body = b"+x = 1\n" * 1_000_000
    data = header + body + b"diff --git a/s.py b/s.py\n@@ -1 +1 @@\n-a\n+b\n"
    s = DiffStream(None, None, 1000)
    held = 0
    for pos in range(0, len(data), 65_536):
        s.take(data[pos : pos + 65_536])
        held = max(held, s.held)
    s.flush()
    assert held <= HEADER_MAX + 65_536
    (big, small) = parse_git_diff(s.text())
    assert big.cut == (len(header) + len(body), 1000) and big.is_new and not big.hunks
    assert small.path == "s.py" and small.hunks[0].lines == ["-a", "+b"]
    assert s.stats().added == 1_000_001 and s.stats().files == 2


@pytest.mark.parametrize("split", range(8))
def test_the_next_section_is_found_when_a_chunk_boundary_splits_its_diff_line(split: int) -> None:
    big = b"diff --git a/big.py b/big.py\n@@ -1,20000 +1,20000 @@\n" + b"+y = 2\n" * 20_000
    small = b"diff --git a/s.py b/s.py\n@@ -1 +1 @@\n-a\n+b\n"
    data = big + small
    at = len(big) - 1 + split  # from the newline before "diff " to just after it
    s = DiffStream(None, None, 1000)
    s.take(data[:at])
    s.take(data[at:])
    s.flush()
    (cut, kept) = parse_git_diff(s.text())
    assert cut.cut == (len(big), 1000) and kept.hunks[0].lines == ["-a", "+b"]
    assert s.stats() == stats_from_diff(decode(data))


@pytest.mark.parametrize("cap_bytes", [10_000, 50_000])
def test_a_big_file_in_a_real_repository_becomes_one_skipped_unit(
    repo: GitRepo, cap_bytes: int
) -> None:
    repo.write("small.py", "a = 1\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    repo.write("small.py", "a = 2\n")
    repo.write("big.py", "SECRET_ROW = 1\n" * 20_000)  # 300,000 bytes
    repo.commit("big")
    scope = resolve_scope(
        repo.root, ScopeRequest(ScopeKind.BRANCH, "main"), runner=GitRunner(),
        max_file_bytes=cap_bytes // 2,
    )  # fmt: skip
    assert "SECRET_ROW" not in scope.diff_text
    assert scope.stats.added == 20_001 and scope.stats.files == 2
    units = {u.file_path: u for u in build_units(scope.diff_text, scope.read_new)}
    big = units["big.py"]
    assert big.skip_reason is not None and "diff too large" in big.skip_reason
    assert f"{section_cap(cap_bytes // 2):,}" in big.skip_reason
    assert "SECRET_ROW" not in big.patch and units["small.py"].skip_reason is None
    assert ReviewSettings().max_file_bytes * 2 == section_cap(ReviewSettings().max_file_bytes)
