"""Static analyzers on the changed files: the offline reviewer, and evidence for the models.

`run_analyzers` writes the changed files to a scratch directory, runs ruff, bandit and any
custom SARIF analyzers there, and returns Findings for results on changed lines plus one
AnalyzerRun per analyzer (ok / missing / failed / skipped) for the coverage report.
"""

from redline.analyzers.base import AnalyzerOutcome
from redline.analyzers.runner import run_analyzers

__all__ = ["AnalyzerOutcome", "run_analyzers"]
