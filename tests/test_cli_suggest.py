"""A mistyped command or choice gets a suggestion (issue 24): `redline reveiw` says "did you
mean 'review'?" on one line and exits 2; nothing is run."""

from __future__ import annotations

from pathlib import Path

import pytest

from output_bed import redline


@pytest.mark.parametrize(
    ("typed", "meant"), [("reveiw", "review"), ("debtae", "debate"), ("histroy", "history")]
)
def test_a_mistyped_command_gets_the_closest_one(tmp_path: Path, typed: str, meant: str) -> None:
    run = redline(tmp_path, typed)
    assert run.returncode == 2
    assert f"redline: error: unknown command '{typed}'; did you mean '{meant}'?" in run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""


def test_a_command_nothing_resembles_lists_the_commands(tmp_path: Path) -> None:
    run = redline(tmp_path, "xyzzy")
    assert run.returncode == 2
    assert "unknown command 'xyzzy'" in run.stderr and "did you mean" not in run.stderr
    assert "review" in run.stderr and "debate" in run.stderr


def test_a_mistyped_choice_gets_the_closest_one(tmp_path: Path) -> None:
    run = redline(tmp_path, "review", "--format", "sarf")
    assert run.returncode == 2
    assert "did you mean 'sarif'?" in run.stderr
