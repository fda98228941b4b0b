"""Every analyzer rule Redline has words for, as a user reads it: the title and the body's first
paragraph (what every editor shows together, and the report's heading and text) say each thing
once. Real ruff and bandit on code that triggers every rule of the table (analyzers/rules.py),
each tool alone and both together; the tools' own messages are what gets composed.

Issue 25: "Probable use of unsafe `yaml.load`. Allows instantiation of arbitrary objects.
Consider…" over "Probable use of unsafe `yaml.load`. Allows instantiation of arbitrary objects.
Consider `yaml.safe_load`. `yaml.load` can construct arbitrary objects from untrusted input; use
`yaml.safe_load`."."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.analyzers import AnalyzerOutcome, astgrep, run_analyzers
from redline.analyzers.rules import RULES, family
from redline.analyzers.wording import split_sentences, title_of
from redline.config_models import AnalyzerSettings
from redline.model import Category, Finding, Severity
from wording_checks import repeats

from gitrepo import GitRepo
from real_clients import REDLINE, client_env

EVERY_RULE = textwrap.dedent(
    """\
    import asyncio
    import hashlib
    import os
    import pickle
    import subprocess
    from os import path
    from os import path

    import requests
    import yaml


    def f(x, items=[], when=make_default()):
        password = "hunter22-secret"
        exec(x)
        eval(x)
        try:
            pass
        except:
            pass
        unused = 1
        print(f"no placeholder")
        if x is "a":
            pass
        print(undefined_name)
        hashlib.md5(b"x")
        requests.get("https://example.invalid", verify=False)
        requests.get("https://example.invalid")
        yaml.load(x)
        pickle.loads(x)
        subprocess.call(x, shell=True)
        subprocess.call("ls -l", shell=True)
        os.system(x)
        os.system("ls -l")
        popen_like(x, shell=True)
        connect(password="hunter22-secret")
        q = "SELECT * FROM t WHERE a = '%s'" % x
        open("/tmp/redline-fixed-name")
        asyncio.create_task(g())
        for i in range(3):
            def h():
                return i
        bind = "0.0.0.0"
        try:
            pass
        except ValueError:
            raise KeyError("x")
        return q, bind, h, items, when


    def g(password="hunter22-secret"):
        pass
    """
)
BROKEN = "def broken(:\n    pass\n"
FILES = {"app/every_rule.py": EVERY_RULE.encode(), "app/broken.py": BROKEN.encode()}
CHANGED = {path: set(range(1, text.count(b"\n") + 2)) for path, text in FILES.items()}
TOOLS = {
    "both": AnalyzerSettings(bandit_scope="all"),
    "ruff": AnalyzerSettings(bandit=False),
    "bandit": AnalyzerSettings(ruff=False, bandit_scope="all"),
}


@pytest.fixture(scope="module", params=list(TOOLS))
def outcome(request: pytest.FixtureRequest) -> tuple[str, AnalyzerOutcome]:
    return request.param, run_analyzers(FILES, CHANGED, TOOLS[request.param])


def test_every_rule_says_each_thing_once(outcome: tuple[str, AnalyzerOutcome]) -> None:
    tools, result = outcome
    # bandit cannot parse app/broken.py (ruff reports its syntax error): partial, not failed.
    assert all(r.status in ("ok", "partial") for r in result.runs), result.runs
    seen = {family(*s.split(":", 1)) for f in result.findings for s in f.sources}
    if tools != "bandit":  # bandit has no pyflakes/bugbear rules
        # ast-grep's rule pack is Redline's own, checked rule by rule in test_astgrep.py.
        missing = set(RULES) - seen - set(astgrep.rule_ids())
        assert not missing, f"the fixture triggers no {sorted(missing)}"
    problems = [f"{f.sources}: {p}" for f in result.findings for p in repeats(f)]
    assert not problems, "\n".join(problems)


def test_the_yaml_load_finding_reads_once(outcome: tuple[str, AnalyzerOutcome]) -> None:
    _, result = outcome
    (finding,) = [f for f in result.findings if "yaml" in f.title]
    assert finding.title in ("Probable use of unsafe `yaml.load`", "Use of unsafe yaml load")
    assert finding.comment.split("\n\n")[0] == (
        "`yaml.load` can construct arbitrary objects from untrusted input; use `yaml.safe_load`."
    )


def test_the_check_finds_the_repeat_of_issue_25() -> None:
    before = Finding(
        id="RL-x",
        file="a.py",
        line=1,
        end_line=1,
        title="Probable use of unsafe `yaml.load`. Allows instantiation of arbitrary objects. "
        "Consider…",
        comment="Probable use of unsafe `yaml.load`. Allows instantiation of arbitrary objects. "
        "Consider `yaml.safe_load`. `yaml.load` can construct arbitrary objects from untrusted "
        "input; use `yaml.safe_load`.",
        severity=Severity.HIGH,
        category=Category.SECURITY,
        confidence=0.8,
    )
    assert len(repeats(before)) >= 3


def test_a_template_without_a_name_drops_its_placeholder() -> None:
    # bandit quotes the (masked) value, not the name: no name to put in the title.
    assert title_of(
        "Possible hardcoded password in `{0}`", "Possible hardcoded password: '***'"
    ) == ("Possible hardcoded password")
    assert title_of("Possible hardcoded password in `{0}`", 'assigned to: "token"') == (
        "Possible hardcoded password in `token`"
    )


_TEXT = st.text(alphabet=st.sampled_from(list("ab Zx.`!?;:\"' \n")), max_size=60)


@given(_TEXT)
def test_sentences_keep_every_character_and_every_code_span(text: str) -> None:
    sentences = split_sentences(text)
    assert all(s and s == s.strip() for s in sentences)
    # Only whitespace and sentence-final periods are dropped.
    assert "".join("".join(sentences).split()).replace(".", "") == "".join(text.split()).replace(
        ".", ""
    )
    folded = " ".join(text.split())
    for span in re.findall(r"`[^`]+`", folded):
        assert any(span.rstrip(".") in s for s in sentences) or span.strip("` .") == "", span


def test_the_cli_report_says_the_yaml_load_finding_once(repo: GitRepo, tmp_path: Path) -> None:
    """The installed `redline review` in a real repository, as the issue saw it: the heading
    and the text under it."""
    repo.write("README.md", "base\n")
    repo.commit("base")
    repo.write("app/conf.py", "import yaml\n\n\ndef read(s):\n    return yaml.load(s)\n")
    proc = subprocess.run(
        [str(REDLINE), "review", "--repo", str(repo.root), "--format", "markdown", "-q"],
        env=client_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = proc.stdout
    heading = "### `app/conf.py:5` — Probable use of unsafe `yaml.load`\n\n"
    body = (
        "`yaml.load` can construct arbitrary objects from untrusted input; use "
        "`yaml.safe_load`.\n\nRule S506 (ruff): "
    )
    assert heading + body in report, report
    assert report.count("arbitrary objects") == 1 and report.count("safe_load") == 1
