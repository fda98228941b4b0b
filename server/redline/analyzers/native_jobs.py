"""The jobs of the native analyzers — oxlint, shellcheck, hadolint, zizmor — for `plan_jobs`.

Each takes only the changed files of its kind (`kinds.select`), runs in the scratch directory
that holds copies of them (never the work tree), with Redline's own configuration or none, and
with HOME and the XDG directories pointed at a private directory of the job's that holds no
reviewed file. What each reads, and why nothing of the repository can run, is in
docs/SECURITY.md ("Native analyzers").
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from redline.analyzers import hadolint, kinds, oxlint, shellcheck, zizmor
from redline.analyzers.base import (
    AnalyzerFailed,
    RawResult,
    ToolReport,
    cores,
    run_process,
    stderr_tail,
)
from redline.analyzers.rules import OFF_BY_DEFAULT
from redline.config_models import AnalyzerSettings
from redline.progress import CancelToken

# Keeps each argv well under the kernel's limit however many files a change touches.
_BATCH = 400
# hadolint uses one core (~25 ms of CPU a short Dockerfile): its files run in one process per
# core, none with fewer files than this. shellcheck runs one script a process (see there).
_MIN_CHUNK = 4


@dataclass(frozen=True)
class NativeJob:
    name: str
    package: str  # the Python package that ships the binary (its version is the tool's)
    files: list[str]
    run: Callable[[Path], ToolReport]


def native_jobs(
    paths: Sequence[str],
    settings: AnalyzerSettings,
    executable: Callable[[str], str],
    cancel: CancelToken | None,
    head: Callable[[str], bytes],
) -> list[NativeJob]:
    """The enabled native analyzers' jobs (one with no file of its kind is not listed in the
    coverage: `Job.listed_when_idle`)."""
    chosen = kinds.select(list(paths), head)
    enabled = {
        "oxlint": settings.oxlint,
        "shellcheck": settings.shellcheck,
        "hadolint": settings.hadolint,
        "zizmor": settings.zizmor,
    }
    out: list[NativeJob] = []
    for name, package, runner in (
        ("oxlint", oxlint.PACKAGE, _run_oxlint),
        ("shellcheck", shellcheck.PACKAGE, _run_shellcheck),
        ("hadolint", hadolint.PACKAGE, _run_hadolint),
        ("zizmor", zizmor.PACKAGE, _run_zizmor),
    ):
        if not enabled[name]:
            continue
        files = chosen[name]
        exe = executable(name)

        def run(
            scratch: Path,
            runner: _Runner = runner,
            exe: str = exe,
            files: list[str] = files,
        ) -> ToolReport:
            with tempfile.TemporaryDirectory(prefix="redline-tool-home-") as home:
                return runner(exe, files, scratch, Path(home), settings.timeout, cancel)

        out.append(NativeJob(name, package, files, run))
    return out


_Runner = Callable[[str, list[str], Path, Path, float, "CancelToken | None"], ToolReport]


def _run_oxlint(
    exe: str,
    files: list[str],
    scratch: Path,
    home: Path,
    timeout: float,
    cancel: CancelToken | None,
) -> ToolReport:
    config = home / oxlint.CONFIG_NAME
    config.write_text("{}\n", encoding="utf-8")  # defaults only; the categories are in argv
    off = sorted(OFF_BY_DEFAULT["oxlint"])
    return _batches(
        files,
        lambda batch: oxlint.argv(exe, config, off, batch),
        lambda out, _err: oxlint.parse(out, scratch),
        oxlint.OK_EXIT_CODES,
        "oxlint",
        scratch,
        home,
        timeout,
        cancel,
    )


def _run_shellcheck(
    exe: str,
    files: list[str],
    scratch: Path,
    home: Path,
    timeout: float,
    cancel: CancelToken | None,
) -> ToolReport:
    off = sorted(OFF_BY_DEFAULT["shellcheck"])
    return _batches(
        files,
        lambda batch: shellcheck.argv(exe, off, batch),
        lambda out, _err: shellcheck.parse(out, scratch),
        shellcheck.OK_EXIT_CODES,
        "shellcheck",
        scratch,
        home,
        timeout,
        cancel,
        # One script a process: given together, a script that sources another one of the
        # files has that one parsed and checked again inside it (nvm's 58 changed files: 35 s
        # of CPU together, 3 s one by one: its tests each source the 5,000-line nvm.sh).
        one_each=True,
    )


def _run_hadolint(
    exe: str,
    files: list[str],
    scratch: Path,
    home: Path,
    timeout: float,
    cancel: CancelToken | None,
) -> ToolReport:
    config = home / hadolint.CONFIG_NAME
    # Redline's rule choices (`ignored`), in hadolint's own configuration format.
    ignored = "".join(f"  - {rule}\n" for rule in sorted(OFF_BY_DEFAULT["hadolint"]))
    config.write_text(f"ignored:\n{ignored}" if ignored else "{}\n", encoding="utf-8")
    return _batches(
        files,
        lambda batch: hadolint.argv(exe, config, batch),
        lambda out, _err: hadolint.parse(out, scratch),
        hadolint.OK_EXIT_CODES,
        "hadolint",
        scratch,
        home,
        timeout,
        cancel,
        parallel=True,
    )


def _run_zizmor(
    exe: str,
    files: list[str],
    scratch: Path,
    home: Path,
    timeout: float,
    cancel: CancelToken | None,
) -> ToolReport:
    def parse(out: bytes, err: bytes) -> ToolReport:
        report = zizmor.parse(out, scratch)
        note = zizmor.unparsed_note(err)
        return ToolReport(report.results, unread=[note] if note else [])

    return _batches(
        files,
        lambda batch: zizmor.argv(exe, home / ".cache" / "zizmor", batch),
        parse,
        zizmor.OK_EXIT_CODES,
        "zizmor",
        scratch,
        home,
        timeout,
        cancel,
        nothing_parsed=zizmor.NOTHING_PARSED,
    )


def _batches(
    files: Sequence[str],
    make_argv: Callable[[Sequence[str]], list[str]],
    parse: Callable[[bytes, bytes], ToolReport],
    ok_codes: tuple[int, ...],
    name: str,
    scratch: Path,
    home: Path,
    timeout: float,
    cancel: CancelToken | None,
    nothing_parsed: int | None = None,
    parallel: bool = False,
    one_each: bool = False,
) -> ToolReport:
    """Run the tool on `files` in consecutive batches of _BATCH and join their reports.

    A file that is not UTF-8 is not handed over: oxlint reports it without a position, zizmor
    gives up on every file of the run. It is named as not checked instead."""
    results: list[RawResult] = []
    notes: list[str] = []
    unread: list[str] = []
    readable = []
    for path in files:
        if _is_utf8(scratch.joinpath(*path.split("/"))):
            readable.append(path)
        else:
            unread.append(f"{name} could not read {path}: not UTF-8 (not checked)")

    # `timeout` bounds the whole job, however many processes it takes (one a script for
    # shellcheck): each gets what is left of it.
    deadline = time.monotonic() + timeout

    def one(batch: list[str]) -> ToolReport:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AnalyzerFailed(f"timed out after {timeout:g} s")
        try:
            proc = run_process(make_argv(batch), scratch, left, cancel, home=home)
        except AnalyzerFailed as exc:
            if time.monotonic() >= deadline:  # said with the setting, not what was left
                raise AnalyzerFailed(f"timed out after {timeout:g} s") from exc
            raise
        if nothing_parsed is not None and proc.returncode == nothing_parsed:
            listed = ", ".join(batch[:3]) + (
                f" and {len(batch) - 3} more" if len(batch) > 3 else ""
            )
            return ToolReport([], unread=[f"{name} could not parse {listed} (not checked)"])
        if proc.returncode not in ok_codes:
            detail = stderr_tail(proc.stderr)
            raise AnalyzerFailed(
                f"{name} exited with code {proc.returncode}" + (f": {detail}" if detail else "")
            )
        return parse(proc.stdout, proc.stderr)

    chunks = [[path] for path in readable] if one_each else _chunks(readable, parallel)
    if len(chunks) > 1 and (parallel or one_each):
        with ThreadPoolExecutor(max_workers=min(len(chunks), cores())) as pool:
            reports = list(pool.map(one, chunks))
    else:
        reports = [one(chunk) for chunk in chunks]
    for report in reports:
        results.extend(report.results)
        notes.extend(report.notes)
        unread.extend(report.unread)
    return ToolReport(results, notes, unread)


def _chunks(files: list[str], parallel: bool) -> list[list[str]]:
    """Batches of at most _BATCH files; for a single-threaded tool (`parallel`), one per core
    when there are enough files (never fewer than _MIN_CHUNK a process: starting one costs
    more than it saves below that)."""
    count = -(-len(files) // _BATCH)
    if parallel:
        count = max(count, min(cores(), len(files) // _MIN_CHUNK))
    count = max(count, 1)
    return [chunk for chunk in (files[i::count] for i in range(count)) if chunk]


def _is_utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return True
