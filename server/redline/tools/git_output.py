"""What the model gets back from git: error lines, secret sections dropped, bounded text.

Shared by the git and gh tools. git's output is attacker text (file names, contents, commit
messages): diff sections of secret files (`.env`, keys) are omitted, everything is redacted and
made visible (ToolContext.clean), and the result is cut to the per-call limit.
"""

from __future__ import annotations

import re
from typing import Final

from redline.git.process import decode
from redline.tools.names import is_git_name, is_secret_path
from redline.tools.sandbox import ToolContext

SECRET_OMITTED: Final = "[contents of a secret file omitted by Redline]"


def error_summary(stderr: str) -> str:
    """git's own fatal/error lines only.

    Warnings can quote files git read on the way (a hostile `core.attributesFile` pointing at
    a secret yields "... is not a valid attribute name" with a piece of a line), so they are
    not passed on; the fatal line says what the model needs to know.
    """
    lines = [
        line for line in stderr.splitlines() if line.startswith(("fatal:", "error:", "usage:"))
    ]
    return "\n".join(lines[:5]) if lines else "(git printed no error message)"


def finish_output(ctx: ToolContext, data: bytes | str, *, empty: str = "(no output)") -> str:
    text = data if isinstance(data, str) else decode(data)
    text = omit_secret_sections(text)
    limit = ctx.limits.max_output_chars
    # Cut before cleaning (redaction over megabytes of log -p costs seconds), with a margin so
    # a secret straddling the cut is still seen whole by the patterns, then cut again.
    cut = len(text) > 2 * limit + 1000
    text = ctx.clean(text[: 2 * limit + 1000] if cut else text).rstrip("\n")
    if not text.strip():
        return empty
    if cut or len(text) > limit:
        text = (
            text[:limit]
            + f"\n[output truncated at {limit:,} characters; narrow it with a path, -n or --stat]"
        )
    return text


_SECTION_START: Final = ("diff --git ", "diff --cc ", "diff --combined ")
_SECTION_HEADERS: Final = (
    "index ",
    "old mode",
    "new mode",
    "deleted file",
    "new file",
    "similarity",
    "dissimilarity",
    "rename ",
    "copy ",
    "Binary files",
    "GIT binary patch",
    "literal ",
    "delta ",
)


def _header_names_secret(line: str) -> bool:
    # Conservative: any path-like piece of the header that is a secret name hides the section.
    pieces = re.split(r"[\s\"']+", line)
    for piece in pieces:
        parts = [p for p in piece.split("/") if p]
        if parts and (is_secret_path(parts) or any(is_git_name(p) for p in parts)):
            return True
        if parts and is_secret_path(parts[-1:]):
            return True
    return False


def omit_secret_sections(text: str) -> str:
    """Drop the body of every diff section whose file is a secret file (.env, keys, ...)."""
    if "diff --" not in text:
        return text
    out: list[str] = []
    skipping = False
    for line in text.split("\n"):
        if line.startswith(_SECTION_START):
            skipping = _header_names_secret(line)
            out.append(line)
            if skipping:
                out.append(SECRET_OMITTED)
            continue
        if skipping:
            # Inside a section every line is a header, a hunk line (' ', '+', '-', '@', '\')
            # or empty; anything else (`commit ...`, a oneline log entry) ends it.
            if not line or line[0] in " +-@\\" or line.startswith(_SECTION_HEADERS):
                continue
            skipping = False
        out.append(line)
    return "\n".join(out)
