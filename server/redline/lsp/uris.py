"""One key per file, whatever the client's spelling of its URI; answers in the client's spelling.

Clients spell the URI of one file differently: VS Code `caf%C3%A9/c%2B%2Bproj`, Neovim 0.7
`caf%c3%a9/c++proj` (lower-case escapes, `+` as is), Emacs `c++proj`, some `file://localhost/`,
Windows clients `file:///c%3A/...` or `file:///C:/...`. Compared as text, a document the client
opened is not the one the review published to: no code actions, squiggles that do not move.
So every URI a client sends becomes `key(uri)` where it enters the server (document
notifications, code actions, hovers, command arguments), and every dictionary of documents is
keyed by it. The key is the decoded file-system path, spelled as the server spells a URI
(`path_uri`, which is what a review's findings are published under): one string per path, two
paths never share one, and what the server derives from a finding's path is a key already.

`ClientUris` remembers the client's own spelling of each key it sent, and the server answers
with it (diagnostics, workspace edits, the sidebar's rows): an editor matches URIs as text too
(eglot drops diagnostics of a URI it did not open). A file the client never named is answered
under the key.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import quote, unquote

_DRIVE = re.compile(r"^/[A-Za-z]:")  # `/c:` once decoded: a Windows drive letter


def decoded_path(uri: str) -> str | None:
    """The path a `file:` URI names, percent-decoded (escapes in either case, reserved
    characters encoded or not), with a `/` in front, a Windows drive letter in lower case, no
    trailing `/`, and `localhost` dropped (another host: a UNC path `//host/...`). None for any
    other scheme. Bytes that are not UTF-8 decode as os.fsdecode's surrogate escapes, so two
    such paths never collide."""
    scheme, colon, rest = uri.partition(":")
    if not colon or scheme.lower() != "file":
        return None
    # `?` and `#` end the path (a client encodes them when they are part of a name).
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    host = ""
    if rest.startswith("//"):
        host, slash, tail = rest[2:].partition("/")
        rest = slash + tail
        host = unquote(host, errors="surrogateescape").lower()
    path = unquote(rest, errors="surrogateescape")
    if not path.startswith("/"):
        path = "/" + path
    if host and host != "localhost":
        path = f"//{host}{path}"
    elif _DRIVE.match(path):
        path = path[0] + path[1].lower() + path[2:]
    while len(path) > 1 and path.endswith("/") and not _DRIVE.fullmatch(path[:-1]):
        path = path[:-1]
    return path


def path_uri(path: str) -> str:
    """The server's spelling of a decoded path (`decoded_path`'s inverse): every character but
    `/` and the unreserved ones escaped in upper case (as `Path.as_uri` and pygls spell it),
    a drive letter's colon kept."""
    host = ""
    if path.startswith("//"):
        host, _, tail = path[2:].partition("/")
        path = "/" + tail
    head = path[:3] if _DRIVE.match(path) else ""
    return f"file://{quote(host)}{head}{quote(path[len(head) :], errors='surrogateescape')}"


@lru_cache(maxsize=4096)  # every keystroke keys its document: ~25 µs once, then a lookup
def key(uri: str) -> str:
    """The key of a document: the same for every spelling of the same file's URI, different
    for different files. A URI of another scheme (`untitled:`) is its own key."""
    path = decoded_path(uri)
    return uri if path is None else path_uri(path)


def fs_path(uri: str) -> str | None:
    """The file-system path of a `file:` URI as the OS spells it (a drive path without the
    leading `/`)."""
    path = decoded_path(uri)
    if path is not None and _DRIVE.match(path):
        return path[1:]
    return path


class ClientUris:
    """The client's own spelling of each document URI it sent, by key."""

    def __init__(self) -> None:
        self._spelling: dict[str, str] = {}
        self._published: dict[str, str] = {}  # key → the spelling its diagnostics went under

    def seen(self, uri: str) -> str:
        """The key of a URI the client sent; its spelling is the one answered from now on."""
        k = key(uri)
        if uri != k:
            self._spelling[k] = uri
        else:
            self._spelling.pop(k, None)
        return k

    def spelling(self, k: str) -> str:
        """How to name the document of key `k` to the client: its own spelling, if it sent
        one, else the key (the server's spelling)."""
        return self._spelling.get(k, k)

    def publish_as(self, k: str) -> tuple[str, str | None]:
        """The spelling to publish `k`'s diagnostics under now, and the one they went under
        before when that differs (the client learnt its own spelling of a file the review had
        published under the server's): that one is to be cleared, or a client that compares
        URIs as text shows both."""
        spelled = self.spelling(k)
        before = self._published.get(k)
        self._published[k] = spelled
        return spelled, before if before is not None and before != spelled else None
