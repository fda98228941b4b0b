"""The rules of nofollow.py: below a directory the attacker controls, every level is opened
without following a link, only a regular file is read or replaced, and a replacement is atomic
inside the same directory. One test per rule, in-process, asserting exact results, so that
inverting any part fails a test here (`make mutation MODULES=server/redline/nofollow.py`).
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from redline.nofollow import NoFollowError, check_parts, kind, open_dir, read_file, replace_file


@pytest.fixture
def top(tmp_path: Path) -> Path:
    root = tmp_path / "top"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("inside\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "secret").write_text("secret\n")
    return root


def out(top: Path) -> Path:
    return top.parent / "out"


def test_kinds_are_named() -> None:
    assert kind(stat.S_IFREG) == "a regular file"
    assert kind(stat.S_IFDIR) == "a directory"
    assert kind(stat.S_IFLNK) == "a symbolic link"
    assert kind(stat.S_IFIFO) == "a FIFO (named pipe)"
    assert kind(stat.S_IFCHR) == "a device"
    assert kind(stat.S_IFBLK) == "a device"
    assert kind(stat.S_IFSOCK) == "a socket"
    assert kind(0) == "not a regular file"


@pytest.mark.parametrize("part", ["", ".", "..", "a/b", "a\0b"])
def test_only_plain_names_are_parts(part: str) -> None:
    with pytest.raises(ValueError, match="not a plain path component"):
        check_parts(["ok", part])
    check_parts(["ok", ".hidden", "a..b"])


# -- read_file -------------------------------------------------------------------------------------


def test_a_regular_file_is_read_and_a_missing_one_is_none(top: Path) -> None:
    assert read_file(top, ("d", "f.txt"), 100) == b"inside\n"
    assert read_file(top, ("d", "nothing"), 100) is None
    assert read_file(top, ("nowhere", "f.txt"), 100) is None


def test_the_top_itself_may_be_a_link(top: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(top)
    assert read_file(tmp_path / "alias", ("d", "f.txt"), 100) == b"inside\n"


def test_a_linked_file_is_refused_even_to_a_file_inside(top: Path) -> None:
    (top / "d" / "ln").symlink_to("f.txt")
    with pytest.raises(NoFollowError) as info:
        read_file(top, ("d", "ln"), 100)
    assert info.value.message == f"{top / 'd' / 'ln'} is a symbolic link, not a regular file"
    assert info.value.path == top / "d" / "ln"


def test_a_linked_directory_on_the_way_is_refused(top: Path) -> None:
    (top / "via").symlink_to(out(top))
    with pytest.raises(NoFollowError) as info:
        read_file(top, ("via", "secret"), 100)
    assert info.value.message == f"{top / 'via'} is a symbolic link"
    assert info.value.what == "is a symbolic link"


def test_a_file_on_the_way_is_refused(top: Path) -> None:
    with pytest.raises(NoFollowError, match=r"f\.txt is a regular file$"):
        read_file(top, ("d", "f.txt", "x"), 100)


@pytest.mark.parametrize("what", ["fifo", "directory", "socket"])
def test_anything_but_a_regular_file_is_refused_without_opening_it(
    top: Path, what: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = top / "d" / "thing"
    if what == "fifo":
        os.mkfifo(target)  # opening it for reading would wait for a writer
        named = "a FIFO (named pipe)"
    elif what == "directory":
        target.mkdir()
        named = "a directory"
    else:
        sock = socket.socket(socket.AF_UNIX)
        # Bound by a relative name: a socket's path is limited to 107 bytes, and a temporary
        # directory (mutation testing's private one under the checkout) can be deeper.
        monkeypatch.chdir(target.parent)
        sock.bind(target.name)
        named = "a socket"
    with pytest.raises(NoFollowError) as info:
        read_file(top, ("d", "thing"), 100)
    assert info.value.message == f"{target} is {named}, not a regular file"


def test_the_size_limit_is_exact(top: Path) -> None:
    assert read_file(top, ("d", "f.txt"), 7) == b"inside\n"
    with pytest.raises(NoFollowError) as info:
        read_file(top, ("d", "f.txt"), 6)
    assert info.value.message == f"{top / 'd' / 'f.txt'} is 7 bytes, over 6"


def test_a_file_needs_a_name(top: Path) -> None:
    with pytest.raises(ValueError) as info:
        read_file(top, (), 10)
    assert str(info.value) == "a file needs a name"
    with pytest.raises(ValueError) as info:
        replace_file(top, (), b"")
    assert str(info.value) == "a file needs a name"


def test_a_file_at_the_top_and_three_levels_down(top: Path) -> None:
    """One part and three: the last part is the file, all before it directories."""
    (top / "one.txt").write_text("1\n")
    (top / "d" / "e" / "f").mkdir(parents=True)
    (top / "d" / "e" / "f" / "deep.txt").write_text("3\n")
    assert read_file(top, ("one.txt",), 10) == b"1\n"
    assert read_file(top, ("d", "e", "f", "deep.txt"), 10) == b"3\n"
    (top / "d" / "e" / "ln").symlink_to("f")
    with pytest.raises(NoFollowError) as info:
        read_file(top, ("d", "e", "ln", "deep.txt"), 10)
    assert info.value.path == top / "d" / "e" / "ln"
    replace_file(top, ("d", "e", "f", "new.txt"), b"n")
    replace_file(top, ("top.txt",), b"t")
    assert (top / "d" / "e" / "f" / "new.txt").read_bytes() == b"n"
    assert (top / "top.txt").read_bytes() == b"t"
    assert stat.S_IMODE((top / "top.txt").stat().st_mode) == 0o644  # the default mode


def test_a_file_swapped_for_a_fifo_after_it_was_looked_at_is_caught(
    top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lstat said regular, but a FIFO was opened (swapped in between): fstat refuses it."""
    target = top / "d" / "swapped"
    os.mkfifo(target)
    regular = os.lstat(top / "d" / "f.txt")
    real_lstat = os.lstat
    monkeypatch.setattr(
        os, "lstat", lambda p, **kw: regular if p == "swapped" else real_lstat(p, **kw)
    )
    with pytest.raises(NoFollowError) as info:
        read_file(top, ("d", "swapped"), 100)
    assert info.value.message == f"{target} is a FIFO (named pipe), not a regular file"


def test_a_file_that_grows_after_fstat_is_still_bounded(
    top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fstat = os.fstat

    def small(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, *st[1:6], 0, *st[7:]))  # st_size 0

    monkeypatch.setattr(os, "fstat", small)
    assert read_file(top, ("d", "f.txt"), 7) == b"inside\n"
    with pytest.raises(NoFollowError) as info:
        read_file(top, ("d", "f.txt"), 6)
    assert info.value.message == f"{top / 'd' / 'f.txt'} is over 6 bytes"
    with pytest.raises(NoFollowError):
        read_file(top, ("d", "f.txt"), 5)


def test_a_name_planted_where_the_temporary_goes_is_never_written_through(
    top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import secrets

    monkeypatch.setattr(secrets, "token_hex", lambda _n: "fixed")
    (top / "d" / ".f.txt.fixed.tmp").symlink_to(out(top) / "secret")
    with pytest.raises(FileExistsError):
        replace_file(top, ("d", "f.txt"), b"new\n")
    assert (out(top) / "secret").read_text() == "secret\n"
    assert (top / "d" / "f.txt").read_text() == "inside\n"


# -- open_dir --------------------------------------------------------------------------------------


def test_open_dir_gives_the_directory_and_creates_only_when_asked(top: Path) -> None:
    with open_dir(top, ("d",)) as fd:
        assert "f.txt" in os.listdir(fd)
    with pytest.raises(FileNotFoundError), open_dir(top, ("new", "deeper")):
        pass
    assert not (top / "new").exists()
    with open_dir(top, ("new", "deeper"), create=True, mode=0o700) as fd:
        assert os.listdir(fd) == []
    assert stat.S_IMODE(os.stat(top / "new" / "deeper").st_mode) & 0o077 == 0


@pytest.mark.parametrize("create", [False, True])
def test_open_dir_refuses_links_and_files(top: Path, create: bool) -> None:
    (top / "ln").symlink_to(out(top))
    (top / "dangling").symlink_to(out(top) / "not-yet")
    for parts, what in ((("ln",), "a symbolic link"), (("dangling",), "a symbolic link")):
        with pytest.raises(NoFollowError) as info, open_dir(top, parts, create=create):
            pass
        assert info.value.message == f"{top / parts[0]} is {what}"
    with (
        pytest.raises(NoFollowError, match="is a regular file"),
        open_dir(top, ("d", "f.txt"), create=create),
    ):
        pass
    assert not (out(top) / "not-yet").exists()


# -- replace_file ----------------------------------------------------------------------------------


def test_a_new_file_is_written_with_the_mode_asked(top: Path) -> None:
    replace_file(top, ("new", "n.toml"), b"x = 1\n", mode=0o640)
    path = top / "new" / "n.toml"
    assert path.read_bytes() == b"x = 1\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(top / "new") == ["n.toml"]


def test_an_existing_file_keeps_its_mode_and_is_replaced_whole(top: Path) -> None:
    path = top / "d" / "f.txt"
    os.chmod(path, 0o604)
    inode = path.stat().st_ino
    replace_file(top, ("d", "f.txt"), b"new\n", mode=0o600)
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o604
    assert path.stat().st_ino != inode  # a new file renamed over it, not written in place
    assert sorted(os.listdir(top / "d")) == ["f.txt"]


@pytest.mark.parametrize("what", ["link-out", "link-in", "fifo", "directory"])
def test_a_target_that_is_no_regular_file_is_refused(top: Path, what: str) -> None:
    target = top / "d" / "t"
    if what == "link-out":
        target.symlink_to(out(top) / "secret")
    elif what == "link-in":
        target.symlink_to("f.txt")
    elif what == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    with pytest.raises(NoFollowError, match=r"d/t is .*, not a regular file"):
        replace_file(top, ("d", "t"), b"data")
    assert (out(top) / "secret").read_text() == "secret\n"
    assert (top / "d" / "f.txt").read_text() == "inside\n"
    assert sorted(os.listdir(top / "d")) == ["f.txt", "t"]


def test_a_linked_directory_on_the_way_is_never_written_into(top: Path) -> None:
    (top / "via").symlink_to(out(top))
    with pytest.raises(NoFollowError, match="via is a symbolic link"):
        replace_file(top, ("via", "new.toml"), b"data")
    assert sorted(os.listdir(out(top))) == ["secret"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_args: object, **_kw: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        replace_file(top, ("d", "f.txt"), b"new\n")
    assert (top / "d" / "f.txt").read_text() == "inside\n"
    assert os.listdir(top / "d") == ["f.txt"]


def test_the_temporary_is_private_until_it_takes_the_files_place(
    top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    real_fchmod = os.fchmod

    def fchmod(fd: int, mode: int) -> None:
        seen.append(stat.S_IMODE(os.fstat(fd).st_mode))
        real_fchmod(fd, mode)

    monkeypatch.setattr(os, "fchmod", fchmod)
    replace_file(top, ("d", "new.toml"), b"x")
    assert seen == [0o600]


def test_a_temporary_that_cannot_be_removed_does_not_hide_the_first_error(
    top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_args: object, **_kw: object) -> None:
        raise OSError(28, "No space left on device")

    def unremovable(*_args: object, **_kw: object) -> None:
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(os, "replace", fail)
    monkeypatch.setattr(os, "unlink", unremovable)
    with pytest.raises(OSError, match="No space left"):
        replace_file(top, ("d", "f.txt"), b"new\n")


def test_a_directory_that_cannot_be_synced_does_not_undo_the_write(
    top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(22, "Invalid argument")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    replace_file(top, ("d", "f.txt"), b"new\n")
    assert (top / "d" / "f.txt").read_bytes() == b"new\n"
