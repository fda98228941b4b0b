"""The analyzers' two shortcuts give what the long way gave: each job's results converted as
soon as that job is done (then merged across tools) are the findings of one conversion of all
results in the jobs' order, whichever job ends first; and bandit's files are chosen from the
diff's added lines (`AddedText`), which are the text reading each file gave, or None."""

from __future__ import annotations

import random
import re
import stat
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

import pytest

from redline.analyzers import AnalyzerOutcome, runner
from redline.analyzers.base import RawResult
from redline.analyzers.convert import Candidate, Conversion, to_findings
from redline.analyzers.fixes import SourceText
from redline.analyzers.statements import Statements
from redline.config_models import AnalyzerSettings, Settings
from redline.encoding import decode_text
from redline.requests import ScopeKind, ScopeRequest
from redline.review.added_text import AddedText
from redline.review.pipeline import collect_files, plan_review

from gitrepo import GitRepo

# ruff and bandit both report here (shell=True on one line, the secret on two different lines
# of one statement, B602/S602 and B106/S106), ruff has fixes with parse verdicts (UP031, F401),
# and bandit has checks of its own (B608, shell=<variable>).
CODE = textwrap.dedent(
    """\
    import os
    import subprocess


    def run(cmd, shell):
        subprocess.call(cmd, shell=True)
        subprocess.Popen(cmd, shell=shell)
        return "%s" % cmd


    def app(Flask):
        app = Flask("flask_test")
        app.config.update(
            TESTING=True,
            SECRET_KEY="test key",
        )
        return [f'INSERT INTO "t" VALUES({row})' for row in app.rows]
    """
)
FILES = {"svc/run.py": CODE, "util.py": "import sys\nx = '%d' % 1\n"}
EVERY_FILE = AnalyzerSettings(bandit_scope="all", ruff_select=["F", "UP", "S", "B"])


class _Recording(Conversion):
    """Conversion that keeps the raw results each job handed it, by tool."""

    seen: ClassVar[dict[str, list[RawResult]]] = {}

    def candidates(self, results: Iterable[RawResult]) -> list[Candidate]:
        results = list(results)
        for raw in results:
            _Recording.seen.setdefault(raw.tool, []).append(raw)
        return super().candidates(results)


def _run(
    monkeypatch: pytest.MonkeyPatch, **kwargs: object
) -> tuple[AnalyzerOutcome, list[RawResult]]:
    _Recording.seen = {}
    monkeypatch.setattr(runner, "Conversion", _Recording)
    files = {path: text.encode() for path, text in FILES.items()}
    changed = {path: set(range(1, text.count("\n") + 1)) for path, text in FILES.items()}
    outcome = runner.run_analyzers(files, changed, EVERY_FILE, **kwargs)  # type: ignore[arg-type]
    raws = [*_Recording.seen.get("ruff", []), *_Recording.seen.get("bandit", [])]
    texts = {path: SourceText(text) for path, text in FILES.items()}
    return outcome, to_findings(raws, texts, changed)


def test_per_job_conversion_is_one_conversion_of_all_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outcome, whole = _run(monkeypatch)
    assert outcome.findings == whole
    sources = [f.sources for f in outcome.findings]
    # The cases the merge across tools handles are all there.
    assert ["ruff:S602", "bandit:B602"] in sources
    assert ["ruff:S106", "bandit:B106"] in sources
    assert ["bandit:B608"] in sources
    assert any(f.improved_code for f in outcome.findings)


def test_bandit_done_first_changes_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # ruff held back until bandit is long done: the merge still takes ruff's results first.
    real = Path(sys.executable).parent / "ruff"
    slow = tmp_path / "ruff"
    slow.write_text(f'#!/bin/sh\nsleep 2\nexec "{real}" "$@"\n')
    slow.chmod(slow.stat().st_mode | stat.S_IEXEC)
    outcome, whole = _run(monkeypatch, executables={"ruff": slow})
    assert outcome.findings == whole
    assert [r.status for r in outcome.runs] == ["ok", "ok", "ok"]
    before, _ = _run(monkeypatch)
    assert outcome.findings == before.findings


def test_bandit_is_chosen_from_the_added_text_given() -> None:
    plain = "def total(items):\n    return sum(items)\n"
    files, changed = {"util.py": plain.encode()}, {"util.py": {1, 2}}
    # The file itself holds nothing bandit's own checks look for...
    by_file = runner.run_analyzers(files, changed, AnalyzerSettings())
    assert {r.name: r.files for r in by_file.runs}["bandit"] == 0
    # ...so bandit runs only because the given added text says otherwise.
    given = runner.run_analyzers(
        files, changed, AnalyzerSettings(), added_text=lambda path: "x = random.random()"
    )
    assert {r.name: r.files for r in given.runs}["bandit"] == 1
    # None: not known, read from the file.
    unknown = runner.run_analyzers(files, changed, AnalyzerSettings(), added_text=lambda p: None)
    assert {r.name: r.files for r in unknown.runs}["bandit"] == 0


def _file_read(content: bytes, lines: set[int]) -> str:
    """What run_analyzers reads from the file itself when it is not given the text."""
    rows = SourceText(decode_text(content)[0]).rows()
    return "\n".join(rows[n - 1] for n in sorted(lines) if n <= len(rows))


def test_added_text_from_the_diff_is_the_files_own(repo: GitRepo) -> None:
    old = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(30))
    new = old.replace("return 3\n", "return subprocess.call(x, shell=s)\n").replace(
        "return 25\n", "return random.random()  # é ✓\n"
    )
    crlf_old = "a = 1\r\nb = 2\r\nc = 3\r\n"
    crlf_new = "a = 1\r\nb = os.chmod(p, 0o755)\r\nc = 3\r\nd = 4\r\n"
    bom = "\ufeff# naïve\nx = 1\n"
    latin = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n"
    for path, text in {"many.py": old, "crlf.py": crlf_old, "bom.py": "x = 0\n"}.items():
        repo.write(path, text)
    repo.write("latin.py", "# -*- coding: latin-1 -*-\nname = ''\n".encode("latin-1"))
    repo.write("lone_cr.py", "a = 1\nb = 2\n")
    repo.commit("old")
    repo.write("many.py", new)
    repo.write("crlf.py", crlf_new)
    repo.write("bom.py", bom)
    repo.write("latin.py", latin.encode("latin-1"))
    repo.write("lone_cr.py", "a = 1\nb = 2\rc = 3\n")
    repo.write("added.py", "import os\nprint(os.name)\n")
    settings = Settings(analyzers=AnalyzerSettings(ruff=False, bandit=False))
    plan = plan_review(repo.root, ScopeRequest(ScopeKind.UNCOMMITTED), settings)
    files = collect_files(plan, settings)
    added = AddedText(plan.reviewable, files.contents)
    got = {path: added(path) for path in files.contents}
    for path, text in got.items():
        if text is not None:
            assert text == _file_read(files.contents[path], files.changed_lines[path]), path
    # Declared latin-1 (not UTF-8) and a lone CR (a row break the diff does not make): the
    # diff's text may differ from the file's, so the file is read.
    assert got["latin.py"] is None and got["lone_cr.py"] is None
    assert got["many.py"] == (
        "    return subprocess.call(x, shell=s)\n    return random.random()  # é ✓"
    )
    assert got["crlf.py"] == "b = os.chmod(p, 0o755)\nd = 4"
    assert got["bom.py"] == "\ufeff# naïve\nx = 1"
    assert got["added.py"] == "import os\nprint(os.name)"
    assert added("not-in-the-change.py") is None


def test_source_text_rows_and_starts_without_cr_are_the_patterns() -> None:
    """SourceText splits a text without "\\r" with str.split: the same rows and row starts as
    its line-break pattern gives (any text, random ones included)."""
    newline = re.compile(r"\r\n|\r|\n")
    rng = random.Random(7)
    pieces = ["a", "\n", "bc", "", "\x0c", "é", "\u2028", "\r", "\r\n", "\n\n"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        starts = [0] + [m.end() for m in newline.finditer(text)]
        if len(starts) > 1 and starts[-1] == len(text):
            starts.pop()
        rows = newline.split(text)
        if len(rows) > 1 and rows[-1] == "":
            rows.pop()
        source = SourceText(text)
        assert (source.starts, source.rows()) == (starts, rows), repr(text)


def test_released_statements_are_parsed_again_when_asked() -> None:
    text = SourceText(CODE)
    statements = Statements({"svc/run.py": text, "util.py": SourceText("x = 1\n")})
    before = statements.holding("svc/run.py", 14, 15)
    statements.holding("util.py", 1, 1)
    statements.release({"util.py"})  # svc/run.py's tree goes, util.py's stays
    assert statements.holding("svc/run.py", 14, 15) == before
    assert [s.first for s in before] == [11, 13]
