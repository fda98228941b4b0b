"""Run every enabled analyzer on the changed files and collect Findings.

The files are written to a fresh scratch directory (never the work tree: the tools must not see
the repository's config, caches or hooks), the analyzers run there in parallel, and each one's
trouble (missing, crashed, timed out, unreadable output) becomes its AnalyzerRun's status and
message instead of failing the review.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath

from redline.analyzers import bandit, ruff, sarif_command
from redline.analyzers.base import (
    AnalyzerFailed,
    AnalyzerMissing,
    AnalyzerOutcome,
    RawResult,
    ToolReport,
    run_process,
    stderr_tail,
)
from redline.analyzers.convert import to_findings
from redline.analyzers.fixes import SourceText
from redline.config_models import AnalyzerSettings, CustomAnalyzer
from redline.encoding import as_utf8, decode_text
from redline.model import AnalyzerRun, SkippedFile
from redline.progress import CancelToken

PYTHON_SUFFIXES = (".py", ".pyi")
# Keeps each argv well under the kernel's limit however many files a change touches.
_BATCH = 400


@dataclass
class _Job:
    name: str
    files: list[str]
    version: str | None
    run: Callable[[Path], ToolReport]


def run_analyzers(
    files: Mapping[str, bytes],
    changed_lines: Mapping[str, set[int]],
    settings: AnalyzerSettings,
    *,
    executables: Mapping[str, str | Path] | None = None,
    cancel: CancelToken | None = None,
) -> AnalyzerOutcome:
    """Run ruff, bandit and the custom SARIF analyzers on `files` (new content by path).

    Only results that touch `changed_lines` become findings. `executables` overrides where the
    built-in tools are found (name → path), for tests and unusual installs; by default they come
    from the environment Redline runs in (next to `sys.executable`), never from PATH.
    A set `cancel` kills the running tools and raises `Cancelled`.
    """
    safe, skipped = _safe_paths(files)
    # Only files an analyzer reported on need a line index, and with no analyzer enabled none
    # do: decoding and indexing every changed file up front cost more than the rest here.
    texts = _LazyTexts(files, safe)
    jobs = _jobs(safe, settings, executables or {}, cancel)
    runs: list[AnalyzerRun] = []
    results: list[RawResult] = []
    active = [i for i, j in enumerate(jobs) if j.files]
    outcomes: dict[int, tuple[AnalyzerRun, list[RawResult]]] = {}
    transcoded: set[str] = set()
    if active:  # nothing to run: do not even write the files
        with tempfile.TemporaryDirectory(prefix="redline-analyzers-") as tmp:
            scratch = Path(tmp)
            transcoded = _write(scratch, {p: files[p] for p in safe})
            with ThreadPoolExecutor(max_workers=len(active)) as pool:
                futures = {i: pool.submit(_run_job, jobs[i], scratch) for i in active}
                outcomes = {i: future.result() for i, future in futures.items()}
    for i, job in enumerate(jobs):
        if i not in outcomes:
            runs.append(AnalyzerRun(name=job.name, status="skipped", message="no matching files"))
            continue
        run, job_results = outcomes[i]
        runs.append(run)
        results.extend(r for r in job_results if not _artifact_of_transcoding(r, transcoded))
    findings = to_findings(results, texts, changed_lines)
    counts: dict[str, int] = {}
    for finding in findings:
        for source in {s.split(":", 1)[0] for s in finding.sources}:
            counts[source] = counts.get(source, 0) + 1
    for run in runs:
        run.findings = counts.get(run.name, 0)
    return AnalyzerOutcome(findings=findings, runs=runs, skipped=skipped)


class _LazyTexts(Mapping[str, SourceText]):
    """path → SourceText of files[path], built on first lookup (only for `paths`)."""

    def __init__(self, files: Mapping[str, bytes], paths: Sequence[str]) -> None:
        self._files = files
        self._paths = frozenset(paths)
        self._built: dict[str, SourceText] = {}

    def __getitem__(self, path: str) -> SourceText:
        text = self._built.get(path)
        if text is None:
            if path not in self._paths:
                raise KeyError(path)
            # The text the tools saw: a file in a declared encoding was handed to them as
            # UTF-8 (see _write), so its characters, and columns, are the decoded ones.
            text = SourceText(decode_text(self._files[path])[0])
            self._built[path] = text
        return text

    def __contains__(self, path: object) -> bool:
        return path in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def _run_job(job: _Job, scratch: Path) -> tuple[AnalyzerRun, list[RawResult]]:
    run = AnalyzerRun(name=job.name, status="ok", files=len(job.files), version=job.version)
    try:
        report = job.run(scratch)
    except AnalyzerMissing as exc:
        run.status, run.message = "missing", str(exc)
        return run, []
    except AnalyzerFailed as exc:
        run.status, run.message = "failed", str(exc)
        return run, []
    if report.unread:
        run.status = "partial"
    run.message = "; ".join([*report.unread, *report.notes])
    return run, report.results


def _jobs(
    paths: Sequence[str],
    settings: AnalyzerSettings,
    executables: Mapping[str, str | Path],
    cancel: CancelToken | None,
) -> list[_Job]:
    python = [p for p in paths if p.endswith(PYTHON_SUFFIXES)]
    jobs: list[_Job] = []
    if settings.ruff:
        exe = _executable("ruff", executables)
        select = list(settings.ruff_select)

        def run_ruff(scratch: Path) -> ToolReport:
            return _batched(
                python,
                lambda batch: ruff.argv(exe, select, batch),
                lambda out: ruff.parse(out, scratch),
                scratch,
                settings.timeout,
                "ruff",
                cancel,
            )

        jobs.append(_Job("ruff", python, _version("ruff", executables), run_ruff))
    if settings.bandit:
        exe_b = _executable("bandit", executables)

        def run_bandit(scratch: Path) -> ToolReport:
            return _batched(
                python,
                lambda batch: bandit.argv(exe_b, batch),
                lambda out: bandit.parse(out, scratch),
                scratch,
                settings.timeout,
                "bandit",
                cancel,
            )

        jobs.append(_Job("bandit", python, _version("bandit", executables), run_bandit))
    for custom in settings.custom:
        jobs.append(_custom_job(custom, paths, cancel))
    return jobs


def _custom_job(custom: CustomAnalyzer, paths: Sequence[str], cancel: CancelToken | None) -> _Job:
    matched = sarif_command.matching_files(paths, custom.globs)

    def run_custom(scratch: Path) -> ToolReport:
        argv = sarif_command.expand_command(custom.command, matched)
        result = run_process(argv, scratch, custom.timeout, cancel)
        if not result.stdout.strip():
            detail = stderr_tail(result.stderr)
            raise AnalyzerFailed(
                f"no SARIF on stdout (exit code {result.returncode})"
                + (f": {detail}" if detail else "")
            )
        try:
            return sarif_command.parse(result.stdout, custom.name, scratch)
        except AnalyzerFailed as exc:
            if result.returncode != 0:  # the crash explains the bad output better
                detail = stderr_tail(result.stderr)
                raise AnalyzerFailed(
                    f"exit code {result.returncode}" + (f": {detail}" if detail else "")
                ) from exc
            raise

    return _Job(custom.name, matched, None, run_custom)


def _batched(
    files: Sequence[str],
    make_argv: Callable[[Sequence[str]], list[str]],
    parse: Callable[[bytes], ToolReport],
    scratch: Path,
    timeout: float,
    name: str,
    cancel: CancelToken | None,
) -> ToolReport:
    results: list[RawResult] = []
    notes: list[str] = []
    unread: list[str] = []
    for i in range(0, len(files), _BATCH):
        proc = run_process(make_argv(files[i : i + _BATCH]), scratch, timeout, cancel)
        # Both tools run with --exit-zero: any other exit code is a crash or a usage error.
        if proc.returncode != 0:
            detail = stderr_tail(proc.stderr)
            raise AnalyzerFailed(
                f"{name} exited with code {proc.returncode}" + (f": {detail}" if detail else "")
            )
        report = parse(proc.stdout)
        results.extend(report.results)
        notes.extend(report.notes)
        unread.extend(report.unread)
    return ToolReport(results, notes, unread)


def _executable(name: str, overrides: Mapping[str, str | Path]) -> str:
    if name in overrides:
        return str(overrides[name])
    # The tools pinned with Redline, from its own environment: never whatever PATH offers, and
    # never the reviewed repository's virtualenv.
    return str(Path(sys.executable).parent / name)


def _version(name: str, overrides: Mapping[str, str | Path]) -> str | None:
    if name in overrides:
        return None
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _safe_paths(files: Mapping[str, bytes]) -> tuple[list[str], list[SkippedFile]]:
    """Paths that stay inside the scratch directory; the others are reported, not written."""
    directories = {
        "/".join(parts[:i])
        for parts in (path.split("/") for path in files)
        for i in range(1, len(parts))
    }
    safe: list[str] = []
    skipped: list[SkippedFile] = []
    for path in sorted(files):
        reason = _unsafe_reason(path)
        if reason is None and path in directories:
            reason = "the path is also another changed file's directory"
        if reason:
            skipped.append(SkippedFile(path=path, reason=f"not analyzed: {reason}"))
        else:
            safe.append(path)
    return safe, skipped


def _unsafe_reason(path: str) -> str | None:
    if not path or "\x00" in path:
        return "empty or NUL in path"
    if path.startswith("/") or PurePosixPath(path).is_absolute():
        return "absolute path"
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "path is not a plain relative path ('..', '.', or empty component)"
    return None


def _write(scratch: Path, files: Mapping[str, bytes]) -> set[str]:
    """Write files into scratch; return the paths written as UTF-8 instead of their own
    declared encoding (ruff reads only UTF-8 and would skip them with E902)."""
    transcoded: set[str] = set()
    for path, content in files.items():
        target = scratch.joinpath(*path.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        utf8 = as_utf8(content)
        if utf8 is not None:
            content = utf8
            transcoded.add(path)
        # "x": never follow or overwrite something that is already there.
        with open(target, "xb") as handle:
            handle.write(content)
    return transcoded


def _artifact_of_transcoding(result: RawResult, transcoded: set[str]) -> bool:
    """ruff's UP009 ("UTF-8 encoding declaration is unnecessary") on a file whose declaration
    _write itself rewrote to UTF-8: about Redline's copy, not the user's file."""
    return result.file in transcoded and result.tool == "ruff" and result.rule == "UP009"
