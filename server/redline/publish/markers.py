"""The hidden markers that let a later run find what an earlier one posted.

A summary comment ends with `<!-- redline:summary:review -->` (or `:debate`), an inline
comment with `<!-- redline:finding:RL-… -->`. Only the *last line* of a comment is read, and
only comments written by the account that posts are considered (github.py, gitlab.py): model
text inside a comment is sanitized Markdown where `<` is escaped, so a planted marker can
neither redirect the summary update nor silence a finding.
"""

from __future__ import annotations

import re
from typing import Final, Literal

Kind = Literal["review", "debate"]

_SUMMARY_RE: Final = re.compile(r"<!-- redline:summary:(review|debate) -->")
_FINDING_RE: Final = re.compile(r"<!-- redline:finding:(RL-[0-9a-f]{12}) -->")


def summary_marker(kind: Kind) -> str:
    return f"<!-- redline:summary:{kind} -->"


def finding_marker(finding_id: str) -> str:
    return f"<!-- redline:finding:{finding_id} -->"


def _last_line(body: object) -> str:
    if not isinstance(body, str):
        return ""
    return body.rstrip().rpartition("\n")[2].strip()


def summary_kind(body: object) -> Kind | None:
    match = _SUMMARY_RE.fullmatch(_last_line(body))
    if match is None:
        return None
    return "debate" if match.group(1) == "debate" else "review"


def posted_finding(body: object) -> str | None:
    match = _FINDING_RE.fullmatch(_last_line(body))
    return match.group(1) if match else None
