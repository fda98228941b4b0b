"""Skip decisions by content and the security scan: before and after, side by side.

1. Planned model tokens for a commit that adds three copies of minified jQuery under the plain
   name `jquery.js` (as a real commit did) next to a small source change: `estimate_model`
   (the `redline review --estimate` figures: nothing is sent) with the content checks
   (minified, bundled, vendored header) turned off ("before": names only) and on ("after").
   The minified file is jQuery's own release from /usr/share/javascript when the machine has
   it, else the 6 KB head kept in tests/data repeated to the same size.
2. The security_sensitive scan over a big realistic input: the standard library's .py files,
   each as one unit of added lines (the first 300 lines). "before" is diff/tags.py as it was
   at BEFORE_COMMIT (loaded from git), "after" is diff/security.py; both must agree.

    python benchmarks/skip_content.py
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redline.config_models import AnalyzerSettings, ModelSettings, Settings
from redline.diff import units as units_module
from redline.diff.security import security_sensitive_text
from redline.requests import ScopeKind, ScopeRequest
from redline.review.estimate import estimate_model
from redline.review.pipeline import plan_review

from _change import isolated_env, target_line

ROOT = Path(__file__).resolve().parent.parent
BEFORE_COMMIT = "251c437"  # the last commit before the content checks and the one-pattern scan
JQUERY_MIN = Path("/usr/share/javascript/jquery/jquery.min.js")
JQUERY_HEAD = ROOT / "tests" / "data" / "jquery-3.6.1.min.head.js"
MODEL = "openai/gpt-4o-mini"
UNIT_LINES = 300


def minified_source() -> tuple[str, str]:
    if JQUERY_MIN.is_file():
        return JQUERY_MIN.read_text(encoding="utf-8"), str(JQUERY_MIN)
    head = JQUERY_HEAD.read_text(encoding="utf-8")
    banner, body = head.split("\n", 1)
    return banner + "\n" + body.strip() * 15 + "\n", f"{JQUERY_HEAD.name} ×15"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def make_repo(root: Path, minified: str) -> None:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.com")
    git(root, "config", "user.name", "bench")
    (root / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "feature")
    for folder in ("static", "docs/_static", "examples/demo"):
        (root / folder).mkdir(parents=True)
        (root / folder / "jquery.js").write_text(minified, encoding="utf-8")
    (root / "app.py").write_text("def total(xs):\n    return sum(x for x in xs if x)\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "add jquery")


@contextmanager
def names_only() -> Iterator[None]:
    """The content checks off: what the skip decisions were before them."""
    with (
        mock.patch.object(units_module, "minified", lambda lines: False),
        mock.patch.object(units_module, "bundled", lambda head: False),
        mock.patch.object(units_module, "vendored_header", lambda path, head: False),
    ):
        yield


def estimate(root: Path) -> tuple[int, int, int]:
    settings = Settings(
        models=ModelSettings(model=MODEL, api_key="unused"),
        analyzers=AnalyzerSettings(ruff=False, bandit=False),
    )
    plan = plan_review(
        root, ScopeRequest(ScopeKind.BRANCH, "main"), settings, function_metrics=True
    )
    est = estimate_model(plan, settings)
    assert est is not None
    return len(plan.reviewable), est.calls_min, est.prompt_tokens


def old_tags() -> ModuleType | None:
    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{BEFORE_COMMIT}:server/redline/diff/tags.py"],
            check=True,
            capture_output=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    spec = importlib.util.spec_from_loader("redline_tags_before", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, "tags.py@" + BEFORE_COMMIT, "exec"), module.__dict__)
    return module


def stdlib_units() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            lines = path.read_text(encoding="utf-8").split("\n")[:UNIT_LINES]
        except (UnicodeDecodeError, OSError):
            continue
        # A neutral path: the path check would answer for many files before their text.
        out.append((f"src/m{len(out)}.py", "\n".join("+" + line for line in lines)))
    return out


def timed(fn: Callable[[str, str], bool], units: list[tuple[str, str]]) -> tuple[float, list[bool]]:
    best = float("inf")
    answers: list[bool] = []
    for _ in range(3):
        start = time.perf_counter()
        answers = [fn(path, text) for path, text in units]
        best = min(best, time.perf_counter() - start)
    return best, answers


def main() -> int:
    source, label = minified_source()
    with isolated_env() as tmp:
        make_repo(tmp / "repo", source)
        with names_only():
            before = estimate(tmp / "repo")
        after = estimate(tmp / "repo")
    width = 14
    print(f"Planned model work for a commit adding 3× minified jQuery as jquery.js ({label},")
    print(f"{len(source) // 1024} KB each) and a 1-line source change; {MODEL}, nothing sent")
    print("".ljust(40) + "before".rjust(width) + "after".rjust(width))
    for name, b, a in zip(
        ("reviewed units", "planned calls", "prompt tokens"), before, after, strict=True
    ):
        print(name.ljust(40) + str(b).rjust(width) + str(a).rjust(width))
    print()

    units = stdlib_units()
    chars = sum(len(text) for _, text in units)
    old = old_tags()
    new_time, new_answers = timed(security_sensitive_text, units)
    print(f"security_sensitive scan: {len(units)} stdlib files as units, {chars / 1e6:.1f} MB "
          "(best of 3)")  # fmt: skip
    print("".ljust(40) + "before".rjust(width) + "after".rjust(width))
    if old is not None:
        # Cold, as a review starts: the old scan kept caches of clean lines and words.
        def old_scan(path: str, text: str) -> bool:
            return bool(old.security_sensitive_text(path, text))

        old._CLEAN_LINES.clear()
        old._CLEAN_WORDS.clear()
        old_time, old_answers = timed(old_scan, units)
        print("time, s".ljust(40) + f"{old_time:.3f}".rjust(width) + f"{new_time:.3f}".rjust(width))
        print("units tagged".ljust(40) + str(sum(old_answers)).rjust(width)
              + str(sum(new_answers)).rjust(width))  # fmt: skip
        agree = old_answers == new_answers
        print(f"same answers: {agree}")
    else:
        print("time, s".ljust(40) + "n/a".rjust(width) + f"{new_time:.3f}".rjust(width))
        print(f"(no git history for {BEFORE_COMMIT}: the before column is not measured)")
        agree = True
    print()
    print(target_line("minified copies planned", f"{after[2]} tokens", "<", f"{before[2] // 4}",
                      after[2] < before[2] // 4))  # fmt: skip
    print(target_line("security scan agrees with the old one", str(agree), "==", "True", agree))
    return 0


if __name__ == "__main__":
    sys.exit(main())
