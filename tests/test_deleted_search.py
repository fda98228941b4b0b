"""The search for a deleted file's definitions in the new tree (review/deleted.py), on real
repositories: one search whatever the number of names, stubs/vendored/generated deletions left
out, and a search cut short said in the review's coverage (the report a user reads)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.config_models import AnalyzerSettings, Settings
from redline.model import Review
from redline.report.markdown import render_markdown
from redline.requests import ScopeKind, ScopeRequest
from redline.review import deleted
from redline.review.pipeline import plan_review, run_review
from redline.tools.code_tools import defines, definition_of

from gitrepo import GitRepo

OFFLINE = Settings(analyzers=AnalyzerSettings(ruff=False, bandit=False))


def _review(repo: GitRepo, base: str) -> Review:
    plan = plan_review(repo.root, ScopeRequest(ScopeKind.RANGE, f"{base}..HEAD"), OFFLINE)
    return run_review(plan, OFFLINE)


def _deleted_titles(review: Review) -> list[str]:
    return sorted(f.title for f in review.findings if f.sources == [deleted.SOURCE])


def _many_modules(repo: GitRepo, modules: int, names: int) -> None:
    for m in range(modules):
        body = "".join(f"def name_{m}_{n}(x):\n    return x\n\n\n" for n in range(names))
        repo.write(f"pkg/mod_{m}.py", body)


def test_a_caller_left_among_many_deleted_names_is_found(repo: GitRepo) -> None:
    _many_modules(repo, 60, 40)  # 2,400 names, each file's 40 (MAX_SYMBOLS) searched
    repo.write("app.py", "from pkg.mod_37 import name_37_12\n\nname_37_12(1)\n")
    repo.write("other.py", "value = 'name_5_5 in a string is a use too'\n")
    base = repo.commit("modules")
    repo.git("rm", "-q", "-r", "pkg")
    repo.commit("drop pkg")
    review = _review(repo, base)
    assert _deleted_titles(review) == [
        "`name_37_12` is still used, but `pkg/mod_37.py` is deleted",
        "`name_5_5` is still used, but `pkg/mod_5.py` is deleted",
    ]
    finding = next(f for f in review.findings if "name_37_12" in f.title)
    assert (finding.file, finding.line) == ("app.py", 1)
    assert "app.py:1, app.py:3" in finding.comment
    assert not any("cut short" in note for note in review.coverage.notes)


def test_a_name_inside_a_longer_word_is_no_use(repo: GitRepo) -> None:
    repo.write("lib/old.py", "def parse_row(r):\n    return r\n\n\nclass Loader:\n    pass\n")
    repo.write("app.py", "reparse_rows = 1\nmy_Loader = 2\nLoaders = 3\n$Loader = 4\n")
    base = repo.commit("old")
    repo.git("rm", "-q", "lib/old.py")
    repo.commit("drop old")
    assert _deleted_titles(_review(repo, base)) == []


def test_a_deleted_stub_is_not_searched(repo: GitRepo) -> None:
    """A .pyi declares what another file implements (typeshed's builtins.pyi declares `int` and
    `str`): the new tree's uses of those names are not uses of the stub."""
    repo.write(
        "stubs/fakelib.pyi", "class Frobnicator:\n    ...\n\ndef frobnicate(x: int) -> int: ...\n"
    )
    repo.write("app.py", "def frobnicate(x):\n    return Frobnicator()\n")
    repo.write("lib/gone.py", "def vanished_helper():\n    return 1\n")
    repo.write("main.py", "from lib.gone import vanished_helper\nvanished_helper()\n")
    base = repo.commit("stubs")
    repo.git("rm", "-q", "stubs/fakelib.pyi", "lib/gone.py")
    repo.commit("drop the stub and a module")
    assert _deleted_titles(_review(repo, base)) == [
        "`vanished_helper` is still used, but `lib/gone.py` is deleted"
    ]


def test_a_search_cut_short_is_said_in_the_coverage(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("lib/old.py", "def helper_one():\n    return 1\n")
    repo.write("app.py", "".join(f"helper_one()  # call {i}\n" for i in range(2000)))
    base = repo.commit("old")
    repo.git("rm", "-q", "lib/old.py")
    repo.commit("drop old")
    # The bound on what the search may read back, far below what this tree's uses need.
    monkeypatch.setattr(deleted, "GREP_MAX_OUTPUT", 4096)
    review = _review(repo, base)
    [note] = [n for n in review.coverage.notes if "cut short" in n]
    assert "deleted files" in note and "1 definition" in note
    assert note in render_markdown(review)
    assert _deleted_titles(review) == []


NAME = st.from_regex(r"[A-Za-z_$][\w$]{0,6}(\.[A-Za-z_$][\w$]{0,6})?", fullmatch=True)
PIECES = st.sampled_from(
    ["def", "class", "function", "func", "fn", "type", "const", "let", "var", "undef", "typedef",
     " ", "  ", "\t", "(", ")", "$", "_", "x", "é", "1", ".", "=", ":"]
)  # fmt: skip


@given(NAME, st.lists(st.one_of(PIECES, NAME), max_size=12))
def test_defines_agrees_with_the_definition_pattern(symbol: str, pieces: list[str]) -> None:
    """The deleted-file check (no pattern compiled per name) says what definition_of says."""
    text = "".join(pieces)
    assert defines(symbol, text) is bool(definition_of(symbol).search(text))
    line = f"def {symbol.rsplit('.', 1)[-1]}{text}"
    assert defines(symbol, line) is bool(definition_of(symbol).search(line))


def test_only_uses_in_code_count(repo: GitRepo) -> None:
    """Prose, comments, patches and vendored copies that mention a deleted name do not run it;
    what mypy's v0.900..v1.20.0 reported (`confirm` in a comment and in docs, `prelude` in a
    vendored typeshed stub) is no use. Code, tests and configuration are."""
    repo.write(
        "lib/tools.py", "def confirm_action(x):\n    return x\n\n\ndef shared_helper():\n    pass\n"
    )
    repo.write("docs/usage.rst", "Call confirm_action to be sure.\n")
    repo.write("README.md", "`shared_helper()` helps.\n")
    repo.write("app.py", "# TODO: confirm_action here\nx = 1\n    # shared_helper? no\n")
    repo.write("web/main.ts", "// confirm_action was here\nconst y = 1;\n")
    repo.write("vendor/thing/mod.py", "confirm_action = 1\n")
    repo.write("fixes/0001.patch", "+    confirm_action()\n")
    repo.write("tests/test_app.py", "from lib.tools import shared_helper\n")
    repo.write("pyproject.toml", '[project.scripts]\ngo = "lib.tools:confirm_action"\n')
    base = repo.commit("tools")
    repo.git("rm", "-q", "lib/tools.py")
    repo.commit("drop tools")
    review = _review(repo, base)
    assert _deleted_titles(review) == [
        "`confirm_action` is still used, but `lib/tools.py` is deleted",
        "`shared_helper` is still used, but `lib/tools.py` is deleted",
    ]
    by_title = {f.title.split("`")[1]: f for f in review.findings if f.sources == [deleted.SOURCE]}
    assert (by_title["confirm_action"].file, by_title["confirm_action"].line) == (
        "pyproject.toml",
        2,
    )
    assert "still uses the name at pyproject.toml:2. Unless" in by_title["confirm_action"].comment
    assert (by_title["shared_helper"].file, by_title["shared_helper"].line) == (
        "tests/test_app.py",
        1,
    )


def test_a_name_defined_again_in_a_vendored_copy_was_moved(repo: GitRepo) -> None:
    """mypy deleted its samples of the standard library (`test-data/stdlib-samples/3.2/
    posixpath.py`); `dirname` is still defined in the vendored typeshed stub and used in code.
    The name lives on: a definition anywhere in the new tree counts, though only code uses do."""
    repo.write("samples/posixpath.py", "def dirname(p):\n    return p\n")
    repo.write("mypy/typeshed/stdlib/posixpath.pyi", "def dirname(p: str) -> str: ...\n")
    repo.write("tool.py", "from os.path import dirname\n\ndirname('x')\n")
    base = repo.commit("samples")
    repo.git("rm", "-q", "samples/posixpath.py")
    repo.commit("drop samples")
    assert _deleted_titles(_review(repo, base)) == []
