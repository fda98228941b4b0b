"""The rules of git/view.py, the private git directory every git process runs against: what is
copied from the repository's config (and what never is), the config file Redline writes, the
view's files, the environment that points git at it, and the clean-up of views.

Asserted on the view's files and on what git itself reads from them, so that inverting any rule
fails a test here (`make mutation MODULES=server/redline/git/view.py`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from redline.errors import RepositoryError
from redline.git.discovery import RepoLocation, discover
from redline.git.hardening import HARDENED_CONFIG
from redline.git.view import (
    RealConfig,
    RepoView,
    parse_real_config,
    render_config,
    strip_names,
    views_home,
)

from gitrepo import _ENV, GitRepo


def listing(*pairs: tuple[str, str]) -> bytes:
    """What `git config --list -z` prints for these pairs."""
    return b"".join(f"{key}\n{value}\0".encode() for key, value in pairs)


def git_reads(config_text: str, tmp_path: Path) -> dict[str, list[str]]:
    """Every key and value git itself reads from a config file's text."""
    path = tmp_path / "read-config"
    path.write_text(config_text)
    out = subprocess.run(
        ["git", "config", "--file", str(path), "--list", "-z"],
        env=_ENV,
        capture_output=True,
        check=True,
    ).stdout
    read: dict[str, list[str]] = {}
    for record in out.split(b"\0"):
        if record:
            key, _, value = record.decode().partition("\n")
            read.setdefault(key, []).append(value)
    return read


@pytest.fixture(autouse=True)
def _private_views_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """views_home() is <tmp>/redline-views-<uid>: a tmp directory of this test's own."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


# -- what is taken from the repository's config ----------------------------------------------


@pytest.mark.parametrize("value", ["sha256", "SHA256", " sha256 ", "sha1"])
def test_the_object_format_is_copied_lowercased_when_git_knows_it(value: str) -> None:
    real = parse_real_config(listing(("extensions.objectformat", value)))
    assert real.object_format == value.strip().lower()


def test_an_unknown_object_format_or_ref_storage_is_not_copied() -> None:
    real = parse_real_config(
        listing(("extensions.objectformat", "sha512"), ("extensions.refstorage", "sql"))
    )
    assert real.object_format is None and real.ref_storage is None


@pytest.mark.parametrize("value", ["reftable", "Files"])
def test_the_ref_storage_is_copied_when_git_knows_it(value: str) -> None:
    assert parse_real_config(listing(("extensions.refstorage", value))).ref_storage == (
        value.lower()
    )


@pytest.mark.parametrize(
    "pairs",
    [
        [("extensions.partialclone", "origin")],
        [("remote.origin.promisor", "true")],
        [("remote.a.promisor", "true"), ("remote.b.promisor", "false")],
    ],
)
def test_a_partial_clone_is_recognised_by_its_extension_or_any_promisor_remote(
    pairs: list[tuple[str, str]],
) -> None:
    assert parse_real_config(listing(*pairs)).partial_clone


@pytest.mark.parametrize(
    "pairs",
    [[], [("remote.origin.promisor", "false")], [("extensions.partialclone", "")]],
)
def test_a_repository_without_a_promisor_is_not_a_partial_clone(
    pairs: list[tuple[str, str]],
) -> None:
    assert not parse_real_config(listing(*pairs)).partial_clone


def test_file_system_facts_are_copied_with_their_known_values_only() -> None:
    real = parse_real_config(
        listing(
            ("core.filemode", "FALSE"),
            ("core.ignorecase", "true"),
            ("core.precomposeunicode", "false"),
            ("core.symlinks", "true"),
            ("core.autocrlf", "input"),
            ("core.eol", "crlf"),
            ("core.fsmonitor", "touch /tmp/pwned"),
            ("core.hookspath", "/tmp/hooks"),
            ("core.pager", "less"),
            ("diff.external", "evil"),
        )
    )
    assert real.facts == {
        "core.filemode": "false",
        "core.ignorecase": "true",
        "core.precomposeunicode": "false",
        "core.symlinks": "true",
        "core.autocrlf": "input",
        "core.eol": "crlf",
    }


def test_a_fact_with_a_value_outside_its_set_is_not_copied() -> None:
    real = parse_real_config(listing(("core.autocrlf", "sometimes"), ("core.eol", "true")))
    assert real.facts == {}


def test_remote_urls_of_plain_characters_are_copied_and_nothing_else_of_a_remote() -> None:
    real = parse_real_config(
        listing(
            ("remote.origin.url", "https://github.com/acme/widget.git"),
            ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"),
            ("remote.origin.uploadpack", "touch /tmp/pwned"),
            ("remote.origin.proxy", "http://evil.example"),
            ("remote.origin.gh-resolved", "base"),
            ("remote.up.url", "git@github.com:acme/widget.git"),
            ("remote.mirror.url", "ssh://git@example.com/acme/widget"),
            ("remote.g.url", "git://example.com/widget"),
        )
    )
    assert real.remotes == {
        "origin": {"url": "https://github.com/acme/widget.git", "gh-resolved": "base"},
        "up": {"url": "git@github.com:acme/widget.git"},
        "mirror": {"url": "ssh://git@example.com/acme/widget"},
        "g": {"url": "git://example.com/widget"},
    }


@pytest.mark.parametrize(
    "url",
    ["ext::sh -c touch% /tmp/pwned", "file:///etc", "/local/path", "https://a b", "fd::3", ""],
)
def test_a_remote_url_that_could_run_or_read_something_is_not_copied(url: str) -> None:
    assert parse_real_config(listing(("remote.origin.url", url))).remotes == {}


def test_the_first_url_of_a_remote_is_the_one_copied() -> None:
    real = parse_real_config(
        listing(
            ("remote.origin.url", "https://one.example/a"),
            ("remote.origin.url", "https://two.example/b"),
        )
    )
    assert real.remotes == {"origin": {"url": "https://one.example/a"}}


def test_a_remote_name_may_hold_dots_and_the_variable_is_the_last_part() -> None:
    real = parse_real_config(listing(("remote.my.fork.url", "https://example.com/fork")))
    assert real.remotes == {"my.fork": {"url": "https://example.com/fork"}}


@pytest.mark.parametrize("name", ["-evil", "a b", "ä", ".hidden"])
def test_a_remote_with_a_strange_name_is_not_copied_and_the_rest_still_is(name: str) -> None:
    real = parse_real_config(
        listing(
            (f"remote.{name}.url", "https://example.com/x"),
            ("remote.origin.url", "https://example.com/y"),
        )
    )
    assert real.remotes == {"origin": {"url": "https://example.com/y"}}


@pytest.mark.parametrize("value", ["acme/widget", "base"])
def test_gh_resolved_is_copied_when_it_is_base_or_owner_slash_repo(value: str) -> None:
    real = parse_real_config(listing(("remote.origin.gh-resolved", value)))
    assert real.remotes == {"origin": {"gh-resolved": value}}


@pytest.mark.parametrize("value", ["acme/widget/extra", "$(touch x)", "base "])
def test_any_other_gh_resolved_is_not_copied(value: str) -> None:
    assert parse_real_config(listing(("remote.origin.gh-resolved", value))).remotes == {}


def test_a_remote_key_without_a_variable_and_empty_records_are_skipped() -> None:
    data = (
        b"\0"
        + listing(("remote.url", "https://example.com/x"))
        + b"\0\0"
        + listing(("core.filemode", "false"))
    )
    assert parse_real_config(data) == RealConfig(facts={"core.filemode": "false"})


def test_the_key_ends_at_the_first_line_break_and_the_value_may_hold_more() -> None:
    real = parse_real_config(b"extensions.objectformat\nsha256\n\0")
    assert real.object_format == "sha256"


def test_a_record_without_a_value_reads_as_empty() -> None:
    assert parse_real_config(b"remote.origin.promisor\0").partial_clone is False


# -- the config file the view gets -----------------------------------------------------------


def test_the_view_config_is_exactly_what_redline_chose(tmp_path: Path) -> None:
    real = RealConfig(
        facts={"core.filemode": "false", "core.autocrlf": "input"},
        remotes={"origin": {"url": "https://github.com/acme/widget.git", "gh-resolved": "base"}},
    )
    read = git_reads(render_config(real, HARDENED_CONFIG), tmp_path)
    expected = {
        "core.repositoryformatversion": ["0"],
        "core.bare": ["false"],
        "core.logallrefupdates": ["false"],
        "core.autocrlf": ["input"],
        "core.filemode": ["false"],
        "diff.ignoresubmodules": ["dirty"],
        "diff.submodule": ["short"],
        "status.submodulesummary": ["false"],
        "submodule.recurse": ["false"],
        "gc.auto": ["0"],
        "maintenance.auto": ["false"],
        "remote.origin.gh-resolved": ["base"],
        "remote.origin.url": ["https://github.com/acme/widget.git"],
    }
    for key, value in HARDENED_CONFIG:
        expected.setdefault(key.lower(), []).append(value)
    assert read == expected


def test_extensions_raise_the_repository_format_version_to_one(tmp_path: Path) -> None:
    real = RealConfig(object_format="sha256", ref_storage="reftable")
    read = git_reads(render_config(real, []), tmp_path)
    assert read["core.repositoryformatversion"] == ["1"]
    assert read["extensions.objectformat"] == ["sha256"]
    assert read["extensions.refstorage"] == ["reftable"]
    only_format = git_reads(render_config(RealConfig(object_format="sha1"), []), tmp_path)
    assert only_format["core.repositoryformatversion"] == ["1"]
    assert "extensions.refstorage" not in only_format


def test_a_three_part_key_keeps_its_subsection(tmp_path: Path) -> None:
    text = render_config(
        RealConfig(remotes={"my.fork": {"url": "https://example.com/f"}}),
        [("gpg.x509.program", "false")],
    )
    read = git_reads(text, tmp_path)
    assert read["gpg.x509.program"] == ["false"]
    assert read["remote.my.fork.url"] == ["https://example.com/f"]
    assert '[gpg "x509"]' in text and '[remote "my.fork"]' in text


def test_the_sections_are_written_in_a_stable_order() -> None:
    real = RealConfig(
        facts={"core.symlinks": "true", "core.eol": "lf"},
        remotes={"zeta": {"url": "https://z.example/z"}, "alpha": {"url": "https://a.example/a"}},
    )
    text = render_config(real, [])
    assert text.index("eol") < text.index("symlinks")
    assert text.index('[remote "alpha"]') < text.index('[remote "zeta"]')
    assert text.startswith('[core]\n\trepositoryformatversion = "0"\n')
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_quotes_and_backslashes_in_values_reach_git_unchanged(tmp_path: Path) -> None:
    value = 'Xsay "hi" \\ thereX'
    read = git_reads(render_config(RealConfig(), [("alias.x", value)]), tmp_path)
    assert read["alias.x"] == [value]


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "a\0b"])
def test_a_value_with_a_line_break_is_never_written(bad: str) -> None:
    with pytest.raises(ValueError, match=r"^config values never contain line breaks$"):
        render_config(RealConfig(), [("alias.x", bad)])


# -- the view's files ----------------------------------------------------------------------


def _location(repo: GitRepo) -> RepoLocation:
    location = discover(repo.root, lambda _data, _key: None)
    assert location is not None
    return location


@pytest.fixture
def committed(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("a.py", "x = 1\n")
    repo.commit("one")
    return repo


def _view(repo: GitRepo, config: bytes = b"") -> RepoView:
    return RepoView(_location(repo), lambda _data: config, HARDENED_CONFIG)


def test_the_view_config_is_rendered_from_the_repository_config_read_as_data(
    committed: GitRepo,
) -> None:
    config = listing(("core.filemode", "false"), ("core.fsmonitor", "touch /tmp/x"))
    seen: list[bytes] = []

    def list_config(data: bytes) -> bytes:
        seen.append(data)
        return config

    view = RepoView(_location(committed), list_config, HARDENED_CONFIG)
    try:
        # The config file's bytes, read by Redline (never through a link), parsed by git.
        assert seen == [(committed.root / ".git" / "config").read_bytes()]
        assert (view.git_dir / "config").read_text() == render_config(
            parse_real_config(config), HARDENED_CONFIG
        )
        assert (view.root / "global-config").read_bytes() == b""
    finally:
        view.close()


def test_refs_and_their_companions_are_links_to_the_real_ones(committed: GitRepo) -> None:
    committed.git("pack-refs", "--all")
    view = _view(committed)
    real = committed.root.resolve() / ".git"
    try:
        for name in ("refs", "packed-refs", "logs", "shallow", "info/exclude"):
            assert (view.git_dir / name).is_symlink(), name
            assert os.readlink(view.git_dir / name) == str(real / name)
        assert not os.path.lexists(view.git_dir / "reftable")
        for private in ("hooks", "description", "config.worktree", "index"):
            assert not (view.git_dir / private).is_symlink(), private
        assert not (view.git_dir / "config").is_symlink()
    finally:
        view.close()


def test_a_reftable_repository_gets_its_reftable_linked(committed: GitRepo) -> None:
    view = _view(committed, listing(("extensions.refstorage", "reftable")))
    try:
        target = committed.root.resolve() / ".git" / "reftable"
        assert os.readlink(view.git_dir / "reftable") == str(target)
    finally:
        view.close()


def test_pseudo_refs_and_a_split_index_are_linked_and_nothing_else_of_the_git_dir(
    committed: GitRepo,
) -> None:
    real = committed.root.resolve() / ".git"
    for name in ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"):
        (real / name).write_text(committed.head() + "\n")
    (real / "sharedindex.0123").write_bytes(b"x")
    (real / "EVIL_HEAD").write_text(committed.head() + "\n")
    view = _view(committed)
    try:
        for name in ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"):
            assert os.readlink(view.git_dir / name) == str(real / name), name
        assert os.readlink(view.git_dir / "sharedindex.0123") == str(real / "sharedindex.0123")
        assert not os.path.lexists(view.git_dir / "EVIL_HEAD")
    finally:
        view.close()


def test_head_is_a_copy_not_a_link(committed: GitRepo) -> None:
    view = _view(committed)
    try:
        head = view.git_dir / "HEAD"
        assert not head.is_symlink()
        assert head.read_bytes() == (committed.root / ".git" / "HEAD").read_bytes()
        assert not (view.git_dir / "HEAD.tmp").exists()
    finally:
        view.close()


def test_head_is_copied_again_when_the_real_one_changes(committed: GitRepo) -> None:
    view = _view(committed)
    try:
        committed.git("checkout", "-q", "-b", "topic")
        view.refresh()
        assert (view.git_dir / "HEAD").read_text() == "ref: refs/heads/topic\n"
    finally:
        view.close()


def test_head_is_not_copied_again_while_the_real_one_is_unchanged(committed: GitRepo) -> None:
    view = _view(committed)
    try:
        (view.git_dir / "HEAD").write_text("ref: refs/heads/sentinel\n")
        view.refresh()
        assert (view.git_dir / "HEAD").read_text() == "ref: refs/heads/sentinel\n"
    finally:
        view.close()


def test_an_oversized_head_is_refused_and_4096_bytes_are_copied(committed: GitRepo) -> None:
    view = _view(committed)
    head = committed.root.resolve() / ".git" / "HEAD"
    try:
        head.write_text("ref: refs/heads/" + "x" * 5000 + "\n")
        with pytest.raises(RepositoryError) as info:
            view.refresh()
        assert info.value.message == f"refusing {head}: it is 5,017 bytes, over 4,096"
        head.write_bytes(b"r" * 4096)
        view.refresh()
        assert (view.git_dir / "HEAD").read_bytes() == b"r" * 4096
    finally:
        view.close()


def test_a_missing_head_is_left_for_git_to_report(committed: GitRepo) -> None:
    view = _view(committed)
    try:
        before = (view.git_dir / "HEAD").read_bytes()
        (committed.root / ".git" / "HEAD").unlink()
        view.refresh()
        assert (view.git_dir / "HEAD").read_bytes() == before
    finally:
        view.close()


def test_a_head_gone_between_the_look_and_the_read_is_copied_as_empty(
    committed: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # HEAD removed after refresh's lstat found it and before it is read: no crash, and no
    # text of Redline's own in its place (git then reports the broken repository itself).
    view = _view(committed)
    head = committed.root.resolve() / ".git" / "HEAD"
    read = view.files.read

    def vanishing(path: Path, max_bytes: int) -> bytes | None:
        path.unlink()
        return read(path, max_bytes)

    try:
        head.write_text("ref: refs/heads/other\n")
        monkeypatch.setattr(view.files, "read", vanishing)
        view.refresh()
        assert (view.git_dir / "HEAD").read_bytes() == b""
    finally:
        view.close()


def test_the_environment_points_git_at_the_view_and_reads_the_real_store(
    committed: GitRepo,
) -> None:
    view = _view(committed)
    real = committed.root.resolve()
    try:
        assert view.env() == {
            "GIT_DIR": str(view.git_dir),
            "GIT_WORK_TREE": str(real),
            "GIT_INDEX_FILE": str(real / ".git" / "index"),
            "GIT_CONFIG_GLOBAL": str(view.root / "global-config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_NO_LAZY_FETCH": "1",
            "GIT_OBJECT_DIRECTORY": str(real / ".git" / "objects"),
        }
        assert "GIT_OBJECT_DIRECTORY" not in view.env(writes_objects=True)
        alternates = (view.git_dir / "objects" / "info" / "alternates").read_text()
        assert alternates == f"{real / '.git' / 'objects'}\n"
        assert view.notes == []
    finally:
        view.close()


def _borrowing(tmp_path: Path, committed: GitRepo, lines: list[str]) -> Path:
    info = committed.root / ".git" / "objects" / "info"
    info.mkdir(exist_ok=True)
    (info / "alternates").write_text("".join(f"{line}\n" for line in lines))
    return info


def test_a_store_that_borrows_is_read_through_a_mirror_without_its_alternates(
    tmp_path: Path, committed: GitRepo
) -> None:
    other = tmp_path / "other" / "objects"
    info = _borrowing(tmp_path, committed, [str(other)])
    (info / "commit-graph").write_bytes(b"")
    view = _view(committed)
    real = committed.root.resolve() / ".git" / "objects"
    try:
        mirror = view.root / "mirror"
        assert (view.git_dir / "objects" / "info" / "alternates").read_text() == f"{mirror}\n"
        assert "GIT_OBJECT_DIRECTORY" not in view.env()
        names = sorted(os.listdir(mirror))
        assert names == sorted([f"{i:02x}" for i in range(256)] + ["info", "pack"])
        for name in ("00", "ab", "ff", "pack"):
            assert os.readlink(mirror / name) == str(real / name)
        assert sorted(os.listdir(mirror / "info")) == ["commit-graph", "commit-graphs"]
        assert os.readlink(mirror / "info" / "commit-graph") == str(real / "info/commit-graph")
        assert not os.path.lexists(mirror / "info" / "alternates")
        assert view.notes == [
            f"the repository borrows objects from {str(other)!r} (objects/info/alternates); "
            "Redline reads only the repository's own objects, so anything stored only there is "
            "reported missing"
        ]
        ok = subprocess.run(
            ["git", "cat-file", "-e", "HEAD:a.py"],
            env={**_ENV, **view.env()},
            cwd=committed.root,
            capture_output=True,
        )
        assert ok.returncode == 0, ok.stderr
    finally:
        view.close()


def test_the_borrowing_note_names_three_stores_and_says_when_there_are_more(
    tmp_path: Path, committed: GitRepo
) -> None:
    stores = [f"/s{i}" for i in range(4)]
    _borrowing(tmp_path, committed, ["# a comment", "", *stores])
    view = _view(committed)
    try:
        assert view.notes[0].startswith(
            "the repository borrows objects from '/s0', '/s1', '/s2' … (objects/info/alternates)"
        )
    finally:
        view.close()
    (committed.root / ".git" / "objects" / "info" / "alternates").write_text("/s0\n/s1\n/s2\n")
    view = _view(committed)
    try:
        assert "from '/s0', '/s1', '/s2' (objects" in view.notes[0]
    finally:
        view.close()


def test_an_alternates_file_naming_nothing_still_cuts_the_real_store_off(
    tmp_path: Path, committed: GitRepo
) -> None:
    _borrowing(tmp_path, committed, ["# only a comment"])
    view = _view(committed)
    try:
        assert (view.root / "mirror").is_dir()
        assert "GIT_OBJECT_DIRECTORY" not in view.env()
        assert view.notes == []
    finally:
        view.close()


def test_an_alternates_that_is_no_file_is_refused(tmp_path: Path, committed: GitRepo) -> None:
    info = committed.root.resolve() / ".git" / "objects" / "info"
    info.mkdir(exist_ok=True)
    (info / "alternates").mkdir()
    with pytest.raises(RepositoryError) as info_error:
        _view(committed)
    assert info_error.value.message == (
        f"refusing {info / 'alternates'}: it is a directory, not a regular file"
    )


def test_a_linked_objects_info_inside_is_taken_as_borrowing(committed: GitRepo) -> None:
    """A link that stays inside the git directory is followed (and the real store is cut
    off from whatever it borrows); one that leaves it is refused (test_guard_git_gitdir.py)."""
    git_dir = committed.root / ".git"
    info = git_dir / "objects" / "info"
    shutil.rmtree(info, ignore_errors=True)
    (git_dir / "info-store").mkdir()
    info.symlink_to("../info-store")
    view = _view(committed)
    try:
        assert (view.root / "mirror").is_dir()
        assert "GIT_OBJECT_DIRECTORY" not in view.env()
        assert view.notes == []  # no alternates file there: nothing borrowed to name
    finally:
        view.close()


def test_a_repository_without_a_config_file_lists_nothing(committed: GitRepo) -> None:
    (committed.root / ".git" / "config").unlink()
    asked: list[bytes] = []

    def list_config(data: bytes) -> bytes:
        asked.append(data)
        return b""

    view = RepoView(_location(committed), list_config, HARDENED_CONFIG)
    try:
        assert asked == []
        expected = render_config(RealConfig(), HARDENED_CONFIG)
        assert (view.git_dir / "config").read_text() == expected
    finally:
        view.close()


def test_a_linked_objects_info_outside_is_refused(tmp_path: Path, committed: GitRepo) -> None:
    info = committed.root / ".git" / "objects" / "info"
    elsewhere = tmp_path / "elsewhere-info"
    elsewhere.mkdir()
    shutil.rmtree(info, ignore_errors=True)
    info.symlink_to(elsewhere)
    with pytest.raises(RepositoryError, match="outside the repository's git directory"):
        _view(committed)


def test_a_partial_clone_is_named_in_the_notes(committed: GitRepo) -> None:
    view = _view(committed, listing(("extensions.partialclone", "origin")))
    try:
        assert view.notes == [
            "the repository is a partial clone; Redline never fetches, so an object that is "
            "not local is reported missing (fetch it first)"
        ]
    finally:
        view.close()


# -- where views live and how they go -----------------------------------------------------


def test_a_view_lives_in_the_users_private_views_home_and_close_removes_it(
    committed: GitRepo, _private_views_home: Path
) -> None:
    view = _view(committed)
    home = _private_views_home / f"redline-views-{os.getuid()}"
    assert view.root.parent == home
    assert view.root.name.startswith(f"view-{os.getpid()}-")
    assert (home.stat().st_mode & 0o777) == 0o700
    view.close()
    assert not view.root.exists()


def test_a_view_that_fails_to_build_leaves_nothing_behind(
    committed: GitRepo, _private_views_home: Path
) -> None:
    def broken(_path: Path) -> bytes:
        raise OSError("cannot read")

    with pytest.raises(OSError, match="cannot read"):
        RepoView(_location(committed), broken, HARDENED_CONFIG)
    home = _private_views_home / f"redline-views-{os.getuid()}"
    assert list(home.iterdir()) == []


def test_views_of_dead_processes_are_swept_and_others_kept(_private_views_home: Path) -> None:
    home = _private_views_home / f"redline-views-{os.getuid()}"
    home.mkdir(mode=0o700)
    gone = subprocess.Popen(["true"])
    gone.wait()
    keep = [
        f"view-{os.getpid()}-alive",
        f"view-{gone.pid}",  # two parts: not a view's name
        "other-123-x",
        f"view-x{gone.pid}-y",
        "notes",
    ]
    for name in keep:
        (home / name).mkdir()
    (home / f"view-{gone.pid}-abc").mkdir()
    assert views_home() == home
    assert sorted(os.listdir(home)) == sorted(keep)


def test_a_views_home_that_is_a_link_is_not_used(tmp_path: Path, _private_views_home: Path) -> None:
    target = tmp_path / "someone-elses"
    target.mkdir()
    (_private_views_home / f"redline-views-{os.getuid()}").symlink_to(target)
    home = views_home()
    assert home.resolve() != target.resolve()
    assert home.name.startswith("redline-views-") and home.is_dir() and not home.is_symlink()


def test_names_in_notes_are_quoted_and_cut_short() -> None:
    assert strip_names(["/a\nb", "x" * 300]) == ["'/a\\nb'", repr("x" * 200)]


def test_a_view_of_a_process_that_cannot_be_signalled_is_kept(
    _private_views_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user's process: os.kill says "not permitted", so it is alive."""
    home = _private_views_home / f"redline-views-{os.getuid()}"
    home.mkdir(mode=0o700)
    (home / "view-1-theirs").mkdir()

    def not_permitted(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "kill", not_permitted)
    views_home()
    assert (home / "view-1-theirs").is_dir()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a directory away")
def test_a_views_home_owned_by_someone_else_is_not_used(_private_views_home: Path) -> None:
    home = _private_views_home / f"redline-views-{os.getuid()}"
    home.mkdir(mode=0o700)
    os.chown(home, 65534, 65534)
    chosen = views_home()
    assert chosen != home and chosen.name.startswith("redline-views-") and chosen.is_dir()
    assert chosen.stat().st_uid == os.getuid()


def test_a_fifo_as_alternates_is_refused_without_hanging(committed: GitRepo) -> None:
    """A hostile repository's objects/info/alternates may be a FIFO nobody writes to: it is
    refused by what it is (git/gitdir.py), before anything opens it."""
    info = committed.root.resolve() / ".git" / "objects" / "info"
    info.mkdir(exist_ok=True)
    os.mkfifo(info / "alternates")
    raised: list[BaseException] = []

    def build() -> None:
        try:
            _view(committed).close()
        except RepositoryError as exc:
            raised.append(exc)

    worker = threading.Thread(target=build, daemon=True)
    worker.start()
    worker.join(20)
    assert raised, "building the view blocked on the FIFO, or did not refuse it"
    assert str(raised[0]).startswith(
        f"refusing {info / 'alternates'}: it is a FIFO (named pipe), not a regular file"
    )


def test_sweeping_only_asks_whether_a_process_lives_and_never_signals_it(
    _private_views_home: Path,
) -> None:
    home = _private_views_home / f"redline-views-{os.getuid()}"
    home.mkdir(mode=0o700)
    # A process that any signal but 0 ends (also where SIGHUP was ignored by whoever ran us).
    child = (
        "import signal, sys, time\n"
        "for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGUSR1):\n"
        "    signal.signal(s, signal.SIG_DFL)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    live = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert live.stdout is not None and live.stdout.readline() == "ready\n"
        (home / f"view-{live.pid}-busy").mkdir()
        views_home()
        time.sleep(0.3)
        assert live.poll() is None, "the live process was signalled"
        assert (home / f"view-{live.pid}-busy").is_dir()
    finally:
        live.kill()
        live.wait()


def test_closing_a_view_whose_directory_is_already_gone_is_quiet(committed: GitRepo) -> None:
    view = _view(committed)
    shutil.rmtree(view.root)
    view.close()  # no error: the directory was removed by someone else (a sweep, a reboot)
    assert not view.root.exists()


def test_alternates_are_read_up_to_one_mib_and_refused_beyond(committed: GitRepo) -> None:
    info = committed.root.resolve() / ".git" / "objects" / "info"
    info.mkdir(exist_ok=True)
    first = b"#" + b"x" * (1024 * 1024 - 2) + b"\n"  # exactly 1 MiB, a comment
    (info / "alternates").write_bytes(first)
    view = _view(committed)
    try:
        assert view.notes == []
        assert (view.root / "mirror").is_dir()
    finally:
        view.close()
    (info / "alternates").write_bytes(first + b"/beyond/the/limit\n")
    with pytest.raises(RepositoryError) as info_error:
        _view(committed)
    assert info_error.value.message == (
        f"refusing {info / 'alternates'}: it is 1,048,594 bytes, over 1,048,576"
    )


def test_alternates_that_are_not_utf8_are_still_named(committed: GitRepo) -> None:
    info = committed.root / ".git" / "objects" / "info"
    info.mkdir(exist_ok=True)
    (info / "alternates").write_bytes(b"/store-\xff\n")
    view = _view(committed)
    try:
        assert view.notes[0].startswith("the repository borrows objects from '/store-\ufffd'")
    finally:
        view.close()


def test_a_git_dir_that_cannot_be_listed_gets_a_view_without_pseudo_refs(
    committed: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_git_dir = committed.root.resolve() / ".git"
    (real_git_dir / "ORIG_HEAD").write_text(committed.head() + "\n")
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if isinstance(path, str | os.PathLike) and Path(path) == real_git_dir:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    view = _view(committed)
    try:
        assert not os.path.lexists(view.git_dir / "ORIG_HEAD")
        assert (view.git_dir / "refs").is_symlink()
    finally:
        view.close()


def test_a_views_home_that_cannot_be_listed_is_used_without_sweeping(
    _private_views_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _private_views_home / f"redline-views-{os.getuid()}"
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if isinstance(path, str | os.PathLike) and Path(path) == home:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert views_home() == home


def test_a_dead_view_that_cannot_be_removed_does_not_stop_the_sweep(
    _private_views_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _private_views_home / f"redline-views-{os.getuid()}"
    home.mkdir(mode=0o700)
    gone = subprocess.Popen(["true"])
    gone.wait()
    stuck = home / f"view-{gone.pid}-a-stuck"  # met first: the listing below is in name order
    stuck.mkdir()
    (home / f"view-{gone.pid}-b-removable").mkdir()
    real_rmdir, real_scandir = os.rmdir, os.scandir

    def rmdir(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).name == stuck.name:  # shutil.rmtree may name it relative to a dir fd
            raise PermissionError(1, "Operation not permitted", str(path))
        real_rmdir(path, *args, **kwargs)

    def scandir(path: Any = ".") -> Any:
        if isinstance(path, str | os.PathLike) and Path(path) == home:
            with real_scandir(path) as listing:
                return sorted(listing, key=lambda e: e.name)
        return real_scandir(path)

    monkeypatch.setattr(os, "rmdir", rmdir)
    monkeypatch.setattr(os, "scandir", scandir)
    assert views_home() == home
    assert sorted(os.listdir(home)) == [stuck.name]
