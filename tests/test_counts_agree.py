"""Every count a report says agrees with the findings it lists (issue 24).

The summary's "Severity distribution" was computed by the model stage from the findings before
the severity floor, the dismissals and the editor's edits took some away, while the headline
counts what is listed: after an edit in the editor (a finding withdrawn) the report view said
"3 findings: 1 Critical, 1 Medium, 1 Low" above "Severity distribution: 1 Critical, 2 Medium,
1 Low"; a `review.min_severity` did the same in the CLI. The counts are said once, from the
listed findings: the headline.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from lsprotocol import types

from model_env import isolate_model_env
from redline.cli.main import main

from demo_findings import BARE_EXCEPT, SHELL
from lsp_support import Session, plain, server_env, start_session, stop_session
from review_script import ReviewScript
from scripted_llm import ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

REPORTS = "app/reports.py"
SEVERITIES = ("Critical", "High", "Medium", "Low", "Info")
_HEADING = re.compile(r"^### .*$", re.MULTILINE)


def said_counts(markdown: str) -> list[tuple[int, str]]:
    """Every "N <Severity>" the report says outside the findings' own sections."""
    prose = markdown.split("## Coverage")[0]
    prose = "\n".join(p for p in prose.split("\n## ") if not p.startswith(SEVERITIES))
    pattern = rf"\b(\d+) ({'|'.join(SEVERITIES)})\b"
    return [(int(n), s) for n, s in re.findall(pattern, prose)]


def listed(markdown: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for section in markdown.split("\n## ")[1:]:
        name = section.split(" (", 1)[0]
        if name in SEVERITIES:
            counts[name] += len(_HEADING.findall(section))
    return counts


def assert_counts_agree(markdown: str) -> None:
    shown = listed(markdown)
    said = said_counts(markdown)
    assert said, markdown
    for n, severity in said:
        assert shown[severity] == n, (n, severity, shown, markdown)


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    script = ReviewScript(findings={REPORTS: [SHELL, BARE_EXCEPT]})
    with ScriptedLLM(handler=script) as server:
        yield server


def test_a_severity_floor_leaves_no_count_of_what_it_hid(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    llm: ScriptedLLM,
) -> None:
    config = '[llm]\nmax_retries = 1\ntimeout = 20\n[review]\nmin_severity = "medium"\n'
    isolate_model_env(monkeypatch, tmp_path, user_config=config)
    repo = demo.build_demo_repo(tmp_path / "demo")
    code = main(
        ["review", "--branch", "main", "--repo", str(repo), "--quiet",
         "--model", "openai/scripted", "--api-base", llm.base_url]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "below Medium hidden" in out  # the floor did hide the unused import (Low)
    assert_counts_agree(out)


@pytest.fixture
async def session(tmp_path: Path, llm: ScriptedLLM) -> AsyncIterator[Session]:
    repo = demo.build_demo_repo(tmp_path / "demo")
    cache = tmp_path / "cache"
    cache.mkdir()
    user = cache / "user.toml"
    user.write_text("[llm]\nmax_retries = 0\ntimeout = 30\n", encoding="utf-8")
    env = server_env(
        cache, REDLINE_CONFIG=str(user), REDLINE_MODEL="openai/scripted",
        REDLINE_API_BASE=llm.base_url, REDLINE_API_KEY="sk-test-key-not-secret",
    )  # fmt: skip
    s = await start_session(repo, "vscode", env)
    yield s
    await stop_session(s)


async def report(s: Session) -> str:
    result = plain(await s.client.protocol.send_request_async("redline/report", {}))
    return str(result["markdown"])


async def test_the_report_view_after_an_edit_counts_what_it_lists(session: Session) -> None:
    s = session
    end = await s.finished(await s.review(scope="branch", base="main"), timeout=60)
    assert end["state"] == "finished", end
    assert_counts_agree(await report(s))
    s.open(REPORTS)
    # Rewrite the bare except (line 27): the model's finding on it is withdrawn.
    start, stop = types.Position(line=26, character=4), types.Position(line=26, character=11)
    s.edit(REPORTS, 2, types.Range(start=start, end=stop), "except OSError:")
    await s.until(lambda: 26 not in s.lines_of(REPORTS), what="bare except withdrawn")
    markdown = await report(s)
    assert "not shown: the code it is about has changed" in markdown
    assert_counts_agree(markdown)
