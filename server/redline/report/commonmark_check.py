"""The check after the sanitizer: Markdown read back the way a forge or editor reads it.

report/sanitize.py rewrites model text with line and pattern rules; a CommonMark parser
(markdown-it, which rich brings; GitHub's cmark-gfm and VS Code agree with it on structure) then
reads the result, and any construct that would act rather than show is a problem: raw HTML, an
image, a link to anything but http(s)/mailto, a `suggestion` block, a live mention or
reference in the text a reader sees, a paragraph line starting with `/` (a GitLab quick action),
or a block the text leaves open (a fence or HTML block would swallow whatever Redline writes
after it: a line appended after a blank line must come out as a paragraph of its own). The
sanitizer falls back to showing the text as code when this finds anything, so a gap between its
rules and a real parser shows plain text rather than acting.

Text with none of the characters any of these constructs needs (a backtick or tilde for a
fence, `<` for HTML and autolinks, `[` for links and images, `&` and `\\` for entities and
escapes that could spell a sigil, a `/` starting a line) and no live reference as written is
not parsed: its text tokens are pieces of it, so nothing in it can act. Checks are cached: one
finding's text is checked for the report, the summary, its inline comment and its hover.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

from redline.report.references import live_reference

_MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_SAFE_SCHEMES = ("http://", "https://", "mailto:")
# Appended after a blank line: it must parse as a top-level paragraph of its own.
_CANARY = "redline-canary-e1f0"
# What every construct the check looks for needs, at least one of.
_MARKUP = re.compile(r"[`~<\[&\\]|^/", re.MULTILINE)


def _plain(text: str) -> bool:
    """Nothing in `text` could act, without parsing it."""
    return _MARKUP.search(text) is None and live_reference(text) is None


@lru_cache(maxsize=4096)
def block_problem(markdown: str) -> str | None:
    """What in `markdown` (a block of text placed between Redline's own) would act, or None."""
    if _plain(markdown):
        return None
    tokens = _MD.parse(f"{markdown}\n\n{_CANARY}\n")
    tail = [(t.type, t.level, t.content) for t in tokens[-3:]]
    if tail != [("paragraph_open", 0, ""), ("inline", 1, _CANARY), ("paragraph_close", 0, "")]:
        return "a block is left open"
    lines = markdown.splitlines()
    for token in tokens[:-3]:
        if token.type == "paragraph_open" and token.map is not None:
            for line in lines[token.map[0] : token.map[1]]:
                if line.startswith("/"):
                    return f"a paragraph line starts with '/': {line[:40]!r}"
        if token.type == "fence" and token.info.strip().lower().startswith("suggestion"):
            return "a suggestion block"
    return _inline_problem(tokens)


@lru_cache(maxsize=4096)
def inline_problem(text: str) -> str | None:
    """What in one line of inline Markdown (a title, a table cell) would act, or None."""
    if _plain(text):
        return None
    return _inline_problem(_MD.parseInline(text))


def _inline_problem(tokens: list[Token]) -> str | None:
    for token, in_link in _walk(tokens):
        if token.type in ("html_block", "html_inline"):
            return f"raw HTML {token.content.strip()[:40]!r}"
        if token.type == "image":
            return "an image"
        if token.type == "link_open":
            href = str(token.attrGet("href") or "")
            if not href.lower().startswith(_SAFE_SCHEMES):
                return f"a link to {href[:40]!r}"
        # Forges leave text inside links alone (a URL's `@` or `#` is not a mention).
        if token.type == "text" and not in_link:
            found = live_reference(token.content)
            if found is not None:
                return f"a live reference at {token.content[found.start() :][:20]!r}"
    return None


def _walk(tokens: list[Token]) -> Iterator[tuple[Token, bool]]:
    depth = 0
    for token in tokens:
        yield token, False
        for child in token.children or []:
            if child.type == "link_open":
                depth += 1
            yield child, depth > 0
            if child.type == "link_close":
                depth -= 1
