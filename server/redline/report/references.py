"""Mentions and cross-references made inert: text a forge would turn into a notification or a
link to another thread keeps its letters but loses its meaning.

GitHub and GitLab scan the text of a rendered comment (outside code and links) for `@user`,
`@org/team`, `@all`, `#12`, `owner/repo#12`, `GH-12`, and on GitLab also `!12` (a merge
request), `~label`, `%milestone`, `$12` (a snippet), `&12` (an epic) and `[vulnerability:12]`
style references. Posted by Redline's account, a model's `@org/team` pings people the author of
the change could not reach, and `owner/repo#1` leaves a trace in another project. A zero-width
joiner (U+200D) after the sigil breaks every such pattern on both forges while the reader sees
the same text. It also unmakes HTML character references (`&#64;` would otherwise become `@`
after the scan could see it): `&` and `#` before a letter or digit get the same joiner.

Applied by report/sanitize.py to prose only; code spans and fences are inert already.
"""

from __future__ import annotations

import re

JOINER = "\u200d"

# A sigil before what could start a name, a number or a quoted label; `GH-` before a digit; a
# `[` before `name:` (GitLab's `[vulnerability:1]`, `[wiki_page:x]`, `[contact:x]`). A `#` after
# a `/` before a letter is a URL's anchor (`…/audits/#template-injection`, an analyzer's rule
# page), neither a forge reference (those take digits) nor an HTML character reference (`&#`).
_REFERENCE = re.compile(
    r"[@!~%$&](?=[A-Za-z0-9_\"])|#(?=[0-9])|(?<!/)#(?=[A-Za-z_\"])|GH-(?=[0-9])"
    r"|\[(?=[A-Za-z_]+:)",
    re.I,
)


def neutralise_references(text: str) -> str:
    """`text` with a joiner after each sigil that could start a mention or reference."""
    return _REFERENCE.sub(lambda m: m.group() + JOINER, text)


def live_reference(text: str) -> re.Match[str] | None:
    """The first place in `text` (as a forge reads it) that could still be a reference."""
    return _REFERENCE.search(text)
