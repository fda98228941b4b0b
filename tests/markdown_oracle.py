"""What a forge or editor would make of Redline's Markdown: a CommonMark parser (markdown-it, as
rich and VS Code use; GitHub's cmark-gfm and GitLab's parser agree on the block structure) reads
the text, and every construct that would act rather than show is listed.

The tests' own oracle, written apart from the code under test: report/commonmark_check.py is
Redline's runtime guard, this is what the attack tests judge its output by.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])

# What GitHub or GitLab would turn into a mention, a cross-reference or a GitLab reference
# (`!MR`, `~label`, `%milestone`, `$snippet`, `&epic`, `[vulnerability:1]`), read in the text
# a reader sees (outside code and links).
LIVE_REFERENCE = re.compile(r"[@#!~%$&][A-Za-z0-9_\"]|\bGH-[0-9]|\[[A-Za-z_]+:", re.IGNORECASE)
MARKER = re.compile(r"<!-- redline:(summary:(review|debate)|finding:RL-[0-9a-f]{12}) -->\n?")
# Every C0 control but tab and newline, DEL, C1 (U+009B is CSI), and the bidi embeddings,
# overrides and isolates of "Trojan Source".
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def walk(tokens: list[Token]) -> Iterator[tuple[Token, bool]]:
    """Every token, inline children included, with whether it sits inside a link."""
    in_link = 0
    for token in tokens:
        yield token, in_link > 0
        for child in token.children or []:
            if child.type == "link_open":
                in_link += 1
            yield child, in_link > 0
            if child.type == "link_close":
                in_link -= 1


def fence_infos(markdown: str) -> list[str]:
    return [t.info.strip() for t in MD.parse(markdown) if t.type == "fence"]


def suggestion_fences(markdown: str) -> list[Token]:
    return [
        t
        for t in MD.parse(markdown)
        if t.type == "fence" and t.info.strip().lower().startswith("suggestion")
    ]


def live_constructs(markdown: str, *, allow_marker: bool = True) -> list[str]:
    """What in `markdown` would act: raw HTML, images, links other than http(s)/mailto, live
    mentions and references, GitLab quick actions (a paragraph line starting with `/`)."""
    problems: list[str] = []
    # The parser's own lines (its token maps count them): CommonMark ends a line at LF, CR or
    # CRLF only, not at the other breaks str.splitlines knows (form feed, U+2028...).
    lines = re.split(r"\r\n|\r|\n", markdown)
    tokens = MD.parse(markdown)
    for token, in_link in walk(tokens):
        if token.type in ("html_block", "html_inline"):
            if not (allow_marker and MARKER.fullmatch(token.content)):
                problems.append(f"raw HTML {token.content.strip()[:60]!r}")
        elif token.type == "image":
            problems.append(f"image {token.attrGet('src')!r}")
        elif token.type == "link_open":
            href = str(token.attrGet("href") or "")
            if not href.lower().startswith(("http://", "https://", "mailto:")):
                problems.append(f"link to {href!r}")
        elif token.type == "text" and not in_link:
            for match in LIVE_REFERENCE.finditer(token.content):
                context = token.content[max(0, match.start() - 10) : match.end() + 10]
                problems.append(f"live reference {match.group(0)!r} in {context!r}")
        elif token.type == "paragraph_open" and token.map:
            for line in lines[token.map[0] : token.map[1]]:
                if line.startswith("/"):
                    problems.append(f"quick action line {line[:40]!r}")
    return problems


def top_level_headings(markdown: str) -> list[str]:
    """The text of every heading at the top level: sections a model's text cannot swallow."""
    tokens = MD.parse(markdown)
    out = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0:
            out.append(tokens[i + 1].content)
    return out


def raw_controls(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in RAW_CONTROL.findall(text)]
