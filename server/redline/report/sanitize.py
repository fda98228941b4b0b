"""Make model-supplied Markdown safe to show: no images, no raw HTML, no `command:` links.

Model text is untrusted (the code under review can steer it). In VS Code a hover or report
rendered as trusted Markdown would run a `command:` link on click, an image would fetch a URL
(a tracking pixel or a data leak), and raw HTML could hide text from the reader. Links survive
only with an http(s) or mailto target; every other link keeps its text and loses its target.

Code spans and fenced code blocks are left exactly as they are: Markdown renders them
literally, and a finding's code must not change.
"""

from __future__ import annotations

import re

_SAFE_SCHEMES = ("http://", "https://", "mailto:")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_HTML_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9:-]*)(?:\s[^<>]*)?/?>")
_HTML_DECLARATION = re.compile(r"<[!?][^<>]*>")
# Whatever could still open a tag afterwards ("<" before a letter, "/", "!" or "?") is escaped,
# except a safe autolink. `List<int>` in prose thus stays readable instead of vanishing. The
# escape is Markdown's own backslash, not an HTML entity: the report is also read as plain text
# (a terminal, a CI log), where `List\<int>` reads as code and `List&lt;int>` as noise. A "<"
# already behind an odd run of backslashes is escaped; an even run escapes only itself.
_TAG_START = re.compile(r"(?<!\\)((?:\\\\)*)<(?=[A-Za-z/!?])(?!(?:https?|mailto):)", re.IGNORECASE)
# Element names a renderer would treat as HTML; these tags are removed outright.
_ELEMENT_NAMES = """
    a abbr address area article aside audio b base bdi bdo big blink blockquote body br
    button canvas caption center cite code col colgroup data datalist dd del details dfn dialog
    div dl dt em embed fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5
    h6 head header hr html i iframe img input ins kbd label legend li link main map mark marquee
    math menu meta meter nav noscript object ol optgroup option output p param picture pre
    progress q rp rt ruby s samp script section select slot small source span strike strong
    style sub summary sup svg table tbody td template textarea tfoot th thead time title tr
    track tt u ul var video wbr xmp"""
_HTML_ELEMENTS = frozenset(_ELEMENT_NAMES.split())
_IMAGE = re.compile(r"!\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)>\s]*)>?(?:\s+[\"'(][^)]*)?\s*\)")
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>")
_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*<?(\S*?)>?(?:[ \t]+.*)?$", re.MULTILINE)


def sanitize_markdown(text: str) -> str:
    """The same Markdown without images, raw HTML or links to anything but http(s)/mailto."""
    if not text:
        return text
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                out.append(_prose("".join(prose)))
                prose = []
                fence = match.group(1)
                out.append(line)
            else:
                prose.append(line)
            continue
        out.append(line)
        stripped = line.strip()
        closes = match and set(stripped) == {fence[0]} and len(stripped) >= len(fence)
        if closes:
            fence = None
    out.append(_prose("".join(prose)))
    return "".join(out)


def sanitize_inline(text: str) -> str:
    """For one-line fields (titles): sanitized, with line breaks folded into spaces."""
    return " ".join(sanitize_markdown(text).split())


def _prose(text: str) -> str:
    if not text:
        return text
    pieces: list[str] = []
    cursor = 0
    for span in _CODE_SPAN.finditer(text):
        pieces.append(_clean(text[cursor : span.start()]))
        pieces.append(span.group(0))
        cursor = span.end()
    pieces.append(_clean(text[cursor:]))
    return "".join(pieces)


def _clean(text: str) -> str:
    if not text:
        return text
    text = _HTML_COMMENT.sub("", text)
    text = _HTML_DECLARATION.sub("", text)
    text = _HTML_TAG.sub(lambda m: "" if m.group(1).lower() in _HTML_ELEMENTS else m.group(0), text)
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(_link, text)
    text = _AUTOLINK.sub(lambda m: m.group(0) if _safe(m.group(1)) else m.group(1), text)
    text = _REF_DEF.sub(lambda m: m.group(0) if _safe(m.group(1)) else "", text)
    return _TAG_START.sub(r"\1\\<", text)


def _link(match: re.Match[str]) -> str:
    label, target = match.group(1), match.group(2)
    return match.group(0) if _safe(target) else label


def _safe(target: str) -> bool:
    return target.strip().lower().startswith(_SAFE_SCHEMES)
