"""The learnings file format (memory/learnings.py): canonical rendering reads back exactly,
hand-edited files lose only their broken learnings, and scopes match the paths they name."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.diff.functions import language_for
from redline.memory.learnings import (
    Learning,
    LearningError,
    clean_text,
    make_learning,
    parse,
    render,
)

_texts = st.text(min_size=1, max_size=120).filter(lambda t: clean_text(t) != "")
_segment = st.text(
    alphabet=st.characters(blacklist_categories=("C", "Zl", "Zp"), blacklist_characters="`/"),
    min_size=1,
    max_size=12,
).filter(lambda s: s.strip() and s.strip() not in (".", ".."))
_globs = st.lists(_segment, min_size=1, max_size=4).map("/".join).map(str.strip).filter(
    lambda g: g and not g.startswith(("/", "./")) and "`" not in g
) | st.sampled_from(["tests/**", "*.py", "docs/", "**/conftest.py", "src/[ab]*.ts"])
_rules = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,20}", fullmatch=True)
_languages = st.sampled_from(["python", "typescript", "go", "rust", "c++", "shell"])


@st.composite
def learnings(draw: st.DrawFn) -> Learning:
    return make_learning(
        draw(_texts),
        draw(st.lists(_globs, max_size=4)),
        draw(st.none() | _languages),
        draw(st.lists(_rules, max_size=4)),
    )


def _unique(items: list[Learning]) -> list[Learning]:
    return list({item.id: item for item in items}.values())


@settings(max_examples=150, deadline=None)
@given(st.lists(learnings(), max_size=30).map(_unique))
def test_render_reads_back_exactly(items: list[Learning]) -> None:
    parsed = parse(render(items))
    assert parsed.problems == []
    assert parsed.learnings == items


@settings(max_examples=200, deadline=None)
@given(st.lists(learnings(), min_size=2, max_size=10).map(_unique), st.data())
def test_a_broken_line_loses_only_its_learning(items: list[Learning], data: st.DataObject) -> None:
    lines = render(items).split("\n")
    metas = [n for n, line in enumerate(lines) if line.startswith("  id: L-") and n > 10]
    broken = data.draw(st.sampled_from(metas))
    lines[broken] = lines[broken] + " · colour: blue"
    parsed = parse("\n".join(lines))
    lost = items[metas.index(broken)]
    assert parsed.learnings == [i for i in items if i is not lost]
    assert len(parsed.problems) == 1
    assert parsed.problems[0].startswith(f"line {broken + 1}: ")


def test_hand_written_file() -> None:
    text = "\n".join(
        [
            "# Our learnings",
            "Some prose that is not a learning.",
            "<!-- a comment",
            "- a bullet inside a comment is not a learning",
            "-->",
            "```",
            "- nor one in a code block",
            "```",
            "* We allow assert in tests,",
            "  wrapped by hand.",
            "  paths: `tests/**`, `conftest.py` ; rules: S101",
            "- Whole repository, no id line",
            "- Bad glob",
            "  paths: tests/**",
            "- Prefer pathlib",
            "  ID: l-0123ABCD | language: Python",
        ]
    )
    parsed = parse(text)
    assert [(i.text, i.paths, i.language, i.rules) for i in parsed.learnings] == [
        (
            "We allow assert in tests, wrapped by hand.",
            ("tests/**", "conftest.py"),
            None,
            ("S101",),
        ),
        ("Whole repository, no id line", (), None, ()),
        ("Prefer pathlib", (), "python", ()),
    ]
    assert parsed.learnings[2].id == "L-0123abcd"
    assert parsed.problems == [
        "line 14: paths must be globs in backticks: paths: `tests/**`; this learning is left out"
    ]


def test_an_id_used_twice_keeps_the_first() -> None:
    parsed = parse("- one\n  id: L-00000001\n- two\n  id: L-00000001\n")
    assert [i.text for i in parsed.learnings] == ["one"]
    assert parsed.problems == ["line 4: id L-00000001 is used twice; this learning is left out"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("   ",), "a learning needs some text"),
        (("x", ["/etc/*"]), "must be relative"),
        (("x", ["a`b"]), "backtick"),
        (("x", [], "no spaces"), "not a language name"),
        (("x", [], None, ["S 101"]), "not an analyzer rule id"),
        (("x" * 501,), "at most 500 characters"),
    ],
)
def test_bad_learnings_are_refused(args: tuple, message: str) -> None:
    with pytest.raises(LearningError, match=re.escape(message)):
        make_learning(*args)


def test_text_is_one_clean_line() -> None:
    item = make_learning("  we\u202e allow\n\tassert\u2028in\x1b tests \u200b ")
    assert item.text == "we allow assert in tests"


# -- scope matching ----------------------------------------------------------------------------

_scope_globs = st.lists(st.sampled_from(["*.py", "tests/**", "src/", "*.ts"]), max_size=3)
_names = st.from_regex(r"[a-z0-9_]{1,8}", fullmatch=True)
_paths = (
    st.lists(_names, min_size=1, max_size=4)
    .map("/".join)
    .flatmap(
        lambda stem: st.sampled_from([".py", ".ts", ".tsx", ".go", ".md", ""]).map(
            lambda e: stem + e
        )
    )
)


@settings(max_examples=150, deadline=None)
@given(_paths)
def test_no_scope_is_the_whole_repository(path: str) -> None:
    assert make_learning("x").applies_to(path)


@settings(max_examples=150, deadline=None)
@given(_names, _paths)
def test_a_directory_glob_covers_exactly_that_directory(directory: str, path: str) -> None:
    item = make_learning("x", [f"{directory}/**"])
    assert item.applies_to(f"{directory}/{path}")
    if not path.startswith(f"{directory}/"):
        assert not item.applies_to(path)


@settings(max_examples=150, deadline=None)
@given(_paths, _paths)
def test_a_literal_path_covers_itself_and_not_others(path: str, other: str) -> None:
    item = make_learning("x", [path])
    assert item.applies_to(path)
    if other != path and "/" in path:
        assert not item.applies_to(other)


@settings(max_examples=150, deadline=None)
@given(
    _paths, st.lists(st.sampled_from(["*.py", "tests/**", "src/", "*.ts"]), max_size=3), _languages
)
def test_paths_and_language_must_both_match(path: str, globs: list[str], language: str) -> None:
    both = make_learning("x", globs, language)
    by_glob = make_learning("x", globs)
    by_language = make_learning("x", [], language)
    assert both.applies_to(path) == (by_glob.applies_to(path) and by_language.applies_to(path))
    found = language_for(path)
    assert by_language.applies_to(path) == (
        found == language or (language == "typescript" and found == "tsx")
    )
