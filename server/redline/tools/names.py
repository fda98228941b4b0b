"""What a path from the model may name, judged on its text alone: `.git` and secret files.

A path from the model is attacker text. Each component is compared in every spelling a file
system might treat as the same name (`.GIT/config`, `git~1`, `.g\u200bit`, `.env::$DATA`), so
these checks refuse it even on a file system where it would not alias anything. Nothing here
touches the file system; tools/paths.py resolves and opens what passes (and checks again after
resolving symlinks). Kept apart from paths.py so the tool sandbox (tools/sandbox.py) can ask
which files are `.env` files without importing the module that needs the sandbox.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Final

from redline.agent.toolkit import ToolError

# Zero-width and bidi characters a path could hide in `.git`; removed before comparing.
_INVISIBLE: Final = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e"
    r"\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
_GIT_SHORT_NAME: Final = re.compile(r"git~\d+")

# Secret files, by normalized (case-folded) name. Refused outright rather than redacted:
# redaction of arbitrary formats is best effort, refusal is not.
_SECRET_GLOBS: Final = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.gpg",
    "*.asc",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".htpasswd",
    ".git-credentials",
    ".dockercfg",
    "credentials",
    "credentials.json",
    "client_secret*.json",
    "service-account*.json",
    "secrets.yml",
    "secrets.yaml",
    "secrets.json",
    "*.tfstate",
    "*.tfstate.backup",
)
# Secret by location: (directory, file name) pairs.
_SECRET_IN_DIR: Final = (
    (".aws", "config"),
    (".docker", "config.json"),
    (".ssh", "*"),
    (".gnupg", "*"),
    (".kube", "config"),
)


def normalize_component(part: str) -> str:
    """How a file system might see one path component: the spelling every check compares.

    Invisible characters dropped, NTFS alternate streams (`name::$DATA`, `name:stream`) cut,
    Unicode compatibility forms folded (NFKC), case folded, trailing dots and spaces dropped
    (Windows ignores them).
    """
    text = _INVISIBLE.sub("", part)
    text = text.split(":", 1)[0]
    text = unicodedata.normalize("NFKC", text).casefold()
    return text.rstrip(". ")


def is_git_name(part: str) -> bool:
    """`.git` in any spelling a file system may treat as the same name (or an 8.3 short name)."""
    name = normalize_component(part)
    return name == ".git" or bool(_GIT_SHORT_NAME.fullmatch(name))


def is_env_file_name(name: str) -> bool:
    """`.env`, `.env.local`, `prod.env`, `.envrc`: files whose values ToolContext masks."""
    norm = normalize_component(name)
    return norm == ".env" or norm.startswith(".env.") or norm.endswith(".env") or norm == ".envrc"


def is_secret_path(parts: Sequence[str]) -> bool:
    """Whether a repository path names a secret file (by its name or its directory)."""
    if not parts:
        return False
    names = [normalize_component(p) for p in parts]
    last = names[-1]
    if any(fnmatchcase(last, pattern) for pattern in _SECRET_GLOBS):
        return True
    if len(names) >= 2:
        parent = names[-2]
        return any(parent == d and fnmatchcase(last, f) for d, f in _SECRET_IN_DIR)
    return False


def split_user_path(root: Path, path: str) -> list[str]:
    """The components of a path the model gave, relative to root; refuses what cannot be one.

    Accepts `a/b.py`, `./a/b.py`, and an absolute path inside the repository. Backslashes count
    as separators (a Windows spelling of `..\\..\\x` must not slip through).
    """
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path must be a non-empty repository-relative path")
    if "\0" in path or len(path) > 4096:
        raise ToolError("invalid path")
    text = path.replace("\\", "/")
    if text.startswith("/"):
        root_text = root.as_posix().rstrip("/") + "/"
        if not text.startswith(root_text):
            raise ToolError(
                f"refusing {shown(path)}: absolute paths outside the repository are not allowed; "
                "use a path relative to the repository root"
            )
        text = text[len(root_text) :]
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts:
        raise ToolError(f"{shown(path)} is the repository root, not a file")
    # A component of only dots, spaces or invisible characters is `..` (or `.`) to some file
    # system; no real file is named like that.
    if any(p == ".." or normalize_component(p) == "" for p in parts):
        raise ToolError(f"refusing {shown(path)}: '..' is not allowed in paths")
    return parts


def check_names(parts: Sequence[str], path: str) -> None:
    """Refuse `.git` in any spelling and secret files, judging the path as written."""
    if any(is_git_name(p) for p in parts):
        raise ToolError(f"refusing {shown(path)}: the .git directory is off limits")
    if is_secret_path(parts):
        raise ToolError(
            f"refusing {shown(path)}: it looks like a secret file (keys, tokens, .env); "
            "Redline does not read secret files"
        )


def shown(path: str, limit: int = 200) -> str:
    """A path for an error message: quoted, invisible characters visible, bounded."""
    text = "".join(
        c if c.isprintable() and not _INVISIBLE.match(c) else f"<U+{ord(c):04X}>"
        for c in path[:limit]
    )
    return repr(text + ("…" if len(path) > limit else ""))
