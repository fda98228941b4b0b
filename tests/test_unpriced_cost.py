"""A model litellm has no price for costs "unpriced", never `$0.0000`: the live progress line
(the installed `redline` with stderr on a pty), the report's coverage and `redline history`,
against a scripted model on 127.0.0.1 (not in the price map)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pty_run import plain, run_redline
from redline.money import spent, usd

from model_review_bed import demo_repo as demo_repo
from model_review_bed import llm as llm
from model_review_bed import script as script
from scripted_llm import ScriptedLLM


def test_the_progress_line_report_and_history_say_unpriced(
    tmp_path: Path, demo_repo: Path, llm: ScriptedLLM
) -> None:
    home = tmp_path / "home"
    args = [
        "review", "--branch", "main", "--repo", str(demo_repo),
        "--model", "openai/scripted", "--api-base", llm.base_url,
    ]  # fmt: skip
    env = {"REDLINE_API_KEY": "sk-test-key-not-secret", "REDLINE_NO_CACHE": "1"}
    run = run_redline(args, home, stdout_tty=False, stderr_tty=True, env=env)
    assert run.code == 0, run.stderr
    drawn = plain(run.stderr)  # every redraw of the live line
    assert " tokens · unpriced" in drawn
    assert "$0.0000" not in drawn and "$0" not in drawn
    assert "· cost: unpriced" in run.stdout and "$0" not in run.stdout

    history = run_redline(
        ["history", "--repo", str(demo_repo)], home, stdout_tty=False, stderr_tty=False
    )
    assert " tokens, unpriced" in history.stdout and "$" not in history.stdout


@given(st.one_of(st.none(), st.floats(min_value=0, max_value=1e6)), st.integers(0, 10**9))
def test_a_cost_is_dollars_or_unpriced_and_silent_only_when_nothing_was_spent(
    cost: float | None, tokens: int
) -> None:
    said = spent(cost, tokens)
    if cost is None:
        assert said == (None if tokens == 0 else "unpriced")
    else:
        assert said == usd(cost) and said.startswith("$")
