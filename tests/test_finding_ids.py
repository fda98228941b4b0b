"""Finding ids are unique within a review: identical findings in one file (the same line twice)
are numbered in line order, the first keeping its old id; dismissing one occurrence dismisses
that one only, "all like this" every occurrence. Through the model helpers, the real CLI on a
real repository, and the language server."""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lsprotocol import types

from redline.analyzers.rules import family
from redline.cli.main import main
from redline.model import Category, Finding, Severity, finding_id, number_occurrences
from redline.store.dismissal_matching import split_dismissed
from redline.store.dismissals import DISMISSED_PATH, DismissalStore, Dismissed

from gitrepo import GitRepo
from lsp_support import Session, plain, server_env, start_session, stop_session

SHELL = "    subprocess.call(cmd, shell=True)"
SOURCE = f"import subprocess\n\n\ndef run(cmd):\n{SHELL}\n{SHELL}\n"
SHELL_LINES = [5, 6]  # 1-based
_ID = re.compile(r"RL-[0-9a-f]{12}")


def make(line: int | None, code: str = "eval(x)", file: str = "a.py") -> Finding:
    return Finding(
        id=finding_id(file, code, "Security", "S307"),
        file=file,
        line=line,
        end_line=line,
        severity=Severity.HIGH,
        category=Category.SECURITY,
        title="eval",
        comment="c",
        existing_code=code,
    )


# -- numbering ---------------------------------------------------------------------------------


def test_identical_findings_get_distinct_ids_in_line_order_the_first_keeping_its_id() -> None:
    base = make(3).id
    later, first, other = make(9), make(3), make(4, code="exec(x)")
    numbered = number_occurrences([later, first, other])
    # Same order as given; the one on line 3 is the first occurrence whatever the input order.
    assert [f.line for f in numbered] == [9, 3, 4]
    assert numbered[1].id == base and numbered[1].base_id is None
    assert numbered[0].id != base and numbered[0].base_id == base
    assert numbered[0].family_id == numbered[1].family_id == base
    assert numbered[2] == other  # alone: untouched
    assert all(_ID.fullmatch(f.id) for f in numbered)
    assert len({f.id for f in numbered}) == 3
    # Numbering again (or numbering the same findings from a re-review) gives the same ids.
    assert [f.id for f in number_occurrences(numbered)] == [f.id for f in numbered]
    assert [f.id for f in number_occurrences([first, later, other])] == [
        numbered[1].id,
        numbered[0].id,
        other.id,
    ]


def test_three_occurrences_and_an_unanchored_one_are_all_distinct() -> None:
    numbered = number_occurrences([make(None), make(20), make(2), make(11)])
    assert len({f.id for f in numbered}) == 4
    by_line = {f.line: f for f in numbered}
    assert by_line[2].id == make(2).id  # the first anchored one keeps the base id
    assert by_line[None].base_id == make(2).id  # unanchored: numbered last


def test_dismissing_one_occurrence_or_all_like_it(tmp_path: Path) -> None:
    first, second = number_occurrences([make(3), make(9)])
    no_markers = lambda _path: None  # noqa: E731
    store = DismissalStore(tmp_path)
    store.add(second, "this one is fine")
    kept, dismissed = split_dismissed([first, second], store.dismissed(), no_markers)
    assert kept == [first] and dismissed == [second]
    assert store.is_dismissed(second) and not store.is_dismissed(first)

    store.remove(second.id)
    entry = store.add(second, "all of them are fine", all_like_this=True)
    assert entry.id == first.id and entry.all_like_this  # stored as the base id
    assert "all = true" in (tmp_path / DISMISSED_PATH).read_text(encoding="utf-8")
    assert store.dismissed() == Dismissed(every=frozenset({first.id}))
    # Every occurrence, including one that did not exist when it was dismissed.
    third = number_occurrences([make(3), make(9), make(12)])
    assert split_dismissed(third, store.dismissed(), no_markers)[0] == []


def test_an_old_dismissed_toml_still_loads_and_dismisses_the_first_occurrence(
    tmp_path: Path,
) -> None:
    first, second = number_occurrences([make(3), make(9)])
    # As Redline wrote it before ids were unique (no `all`): it used to silence both.
    (tmp_path / DISMISSED_PATH).parent.mkdir(parents=True)
    (tmp_path / DISMISSED_PATH).write_text(
        "# Findings dismissed in Redline reviews.\n\n"
        f'[[dismissed]]\nid = "{first.id}"\nfile = "a.py"\ntitle = "eval"\n'
        'reason = "trusted input"\nwhen = 2026-01-01T12:00:00Z\nby = "alice"\n',
        encoding="utf-8",
    )
    store = DismissalStore(tmp_path)
    [entry] = store.list()
    assert entry.id == first.id and not entry.all_like_this and entry.by == "alice"
    kept, dismissed = split_dismissed([first, second], store.dismissed(), lambda _p: None)
    assert dismissed == [first] and kept == [second]


# -- the CLI on a real repository --------------------------------------------------------------


@pytest.fixture
def _isolated_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in list(os.environ):
        if var.startswith("REDLINE_") and var != "REDLINE_CACHE_DIR":
            monkeypatch.delenv(var)
    monkeypatch.setenv("REDLINE_CONFIG", os.devnull)


def review(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> list[dict]:  # type: ignore[type-arg]
    code = main(["review", "--repo", str(repo.root), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)["findings"]  # type: ignore[no-any-return]


def shell_findings(findings: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    found = [f for f in findings if "shell=True" in f["existing_code"]]
    return sorted(found, key=lambda f: f["line"])


def shell_repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "r")
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    repo.write("a.py", SOURCE)
    return repo


@pytest.mark.usefixtures("_isolated_config")
def test_two_identical_lines_get_distinct_ids_stable_across_reviews(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = shell_repo(tmp_path)
    first = shell_findings(review(repo, capsys))
    assert [f["line"] for f in first] == SHELL_LINES, first
    a, b = first
    assert a["id"] != b["id"] and _ID.fullmatch(b["id"])
    assert a["base_id"] is None and b["base_id"] == a["id"]
    # The first keeps the id it had before ids were made unique: the plain fingerprint.
    titles = {family(*s.split(":", 1)) for s in a["sources"]}
    assert a["id"] in {finding_id("a.py", SHELL, a["category"], t) for t in titles}

    again = shell_findings(review(repo, capsys))
    assert [f["id"] for f in again] == [a["id"], b["id"]]


@pytest.mark.usefixtures("_isolated_config")
def test_dismissing_one_of_two_identical_lines_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = shell_repo(tmp_path)
    a, b = (Finding.model_validate(f) for f in shell_findings(review(repo, capsys)))
    store = DismissalStore(repo.root)

    store.add(b, "this call is fine", by="test")
    assert [f["id"] for f in shell_findings(review(repo, capsys))] == [a.id]
    store.remove(b.id)
    store.add(a, "this call is fine", by="test")
    assert [f["id"] for f in shell_findings(review(repo, capsys))] == [b.id]

    store.add(a, "every such call is fine", by="test", all_like_this=True)
    assert shell_findings(review(repo, capsys)) == []
    store.remove(a.id)
    assert len(shell_findings(review(repo, capsys))) == 2


@pytest.mark.usefixtures("_isolated_config")
def test_an_inline_marker_on_one_of_two_identical_lines_hides_that_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = shell_repo(tmp_path)
    a, b = shell_findings(review(repo, capsys))
    head = "import subprocess\n\n\ndef run(cmd):\n"
    # On the second line, naming its occurrence id (the marker changes that line's code).
    repo.write("a.py", f"{head}{SHELL}\n{SHELL}  # redline: ignore[{b['id']}] fine\n")
    assert [f["line"] for f in shell_findings(review(repo, capsys))] == [5]
    # On the first line: the second, now the only plain one, inherits the first's id, and the
    # marker on the first line must not hide it.
    repo.write("a.py", f"{head}{SHELL}  # redline: ignore[{a['id']}] fine\n{SHELL}\n")
    left = shell_findings(review(repo, capsys))
    assert [f["line"] for f in left] == [6] and left[0]["id"] == a["id"]


# -- the language server -----------------------------------------------------------------------


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[Session, GitRepo]]:
    repo = shell_repo(tmp_path)
    s = await start_session(repo.root, "vscode", server_env(tmp_path / "cache"))
    yield s, repo
    await stop_session(s)


def shell_diagnostics(s: Session) -> list[types.Diagnostic]:
    found = [
        d
        for d in s.client.diagnostics.get(s.uri("a.py"), [])
        if d.source == "redline" and d.range.start.line + 1 in SHELL_LINES
    ]
    return sorted(found, key=lambda d: d.range.start.line)


def shell_lines(s: Session) -> list[int]:
    return [d.range.start.line + 1 for d in shell_diagnostics(s)]


async def test_dismiss_one_or_all_like_this_through_the_language_server(
    server: tuple[Session, GitRepo],
) -> None:
    s, repo = server
    await s.finished(await s.review(scope="uncommitted"))
    await s.until(lambda: shell_lines(s) == SHELL_LINES, what="both shell lines shown")
    ids = [d.data["id"] for d in shell_diagnostics(s)]  # type: ignore[index]
    assert len(set(ids)) == 2

    # Both lines offer "dismiss all like this" (there is more than one occurrence).
    pos = types.Position(line=SHELL_LINES[1] - 1, character=6)
    actions = await s.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri("a.py")),
            range=types.Range(start=pos, end=pos),
            context=types.CodeActionContext(diagnostics=shell_diagnostics(s)),
        )
    )
    commands = [a.command for a in actions or [] if isinstance(a, types.CodeAction) and a.command]
    all_like = [c for c in commands if c.command == "redline.dismissAllLikeThis"]
    assert [list(c.arguments or []) for c in all_like] == [[s.uri("a.py"), ids[1]]]

    done = plain(await s.command("redline.dismiss", {"id": ids[1], "reason": "fine"}))
    assert done == {"dismissed": [ids[1]]}
    await s.until(lambda: shell_lines(s) == [5], what="only the second line dismissed")
    stored = DismissalStore(repo.root).list()
    assert [(d.id, d.all_like_this) for d in stored] == [(ids[1], False)]

    await s.finished(plain(await s.command("redline.rerun"))["taskId"])
    assert shell_lines(s) == [5]

    done = plain(await s.command("redline.dismiss", {"id": ids[0], "reason": "ok", "all": True}))
    assert done == {"dismissed": [ids[0]], "all": True}
    await s.until(lambda: shell_lines(s) == [], what="every occurrence dismissed")
    assert (ids[0], True) in [(d.id, d.all_like_this) for d in DismissalStore(repo.root).list()]
    await s.finished(plain(await s.command("redline.rerun"))["taskId"])
    assert shell_lines(s) == []


async def test_dismiss_all_like_this_code_action_command(
    server: tuple[Session, GitRepo],
) -> None:
    s, _repo = server
    await s.finished(await s.review(scope="uncommitted"))
    await s.until(lambda: shell_lines(s) == SHELL_LINES, what="both shell lines shown")
    first = shell_diagnostics(s)[0].data["id"]  # type: ignore[index]
    done = plain(await s.command("redline.dismissAllLikeThis", s.uri("a.py"), first))
    assert done == {"dismissed": [first], "all": True}
    await s.until(lambda: shell_lines(s) == [], what="every occurrence dismissed")
    with pytest.raises(Exception, match="all must be true or false"):
        await s.command("redline.dismiss", {"id": first, "reason": "x", "all": "yes"})
