"""git, gh and glab where users have them (issue 24): the user's PATH, minus what the change's
author or another user could plant a program in; or the user's own `[tools]` entry.

Before, only /usr/local/bin, /usr/bin, /bin and /opt/homebrew/bin were searched: gh in
~/.local/bin (or a Nix profile, Linuxbrew, conda, snap, mise) was "not installed". The rules are
in git/binaries.py: hypothesis generates PATHs from relative entries, entries inside the
repository (spelled, or through a link), world-writable, group-writable and foreign-owned
directories and plain user directories; the real tests run the installed CLI with a fake gh on
PATH and a planted `git` inside the repository under review that must never run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model_env import isolate_model_env
from redline.git.binaries import SYSTEM_DIRS, Identity, dir_problem, find, search_dirs
from redline.tool_paths import name_tools

from fake_cli import add_change, calls, fake_gh, script
from gitrepo import GitRepo

REDLINE = str(Path(sys.executable).with_name("redline"))
KEEP = ("REDLINE_CACHE_DIR", "REDLINE_CONFIG")
OTHER_UID = 54321
OTHER_GID = 54321


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_model_env(monkeypatch, tmp_path)
    name_tools({})  # no [tools] entry from an earlier test's settings


def redline(*argv: str, cwd: Path, path: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_") or k in KEEP}
    env["PATH"] = path
    return subprocess.run(
        [REDLINE, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


# -- the rules, over generated PATHs ------------------------------------------------------------


class Layout:
    """Directories of every kind on disk (made once), each holding an executable `tool`."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.repo = base / "repo"
        (self.repo / ".git").mkdir(parents=True)
        self.good: dict[str, Path] = {}
        self.bad: dict[str, Path] = {}
        me = os.geteuid()
        for name in ("user1", "user2", "rootgroup"):
            self.good[name] = self._bin(base / name / "bin", 0o755)
        os.chown(self.good["rootgroup"], me, 0)
        self.good["rootgroup"].chmod(0o775)
        self.bad["in-repo"] = self._bin(self.repo / "bin", 0o755)
        self.bad["in-repo-deep"] = self._bin(self.repo / "sub" / "tools" / "bin", 0o755)
        self.bad["world"] = self._bin(base / "world" / "bin", 0o777)
        self.bad["sticky-world"] = self._bin(base / "stickyworld" / "bin", 0o1777)
        self.bad["group"] = self._bin(base / "group" / "bin", 0o775)
        os.chown(self.bad["group"], me, OTHER_GID)
        self.bad["foreign-owner"] = self._bin(base / "foreign" / "bin", 0o755)
        os.chown(self.bad["foreign-owner"], OTHER_UID, OTHER_GID)
        parent = base / "openparent"
        self.bad["open-parent"] = self._bin(parent / "bin", 0o755)
        parent.chmod(0o777)  # not sticky: anyone may rename bin/ and put their own there
        link_in = base / "link-into-repo"
        link_in.symlink_to(self.repo / "bin")
        self.bad["link-into-repo"] = link_in
        link_out = self.repo / "link-out"
        link_out.symlink_to(self.good["user1"])
        self.bad["link-spelled-in-repo"] = link_out
        self.relative = ["", ".", "bin", "./bin", "repo/bin", "../x"]

    @staticmethod
    def _bin(path: Path, mode: int) -> Path:
        path.mkdir(parents=True)
        script(path / "tool", "exit 0\n")
        path.chmod(mode)
        return path


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    if os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    return Layout(tmp_path_factory.mktemp("lookup"))


def _entries(layout: Layout) -> st.SearchStrategy[list[str]]:
    pool = [
        *[str(p) for p in layout.good.values()],
        *[str(p) for p in layout.bad.values()],
        *layout.relative,
        str(layout.base / "missing"),
        "/usr/bin",
    ]
    return st.lists(st.sampled_from(pool), max_size=12)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_no_program_comes_from_a_directory_the_rules_refuse(
    layout: Layout, data: st.DataObject
) -> None:
    entries = data.draw(_entries(layout))
    me = Identity.current()
    avoid = [layout.repo]
    searched, skipped = search_dirs(os.pathsep.join(entries), avoid, me)
    bad = {str(p) for p in layout.bad.values()}
    for directory in searched:
        assert os.path.isabs(directory)
        assert directory not in bad
        assert not Path(os.path.realpath(directory)).is_relative_to(layout.repo)
        assert not directory.startswith(str(layout.repo))
    # Every usable entry is searched, in PATH's order, before the system directories.
    good_dirs = {str(p) for p in layout.good.values()}
    good = [e for e in dict.fromkeys(entries) if e in good_dirs]
    assert [d for d in searched if d in good_dirs] == good
    for entry in entries if os.pathsep.join(entries) else []:  # PATH="": no entry at all
        if entry in bad or entry in layout.relative:
            assert (entry, dir_problem(entry, avoid, me)) in skipped
    found = find("tool", environ={"PATH": os.pathsep.join(entries)}, avoid=avoid)
    assert found.path == (os.path.join(good[0], "tool") if good else None)


@given(
    st.lists(
        st.one_of(
            st.just(""),
            st.from_regex(r"[A-Za-z0-9_.~-][A-Za-z0-9_./~-]{0,20}", fullmatch=True).filter(
                lambda s: not s.startswith("/")
            ),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_relative_entries_are_never_searched(entries: list[str]) -> None:
    searched, skipped = search_dirs(os.pathsep.join(entries), [], Identity.current())
    assert set(searched) <= set(SYSTEM_DIRS) | {os.path.normpath(d) for d in SYSTEM_DIRS}
    assert all(why.startswith("relative entry") for _, why in skipped if not os.path.isabs(_))


def test_each_refusal_says_why(layout: Layout) -> None:
    me = Identity.current()
    why = {name: dir_problem(str(p), [layout.repo], me) for name, p in layout.bad.items()}
    assert why["in-repo"] == why["in-repo-deep"] == "inside a repository under review"
    assert why["link-spelled-in-repo"] == "inside a repository under review"
    assert why["link-into-repo"] == "leads into a repository under review"
    assert why["world"] == why["sticky-world"] == "writable by every user"
    assert why["group"] == f"writable by group {OTHER_GID}"
    assert why["foreign-owner"] == f"owned by another user (uid {OTHER_UID})"
    assert why["open-parent"] == f"{layout.base / 'openparent'} is writable by every user"
    assert all(dir_problem(str(p), [layout.repo], me) is None for p in layout.good.values())


def test_a_program_that_others_can_change_is_skipped(tmp_path: Path) -> None:
    first = tmp_path / "first"
    second = tmp_path / "second"
    script(first / "tool", "exit 0\n").chmod(0o777)  # anyone may rewrite it
    script(second / "tool", "exit 0\n")
    found = find("tool", environ={"PATH": f"{first}:{second}"}, avoid=[])
    assert found.path == str(second / "tool")
    assert (str(first / "tool"), "writable by every user") in found.skipped


def test_not_found_lists_where_it_looked(tmp_path: Path) -> None:
    found = find("redline-no-such-tool", environ={"PATH": f"bin:{tmp_path}"}, avoid=[])
    message = found.where()
    assert found.path is None
    assert f"looked in {tmp_path}" in message and "/usr/bin" in message
    assert "bin: relative entry" in message
    assert '[tools] redline-no-such-tool = "/path/to/redline-no-such-tool"' in message


# -- the installed CLI ------------------------------------------------------------------------


@pytest.fixture
def pr_repo(tmp_path: Path) -> GitRepo:
    return add_change(GitRepo(tmp_path / "repo"), "https://github.com/acme/widget.git")


def test_gh_on_the_users_path_is_found(pr_repo: GitRepo, tmp_path: Path) -> None:
    gh = fake_gh(tmp_path)
    done = redline(
        "review", "--pr", "12", "--format", "json", cwd=pr_repo.root,
        path=f"{gh.parent}:{os.environ['PATH']}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "pr diff 12" in " ".join(calls(tmp_path, "gh"))
    assert json.loads(done.stdout)["stats"]["files"] == 1


def test_gh_named_in_user_settings_is_used(pr_repo: GitRepo, tmp_path: Path) -> None:
    gh = fake_gh(tmp_path)
    Path(os.environ["REDLINE_CONFIG"]).write_text(f'[tools]\ngh = "{gh}"\n')
    done = redline(
        "review", "--pr", "12", "--format", "json", cwd=pr_repo.root, path="/usr/bin:/bin"
    )
    assert done.returncode == 0, done.stderr
    assert "pr diff 12" in " ".join(calls(tmp_path, "gh"))


def test_gh_named_in_the_repository_file_is_ignored(pr_repo: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "repo-gh-ran"
    planted = script(pr_repo.root / "tools" / "gh", f'touch "{marker}"\nexit 0\n')
    pr_repo.write(".redline.toml", f'[tools]\ngh = "{planted}"\n')
    done = redline("review", "--pr", "12", cwd=pr_repo.root, path="/usr/bin:/bin")
    assert not marker.exists()
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "gh is not installed" in done.stderr
    assert "looked in /usr/bin" in done.stderr  # where it looked, and how to name it
    assert "[tools] gh" in done.stderr


def test_a_git_planted_in_the_repository_never_runs(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", "x = 1\n")
    repo.commit("one")
    repo.write("app.py", "x = 2\n")
    marker = tmp_path / "planted-git-ran"
    body = f'touch "{marker}"\nexit 1\n'
    for where in ("bin", "node_modules/.bin", "."):
        script(repo.root / where / "git", body)
        script(repo.root / where / "gh", body)
    repo.write(".gitignore", "bin/\nnode_modules/\ngit\ngh\n")
    hostile_path = os.pathsep.join(
        [str(repo.root / "bin"), "bin", ".", "", str(repo.root / "node_modules" / ".bin"),
         os.environ["PATH"]]
    )  # fmt: skip
    done = redline("review", "--format", "json", cwd=repo.root, path=hostile_path)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "app.py" in json.loads(done.stdout)["coverage"]["reviewed_files"]
    done = redline("review", "--pr", "1", cwd=repo.root, path=hostile_path)
    assert not marker.exists() and "Traceback" not in done.stderr


@pytest.mark.parametrize(("group", "trusted"), [("sudo", True), ("wheel", True), ("staff", False)])
def test_a_group_writable_directory_counts_by_who_is_in_the_group(
    tmp_path: Path, group: str, trusted: bool
) -> None:
    import grp

    try:
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        pytest.skip(f"no group {group} here")
    if os.geteuid() != 0:
        pytest.skip("chgrp to another group needs root")
    shared = tmp_path / "shared" / "bin"
    script(shared / "tool", "exit 0\n")
    os.chown(shared, os.geteuid(), gid)
    shared.chmod(0o775)
    why = dir_problem(str(shared), [], Identity.current())
    assert why == (None if trusted else f"writable by group {gid}")
