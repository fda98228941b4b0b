"""Mutation testing of Redline's guard modules: would a test notice if a rule were inverted?

    python scripts/mutation.py [MODULE_OR_DIRECTORY ...] [--jobs N]
    make mutation [MODULES="server/redline/git/hardening.py ..."]

Each module listed in scripts/mutation.toml is mutated by mutmut (one small change at a time:
an operator, a comparison, a constant, a string, an argument dropped) and the module's own
tests run against every mutant. A mutant the tests fail on is killed; one they pass with
survived, and is listed with its place and its change. Mutants listed in
scripts/mutation-equivalents.toml (reviewed: no behaviour can tell them apart from the
original) are reported on their own and left out of the score, which is
(killed + timed out) / (mutants - equivalent).

mutmut 3 mutates the bodies of functions and methods only: module-level tables (allowlists,
compiled patterns) are not mutated, so their rules need tests of their own that read them
through behaviour.

Nothing is written outside .mutation/ (gitignored): each module gets a fresh workspace
.mutation/<module>/ holding mutmut's settings and its mutants/ copy of server/redline; the
tests are the repository's own files, run from there with the repository's pytest settings.
The workspace stays until the module's next run: `--report` prints the last runs' table again,
and `mutmut show <name>` (run in the workspace) shows one mutant whole.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".mutation"
CONFIG = ROOT / "scripts" / "mutation.toml"
EQUIVALENTS = ROOT / "scripts" / "mutation-equivalents.toml"

# Per mutant, mutmut stops the tests after (time the selected tests took + constant) x
# multiplier seconds of wall time (twice that of CPU time) and counts the mutant as timed out.
TIMEOUT_MULTIPLIER = 10.0
TIMEOUT_CONSTANT = 2.0
MODULE_TIMEOUT = 3600  # seconds for one module's whole run
SEED = 23  # --sample draws the same mutants every time (for the same code)

# mutmut's exit codes per mutant (mutmut/stats.py), folded into the table's columns.
_KILLED = {1, 3, -11, -9}  # a failing test, pytest's internal error, a crashed test process
_TIMEOUT = {36, -24, 24, 152, 255}
_NO_TESTS = {33, 5}

# Run inside the workspace: import redline from the mutated copy, never from server/ (where
# the editable install points), then hand over to mutmut's command line. scripts/ goes on the
# path for the pytest plugin below.
_BOOT = f"""
import sys
from pathlib import Path
original = Path("redline").resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != original]
sys.path.insert(0, str(Path("mutants").absolute()))
sys.path.append({str(ROOT / "scripts")!r})
from mutmut.__main__ import cli
sys.argv[0] = "mutmut"
cli()
"""


@dataclass(frozen=True)
class Equivalent:
    module: str
    function: str
    before: str
    after: str
    why: str

    def matches(self, mutant: Mutant) -> bool:
        return (self.module, self.function, self.before, self.after) == (
            mutant.module,
            mutant.function,
            mutant.before,
            mutant.after,
        )


@dataclass(frozen=True)
class Mutant:
    module: str
    name: str  # mutmut's name, for `mutmut show` in the workspace
    status: str  # killed, survived, timeout, no tests, or mutmut's word for anything else
    function: str  # Class.method or function
    line: int  # in the original file
    before: str  # the changed line(s) of the original, stripped
    after: str  # the same line(s) in the mutant

    @property
    def place(self) -> str:
        return f"{self.module}:{self.line}"


@dataclass
class ModuleResult:
    module: str
    mutants: list[Mutant] = field(default_factory=list)
    equivalent: list[tuple[Mutant, Equivalent]] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    sampled_from: int | None = None  # the module's mutants, when only a sample was tested

    def count(self, *statuses: str) -> int:
        return sum(m.status in statuses for m in self.live)

    @property
    def live(self) -> list[Mutant]:
        listed = {id(m) for m, _ in self.equivalent}
        return [m for m in self.mutants if id(m) not in listed]

    @property
    def score(self) -> float | None:
        live = self.live
        return (self.count("killed", "timeout") / len(live)) if live else None


def load_mapping(path: Path = CONFIG) -> dict[str, list[str]]:
    """Module path -> its test files, both relative to the repository root."""
    data = tomllib.loads(path.read_text())
    return {module: list(entry["tests"]) for module, entry in data["modules"].items()}


def load_deselected(path: Path = CONFIG) -> list[str]:
    """Tests never run against mutants (node ids): timings mean nothing under mutmut."""
    return list(tomllib.loads(path.read_text()).get("deselect", []))


def load_equivalents(path: Path = EQUIVALENTS) -> list[Equivalent]:
    if not path.exists():
        return []
    data = tomllib.loads(path.read_text())
    return [Equivalent(**entry) for entry in data.get("equivalent", [])]


def select(requested: Sequence[str], mapping: dict[str, list[str]]) -> list[str]:
    """The mapped modules named, or under the directories named (all of them by default)."""
    if not requested:
        return list(mapping)
    chosen: list[str] = []
    for item in requested:
        name = item.rstrip("/")
        hits = [m for m in mapping if m == name or m.startswith(name + "/")]
        if not hits:
            raise SystemExit(f"mutation: {item} is not a module listed in {CONFIG.name}")
        chosen += [m for m in hits if m not in chosen]
    return chosen


def _workspace_settings(module: str, tests: Iterable[str]) -> str:
    settings = {
        "source_paths": ["redline"],
        "only_mutate": [_package_path(module)],
        # The repository's pytest settings (asyncio mode, warnings filters) and conftest.py;
        # redline's function caches emptied before each test (mutation_fresh_caches.py: a
        # mutant's process inherits what the run on the original code cached).
        "pytest_add_cli_args": [
            "-c",
            str(ROOT / "pyproject.toml"),
            "-p",
            "no:cacheprovider",
            "-p",
            "mutation_fresh_caches",
        ]
        + [arg for test in load_deselected() for arg in ("--deselect", test)],
        # Relative to mutants/, where mutmut runs pytest (its rootdir): tests/ is linked there, as
        # node ids outside the rootdir cannot be run again by id.
        "pytest_add_cli_args_test_selection": list(tests),
        "timeout_multiplier": TIMEOUT_MULTIPLIER,
        "timeout_constant": TIMEOUT_CONSTANT,
        "use_git_change_detection": False,
    }
    lines = ["[tool.mutmut]"] + [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def _package_path(module: str) -> str:
    """server/redline/git/view.py -> redline/git/view.py (the path in the workspace)."""
    return module.removeprefix("server/")


def _slug(module: str) -> str:
    return module.removeprefix("server/redline/").removesuffix(".py").replace("/", ".")


def run_module(module: str, tests: list[str], jobs: int, sample: int | None = None) -> None:
    """Run mutmut on one module in a fresh workspace; the outcome stays there (read_module).

    With `sample`, mutmut first makes every mutant (and maps the tests) without testing any,
    then tests that many of them, drawn at random with a fixed seed: an estimate of the score
    for a module too big to test whole in the time at hand."""
    workspace = WORK / _slug(module)
    shutil.rmtree(workspace, ignore_errors=True)
    # mutmut names modules by their path from the workspace: redline/… is package redline.
    (workspace / "mutants").mkdir(parents=True)
    (workspace / "redline").symlink_to(ROOT / "server" / "redline")
    (workspace / "prompts").symlink_to(ROOT / "prompts")  # review/prompts.py: <checkout>/prompts
    (workspace / "mutants" / "tests").symlink_to(ROOT / "tests")
    (workspace / "pyproject.toml").write_text(_workspace_settings(module, tests))
    meta = workspace / "mutants" / f"{_package_path(module)}.meta"
    start = time.monotonic()
    run: dict[str, object] = {"tests": tests, "source": _source_hash(module)}
    with open(workspace / "mutmut.log", "wb") as out:
        names: list[str] = []
        if sample is not None:
            # No mutant matches this name: mutmut makes them all, then stops before testing.
            _mutmut(workspace, out, jobs, ["no-mutant-is-named-so"])
            if not meta.exists():
                run.update(seconds=time.monotonic() - start, exit_code=-1)
                (workspace / "run.json").write_text(json.dumps(run))
                return
            every = sorted(json.loads(meta.read_text())["exit_code_by_key"], key=_order_name)
            names = sorted(random.Random(SEED).sample(every, min(sample, len(every))))
            run["sample"] = {"tested": len(names), "of": len(every), "seed": SEED}
        rc = _mutmut(workspace, out, jobs, names)
    run.update(seconds=time.monotonic() - start, exit_code=rc)
    (workspace / "run.json").write_text(json.dumps(run))


def rerun_survivors(module: str, tests: list[str], jobs: int) -> None:
    """Test the last run's survivors again (after new tests were written), in its workspace.

    Only for an unchanged module: mutmut's mutant names stand for changes to that code. The test
    map is made anew, so new and changed tests count; killed mutants keep their result."""
    workspace = WORK / _slug(module)
    run = json.loads((workspace / "run.json").read_text())
    if run.get("source") != _source_hash(module):
        raise SystemExit(f"mutation: {module} changed since its last run; run it whole")
    meta = workspace / "mutants" / f"{_package_path(module)}.meta"
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    names = sorted(name for name, code in codes.items() if code in (0, *_NO_TESTS))
    if not names:
        return
    (workspace / "pyproject.toml").write_text(_workspace_settings(module, tests))
    (workspace / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    start = time.monotonic()
    with open(workspace / "mutmut.log", "ab") as out:
        rc = _mutmut(workspace, out, jobs, names)
    run.update(seconds=run["seconds"] + time.monotonic() - start, exit_code=rc, tests=tests)
    run["reruns"] = run.get("reruns", 0) + 1
    (workspace / "run.json").write_text(json.dumps(run))


def _source_hash(module: str) -> str:
    return hashlib.sha256((ROOT / module).read_bytes()).hexdigest()


def _mutmut(workspace: Path, out: IO[bytes], jobs: int, names: list[str]) -> int | None:
    env = {k: v for k, v in os.environ.items() if k != "MUTANT_UNDER_TEST"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ beside the repository's tests
    # A private temporary directory: a mutant of git/view.py's sweep (`os.kill(pid, 0)` turned
    # into `os.kill(pid, 1)`) signals every process that has a view in the shared
    # <tmp>/redline-views-<uid> — a user's language server, another test run. Here it reaches
    # only the mutant's own test processes. It is made in the system's temporary directory,
    # not in the workspace: below the checkout, a test's "directory outside any repository"
    # was inside this one (test_git_runner.py's fake git was asked for the view's config), and
    # its paths were too long for an AF_UNIX socket (107 bytes).
    private_tmp = tempfile.mkdtemp(prefix=f"redline-mutation-{workspace.name}-")
    env["TMPDIR"] = private_tmp
    try:
        return subprocess.run(
            [sys.executable, "-c", _BOOT, "run", "--max-children", str(jobs), *names],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=MODULE_TIMEOUT,
        ).returncode
    except subprocess.TimeoutExpired:
        return None
    finally:
        shutil.rmtree(private_tmp, ignore_errors=True)


def read_module(module: str, equivalents: list[Equivalent]) -> ModuleResult:
    """The outcome of the module's last run, from its workspace."""
    result = ModuleResult(module)
    workspace = WORK / _slug(module)
    log = workspace / "mutmut.log"
    try:
        run = json.loads((workspace / "run.json").read_text())
    except FileNotFoundError:
        result.error = f"not run yet (no {workspace / 'run.json'})"
        return result
    result.seconds = run["seconds"]
    rc = run["exit_code"]
    meta = workspace / "mutants" / f"{_package_path(module)}.meta"
    if rc != 0 or not meta.exists():
        tail = log.read_text(errors="replace").replace("\r", "\n").strip().splitlines()[-15:]
        why = "timed out" if rc is None else f"exit code {rc}"
        result.error = f"mutmut failed ({why}); last lines of {log}:\n  " + "\n  ".join(tail)
        return result
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    if "sample" in run:
        result.sampled_from = run["sample"]["of"]
        codes = {name: code for name, code in codes.items() if code is not None}
    result.mutants = [
        describe(workspace, module, name, code) for name, code in sorted(codes.items(), key=_order)
    ]
    for mutant in result.mutants:
        for eq in equivalents:
            if eq.matches(mutant):
                result.equivalent.append((mutant, eq))
                break
    return result


def _order(item: tuple[str, int | None]) -> tuple[str, int]:
    return _order_name(item[0])


def _order_name(name: str) -> tuple[str, int]:
    base, _, number = name.rpartition("__mutmut_")
    return base, int(number) if number.isdigit() else 0


def _status(code: int | None) -> str:
    if code in _KILLED:
        return "killed"
    if code in _TIMEOUT:
        return "timeout"
    if code in _NO_TESTS:
        return "no tests"
    if code == 0:
        return "survived"
    return "not run" if code is None else f"exit {code}"


def describe(workspace: Path, module: str, name: str, code: int | None) -> Mutant:
    """The mutant's place in the original file and the lines it changes."""
    import libcst
    from mutmut.mutation import diff_apply
    from mutmut.utils.format_utils import orig_function_and_class_names_from_key

    path = _package_path(module)
    with contextlib.chdir(workspace):
        pair = diff_apply.read_functions_from_index(name, path)
        if pair is None:
            mutated = diff_apply.read_mutants_module(path)
            pair = (
                diff_apply.read_original_function(mutated, name),
                diff_apply.read_mutant_function(mutated, name),
            )
    orig, mutant = (libcst.Module([f]).code.strip().splitlines() for f in pair)
    function, cls = orig_function_and_class_names_from_key(name)
    function = function.rpartition(".")[2]
    changes = [
        op for op in difflib.SequenceMatcher(None, orig, mutant).get_opcodes() if op[0] != "equal"
    ]
    i1 = changes[0][1] if changes else 0
    i2 = changes[-1][2] if changes else 0
    j1 = changes[0][3] if changes else 0
    j2 = changes[-1][4] if changes else 0
    return Mutant(
        module=module,
        name=name,
        status=_status(code),
        function=f"{cls}.{function}" if cls else function,
        line=_file_line(module, cls, function, orig, i1),
        before=" / ".join(line.strip() for line in orig[i1:i2]),
        after=" / ".join(line.strip() for line in mutant[j1:j2]),
    )


def _file_line(module: str, cls: str | None, function: str, text: list[str], index: int) -> int:
    """Line `index` of the function's text (from its decorators and comments on, as mutmut
    reads it) in the original file, counted from the `def` line."""
    tree = ast.parse((ROOT / module).read_text())
    scope: list[ast.stmt] = tree.body
    if cls:
        scope = next(
            (n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), []
        )
    node = next(
        (
            n
            for n in scope
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == function
        ),
        None,
    )
    def_at = next(
        (i for i, line in enumerate(text) if line.lstrip().startswith(("def ", "async def "))),
        None,
    )
    if node is None or def_at is None:
        return 0
    return node.lineno + index - def_at


def report(results: list[ModuleResult]) -> str:
    rows = [("module", "mutants", "killed", "survived", "timed out", "equivalent", "score", "time")]
    for r in results:
        module = r.module.removeprefix("server/redline/")
        if r.error:
            rows.append((module, "-", "-", "-", "-", "-", "error", f"{r.seconds:.0f}s"))
            continue
        survived = len(r.live) - r.count("killed", "timeout")
        score = "-" if r.score is None else f"{100 * r.score:.1f}%"
        rows.append(
            (
                module,
                str(len(r.mutants)) + ("" if r.sampled_from is None else f"/{r.sampled_from}"),
                str(r.count("killed")),
                str(survived),
                str(r.count("timeout")),
                str(len(r.equivalent)),
                score,
                f"{r.seconds:.0f}s",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = []
    for n, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    for r in results:
        if r.error:
            out += ["", f"{r.module}: {r.error}"]
            continue
        survivors = [m for m in r.live if m.status not in ("killed", "timeout")]
        if survivors:
            out += ["", f"Survivors in {r.module} ({len(survivors)}):"]
            for m in survivors:
                note = "" if m.status == "survived" else f" [{m.status}]"
                out.append(f"  {m.place}  {m.function}: {m.before}  ->  {m.after}{note}")
        if r.equivalent:
            out += ["", f"Equivalent (reviewed, not in the score) in {r.module}:"]
            for m, eq in r.equivalent:
                state = "" if m.status != "killed" else " [now killed: drop it from the list]"
                out.append(f"  {m.place}  {m.function}: {m.before}  ->  {m.after}{state}")
                out.append(f"      {eq.why}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    global WORK
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules or directories (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested in parallel")
    parser.add_argument(
        "--report", action="store_true", help="report the last runs (in .mutation/), run nothing"
    )
    parser.add_argument(
        "--workdir", type=Path, default=WORK, help="where the workspaces are (default .mutation)"
    )
    parser.add_argument(
        "--tests", nargs="+", help="run the modules against these test files instead of theirs"
    )
    parser.add_argument(
        "--sample", type=int, help="test only this many mutants per module, drawn at random"
    )
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="test only the last run's survivors again (after writing tests; same module code)",
    )
    args = parser.parse_args(argv)
    WORK = args.workdir.resolve()
    mapping = load_mapping()
    equivalents = load_equivalents()
    if args.tests:
        mapping = {module: list(args.tests) for module in mapping}
    results = []
    for module in select(args.modules, mapping):
        if not args.report:
            print(f"mutation: {module} against {', '.join(mapping[module])}", flush=True)
            if args.survivors:
                rerun_survivors(module, mapping[module], args.jobs)
            else:
                run_module(module, mapping[module], args.jobs, args.sample)
        result = read_module(module, equivalents)
        if not args.report and not result.error:
            score = "-" if result.score is None else f"{100 * result.score:.1f}%"
            print(f"  {len(result.mutants)} mutants, score {score}, {result.seconds:.0f} s")
        results.append(result)
    print()
    print(report(results))
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
