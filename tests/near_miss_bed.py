"""A bed of quotes for the anchoring policy (issue 10): near-misses (one identifier renamed, as
a model that hallucinates does) and legitimate re-quotes (re-indented, tabs, spacing, trailing
space, Redline's prompt gutter), each made from a known line of a source text, and how each
policy for fuzzy matches would show them. Used by tests/test_anchoring.py and printed by
benchmarks/anchoring.py."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from redline.review.anchoring import locate

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]{3,}")
_KEYWORDS = frozenset({"return", "def", "import", "from", "with", "else", "elif", "while", "None"})

SOURCE = '''\
"""Build and export reports."""

import json
import subprocess
from pathlib import Path


def load_report(path: Path) -> dict:
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


def report_title(report: dict) -> str:
    return report.get("title", "untitled").strip()


def export_report(name: str, target_dir: str) -> int:
    """Zip the named report into target_dir for download."""
    command = f"zip -r {target_dir}/{name}.zip reports/{name}"
    return subprocess.call(command, shell=True)


def read_optional(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def collect_titles(reports: list[dict], seen: list[str]) -> list[str]:
    for report in reports:
        seen.append(report_title(report))
    return seen


class ReportCache:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.entries: dict[str, dict] = {}

    def remember(self, key: str, report: dict) -> None:
        if len(self.entries) >= self.limit:
            self.entries.pop(next(iter(self.entries)))
        self.entries[key] = report
'''


@dataclass(frozen=True)
class Quote:
    kind: str  # "near-miss" or "legitimate"
    text: str
    line: int  # 1-based line the quote was made from


def _renamed(line: str) -> str | None:
    names = [m for m in _IDENT.finditer(line) if m.group(0) not in _KEYWORDS]
    if not names:
        return None
    m = max(names, key=lambda m: len(m.group(0)))
    word = m.group(0)
    new = word + ("es" if word.endswith("s") else "s")  # `report` → `reports`
    return line[: m.start()] + new + line[m.end() :]


def quotes(source: str = SOURCE) -> list[Quote]:
    out: list[Quote] = []
    lines = source.split("\n")
    for i, line in enumerate(lines, start=1):
        if len(line.strip()) < 8:
            continue
        near = _renamed(line)
        if near is not None and near.strip() and near not in lines:
            out.append(Quote("near-miss", near, i))
        out += [
            Quote("legitimate", "    " + line, i),
            Quote("legitimate", line.replace("    ", "\t"), i),
            Quote("legitimate", re.sub(r"(?<=\S) (?=\S)", "  ", line), i),
            Quote("legitimate", line + "   ", i),
            Quote("legitimate", f"{i:>4} +| {line}", i),
        ]
    return out


def _outcome(q: Quote, source: str) -> dict[str, str]:
    """What a user is shown for `q` under each policy for a fuzzy (approximate) match."""
    a = locate(q.text, source, q.line)
    on_line = a.start_line is not None and a.start_line <= q.line <= (a.end_line or 0)
    place = "right line" if on_line else "wrong line"
    if a.method == "none":
        return dict.fromkeys(("relocate", "approximate", "unanchored"), "no location")
    if a.method != "fuzzy":
        return dict.fromkeys(("relocate", "approximate", "unanchored"), f"exact quote, {place}")
    return {
        # the old policy: the file's text swapped in as the quote, the fix offered
        "relocate": f"file text as quote + fix, {place}",
        "approximate": f"model quote, labelled approximate, {place}",
        "unanchored": "no location",
    }


def measure(source: str = SOURCE) -> dict[tuple[str, str], Counter[str]]:
    """(quote kind, policy) → how many quotes were shown which way."""
    table: dict[tuple[str, str], Counter[str]] = {}
    for q in quotes(source):
        for policy, shown in _outcome(q, source).items():
            table.setdefault((q.kind, policy), Counter())[shown] += 1
    return table


def render(table: dict[tuple[str, str], Counter[str]]) -> str:
    rows = []
    for (kind, policy), counts in sorted(table.items()):
        total = sum(counts.values())
        parts = ", ".join(f"{n} {what}" for what, n in counts.most_common())
        rows.append(f"{kind:>10} | {policy:<11} | {total:>3}: {parts}")
    return "\n".join(rows)
