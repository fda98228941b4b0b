"""`uris.key`: every client's spelling of a file's URI is one key, two files never share one.

Generated paths (any Unicode, the reserved characters `+ @ , ; = : ! $ & ' ( ) *`, spaces, `%`
itself, `?` and `#`), spelled as each client spells them: upper- or lower-case escapes, or any
mix, reserved characters encoded or not, non-ASCII raw, `file://localhost/`, `file:/`."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, quote_from_bytes

from hypothesis import assume, given
from hypothesis import strategies as st

from redline.lsp import publish, uris

# A path segment: anything but `/` and NUL (and lone surrogates, which no UTF-8 name holds;
# undecodable bytes are tested on their own below).
_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00")
_TRICKY = st.sampled_from([*"+@,;=:!$&'()*% ?#~é€😀", "%20", "%2B", "%c3%a9", "%%", "%zz"])
_SEGMENT = st.lists(st.one_of(_CHARS, _TRICKY), min_size=1, max_size=8).map("".join)
PATHS = st.lists(_SEGMENT, min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts))

_SUB_DELIMS = "+@,;=:!$&'()*"


def _lower(uri: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), uri)


def _raw_iri(path: str) -> str:
    # Non-ASCII and reserved characters as they are; only what would change the parse (`%`, `?`,
    # `#`) escaped.
    return "file://" + re.sub(r"[%?#]", lambda m: quote(m.group(0), safe=""), path)


SPELLINGS: dict[str, Callable[[str], str]] = {
    "server (VS Code)": lambda p: "file://" + quote(p),
    "lower-case escapes (Neovim 0.7)": lambda p: _lower(
        "file://" + quote(p, safe="/" + _SUB_DELIMS)
    ),
    "every escape in lower case": lambda p: _lower("file://" + quote(p)),
    "reserved unencoded (Emacs)": lambda p: "file://" + quote(p, safe="/" + _SUB_DELIMS),
    "raw IRI": _raw_iri,
    "localhost": lambda p: "file://localhost" + quote(p),
    "no authority": lambda p: "file:" + quote(p),
    "pathlib": lambda p: Path(p).as_uri(),
}


def _drive_like(path: str) -> bool:
    # `/C:` first: read as a Windows drive letter (its case folded), as VS Code and pygls do.
    return re.match(r"^/[A-Za-z]:", path) is not None


@given(PATHS)
def test_every_spelling_of_a_path_is_one_key(path: str) -> None:
    expected = uris.key("file://" + quote(path))
    keys = {name: uris.key(spell(path)) for name, spell in SPELLINGS.items()}
    assert set(keys.values()) == {expected}, keys
    if not _drive_like(path):
        assert uris.decoded_path(expected) == path
        assert uris.fs_path(expected) == path
        assert expected == uris.path_uri(path)
    assert uris.key(expected) == expected  # a key is its own key


@given(PATHS, st.data())
def test_escapes_in_any_mix_of_cases_are_one_key(path: str, data: st.DataObject) -> None:
    spelled = "file://" + quote(path, safe="/" + data.draw(st.sampled_from(["", _SUB_DELIMS])))
    mixed = re.sub(
        r"%[0-9A-F]{2}",
        lambda m: m.group(0).lower() if data.draw(st.booleans()) else m.group(0),
        spelled,
    )
    assert uris.key(mixed) == uris.key(spelled)


@given(PATHS, PATHS)
def test_distinct_paths_have_distinct_keys(a: str, b: str) -> None:
    assume(a != b and not _drive_like(a) and not _drive_like(b))
    for spell in SPELLINGS.values():
        assert uris.key(spell(a)) != uris.key(spell(b))


@given(st.lists(st.binary(min_size=1, max_size=6), min_size=1, max_size=3))
def test_undecodable_bytes_in_a_name_are_kept_apart(parts: list[bytes]) -> None:
    raw = [p.replace(b"/", b"_").replace(b"\x00", b"_") for p in parts]
    path = os.fsdecode(b"/" + b"/".join(raw))
    uri = "file://" + quote_from_bytes(os.fsencode(path))
    assert uris.decoded_path(uri) == path
    assert uris.decoded_path(_lower(uri)) == path
    assert uris.key(uris.key(uri)) == uris.key(uri)


def test_windows_drive_letters_and_the_folder_slash() -> None:
    spellings = [
        "file:///c%3A/Users/Me/c%2B%2Bproj/a.py",
        "file:///C:/Users/Me/c++proj/a.py",
        "file:///c:/Users/Me/c%2b%2bproj/a.py",
        "file://localhost/C%3a/Users/Me/c++proj/a.py",
    ]
    assert {uris.key(s) for s in spellings} == {"file:///c:/Users/Me/c%2B%2Bproj/a.py"}
    assert uris.fs_path(spellings[0]) == "c:/Users/Me/c++proj/a.py"
    assert uris.key("file:///c%3A/") == "file:///c:/"
    assert uris.key("file:///home/me/proj/") == uris.key("file:///home/me/proj")
    assert uris.key("file:///") == "file:///"


def test_other_schemes_and_hosts() -> None:
    assert uris.key("untitled:Untitled-1") == "untitled:Untitled-1"
    assert uris.decoded_path("untitled:Untitled-1") is None
    assert uris.decoded_path("file://server/share/x%20y.py") == "//server/share/x y.py"
    assert uris.key("file://SERVER/share/x.py") == uris.key("file://server/share/x.py")
    assert uris.key("file:///a/b.py#L3") == uris.key("file:///a/b.py")


def test_the_client_spelling_is_answered_once_seen(tmp_path: Path) -> None:
    folder = tmp_path / "café" / "c++proj"
    server = publish.path_uri(folder, "app/x.py")
    assert server is not None and "caf%C3%A9/c%2B%2Bproj" in server
    spellings = uris.ClientUris()
    assert spellings.spelling(server) == server  # never sent: the server's own spelling
    emacs = "file://" + quote(str(folder / "app/x.py"), safe="/+")
    assert spellings.seen(emacs) == server
    assert spellings.spelling(server) == emacs
    assert publish.uri_path(emacs) == folder / "app/x.py"


def test_a_new_spelling_says_which_to_clear() -> None:
    spellings = uris.ClientUris()
    server = "file:///w/c%2B%2Bproj/x.py"
    assert spellings.publish_as(server) == (server, None)  # published before the client named it
    spellings.seen("file:///w/c++proj/x.py")
    assert spellings.publish_as(server) == ("file:///w/c++proj/x.py", server)  # clear the old
    assert spellings.publish_as(server) == ("file:///w/c++proj/x.py", None)
