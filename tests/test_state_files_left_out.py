"""Redline's own files (`.redline/dismissed.toml`) leave the diff where every diff passes
(git/stream.py): generated diffs, cut into chunks anywhere, give the text and totals of the
same diff without those sections; a rename to or from one of them stays (it names a file that
is reviewed)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from redline.git.difftext import stats_from_diff
from redline.git.stream import DiffStream, capped_diff, without_state_files

STATE = ".redline/dismissed.toml"


def _section(old: str, new: str, body: list[str]) -> str:
    lines = [f"diff --git a/{old} b/{new}", "index 1111111..2222222 100644"]
    if old != new:
        lines[1:1] = ["similarity index 90%", f"rename from {old}", f"rename to {new}"]
    lines += [f"--- a/{old}", f"+++ b/{new}", f"@@ -1,0 +1,{len(body)} @@"]
    lines += [f"+{line}" for line in body]
    return "\n".join(lines) + "\n"


_BODY = st.lists(
    st.text(alphabet=st.sampled_from(list("ab diff--git/.\\\t")), max_size=20), max_size=4
)
_NAME = st.sampled_from(["a.py", "x/b.toml", ".redline/rules.md", "dismissed.toml", STATE])
_SECTIONS = st.lists(st.tuples(_NAME, _NAME, _BODY), max_size=6)


@given(_SECTIONS, st.lists(st.integers(min_value=1, max_value=40), max_size=30))
def test_state_sections_leave_any_streamed_diff(
    sections: list[tuple[str, str, list[str]]], cuts: list[int]
) -> None:
    texts = [_section(old, new, body) for old, new, body in sections]
    whole = "".join(texts).encode()
    kept = "".join(
        t for (old, new, _), t in zip(sections, texts, strict=True) if old != STATE or new != STATE
    )

    assert without_state_files(whole) == kept.encode()
    stream = DiffStream(None, None)
    start = 0
    for size in cuts:
        stream.take(whole[start : start + size])
        start += size
    stream.take(whole[start:])
    stream.flush()
    assert stream.text() == kept
    assert stream.stats() == stats_from_diff(kept)
    # A forge's diff, read whole, the same.
    assert capped_diff(whole, 10_000) == (kept, stats_from_diff(kept))


def test_a_body_line_naming_the_file_is_not_a_header() -> None:
    # "+diff --git a/.redline/dismissed.toml ..." is an added line of a.py, not a section.
    text = _section("a.py", "a.py", [f"diff --git a/{STATE} b/{STATE}"])
    assert without_state_files(text.encode()) == text.encode()
