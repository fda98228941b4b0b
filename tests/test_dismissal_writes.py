"""Dismissals write only inside the repository: `.redline/dismissed.toml`, never through a link.

The repository is the attacker's, and `.redline` is a path in it. A committed `.redline`
symbolic link once made an editor dismissal write `dismissed.toml` into any existing directory
(`~/.config/autostart`, a web root, another repository's `.git`). The rule now: the file is
written only as a regular file inside the work tree, every level opened without following a
link, and replaced atomically inside that same directory; anything else is a clear
DismissalError and nothing is written. Reading follows the same rule, so a linked
`dismissed.toml` is never read either.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from redline.errors import RedlineError
from redline.model import Category, Finding, Severity, finding_id
from redline.store.dismissals import DismissalError, DismissalStore

from gitrepo import GitRepo
from lsp_support import Session, plain, server_env, start_session, stop_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo


def make(code: str = "import os", file: str = "a.py") -> Finding:
    return Finding(
        id=finding_id(file, code, "Quality", "Unused import"),
        file=file,
        line=1,
        end_line=1,
        severity=Severity.LOW,
        category=Category.QUALITY,
        title="Unused import",
        comment="c",
        existing_code=code,
    )


def tree_listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory the attacker would like a file in (an autostart folder, a web root)."""
    target = tmp_path / "victim" / "autostart"
    target.mkdir(parents=True)
    (target / "keep.desktop").write_text("[Desktop Entry]\n")
    return target


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


def refuses(store: DismissalStore, named: str) -> None:
    with pytest.raises(DismissalError) as info:
        store.add(make(), "looked at it")
    assert named in info.value.message and "Traceback" not in info.value.message


def test_a_linked_redline_directory_is_refused(repo: Path, outside: Path) -> None:
    os.symlink(outside, repo / ".redline")
    refuses(DismissalStore(repo), ".redline")
    assert tree_listing(outside) == ["keep.desktop"]


def test_a_linked_redline_directory_inside_the_tree_is_refused_too(repo: Path) -> None:
    (repo / "docs").mkdir()
    os.symlink("docs", repo / ".redline")
    refuses(DismissalStore(repo), ".redline")
    assert tree_listing(repo / "docs") == []


def test_a_dangling_link_is_not_created_through(repo: Path, tmp_path: Path) -> None:
    ghost = tmp_path / "victim" / "new-dir"
    os.symlink(ghost, repo / ".redline")
    refuses(DismissalStore(repo), ".redline")
    assert not ghost.exists()


def test_a_linked_dismissed_file_is_neither_written_nor_read(repo: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.toml"
    victim.write_text('[[dismissed]]\nid = "RL-000000000000"\n')
    before = victim.read_bytes()
    (repo / ".redline").mkdir()
    os.symlink(victim, repo / ".redline" / "dismissed.toml")
    store = DismissalStore(repo)
    refuses(store, "dismissed.toml")
    with pytest.raises(DismissalError, match="symbolic link"):
        store.list()
    assert victim.read_bytes() == before
    assert os.path.islink(repo / ".redline" / "dismissed.toml")  # not replaced either


def test_the_repository_root_itself_may_be_reached_through_a_link(
    repo: Path, tmp_path: Path
) -> None:
    """The root is the user's (their workspace, found by Redline's own discovery); only what
    is below it is the repository's and may not be a link. The file lands in the real tree."""
    os.symlink(repo, tmp_path / "workspace")
    DismissalStore(tmp_path / "workspace").add(make(), "fine")
    assert (repo / ".redline" / "dismissed.toml").is_file()
    assert not os.path.islink(repo / ".redline")


def test_a_fifo_or_a_directory_in_its_place_is_refused_without_waiting(repo: Path) -> None:
    (repo / ".redline").mkdir()
    os.mkfifo(repo / ".redline" / "dismissed.toml")
    store = DismissalStore(repo)
    refuses(store, "dismissed.toml")
    with pytest.raises(DismissalError, match="not a regular file"):
        store.list()
    os.unlink(repo / ".redline" / "dismissed.toml")
    (repo / ".redline" / "dismissed.toml").mkdir()
    refuses(store, "dismissed.toml")


def test_redline_as_a_file_is_refused(repo: Path) -> None:
    (repo / ".redline").write_text("not a directory\n")
    refuses(DismissalStore(repo), ".redline")


def test_an_ordinary_write_is_atomic_and_keeps_the_mode(repo: Path) -> None:
    store = DismissalStore(repo)
    store.add(make(), "fine")
    path = repo / ".redline" / "dismissed.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    os.chmod(path, 0o664)
    store.add(make("import sys"), "also fine")
    assert stat.S_IMODE(path.stat().st_mode) == 0o664
    assert len(store.list()) == 2
    assert sorted(os.listdir(repo / ".redline")) == ["dismissed.toml"]  # no temporary left


@settings(max_examples=40, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(["dir", "link-out", "link-in", "file", "fifo"]), max_size=3),
)
def test_any_link_or_odd_file_on_the_way_means_nothing_is_written_outside(
    tmp_path_factory: pytest.TempPathFactory, kinds: list[str]
) -> None:
    """Whatever stands at `.redline` and `.redline/dismissed.toml` (a directory, a link out, a
    link inside, a file, a FIFO): the write either succeeds into a regular file inside the
    repository, or is a DismissalError — and nothing outside ever changes."""
    base = tmp_path_factory.mktemp("d")
    repo, outside = base / "repo", base / "outside"
    repo.mkdir()
    outside.mkdir()
    (repo / "inside").mkdir()
    places = [repo / ".redline", repo / ".redline" / "dismissed.toml"]
    for place, kind in zip(places, kinds, strict=False):
        if not place.parent.is_dir() or place.parent.is_symlink():
            break
        if kind == "dir":
            place.mkdir()
        elif kind == "link-out":
            os.symlink(outside, place)
        elif kind == "link-in":
            os.symlink(repo / "inside", place)
        elif kind == "file":
            place.write_text("x = 1\n")
        else:
            os.mkfifo(place)
    store = DismissalStore(repo)
    try:
        store.add(make(), "checked")
    except DismissalError:
        pass
    else:
        written = repo / ".redline" / "dismissed.toml"
        assert stat.S_ISREG(os.lstat(written).st_mode)
        assert not os.path.islink(repo / ".redline")
    assert os.listdir(outside) == []
    assert os.listdir(repo / "inside") == []


# -- the other file Redline writes in a repository: `redline init --repo-file` ---------------------


def init_repo_file(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env["REDLINE_CACHE_DIR"] = os.environ["REDLINE_CACHE_DIR"]
    env["REDLINE_CONFIG"] = os.devnull
    redline = str(Path(sys.executable).with_name("redline"))
    return subprocess.run(
        [redline, "init", "--repo-file", "--repo", str(root), *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("force", [False, True])
def test_init_never_writes_through_a_committed_link(tmp_path: Path, force: bool) -> None:
    repo = GitRepo(tmp_path / "repo")
    victim = tmp_path / "victim" / "autostart.desktop"
    victim.parent.mkdir()
    if force:
        victim.write_text("[Desktop Entry]\n")
    os.symlink(victim, repo.root / ".redline.toml")
    repo.commit("a .redline.toml link")
    done = init_repo_file(repo.root, *(["--force"] if force else []))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert ".redline.toml" in done.stderr
    # Without --force the link counts as a file already there; with it, it is refused.
    assert ("symbolic link" if force else "already exists") in done.stderr
    assert (victim.read_text() == "[Desktop Entry]\n") if force else not victim.exists()


def test_init_writes_an_ordinary_repository_file(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    done = init_repo_file(repo.root)
    assert done.returncode == 0, done.stderr
    written = repo.root / ".redline.toml"
    assert written.is_file() and not written.is_symlink()
    assert stat.S_IMODE(written.stat().st_mode) == 0o644
    again = init_repo_file(repo.root)
    assert again.returncode == 2 and "already exists" in again.stderr


# -- through the language server, as the editor does it ------------------------------------------


@pytest.fixture
async def editor(tmp_path: Path) -> AsyncIterator[Session]:
    root = demo.build_demo_repo(tmp_path / "demo")
    s = await start_session(root, "vscode", server_env(tmp_path / "cache"))
    yield s
    await stop_session(s)


async def test_editor_dismissal_through_a_committed_link_writes_nothing(
    editor: Session, outside: Path
) -> None:
    s = editor
    link = s.root / ".redline"
    os.symlink(outside, link)
    GitRepo(s.root).commit("a .redline link")  # committed, as in the attack
    task_id = await s.review(scope="branch", base="main")
    assert (await s.finished(task_id))["state"] == "finished"
    row = s.rows()[0]
    with pytest.raises(Exception) as info:
        await s.command("redline.dismiss", {"id": row["id"], "reason": "fine"})
    assert ".redline" in str(info.value) and "symbolic link" in str(info.value)
    assert tree_listing(outside) == ["keep.desktop"]
    # The finding is still shown: a dismissal that was not written did not happen.
    assert any(r["id"] == row["id"] for r in s.rows())
    # And an ordinary directory there works as before.
    link.unlink()
    done = plain(await s.command("redline.dismiss", {"id": row["id"], "reason": "fine"}))
    assert done and (s.root / ".redline" / "dismissed.toml").is_file()
    assert not isinstance(done, RedlineError)
