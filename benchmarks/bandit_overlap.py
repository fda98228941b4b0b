"""Which of bandit's results ruff's S rules (as Redline enables them) do not find, and what each
tool costs: the measurement behind `analyzers.bandit_scope` (see `analyzers/bandit.py`).

Runs both tools, the way Redline runs them, over real code found offline: CPython 3.12's
standard library from pyenv (tests left out) and, with --packages, the named packages of this
virtualenv's site-packages. A bandit result counts as ruff's too when ruff reports the same rule
family (B602 = S602) on the innermost statement (`ast`) holding the result's first line. For
each bandit test it prints how many results it had (outside `rules.NOISE`), how many only bandit
found, and how many of those `bandit.UNIQUE_CHECK_TRIGGER` finds on the statement's lines.

    python benchmarks/bandit_overlap.py [--packages aiohttp jinja2 pip requests ...]

Slow on purpose (bandit over ~1,000 files: about half a minute); not part of `make bench`.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path

from redline.analyzers.bandit import UNIQUE_CHECK_TRIGGER
from redline.analyzers.rules import NOISE, family
from redline.config_models import AnalyzerSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))

from offline_review import modules, stdlib

BIN = Path(sys.executable).parent


def build_corpus(root: Path, packages: list[str]) -> int:
    lib = stdlib("3.12")
    count = 0
    if lib is not None:
        for rel, path in modules(lib).items():
            target = root / "stdlib" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            count += 1
    site = Path(sysconfig.get_paths()["purelib"])
    for name in packages:
        source = site / name
        if source.is_dir():
            shutil.copytree(source, root / "packages" / name, dirs_exist_ok=True)
        elif source.with_suffix(".py").is_file():
            (root / "packages").mkdir(exist_ok=True)
            shutil.copyfile(source.with_suffix(".py"), root / "packages" / f"{name}.py")
    return count + sum(1 for _ in (root / "packages").rglob("*.py")) if packages else count


def run(argv: list[str], cwd: Path) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start, proc.stdout


def statement_of(
    path: Path, line: int, cache: dict[Path, list[tuple[int, int]]]
) -> tuple[int, int]:
    if path not in cache:
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            cache[path] = []
        else:
            cache[path] = [
                (n.lineno, n.end_lineno or n.lineno)
                for n in ast.walk(tree)
                if isinstance(n, ast.stmt)
            ]
    best = (line, line)
    for first, last in cache[path]:
        if first <= line <= last and (best == (line, line) or last - first < best[1] - best[0]):
            best = (first, last)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--packages", nargs="*", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redline-bandit-overlap-") as tmp:
        root = Path(tmp)
        files = build_corpus(root, args.packages)
        if not files:
            print("skipped: no CPython 3.12 from pyenv and no --packages")
            return 0
        lines = sum(len(p.read_bytes().splitlines()) for p in root.rglob("*.py"))
        select = ",".join(AnalyzerSettings().ruff_select)
        ruff_s, ruff_out = run(
            [str(BIN / "ruff"), "check", "--isolated", "--select", select, "--output-format",
             "json", "--no-cache", "--exit-zero", "--quiet", "."],
            root,
        )  # fmt: skip
        bandit_s, bandit_out = run(
            [str(BIN / "bandit"), "-f", "json", "-q", "--exit-zero", "-r", "."], root
        )
        ruff_by_file: dict[Path, list[tuple[str, int, int]]] = {}
        for item in json.loads(ruff_out):
            code = str(item.get("code") or "")
            ruff_by_file.setdefault(Path(item["filename"]).resolve(), []).append(
                (code, item["location"]["row"], item["end_location"]["row"])
            )
        total: Counter[str] = Counter()
        only: Counter[str] = Counter()
        triggered: Counter[str] = Counter()
        cache: dict[Path, list[tuple[int, int]]] = {}
        for result in json.loads(bandit_out)["results"]:
            test = str(result["test_id"])
            fam = family("bandit", test)
            if fam in NOISE:
                continue
            total[test] += 1
            path = (root / result["filename"]).resolve()
            line = min(result.get("line_range") or [result["line_number"]])
            first, last = statement_of(path, line, cache)
            if any(
                code == fam and start <= last and end >= first
                for code, start, end in ruff_by_file.get(path, [])
            ):
                continue
            only[test] += 1
            text = "\n".join(path.read_text(errors="replace").splitlines()[first - 1 : last])
            triggered[test] += bool(UNIQUE_CHECK_TRIGGER.search(text))
        print(f"corpus: {files} Python files, {lines} lines")
        print(f"ruff   {ruff_s:6.2f} s  {ruff_s / files * 1000:6.2f} ms a file")
        print(f"bandit {bandit_s:6.2f} s  {bandit_s / files * 1000:6.2f} ms a file")
        print(f"{'test':<6} {'results':>8} {'bandit only':>12} {'trigger finds':>14}")
        for test in sorted(total):
            print(f"{test:<6} {total[test]:>8} {only[test]:>12} {triggered[test]:>14}")
        print(
            f"{'all':<6} {sum(total.values()):>8} {sum(only.values()):>12} "
            f"{sum(triggered.values()):>14}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
