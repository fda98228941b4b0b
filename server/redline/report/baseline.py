"""`--baseline previous.sarif`: this review's findings compared with an earlier Redline report.

A finding is matched by its id (file + normalized code + category + rule, see `finding_id`;
the n-th of identical findings in a file has an occurrence id, `number_occurrences`), which
Redline writes into every SARIF result as `partialFingerprints["redline/v1"]`: an id in
both reports is "unchanged" even when its line moved, an id only in this review is "new", and
one only in the baseline is "absent" (fixed, or its code removed). The states are SARIF 2.1.0's
`baselineState` values (§3.27.24), so CI can fail on new problems only.

Pure logic: reading and checking the earlier report, and the comparison. The renderers show it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from redline.errors import UsageError
from redline.model import Finding

# Redline's mark on its SARIF: written by report/sarif.py, recognized here. Defined here so
# the SARIF writer can import the comparison without an import cycle.
TOOL_NAME = "Redline"
FINGERPRINT_KEY = "redline/v1"

BaselineState = Literal["new", "unchanged"]


@dataclass(frozen=True)
class AbsentFinding:
    """A finding of the baseline that this review no longer has ("fixed")."""

    id: str
    title: str
    file: str
    line: int | None
    # The baseline's SARIF result as it was, for the SARIF report to carry it as "absent".
    result: Mapping[str, Any] = field(repr=False, compare=False)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "file": self.file, "line": self.line}


@dataclass(frozen=True)
class Baseline:
    """An earlier Redline SARIF report: its path as the user gave it, and its results by id."""

    file: str
    results: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Comparison:
    file: str
    new: list[str]
    unchanged: list[str]
    absent: list[AbsentFinding]
    # For `state`, asked once per finding by the renderers: reports can hold thousands.
    _unchanged: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_unchanged", frozenset(self.unchanged))

    def state(self, finding_id: str) -> BaselineState:
        return "unchanged" if finding_id in self._unchanged else "new"

    def as_json(self) -> dict[str, Any]:
        """The JSON report's `baseline` object."""
        return {
            "file": self.file,
            "new": list(self.new),
            "unchanged": list(self.unchanged),
            "absent": [a.as_json() for a in self.absent],
        }


def read_baseline(path: Path) -> Baseline:
    """The earlier report at `path`, or a UsageError saying why it is not one Redline can use."""
    where = f"--baseline {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{where}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return parse_baseline(data, str(path))


def parse_baseline(data: Any, file: str) -> Baseline:
    """Check that `data` is a SARIF 2.1.0 log written by Redline and index its results by id."""
    where = f"--baseline {file}"
    expected = "expected a SARIF 2.1.0 report written by `redline review --format sarif`"
    if not isinstance(data, dict) or data.get("version") != "2.1.0":
        raise UsageError(f"{where}: not a SARIF 2.1.0 log; {expected}")
    runs = data.get("runs")
    if not isinstance(runs, list) or not runs:
        raise UsageError(f"{where}: the SARIF log has no runs; {expected}")
    results: dict[str, Mapping[str, Any]] = {}
    for run in runs:
        driver = run.get("tool", {}).get("driver", {}) if isinstance(run, dict) else {}
        name = driver.get("name") if isinstance(driver, dict) else None
        if name != TOOL_NAME:
            raise UsageError(f"{where}: a run of {name or 'an unnamed tool'!r}, not Redline's; "
                             f"{expected}")  # fmt: skip
        run_results = run.get("results") or []
        if not isinstance(run_results, list):
            raise UsageError(f"{where}: a run's results are not a list; {expected}")
        for result in run_results:
            fid = _finding_id(result)
            if fid is None:
                # Without the id nothing can be matched: a silent "everything is new" would
                # fail CI for findings that were there before.
                raise UsageError(
                    f"{where}: a result has no partialFingerprints[{FINGERPRINT_KEY!r}] "
                    f"(Redline's finding id); {expected}"
                )
            results.setdefault(fid, result)
    return Baseline(file=file, results=results)


def compare(baseline: Baseline, findings: Iterable[Finding]) -> Comparison:
    """This review's findings against the baseline, in the review's (and baseline's) order."""
    new: list[str] = []
    unchanged: list[str] = []
    seen: set[str] = set()
    for finding in findings:
        if finding.id in seen:
            continue
        seen.add(finding.id)
        (unchanged if finding.id in baseline.results else new).append(finding.id)
    absent = [_absent(fid, result) for fid, result in baseline.results.items() if fid not in seen]
    return Comparison(file=baseline.file, new=new, unchanged=unchanged, absent=absent)


def absent_sarif_result(absent: AbsentFinding) -> dict[str, Any]:
    """The baseline's result, re-emitted with `baselineState: "absent"`.

    Its `ruleIndex` pointed into the earlier run's rules and its fix at code that may be gone:
    both are dropped (the `ruleId` still names the rule)."""
    result = copy.deepcopy(dict(absent.result))
    result.pop("ruleIndex", None)
    result.pop("fixes", None)
    result["baselineState"] = "absent"
    return result


def _finding_id(result: Any) -> str | None:
    if not isinstance(result, dict):
        return None
    prints = result.get("partialFingerprints")
    fid = prints.get(FINGERPRINT_KEY) if isinstance(prints, dict) else None
    return fid if isinstance(fid, str) and fid else None


def _absent(fid: str, result: Mapping[str, Any]) -> AbsentFinding:
    message = result.get("message", {})
    text = message.get("text", "") if isinstance(message, dict) else ""
    # Redline's message is the title, a blank line, then the comment (see sarif._result).
    title = str(text).split("\n\n", 1)[0].strip()
    file, line = "", None
    locations = result.get("locations") or []
    if locations and isinstance(locations[0], dict):
        physical = locations[0].get("physicalLocation", {})
        file = unquote(str(physical.get("artifactLocation", {}).get("uri", "")))
        start = physical.get("region", {}).get("startLine")
        line = start if isinstance(start, int) else None
    properties = result.get("properties")
    if isinstance(properties, dict) and properties.get("anchor") == "unanchored":
        line = None  # placed at line 1 only because GitHub needs a line
    return AbsentFinding(id=fid, title=title, file=file, line=line, result=result)
