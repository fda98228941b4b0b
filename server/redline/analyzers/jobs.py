"""The analyzer jobs of a review: which tool runs on which files, with which argv.

Each job is a tool and the files it runs on; `run(scratch)` runs it in the scratch directory
the runner wrote the files to and returns its parsed report. bandit's files are chosen here
(`bandit_scope`), from the added lines of each file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from redline.analyzers import astgrep, bandit, ruff, sarif_command
from redline.analyzers.base import (
    AnalyzerFailed,
    RawResult,
    ToolReport,
    cores,
    run_process,
    stderr_tail,
)
from redline.analyzers.native_jobs import native_jobs
from redline.config_models import AnalyzerSettings, CustomAnalyzer
from redline.diff.file_kind import FileKind, files_for, kind_of
from redline.progress import CancelToken

# Keeps each argv well under the kernel's limit however many files a change touches.
_BATCH = 400
# bandit costs ~30 ms a file (ruff well under 1 ms) plus ~0.15 s to start; its files are split
# into up to one chunk per core, run side by side, but no chunk smaller than this many files
# (below it, another process costs more than it saves).
_BANDIT_MIN_CHUNK = 8


@dataclass
class Job:
    name: str
    files: list[str]
    version: str | None
    run: Callable[[Path], ToolReport]
    # Why the job runs on fewer files than it could (bandit_scope), for its AnalyzerRun.
    scope_note: str = ""
    # Whether the coverage lists the job when no changed file is of its kind ("skipped: no
    # matching files"). The native analyzers are not: a Python change would otherwise carry
    # four lines about the JavaScript, shell, Dockerfile and workflow files it does not have.
    listed_when_idle: bool = True


def plan_jobs(
    paths: Sequence[str],
    settings: AnalyzerSettings,
    executables: Mapping[str, str | Path],
    cancel: CancelToken | None,
    security_sensitive: Collection[str] | None = None,
    added: Callable[[str], str] = lambda path: "",
    kinds: Mapping[str, FileKind] | None = None,
    head: Callable[[str], bytes] = lambda path: b"",
) -> list[Job]:
    """The jobs for `paths`. Each built-in analyzer takes the files whose verdict
    (diff/file_kind.py: `kinds`, else from the path) has one of its languages."""
    verdicts = [(kinds or {}).get(p) or kind_of(p) for p in paths]
    jobs: list[Job] = []
    if settings.ruff:
        python = files_for("ruff", verdicts)
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

        jobs.append(Job("ruff", python, _version("ruff", executables), run_ruff))
    if settings.bandit:
        exe_b = _executable("bandit", executables)
        bandit_files, note = _bandit_files(
            files_for("bandit", verdicts), settings, security_sensitive, added
        )

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

        jobs.append(Job("bandit", bandit_files, _version("bandit", executables), run_bandit, note))
    if settings.ast_grep:
        jobs.append(_astgrep_job(files_for("ast-grep", verdicts), settings, executables, cancel))
    # The native analyzers, each on the changed files of its kind (the verdicts; `head(path)`:
    # a file's first bytes, for the shell a script's `#!` names).
    for native in native_jobs(
        paths, settings, lambda name: _executable(name, executables), cancel, head, kinds
    ):
        version = _version(native.package, executables, native.name)
        jobs.append(Job(native.name, native.files, version, native.run, listed_when_idle=False))
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
    # The note is on every report that leaves files out, which is most: said briefly (the
    # why and `analyzers.bandit_scope = "all"` are in the README's analyzer settings).
    if scope == "security_sensitive":
        if security_sensitive is None:  # not known: every file
            return list(python), ""
        wanted = set(security_sensitive)
        chosen = [p for p in python if p in wanted]
        if not chosen:
            return chosen, "not needed: no security-sensitive change"
        rest = "the others have no security-sensitive change"
    else:
        chosen = [p for p in python if bandit.may_find_beyond_ruff(added(p))]
        if not chosen:
            return chosen, "not needed: ruff's S rules cover these files"
        rest = "ruff's S rules cover the rest"
    if len(chosen) == len(python):
        return chosen, ""
    return chosen, f"ran on {len(chosen)} of {len(python)} Python files; {rest}"


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
    return cores()


def _astgrep_job(
    candidates: Sequence[str],
    settings: AnalyzerSettings,
    executables: Mapping[str, str | Path],
    cancel: CancelToken | None,
) -> Job:
    """ast-grep with Redline's rule pack on the files of the languages the pack covers, run on
    private copies (see `astgrep`: no repository config, no suppression comments). The files
    are those whose verdict takes ast-grep and whose suffix the pack's configuration maps."""
    files = [p for p in candidates if astgrep.takes(p)]
    exe = _executable("ast-grep", executables)

    def run_astgrep(scratch: Path) -> ToolReport:
        with astgrep.Workdir() as work:
            work.copy(scratch, files)
            return _batched(
                files,
                lambda batch: astgrep.argv(exe, work.config, batch),
                lambda out: astgrep.parse(out, work.files),
                work.files,
                settings.timeout,
                astgrep.NAME,
                cancel,
            )

    version = _version(astgrep.DISTRIBUTION, executables, "ast-grep")
    # Not listed when idle, like the native analyzers: a shell-only change needs no line about it.
    return Job(astgrep.NAME, files, version, run_astgrep, listed_when_idle=False)


def _custom_job(custom: CustomAnalyzer, paths: Sequence[str], cancel: CancelToken | None) -> Job:
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

    return Job(custom.name, matched, None, run_custom)


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
        # ruff and bandit run with --exit-zero, ast-grep's rules are all warnings (exit 0): any
        # other exit code is a crash or a usage error.
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


def _version(
    package: str, overrides: Mapping[str, str | Path], name: str | None = None
) -> str | None:
    """The version of the package that ships the tool (None for an executable given in
    `overrides` under the tool's `name`: its version is not known)."""
    if (name or package) in overrides:
        return None
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
