"""`make run`'s script end to end: scripts/demo.py as a process, with a private cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "demo.py"


def _run(cache: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    # A model in the user's environment is ignored: the demo is offline by design.
    env |= {"REDLINE_CACHE_DIR": str(cache), "REDLINE_MODEL": "gpt-4o-mini"}
    return subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, check=False
    )


def test_make_run_keeps_the_demo_and_says_what_to_try_next(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _run(cache)
    assert first.returncode == 0, first.stderr
    repo = cache / "demo" / "repo"
    for path, line in demo.EXPECTED.values():
        assert f"`{path}:{line}`" in first.stdout
    assert "Offline review" in first.stdout
    # The coverage names the analyzer of each language of the change as having run and found
    # something (ruff; oxlint, ast-grep, shellcheck, hadolint, zizmor).
    coverage = first.stdout.split("## Coverage")[-1]
    for tool in sorted(set(demo.EXPECTED_ANALYZER.values())):
        assert f"  - {tool} " in coverage, coverage
        line = next(x for x in coverage.splitlines() if x.startswith(f"  - {tool} "))
        assert ": ok, " in line and ", 0 findings" not in line, line
    # It ends by saying where the repository is kept and what to try with it.
    tail = first.stderr[first.stderr.index("The demo repository is kept") :]
    assert f"  {repo}\n" in tail and "until the next `make run`" in tail
    for hint in ("code ", "--model", "--format sarif", " debate ", "REDLINE_MODEL"):
        assert hint in tail, hint
    assert (repo / ".git").is_dir() and (repo / "app" / "reports.py").is_file()
    head = (repo / ".git" / "HEAD").read_text()
    assert head == "ref: refs/heads/feature/export\n"

    # The next run starts from a fresh demo: what was changed in the old one is gone.
    (repo / "scratch.txt").write_text("left over")
    second = _run(cache)
    assert second.returncode == 0, second.stderr
    assert repo.is_dir() and not (repo / "scratch.txt").exists()


def test_a_directory_that_is_not_the_demo_is_never_removed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "demo").mkdir(parents=True)
    (cache / "demo" / "mine.txt").write_text("keep me")
    refused = _run(cache)
    assert refused.returncode != 0
    assert "is not a Redline demo" in refused.stderr
    assert (cache / "demo" / "mine.txt").read_text() == "keep me"


def test_try_next_says_how_to_get_redline_on_path_and_the_extension_installed(
    tmp_path: Path,
) -> None:
    # An editor starts `redline` from PATH: the closing lines say how to put it there (this
    # checkout's, never a name on the package index) and how to install the VS Code extension.
    checkout = Path(demo.__file__).resolve().parents[1]
    redline = checkout / ".venv" / "bin" / "redline"
    text = demo.next_steps(tmp_path / "repo", redline)
    assert f'export PATH="{redline.parent}:$PATH"' in text
    assert f"uv tool install {checkout}" in text
    assert "make vsix" in text
    assert f"code --install-extension {checkout / 'editor-client' / 'redline-0.1.0.vsix'}" in text
    assert "install redline" not in text
