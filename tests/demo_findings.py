"""What a scripted model reports on the demo repository (scripts/demo.py, branch
feature/export): shared by the model-review, ask and language-server tests."""

from __future__ import annotations

SHELL = {
    "file": "app/reports.py",
    "line": 21,
    "severity": "Critical",
    "category": "Security",
    "title": "Shell injection through the report name",
    "comment": "name and target_dir come from the request and reach a shell; use a list argv.",
    "existing_code": "    return subprocess.call(command, shell=True)",
    "improved_code": (
        '    return subprocess.call(["zip", "-r", f"{target_dir}/{name}.zip", f"reports/{name}"])'
    ),
    "confidence": 0.9,
}
# Right code, wrong line number: anchoring must place it by the code (line 27).
BARE_EXCEPT = {
    "file": "app/reports.py",
    "line": 3,
    "severity": "Medium",
    "category": "Functionality",
    "title": "Bare except hides real errors",
    "comment": "Catching everything also hides permission errors; catch OSError.",
    "existing_code": "    except:\n        return None",
    "improved_code": "    except OSError:\n        return None",
    "confidence": 0.8,
}
SPECULATIVE = {
    "file": "app/reports.py",
    "line": 32,
    "severity": "High",
    "category": "Performance",
    "title": "Speculative quadratic loop",
    "comment": "This might be slow.",
    "existing_code": "    for report in reports:",
    "confidence": 0.4,
}
PHANTOM = {
    "file": "app/text.py",
    "line": 7,
    "severity": "Low",
    "category": "Quality",
    "title": "Code the model imagined",
    "comment": "Refers to code that is not in the file.",
    "existing_code": "def frobnicate(x):\n    return x ** 2",
    "confidence": 0.5,
}
# Issue 10, "shown but false". One identifier renamed (`get` → `fetch`): a hallucinated quote of
# line 15 that is not in the file. It must never be shown as if quoted, nor fixed.
NEAR_MISS = {
    "file": "app/reports.py",
    "line": 15,
    "severity": "Medium",
    "category": "Quality",
    "title": "Title lookup hides a missing title",
    "comment": "An empty title is kept as is; fall back to 'untitled' for it too.",
    "existing_code": '    return report.fetch("title", "untitled").strip()',
    "improved_code": '    return (report.fetch("title") or "untitled").strip()',
    "confidence": 0.8,
}
# Right code, but the improved code does not parse (a parenthesis is missing).
NOT_PARSING = {
    "file": "app/reports.py",
    "line": 33,
    "severity": "Low",
    "category": "Performance",
    "title": "Titles are appended one by one",
    "comment": "Extend the list once with a generator instead.",
    "existing_code": "        seen.append(report_title(report))",
    "improved_code": "        seen.extend(report_title(r) for r in [report]",
    "confidence": 0.7,
}
# A short line quoted with Redline's own prompt gutter (context/format.py: `  28 +| code`).
GUTTER = {
    "file": "app/reports.py",
    "line": 28,
    "severity": "Low",
    "category": "Quality",
    "title": "Failures turn into None",
    "comment": "Callers cannot tell a missing file from an empty one.",
    "existing_code": "  28 +|         return None",
    "confidence": 0.6,
}
