"""Skip decisions judged by a file's content, not only its name.

A name says little about what a file holds: minified jQuery is often committed as plain
`jquery.js`, a vendored header sits next to the project's own ones, and a binary old version
says nothing about the text that replaced it. Each check here reads only the new side (what is
reviewed), is a pure function of the text, and looks at a bounded part of it: the head (the
first `HEAD_LINES` lines) for markers, the line lengths for minification. The lists are short on
purpose: a check that fires wrongly hides code from review, one that misses costs tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from redline.diff.tags import split_path

HEAD_LINES = 30  # header comments (license banners, "copied from" notes) sit at the top

# --- minified or bundled ------------------------------------------------------------------------
# Hand-written code keeps lines short (style guides cap them at 80-120 characters); minifiers
# and bundlers drop newlines, leaving a few lines of thousands of characters. A file counts as
# minified when it is not tiny and its text is mostly on very long lines: both the average line
# and the share of characters on lines over MINIFIED_LONG_LINE say so, so one long line (a data
# URL, a long string) in an otherwise normal file does not.
MINIFIED_MIN_CHARS = 2_000
MINIFIED_MEAN_LINE = 250
MINIFIED_LONG_LINE = 1_000
MINIFIED_LONG_SHARE = 0.5
# Bundles that keep their newlines (a development build) say so in their runtime's boilerplate.
_BUNDLE_MARKER = re.compile(r"webpackBootstrap|__webpack_require__|parcelRequire|System\.register")


def minified(lines: Sequence[str]) -> bool:
    """The text (its lines, without newlines) looks minified: very long lines, few newlines."""
    total = sum(map(len, lines))
    if total < MINIFIED_MIN_CHARS or total / max(len(lines), 1) < MINIFIED_MEAN_LINE:
        return False
    long_chars = sum(n for n in map(len, lines) if n > MINIFIED_LONG_LINE)
    return long_chars >= MINIFIED_LONG_SHARE * total


def bundled(head: Sequence[str]) -> bool:
    """A bundler's output: its module runtime is named in the first lines."""
    # One search over the joined lines (the markers are words, never across a line break).
    return _BUNDLE_MARKER.search("\n".join(head)) is not None


# --- vendored -----------------------------------------------------------------------------------
# A comment near the top that says the file is someone else's: "vendored", "copied from",
# "taken from", "a copy of", "imported from upstream". Only on comment lines, so code that
# merely handles the word (a `vendored` variable) does not count. "A copy of" the license or of
# "this software" is the license header a project puts on its own files (Apache's "obtain a copy
# of the License", MIT's "obtaining a copy of this software", GNU's, the MPL's), not a note.
_COMMENT = r"^\s*(?:#|//|/\*|\*|<!--|--|;|\"\"\"|''')"
_LICENSE_COPY = (
    r"(?!\s+(?:the\s+(?:license|gnu|mpl|mozilla|apache|mit|bsd)|this\s+(?:software|license)))"
)
_VENDORED_NOTE = re.compile(
    _COMMENT + r".*(?:\bvendored\b|\b(?:copied|taken|vendored|imported|copy) (?:verbatim )?from\b"
    r"|\b(?:a|an exact|verbatim) copy of\b"
    + _LICENSE_COPY
    + r"|\bupstream (?:version|copy|source)\b)",
    re.IGNORECASE,
)
# Both searched line by line; the multi-line forms find whether any line of a joined head can.
_COMMENT_RE = re.compile(_COMMENT)
_VENDORED_NOTE_ANY = re.compile(_VENDORED_NOTE.pattern, re.IGNORECASE | re.MULTILINE)
# A header URL that ends in the file's own name ("Latest version: https://raw.github…/x.h") says
# where the file is maintained: upstream, not here.
_URL = re.compile(r"https?://\S+/([\w.+-]+?)[\"')>\]]*$")
# Known libraries that are often copied into repositories as a single file, recognised by the
# banner their releases start with: the name plus a version or the license line, as the
# library's own build writes it, so a file that merely mentions the library does not count.
_KNOWN_BANNERS = re.compile(
    r"jQuery (?:JavaScript Library |UI - )?v\d"  # jquery.js, jquery.min.js, jQuery UI
    r"|@license\s+(?:Lodash|lodash|React|AngularJS|Angular)\b"  # lodash, React, AngularJS
    r"|Underscore\.js \d"
    r"|Bootstrap v\d"
    r"|Vue\.js v\d"
    r"|moment\.js\b.*\bversion\s*:\s*\d|//! moment\.js"
    r"|https://d3js\.org v\d"
    r"|This file is an amalgamation of many separate C source files from SQLite"
    r"|Copyright \(c\) 2010-20\d\d Benjamin Peterson"  # six.py
)


def vendored_header(path: str, head: Sequence[str]) -> bool:
    """The first lines say the file is a copy of someone else's: a "copied/vendored from" note,
    a known library's release banner, or a header URL naming this very file."""
    # One search over the joined head first: a line that matches makes the whole text match,
    # so most files (no banner, no note, no URL) are done without a loop over their lines.
    text = "\n".join(head)
    if _KNOWN_BANNERS.search(text):
        return True
    if "://" not in text and _VENDORED_NOTE_ANY.search(text) is None:
        return False
    name = split_path(path)[1]
    for line in head:
        if not _COMMENT_RE.match(line):
            continue
        if _VENDORED_NOTE.search(line):
            return True
        url = _URL.search(line.rstrip())
        if url and name and url.group(1) == name:
            return True
    return False


# --- binary -------------------------------------------------------------------------------------
BINARY_PROBE_BYTES = 8_000  # what git looks at (buffer_is_binary: a NUL in the first 8000 bytes)


def binary_content(content: bytes) -> bool:
    """git's test for binary data, applied to one side only: a NUL in the first 8000 bytes.
    Text that is not valid UTF-8 also counts: the reviewer could not read it."""
    if b"\0" in content[:BINARY_PROBE_BYTES]:
        return True
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False
