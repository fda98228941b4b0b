"""The report drawn for a person at a terminal, with rich: severity colours, `file:line` as a
clickable link, syntax-highlighted code and fixes, everything wrapped to the terminal's width.

The same `Review` (already redacted by the caller) as the Markdown report, and the same words
where they are shared: the prose parts a model wrote, the debate's sections and the Coverage
section are the Markdown report's own text, drawn by rich's Markdown renderer. Only a terminal
ever sees this; pipes, files and `--format markdown` get the Markdown unchanged.

Model text, file names and code are untrusted: every string of the review is passed through
`escape_controls` once, before anything is drawn (an escape sequence in a diff must not move the
cursor, retitle the window or set the clipboard; it is shown spelled out, `\u001b`), rich
markup and emoji codes are off, and links in model prose are shown with their target rather
than hidden behind their text.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.syntax import Syntax
from rich.text import Text

from redline.model import AnchorState, Finding, Review, Severity
from redline.report.controls import escape_controls
from redline.report.debate_markdown import debate_sections, debate_summary
from redline.report.markdown import (
    cached_review_line,
    coverage_section,
    not_applicable_label,
)
from redline.report.sanitize import sanitize_markdown

COLOR_MODES = ("auto", "always", "never")

# Every severity has a style: a finding of one without would crash the report (it once did, for
# Info — an `import pickle` or a `"%s" % x` on a changed line). tests/test_terminal_property.py
# draws every severity.
SEVERITY_STYLES = {
    Severity.CRITICAL: "bold white on red",
    Severity.HIGH: "bold red",
    Severity.MEDIUM: "bold yellow",
    Severity.LOW: "bold cyan",
    Severity.INFO: "bold blue",
}
_ORDER = sorted(Severity, key=lambda s: -s.rank)
_CODE_THEME = "monokai"
_INDENT = (0, 0, 0, 2)  # a finding's body sits under its heading


def terminal_safe(text: str) -> str:
    """`text` with the control characters a terminal would act on spelled out."""
    return escape_controls(text)


def inert_review(review: Review) -> Review:
    """The review with every string in it (titles, comments, code, file names, notes) passed
    through `escape_controls`: the terminal report's one choke point."""
    return Review.model_validate(_escaped(review.model_dump(mode="json")))


def _escaped(data: Any) -> Any:
    if isinstance(data, str):
        return escape_controls(data)
    if isinstance(data, list):
        return [_escaped(item) for item in data]
    if isinstance(data, dict):
        return {key: _escaped(value) for key, value in data.items()}
    return data


def console_for(stream: TextIO, color: str = "auto", *, force_terminal: bool = False) -> Console:
    """A console on `stream` honouring `--color`: `never` writes no escape codes at all,
    `always` colours even when `NO_COLOR` is set (an explicit flag wins over the environment),
    `auto` leaves NO_COLOR (colours off, bold and links kept) and TERM to rich."""
    if color not in COLOR_MODES:
        raise ValueError(f"unknown colour mode {color!r}; expected one of {COLOR_MODES}")
    return Console(
        file=stream,
        force_terminal=True if force_terminal or color == "always" else None,
        color_system=None if color == "never" else "auto",
        no_color=False if color == "always" else None,
        highlight=False,
        markup=False,
        emoji=False,
    )


def print_terminal(review: Review, console: Console) -> None:
    """Draw the report on `console`."""
    console.print(report_renderable(review))


def report_renderable(review: Review) -> RenderableType:
    review = inert_review(review)
    debate = review.debate
    what = "debate" if debate is not None else "review"
    label = (
        review.scope_label.removeprefix("debate: ") if debate is not None else review.scope_label
    )
    parts: list[RenderableType] = [
        Text(f"Redline {what}: {label}", style="bold underline"),
        _summary_line(review),
    ]
    if not review.coverage.models and review.coverage.cached_models:
        parts.append(Text(cached_review_line(review, str), style="italic"))
    elif not review.coverage.models:
        parts.append(
            Text(
                "Offline review: no model ran. These results come from static analyzers only.",
                style="italic yellow",
            )
        )
    if review.summary and (debate is None or review.summary != debate.summary_markdown):
        parts += [_heading("Summary"), _markdown(review.summary)]
    if debate is not None:
        lines: list[str] = []
        debate_summary(debate, lines)
        if lines:
            parts.append(_markdown("\n".join(lines)))
    if review.findings:
        parts += _findings(review)
    elif review.failure is not None:
        parts.append(Text("No findings: the review did not complete.", style="bold red"))
    # Otherwise the summary line above has said "No findings." (once is enough).
    if debate is not None:
        lines = []
        debate_sections(debate, lines)
        if lines:
            parts.append(_markdown("\n".join(lines)))
    coverage: list[str] = []
    coverage_section(review, coverage)
    parts.append(_markdown("\n".join(coverage)))
    return Group(*_spaced(parts))


def _spaced(parts: list[RenderableType]) -> list[RenderableType]:
    out: list[RenderableType] = []
    for part in parts:
        if out:
            out.append(Text(""))
        out.append(part)
    return out


def _heading(text: str, style: str = "bold") -> Text:
    return Text(text, style=style)


def _markdown(text: str) -> Markdown:
    # hyperlinks=False: a link shows its target, so model prose cannot disguise where it goes.
    return Markdown(
        sanitize_markdown(text).strip(),
        code_theme=_CODE_THEME,
        hyperlinks=False,
        inline_code_theme=_CODE_THEME,
    )


def _summary_line(review: Review) -> Text:
    if review.failure is not None:
        return Text.assemble(("Review failed: ", "bold red"), review.failure.rstrip(".") + ".")
    stats = review.stats
    line = Text.assemble(
        (f"{stats.files} file{'s' if stats.files != 1 else ''} changed, ", "bold"),
        (f"+{stats.added}", "bold green"),
        " ",
        (f"−{stats.removed}", "bold red"),
        (" lines. ", "bold"),
    )
    if not review.findings:
        line.append("No findings.", style="green")
        return line
    count = len(review.findings)
    line.append(f"{count} finding{'s' if count != 1 else ''}: ")
    counts = review.counts_by_severity()
    shown = [s for s in _ORDER if counts[s]]
    for i, severity in enumerate(shown):
        line.append(f"{counts[severity]} {severity.value}", style=SEVERITY_STYLES[severity])
        line.append(", " if i < len(shown) - 1 else ".")
    return line


def _findings(review: Review) -> list[RenderableType]:
    out: list[RenderableType] = []
    for severity in _ORDER:
        group = [f for f in review.findings if f.severity is severity]
        if not group:
            continue
        title = f" {severity.value.upper()} ({len(group)}) "
        out.append(_heading(title, SEVERITY_STYLES[severity]))
        out += [_finding(finding, Path(review.repo)) for finding in group]
    return out


def file_link(repo: Path, path: str, line: int | None) -> str:
    """An OSC 8 target for a finding: a `file://` URI with this host's name (terminals may
    refuse a file link without one, since over SSH it would name another machine's file) and
    the line as the fragment (`#12`, as kitty's and WezTerm's open actions read it). Quoting
    leaves no control character in the URI, so it cannot end the escape sequence early."""
    target = quote((repo / path).as_posix())
    fragment = f"#{line}" if line is not None else ""
    return f"file://{quote(socket.gethostname())}{target}{fragment}"


def _location(finding: Finding, repo: Path) -> Text:
    shown = finding.file
    if finding.line is not None:
        shown += f":{finding.line}"
    text = Text()
    text.append(shown, style=f"bold link {file_link(repo, finding.file, finding.line)}")
    if finding.line is None:
        text.append(" (location not found)", style="dim")
    elif finding.anchor is AnchorState.APPROXIMATE:
        text.append(" (approximate location)", style="dim")
    return text


def _finding(finding: Finding, repo: Path) -> RenderableType:
    heading = _location(finding, repo)
    heading.append(" — ")
    heading.append(finding.title, style="bold")
    body: list[RenderableType] = []
    comment = finding.comment.strip()
    if comment:
        body.append(_markdown(comment))
    sources = ", ".join(finding.sources) if finding.sources else "unknown"
    meta = f"{finding.category.value} · confidence {finding.confidence:.2f} · from {sources}"
    if finding.rule_id:
        meta += f" · rule {finding.rule_id}"
    if finding.verification is not None:
        meta += f" · verified: {finding.verification.verdict}"
    body.append(Text(meta, style="dim italic"))
    body += _code(finding)
    return Group(heading, Padding(Group(*body), _INDENT))


def _code(finding: Finding) -> list[RenderableType]:
    """The flagged code (numbered from the finding's line when it was found in the file) and
    the improved code, introduced as the Markdown report introduces them."""
    out: list[RenderableType] = []
    existing = finding.existing_code
    if existing and existing.strip():
        if finding.anchor is AnchorState.APPROXIMATE:
            out.append(
                Text("Quoted code (not found in the file; the location is approximate):", "dim")
            )
            out.append(_syntax(existing, finding.file, None))
        else:
            out.append(_syntax(existing, finding.file, finding.line))
    improved = finding.improved_code
    if improved is None:
        return out
    if not finding.fix_applicable:
        out += [Text(not_applicable_label(finding.fix), "dim"), _syntax(improved, finding.file)]
    elif improved == "":
        out.append(Text("Suggested fix: delete these lines.", style="green"))
    else:
        out += [Text("Suggested fix:", style="green"), _syntax(improved, finding.file)]
    return out


def _syntax(code: str, path: str, first_line: int | None = None) -> Syntax:
    return Syntax(
        code,
        _lexer(path.rsplit("/", 1)[-1], code),
        theme=_CODE_THEME,
        line_numbers=first_line is not None,
        start_line=first_line or 1,
        word_wrap=True,
        background_color="default",
    )


# File name → lexer name: see `_lexer`. Bounded; a review names far fewer files.
_LEXERS: dict[str, str] = {}


def _lexer(name: str, code: str) -> str:
    """The lexer for a file's code, guessed once per file name. pygments' guess walks every
    lexer's file patterns (~10 ms a call): with the flagged code and a fix for each finding, a
    report of 2,000 findings spent most of its 30 s here. The first code seen settles the rare
    name whose language its content decides (a `.h` file)."""
    lexer = _LEXERS.get(name)
    if lexer is None:
        if len(_LEXERS) >= 4096:
            _LEXERS.clear()
        lexer = _LEXERS[name] = Syntax.guess_lexer(name, code)
    return lexer
