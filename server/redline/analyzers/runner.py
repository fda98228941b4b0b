"""Run every enabled analyzer on the changed files and collect Findings.

The files are written to a fresh scratch directory (never the work tree: the tools must not see
the repository's config, caches or hooks), the analyzers run there in parallel, and each one's
trouble (missing, crashed, timed out, unreadable output) becomes its AnalyzerRun's status and
message instead of failing the review.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
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
# bandit costs ~30 ms a file (ruff well under 1 ms) plus ~0.15 s to start; its files are split
# into up to one chunk per core, run side by side, but no chunk smaller than this many files
# (below it, another process costs more than it saves).
_BANDIT_MIN_CHUNK = 8


@dataclass
class _Job:
    name: str
    files: list[str]
    version: str | None
    run: Callable[[Path], ToolReport]
    # Why the job runs on fewer files than it could (bandit_scope), for its AnalyzerRun.
    scope_note: str = ""


def run_analyzers(
    files: Mapping[str, bytes],
    changed_lines: Mapping[str, set[int]],
    settings: AnalyzerSettings,
    *,
    executables: Mapping[str, str | Path] | None = None,
    cancel: CancelToken | None = None,
    security_sensitive: Collection[str] | None = None,
) -> AnalyzerOutcome:
    """Run ruff, bandit and the custom SARIF analyzers on `files` (new content by path).

    Only results that touch `changed_lines` become findings. `executables` overrides where the
    built-in tools are found (name → path), for tests and unusual installs; by default they come
    from the environment Redline runs in (next to `sys.executable`), never from PATH.
    `security_sensitive` names the files with a unit tagged security_sensitive, for
    `bandit_scope = "security_sensitive"` (None: not known, every file); see `_bandit_files`.
    A set `cancel` kills the running tools and raises `Cancelled`.
    """
    safe, skipped = _safe_paths(files)
    # Only files an analyzer reported on need a line index, and with no analyzer enabled none
    # do: decoding and indexing every changed file up front cost more than the rest here.
    texts = _LazyTexts(files, safe)

    def added(path: str) -> str:
        """The file's changed lines (new side), one a line."""
        rows = texts[path].rows()
        return "\n".join(rows[n - 1] for n in sorted(changed_lines.get(path, ())) if n <= len(rows))

    jobs = _jobs(safe, settings, executables or {}, cancel, security_sensitive, added)
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
            message = job.scope_note or "no matching files"
            runs.append(AnalyzerRun(name=job.name, status="skipped", message=message))
            continue
        run, job_results = outcomes[i]
        if job.scope_note:
            # Left out by policy: not every file was checked, so "partial", never "ok".
            if run.status == "ok":
                run.status = "partial"
            run.message = "; ".join(m for m in (job.scope_note, run.message) if m)
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
    security_sensitive: Collection[str] | None = None,
    added: Callable[[str], str] = lambda path: "",
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
        bandit_files, note = _bandit_files(python, settings, security_sensitive, added)

        def run_bandit(scratch: Path) -> ToolReport:
            return _batched(
                bandit_files,
                lambda batch: bandit.argv(exe_b, batch),
                lambda out: bandit.parse(out, scratch),
                scratch,
                settings.timeout,
                "bandit",
                cancel,
                chunks=_bandit_chunks(bandit_files, scratch),
            )

        jobs.append(_Job("bandit", bandit_files, _version("bandit", executables), run_bandit, note))
    for custom in settings.custom:
        jobs.append(_custom_job(custom, paths, cancel))
    return jobs


def _bandit_files(
    python: Sequence[str],
    settings: AnalyzerSettings,
    security_sensitive: Collection[str] | None,
    added: Callable[[str], str],
) -> tuple[list[str], str]:
    """The Python files bandit runs on, and a note for its coverage when it leaves some out.

    bandit costs ~30 ms a file (75 µs a line), ruff ~0.4 ms, and ruff's S rules re-implement
    most of bandit's checks: on 2,613 real files 588 of bandit's 710 results were also ruff's
    (see `bandit.UNIQUE_CHECK_TRIGGER` for the rest). So by default ("beyond_ruff") bandit runs
    only on files whose added lines hold what one of its other checks fires on;
    "security_sensitive" runs it on the files with a unit tagged so (wider: `token`, `session`
    and `auth` tag a change too, where ruff's checks are bandit's); "all" on every file. Without
    ruff's S rules nothing covers bandit's checks, and it runs on every file.
    """
    scope = settings.bandit_scope
    ruff_covers = settings.ruff and any(s in ("S", "ALL") for s in settings.ruff_select)
    if scope == "all" or not ruff_covers or not python:
        return list(python), ""
    if scope == "security_sensitive":
        if security_sensitive is None:  # not known: every file
            return list(python), ""
        wanted = set(security_sensitive)
        chosen = [p for p in python if p in wanted]
        why = "with security-sensitive changes"
    else:
        chosen = [p for p in python if bandit.may_find_beyond_ruff(added(p))]
        why = "whose added lines hold what its checks beyond ruff's S rules look for"
    if len(chosen) == len(python):
        return chosen, ""
    how = 'analyzers.bandit_scope = "all" runs it on every file'
    return chosen, (
        f"ran on {len(chosen)} of {len(python)} Python files, those {why} "
        f"(ruff's S rules check them all); {how}"
    )


def _bandit_chunks(files: Sequence[str], scratch: Path) -> list[list[str]]:
    """`files` in up to one chunk per core (each ≤ _BATCH files, ≥ _BANDIT_MIN_CHUNK), of
    about equal size in bytes: bandit's time grows with the code it reads."""
    if not files:
        return []
    count = max(1, -(-len(files) // _BATCH), min(_cores(), len(files) // _BANDIT_MIN_CHUNK))
    if count == 1:
        return [list(files)]
    sizes: dict[str, int] = {}
    for f in files:
        try:
            sizes[f] = scratch.joinpath(*f.split("/")).stat().st_size
        except OSError:
            sizes[f] = 0
    chunks: list[list[str]] = [[] for _ in range(count)]
    loads = [0] * count
    # Largest first onto the lightest chunk that still has room.
    for f in sorted(files, key=lambda f: -sizes[f]):
        i = min((i for i in range(count) if len(chunks[i]) < _BATCH), key=lambda i: loads[i])
        chunks[i].append(f)
        loads[i] += sizes[f] + 1
    return [sorted(c) for c in chunks if c]


def _cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


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
    chunks: list[list[str]] | None = None,
) -> ToolReport:
    """Run the tool on `files` in batches (`chunks`, run side by side, or consecutive batches
    of _BATCH files) and put their reports together in batch order."""
    if chunks is None:
        chunks = [list(files[i : i + _BATCH]) for i in range(0, len(files), _BATCH)]

    def one(batch: list[str]) -> ToolReport:
        proc = run_process(make_argv(batch), scratch, timeout, cancel)
        # Both tools run with --exit-zero: any other exit code is a crash or a usage error.
        if proc.returncode != 0:
            detail = stderr_tail(proc.stderr)
            raise AnalyzerFailed(
                f"{name} exited with code {proc.returncode}" + (f": {detail}" if detail else "")
            )
        return parse(proc.stdout)

    if len(chunks) > 1:
        with ThreadPoolExecutor(max_workers=min(len(chunks), _cores())) as pool:
            reports = list(pool.map(one, chunks))
    else:
        reports = [one(batch) for batch in chunks]
    results: list[RawResult] = []
    notes: list[str] = []
    unread: list[str] = []
    for report in reports:
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
