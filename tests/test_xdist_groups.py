"""The suite's `xdist_group` marks keep a group on one worker (tests/xdist_groups.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent

_GROUPED = textwrap.dedent(
    """
    import os
    from pathlib import Path
    import pytest

    OUT = Path(os.environ["GROUP_OUT"])

    @pytest.mark.xdist_group("together")
    @pytest.mark.parametrize("i", range(6))
    def test_grouped(i):
        (OUT / f"grouped-{i}").write_text(os.environ["PYTEST_XDIST_WORKER"])

    @pytest.mark.parametrize("i", range(6))
    def test_free(i):
        pass
    """
)


def test_a_group_runs_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(_GROUPED)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "GROUP_OUT": str(out), "PYTHONPATH": str(TESTS)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "xdist_groups",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    workers = {p.read_text() for p in out.iterdir()}
    assert len(list(out.iterdir())) == 6
    assert len(workers) == 1, f"the group ran on {sorted(workers)}"
