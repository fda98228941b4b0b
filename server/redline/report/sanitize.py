"""Make model-supplied Markdown inert: nothing in it may act when it is shown or posted.

Model text is untrusted (the code under review can steer it). In VS Code a hover or report
rendered as trusted Markdown would run a `command:` link on click, an image would fetch a URL
(a tracking pixel or a data leak), and raw HTML could hide text from the reader. Links survive
only with an http(s) or mailto target; every other link keeps its text and loses its target.
Posted on a pull request by Redline's account, a model's `@org/team` or `owner/repo#1` would
notify people or leave a trace in another thread, a ```` ```suggestion ```` block would offer a
one-click commit of the model's code, and a line `/merge` would be a GitLab quick action run
as Redline: mentions and references get a zero-width joiner (report/references.py), a
suggestion fence loses its info string, and a line's leading `/` is escaped.

Code spans and fenced code blocks are left exactly as they are: Markdown renders them
literally, and a finding's code must not change. A fence the text leaves open is closed where
the text ends, so it cannot swallow what Redline writes after it. Last, a CommonMark parser
reads the result (report/commonmark_check.py); if anything would still act, the text is shown
as code instead.
"""

from __future__ import annotations

import re
from functools import lru_cache

from redline.report.commonmark_check import block_problem, inline_problem
from redline.report.markup import fenced, inline_code
from redline.report.references import neutralise_references

_SAFE_SCHEMES = ("http://", "https://", "mailto:")

# A fence line: its marker and info string. A backtick fence's info string holds no backtick
# (CommonMark), else the line is prose with code spans in it.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*?)\r?\n?$")
# A code span: not opened by an escaped backtick, not across a blank line (a paragraph ends).
_CODE_SPAN = re.compile(
    r"(?<![`\\])((?:\\\\)*)(`+)(?!`)((?:(?!\n[ \t]*\n).)+?)(?<!`)\2(?!`)", re.DOTALL
)
# An info string a forge reads as a suggestion block (GitHub ```suggestion, GitLab
# ```suggestion:-0+2): only Redline's own applicable fixes may be one.
_SUGGESTION = re.compile(r"^\s*suggestion", re.IGNORECASE)
# What at least one rule of `_clean` needs: "<" (HTML, autolinks), "[" (links, images,
# definitions, `[name:`), a sigil, `GH-`, or "/" (quick actions).
_CLEAN_NEEDED = re.compile(r"[<\[@#!~%$&/]|GH-", re.IGNORECASE)
# A line (of prose) starting with `/`: GitLab runs it as a quick action (/merge, /approve).
_SLASH_LINE = re.compile(r"^([ \t]*)/", re.MULTILINE)
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
# A link that survived `_link` (its label, then its safe target) or a safe autolink: the
# target is a URL, where `@` and `#` are not mentions and a joiner would break it.
_KEPT_LINK = re.compile(
    r"(\[[^\]]*\])(\(\s*<?(?:https?://|mailto:)[^)\s>]*>?(?:\s+[\"'(][^)]*)?\s*\))"
    r"|<(?:https?|mailto):[^<>\s]*>",
    re.IGNORECASE,
)
_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*<?(\S*?)>?(?:[ \t]+.*)?$", re.MULTILINE)


@lru_cache(maxsize=4096)  # pure; a finding's text is shown in the report, summary and hover
def sanitize_markdown(text: str) -> str:
    """The same Markdown, inert: no images, raw HTML, links to anything but http(s)/mailto,
    live mentions or references, suggestion blocks, quick actions or fence left open; shown as
    code when a CommonMark parser still finds one of them in the result."""
    if not text:
        return text
    # CommonMark ends a line at CR as at LF: a lone CR would start a line ("\r/label") that
    # the line rules below, which split on LF, never look at.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    cleaned = _sanitize_blocks(text)
    if block_problem(cleaned) is None:
        return cleaned
    return fenced(text)


@lru_cache(maxsize=4096)
def sanitize_inline(text: str) -> str:
    """For one-line fields (titles): line breaks folded into spaces, then sanitized as inline
    Markdown; shown as a code span when the parser still finds something that would act."""
    line = " ".join(_prose(" ".join(text.split())).split())
    if inline_problem(line) is None:
        return line
    return inline_code(text)


def _sanitize_blocks(text: str) -> str:
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        match = _FENCE.match(line)
        if fence is None:
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                out.append(_prose("".join(prose)))
                prose = []
                fence = match.group(1)
                out.append(_opening(line, match))
            else:
                prose.append(line)
            continue
        out.append(line)
        stripped = line.strip()
        closes = match and set(stripped) == {fence[0]} and len(stripped) >= len(fence)
        if closes:
            fence = None
    out.append(_prose("".join(prose)))
    result = "".join(out)
    if fence is not None:
        # Left open, the fence would run on through whatever Redline writes after this text.
        result += ("" if result.endswith("\n") else "\n") + fence
    return result


def _opening(line: str, match: re.Match[str]) -> str:
    """A fence's opening line, without its info string when a forge would read a suggestion."""
    if _SUGGESTION.match(match.group(2)):
        return line[: match.start(2)] + line[match.end(2) :]
    return line


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
    if _CLEAN_NEEDED.search(text) is None:
        return text  # none of the rules below can apply
    text = _HTML_COMMENT.sub("", text)
    text = _HTML_DECLARATION.sub("", text)
    text = _HTML_TAG.sub(lambda m: "" if m.group(1).lower() in _HTML_ELEMENTS else m.group(0), text)
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(_link, text)
    text = _AUTOLINK.sub(lambda m: m.group(0) if _safe(m.group(1)) else m.group(1), text)
    text = _REF_DEF.sub(lambda m: m.group(0) if _safe(m.group(1)) else "", text)
    text = _TAG_START.sub(r"\1\\<", text)
    text = _references(text)
    return _SLASH_LINE.sub(r"\1\\/", text)


def _references(text: str) -> str:
    """Mentions and references neutralised everywhere but in a kept link's target."""
    pieces: list[str] = []
    cursor = 0
    for link in _KEPT_LINK.finditer(text):
        pieces.append(neutralise_references(text[cursor : link.start()]))
        if link.group(1) is not None:
            pieces.append(neutralise_references(link.group(1)) + link.group(2))
        else:
            pieces.append(link.group(0))
        cursor = link.end()
    pieces.append(neutralise_references(text[cursor:]))
    return "".join(pieces)


def _link(match: re.Match[str]) -> str:
    label, target = match.group(1), match.group(2)
    return match.group(0) if _safe(target) else label


def _safe(target: str) -> bool:
    return target.strip().lower().startswith(_SAFE_SCHEMES)
