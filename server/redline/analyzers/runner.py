"""Run every enabled analyzer on the changed files and collect Findings.

The files are written to a fresh scratch directory (never the work tree: the tools must not see
the repository's config, caches or hooks), the analyzers run there in parallel, and each one's
trouble (missing, crashed, timed out, unreadable output) becomes its AnalyzerRun's status and
message instead of failing the review.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import ExitStack
from pathlib import Path, PurePosixPath

from redline.analyzers.base import (
    AnalyzerFailed,
    AnalyzerMissing,
    AnalyzerOutcome,
    RawResult,
)
from redline.analyzers.convert import Candidate, Conversion
from redline.analyzers.fixes import SourceText
from redline.analyzers.jobs import Job, plan_jobs
from redline.config_models import AnalyzerSettings
from redline.encoding import as_utf8, decode_text
from redline.gc_pause import gc_paused
from redline.model import AnalyzerRun, SkippedFile
from redline.progress import CancelToken


def run_analyzers(
    files: Mapping[str, bytes],
    changed_lines: Mapping[str, set[int]],
    settings: AnalyzerSettings,
    *,
    executables: Mapping[str, str | Path] | None = None,
    cancel: CancelToken | None = None,
    security_sensitive: Collection[str] | None = None,
    added_text: Callable[[str], str | None] | None = None,
) -> AnalyzerOutcome:
    """Run ruff, bandit and the custom SARIF analyzers on `files` (new content by path).

    Only results that touch `changed_lines` become findings. `executables` overrides where the
    built-in tools are found (name → path), for tests and unusual installs; by default they come
    from the environment Redline runs in (next to `sys.executable`), never from PATH.
    `security_sensitive` names the files with a unit tagged security_sensitive, for
    `bandit_scope = "security_sensitive"` (None: not known, every file); see `bandit_files`.
    `added_text(path)` is the text of the file's `changed_lines` as the file has them (in line
    order, without line breaks, joined by "\n") when the caller already holds it (the diff's
    added lines), else None: then they are read from `files` (see `added`).
    A set `cancel` kills the running tools and raises `Cancelled`.
    """
    safe, skipped = _safe_paths(files)
    # Only files an analyzer reported on need a line index, and with no analyzer enabled none
    # do: decoding and indexing every changed file up front cost more than the rest here.
    texts = _LazyTexts(files, safe)

    def added(path: str) -> str:
        """The file's changed lines (new side), one a line."""
        known = added_text(path) if added_text is not None else None
        if known is not None:
            return known
        rows = texts[path].rows()
        return "\n".join(rows[n - 1] for n in sorted(changed_lines.get(path, ())) if n <= len(rows))

    jobs = plan_jobs(
        safe,
        settings,
        executables or {},
        cancel,
        security_sensitive,
        added,
        head=lambda path: files[path][:256],
    )
    active = [i for i, j in enumerate(jobs) if j.files]
    outcomes: dict[int, tuple[AnalyzerRun, list[RawResult]]] = {}
    conversion = Conversion(texts, changed_lines)
    candidates: dict[int, list[Candidate]] = {}
    # Automatic garbage collection is paused while results are converted: the syntax trees of
    # the fix verdicts are many objects that live on, which collections would traverse again
    # and again for no garbage (half the conversion's time), and once more on the first
    # collection after the pause if they were still there. So it resumes only once they are
    # gone (released, or with `conversion`), and never while the tools run (up to their
    # timeout): other threads' garbage is not held back that long.
    paused = ExitStack()
    with paused:
        if active:  # nothing to run: do not even write the files
            with tempfile.TemporaryDirectory(prefix="redline-analyzers-") as tmp:
                scratch = Path(tmp)
                transcoded = _write(scratch, {p: files[p] for p in safe})
                with ThreadPoolExecutor(max_workers=len(active)) as pool:
                    futures = {pool.submit(_run_job, jobs[i], scratch): i for i in active}
                    # Each job's results become candidates as soon as it is done (ruff's long
                    # before bandit's): the main thread converts while the others still run.
                    for future in as_completed(futures):
                        i = futures[future]
                        outcomes[i] = future.result()
                        paused.enter_context(gc_paused())
                        candidates[i] = conversion.candidates(
                            r for r in outcomes[i][1] if not _artifact_of_transcoding(r, transcoded)
                        )
                        pending = [j for j in active if j not in outcomes]
                        if pending:
                            # While they run: only their files' trees can still be asked for
                            # (their fixes, the merge of their results with the others').
                            conversion.release({f for j in pending for f in jobs[j].files})
                            paused.close()
        paused.enter_context(gc_paused())
        # In the jobs' order, as one conversion of all their results would merge them.
        findings = conversion.findings(candidates[i] for i in sorted(candidates))
        del conversion
    runs: list[AnalyzerRun] = []
    for i, job in enumerate(jobs):
        if i not in outcomes:
            if not job.listed_when_idle and not job.scope_note:
                continue
            message = job.scope_note or "no matching files"
            runs.append(AnalyzerRun(name=job.name, status="skipped", message=message))
            continue
        run = outcomes[i][0]
        if job.scope_note:
            # Left out by policy: not every file was checked, so "partial", never "ok".
            if run.status == "ok":
                run.status = "partial"
            run.message = "; ".join(m for m in (job.scope_note, run.message) if m)
        runs.append(run)
    counts: dict[str, int] = {}
    for finding in findings:
        for source in {s.split(":", 1)[0] for s in finding.sources}:
            counts[source] = counts.get(source, 0) + 1
    for run in runs:
        run.findings = counts.get(run.name, 0)
    given = {job.name: list(job.files) for job in jobs if job.files}
    return AnalyzerOutcome(findings=findings, runs=runs, skipped=skipped, given=given)


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


def _run_job(job: Job, scratch: Path) -> tuple[AnalyzerRun, list[RawResult]]:
    run = AnalyzerRun(name=job.name, status="ok", files=len(job.files), version=job.version)
    started = time.monotonic()
    try:
        report = job.run(scratch)
    except AnalyzerMissing as exc:
        run.status, run.message = "missing", str(exc)
        return run, []
    except AnalyzerFailed as exc:
        run.status, run.message = "failed", str(exc)
        run.seconds = round(time.monotonic() - started, 3)
        return run, []
    run.seconds = round(time.monotonic() - started, 3)
    if report.unread:
        run.status = "partial"
    run.message = "; ".join([*report.unread, *report.notes])
    return run, report.results


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
