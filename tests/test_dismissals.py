"""Dismissals stick: .redline/dismissed.toml and inline markers, end to end through the CLI."""

from __future__ import annotations

import json
import os
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from redline.cli.main import main
from redline.model import Category, Finding, Severity, finding_id
from redline.store.dismissal_matching import apply_dismissals, filter_dismissed, inline_ignores
from redline.store.dismissals import (
    DISMISSED_PATH,
    Dismissal,
    DismissalError,
    DismissalStore,
    dumps,
)

from gitrepo import GitRepo

ID_A = "RL-0123456789ab"
ID_B = "RL-abcdef012345"


def make(code: str = "import os", file: str = "a.py", title: str = "Unused import") -> Finding:
    return Finding(
        id=finding_id(file, code, "Quality", title),
        file=file,
        line=1,
        end_line=1,
        severity=Severity.LOW,
        category=Category.QUALITY,
        title=title,
        comment="c",
        existing_code=code,
    )


# -- the file --------------------------------------------------------------------------------


def test_add_list_remove_round_trip(tmp_path: Path) -> None:
    store = DismissalStore(tmp_path)
    assert store.list() == [] and not store.is_dismissed(ID_A)
    finding = make()
    when = datetime(2026, 3, 4, 5, 6, 7, 890, tzinfo=UTC)
    entry = store.add(finding, "we re-export it", by="alice", when=when)
    assert entry.when == "2026-03-04T05:06:07Z"
    assert store.list() == [entry]
    assert store.is_dismissed(finding.id)
    assert (tmp_path / DISMISSED_PATH).read_text(encoding="utf-8").startswith("# Findings")
    # Re-dismissing replaces, never duplicates.
    store.add(finding, "new reason")
    assert [d.reason for d in store.list()] == ["new reason"]
    assert store.remove(finding.id) and not store.remove(finding.id)
    assert store.list() == []


def test_file_is_valid_toml_with_a_datetime_and_an_ordinary_mode(tmp_path: Path) -> None:
    store = DismissalStore(tmp_path)
    store.add(make(), "r", when=datetime(2026, 1, 1, tzinfo=UTC))
    doc = tomllib.loads(store.path.read_text(encoding="utf-8"))
    assert doc["dismissed"][0]["when"] == datetime(2026, 1, 1, tzinfo=UTC)
    assert "by" not in doc["dismissed"][0]
    if os.name == "posix":
        assert store.path.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    "reason",
    [
        'says "hello" and \\backslash\\',
        "line one\nline two\r\nthree\ttab",
        "unicode: naïve — 日本語 😀",
        "control \x00\x07\x1b\x7f chars",
        "'''triple''' \"\"\"quotes\"\"\"",
        "# not a comment ] [[dismissed]]",
        "",
    ],
)
def test_reasons_round_trip(tmp_path: Path, reason: str) -> None:
    store = DismissalStore(tmp_path)
    finding = make(title=f"title {reason}")
    store.add(finding, reason, by=reason)
    (entry,) = store.list()
    assert (entry.reason, entry.title, entry.by) == (reason, finding.title, reason)


def test_hand_added_keys_survive_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / DISMISSED_PATH
    path.parent.mkdir()
    path.write_text(
        '[[dismissed]]\nid = "RL-0123456789ab"\nreason = "ok"\nticket = "JIRA-1"\n'
        'priority = 3\nlabels = ["a", "b"]\n"odd key" = true\nwhen = "last week"\n',
        encoding="utf-8",
    )
    store = DismissalStore(tmp_path)
    store.add(make(), "second")
    first, second = store.list()
    assert first.id == ID_A and first.when == "last week"
    assert first.extra == {"ticket": "JIRA-1", "priority": 3, "labels": ["a", "b"], "odd key": True}
    assert second.reason == "second"


def test_syntax_error_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / DISMISSED_PATH
    path.parent.mkdir()
    path.write_text('[[dismissed]]\nid = "RL-0123456789ab\n', encoding="utf-8")
    with pytest.raises(DismissalError) as info:
        DismissalStore(tmp_path).list()
    assert "dismissed.toml is not valid TOML" in info.value.message
    assert "line 2" in info.value.message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('dismissed = "x"\n', "array of tables"),
        ("[[dismissed]]\nreason = 'no id'\n", "has no `id`"),
        ("dismissed = [1]\n", "is not a table"),
    ],
)
def test_wrong_shapes_are_clear_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / DISMISSED_PATH
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DismissalError, match=message):
        DismissalStore(tmp_path).ids()


def test_dumps_of_nothing_is_just_the_header() -> None:
    assert tomllib.loads(dumps([])) == {}
    assert tomllib.loads(dumps([Dismissal(id=ID_A)]))["dismissed"][0]["id"] == ID_A


# -- inline markers --------------------------------------------------------------------------


def test_inline_markers_in_every_comment_style() -> None:
    text = f"""
import os  # redline: ignore[{ID_A}] re-exported for plugins
x = 1 // redline:ignore[{ID_B.upper().replace("RL-", "RL-")}]
-- redline: ignore[RL-111111111111] sql reason
/* redline: ignore[RL-222222222222] block reason */
<!-- redline: ignore[RL-333333333333] html reason -->
/*
 * redline: ignore[RL-444444444444, RL-555555555555] two at once
 */
"""
    found = inline_ignores(text)
    assert found == {
        ID_A: "re-exported for plugins",
        ID_B: "",
        "RL-111111111111": "sql reason",
        "RL-222222222222": "block reason",
        "RL-333333333333": "html reason",
        "RL-444444444444": "two at once",
        "RL-555555555555": "two at once",
    }


def test_markers_outside_comments_or_malformed_are_ignored() -> None:
    text = (
        f'msg = "redline: ignore[{ID_A}] in a string"\n'
        "# redline: ignore[RL-123] too short\n"
        "# redline: ignore RL-0123456789ab no brackets\n"
    )
    assert inline_ignores(text) == {}


def test_apply_dismissals_by_store_and_by_marker(tmp_path: Path) -> None:
    a, b, c = make("import os"), make("import sys"), make("import re", file="b.py")
    store = DismissalStore(tmp_path)
    store.add(a, "stored")
    texts = {"a.py": f"import os\nimport sys  # redline: ignore[{b.id}] marker\n", "b.py": None}
    kept, dismissed = apply_dismissals([a, b, c], store, texts.get)
    assert kept == [c] and dismissed == [a, b]
    # bytes (what the pipeline holds) work too
    kept, _ = apply_dismissals([b], None, lambda _p: f"# redline: ignore[{b.id}]".encode())
    assert kept == []


def test_filter_dismissed_with_a_broken_file_warns_and_still_honours_markers(
    tmp_path: Path,
) -> None:
    (tmp_path / ".redline").mkdir()
    (tmp_path / DISMISSED_PATH).write_text("not toml at all [", encoding="utf-8")
    a, b = make("import os"), make("import sys")
    text = f"# redline: ignore[{a.id}]\n"
    kept, notes = filter_dismissed([a, b], tmp_path, lambda _p: text)
    assert kept == [b]
    assert notes[0].startswith("dismissals not applied:") and "not valid TOML" in notes[0]
    assert notes[1] == "1 finding dismissed (.redline/dismissed.toml or inline markers)"
    assert filter_dismissed([b], tmp_path / "nowhere", lambda _p: None) == ([b], [])


# -- end to end: the CLI on a real repository ------------------------------------------------


@pytest.fixture
def _isolated_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in list(os.environ):
        # REDLINE_CACHE_DIR stays: conftest points it at a temporary directory.
        if var.startswith("REDLINE_") and var != "REDLINE_CACHE_DIR":
            monkeypatch.delenv(var)
    monkeypatch.setenv("REDLINE_CONFIG", os.devnull)  # no user file


def review(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    code = main(["review", "--repo", str(repo.root), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


@pytest.mark.usefixtures("_isolated_config")
def test_dismissed_finding_never_comes_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.write("a.py", "x = 1\n")
    repo.write("b.py", "y = 2\n")
    repo.commit("base")
    repo.write("a.py", "import os\nx = 1\n")
    repo.write("b.py", "import sys\ny = 2\n")

    first = review(repo, capsys)
    by_file = {f["file"]: f for f in first["findings"] if "ruff:F401" in f["sources"]}
    assert set(by_file) == {"a.py", "b.py"}, first["findings"]
    target, other = by_file["a.py"], by_file["b.py"]

    # Dismiss a.py's finding by id in the committed file.
    finding = Finding.model_validate(target)
    DismissalStore(repo.root).add(finding, "re-exported on purpose", by="test")
    second = review(repo, capsys)
    ids = {f["id"] for f in second["findings"]}
    assert target["id"] not in ids and other["id"] in ids
    assert any("1 finding dismissed" in n for n in second["coverage"]["notes"])

    # The same with an inline marker instead (the toml entry removed again).
    DismissalStore(repo.root).remove(target["id"])
    assert target["id"] in {f["id"] for f in review(repo, capsys)["findings"]}
    # On the flagged line itself (which changes the line, yet the marker's id still matches).
    repo.write("b.py", f"import sys  # redline: ignore[{other['id']}] side effects\ny = 2\n")
    third = review(repo, capsys)
    ids = {f["id"] for f in third["findings"]}
    assert target["id"] in ids
    assert not [f for f in third["findings"] if f["file"] == "b.py"], third["findings"]
    # On a line of its own anywhere in the file; a marker with another id hides nothing.
    repo.write("b.py", "import sys\ny = 2\n# redline: ignore[RL-000000000000] other\n")
    assert other["id"] in {f["id"] for f in review(repo, capsys)["findings"]}
    repo.write("b.py", f"import sys\ny = 2\n# redline: ignore[{other['id']}] side effects\n")
    fourth = review(repo, capsys)
    assert {f["id"] for f in fourth["findings"]} >= {target["id"]}
    assert other["id"] not in {f["id"] for f in fourth["findings"]}
