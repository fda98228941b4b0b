"""bandit: argv and the reading of its JSON output.

bandit 1.9 has no SARIF formatter of its own (`-f` offers csv, custom, html, json, screen, txt,
xml, yaml), so JSON it is. Files are passed explicitly and no `-c`/`--ini` is given, so no
configuration from the reviewed repository is read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redline.analyzers.base import AnalyzerFailed, RawResult, ToolReport, relative_path
from redline.model import Severity

NAME = "bandit"

_SEVERITY = {"HIGH": Severity.HIGH, "MEDIUM": Severity.MEDIUM, "LOW": Severity.LOW}
_CONFIDENCE = {"HIGH": 0.8, "MEDIUM": 0.6, "LOW": 0.4}

# What code must contain for bandit to find something ruff's S rules (as Redline enables them)
# do not. Measured (benchmarks/bandit_overlap.py) on 2,613 files (CPython 3.12's stdlib and 23
# packages of this virtualenv, 1.02 M lines): of bandit's 710 results outside `rules.NOISE`,
# 588 were the same check on the same statement as a ruff result. Of the other 122, those worth
# a reviewer's time, and what they fire on:
#   B608  SQL in a string ruff's S608 does not see (built in a list, not a query call)
#   B602/B604  `shell=<variable>` (ruff flags only a truthy constant)
#   B103  chmod with a literal mask ruff lets pass (0o755)
#   B311  random.x(...) ruff's S311 does not see (getrandbits, a `random` not the module)
#   B310  urlopen/urlretrieve ruff's S310 does not see
#   B614/B615  torch.load, Hugging Face downloads (ruff has no such rule)
# Left out on purpose: B105/B107 on '' or one-letter strings (34 results: an empty "password"
# is not a secret, which is why ruff skips them), the import warnings B402-B415 (57: "an
# xml/pickle module is imported", noise of the kind `rules.NOISE` drops; ruff's S4xx are
# preview rules) and B108 `/tmp` (2, in vendored code; ruff's S108 found the 34 others).
UNIQUE_CHECK_TRIGGER = re.compile(
    r"\b(?:SELECT|INSERT\s+INTO|DELETE\s+FROM)\b|\bUPDATE\s+\S+\s+SET\b"
    r"|(?i:[\"']\s*(?:select\s.*\bfrom|insert\s+into|update\s+\S+\s+set|delete\s+from)\b)"
    r"|\bshell\s*=\s*(?!(?:True|False|None)\b)[\w(]"
    r"|chmod\s*\(.*\b(?:0o?[0-7]{3,4}|S_I\w+)\b"
    r"|\brandom\.\w+\s*\("
    r"|\burl(?:open|retrieve)\b|\bURLopener\b"
    r"|\btorch\.load\b|\b(?:hf_hub|snapshot)_download\b|\bfrom_pretrained\b|\bload_dataset\b"
)


# A word every alternative of UNIQUE_CHECK_TRIGGER needs, in lower case. The pattern's `\b`-led
# alternatives cannot be searched fast (no literal prefix: ~30 ms per MB each), so it runs only
# around the places where `str.find` sees one of these words (~10 ms per MB for all of them).
_TRIGGER_WORDS = (
    "select", "insert", "update", "delete", "shell", "chmod", "random", "url", "torch",
    "_download", "from_pretrained", "load_dataset",
)  # fmt: skip


def may_find_beyond_ruff(changed_text: str) -> bool:
    """Whether bandit may report something on these (added) lines that ruff would not."""
    lowered = changed_text.lower()  # same length: ASCII words, offsets stay valid
    if len(lowered) != len(changed_text):
        return UNIQUE_CHECK_TRIGGER.search(changed_text) is not None
    for word in _TRIGGER_WORDS:
        at = lowered.find(word)
        while at != -1:
            # The word's line and the next: `INSERT\s+INTO` may wrap.
            start = changed_text.rfind("\n", 0, at) + 1
            end = changed_text.find("\n", at)
            if end != -1:
                end = changed_text.find("\n", end + 1)
            window = changed_text[start : end if end != -1 else len(changed_text)]
            if UNIQUE_CHECK_TRIGGER.search(window):
                return True
            at = lowered.find(word, at + len(word))
    return False


def argv(executable: str, files: Sequence[str]) -> list[str]:
    return [executable, "-f", "json", "-q", "--exit-zero", *(f"./{f}" for f in files)]


def parse(stdout: bytes, scratch: Path) -> ToolReport:
    try:
        data = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnalyzerFailed(f"unreadable bandit output: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise AnalyzerFailed("unreadable bandit output: no 'results' list")
    results: list[RawResult] = []
    try:
        for item in data["results"]:
            results.append(_result(item, scratch))
    except (KeyError, TypeError, ValueError) as exc:
        raise AnalyzerFailed(f"unexpected bandit output ({exc!r})") from exc
    # bandit skips a file it cannot parse entirely (a syntax error, bytes its coding line does
    # not decode), so each one is a file that was not checked.
    unread = [
        f"bandit could not check {relative_path(str(e.get('filename', '?')), scratch)}: "
        f"{e.get('reason', 'unknown error')}"
        for e in data.get("errors") or ()
        if isinstance(e, dict)
    ]
    return ToolReport(results, unread=unread)


def _result(item: dict[str, Any], scratch: Path) -> RawResult:
    line = int(item["line_number"])
    rows = [int(r) for r in item.get("line_range") or [line]]
    cwe = item.get("issue_cwe") or {}
    message = str(item.get("issue_text") or "").strip()
    if isinstance(cwe, dict) and cwe.get("id"):
        message = f"{message} (CWE-{cwe['id']})"
    return RawResult(
        tool=NAME,
        rule=str(item["test_id"]),
        file=relative_path(str(item["filename"]), scratch),
        line=min([*rows, line]),
        end_line=max([*rows, line]),
        message=message,
        url=item.get("more_info") or None,
        severity=_SEVERITY.get(str(item.get("issue_severity", "")).upper()),
        confidence=_CONFIDENCE.get(str(item.get("issue_confidence", "")).upper()),
        security=True,
    )
