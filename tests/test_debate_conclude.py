"""The end of a debate (debate/conclude.py): final positions, anonymous and shuffled; the
neutral summary over real HTTP (a ScriptedLLM); its action items as anchored findings in a real
repository's file; and every failure on the way (a debater, the summarizer, invalid JSON)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from debate_bed import NAMES, DebateScript, debate_settings, make_repo, speaker
from model_env import isolate_model_env
from redline.agent.llm import LLMClient
from redline.config_models import (
    DebaterSettings,
    DebateSettings,
    LLMSettings,
    ModelSettings,
    Settings,
    SummarizerSettings,
)
from redline.debate.conclude import Conclusion, conclude
from redline.debate.events import DebateEvent, EventKind
from redline.debate.roster import Debater, build_roster
from redline.debate.run import run_debate
from redline.model import FixState
from redline.progress import Cancelled, CancelToken
from redline.report import render
from redline.requests import DebateRequest, ScopeKind, ScopeRequest
from redline.review.fix_check import fix_state

from gitrepo import GitRepo
from scripted_llm import Reply, ScriptedLLM

SUMMARIZER = "openai/neutral-judge"
# Each debater's own model; its name, label and model tail must never reach the summarizer.
DEBATERS = {
    "alice": ("Alice Liddell", "openai/alice-gpt-7"),
    "bob": ("Bob", "openai/bobcat-llm"),
    "carol": ("Carol", "openai/carol-mistral"),
}
TRANSCRIPT = "Round 1, Alice Liddell: the eval is dangerous.\nRound 1, Bob: agreed, and slow."

APP = """import json


def load(expr):
    data = json.loads(expr)
    return eval(data["code"])


def total(items):
    result = 0
    for item in items:
        result = result + item
    return result
"""


def _settings(llm: ScriptedLLM, debaters: dict[str, tuple[str, str]] = DEBATERS) -> Settings:
    reviewers = {
        name: DebaterSettings(
            model=model, label=label, prompt=f"You argue as {label}. Marker {name.upper()}-ROLE."
        )
        for name, (label, model) in debaters.items()
    }
    return Settings(
        models=ModelSettings(model="openai/default", api_base=llm.base_url, api_key="test-key"),
        llm=LLMSettings(timeout=5.0, max_retries=1),
        debate=DebateSettings(reviewers=reviewers, summarizer=SummarizerSettings(model=SUMMARIZER)),
    )


def _model(body: dict[str, Any]) -> str:
    return str(body["model"]).removeprefix("openai/")


def _is(body: dict[str, Any], model: str) -> bool:
    """The request was for `model` (litellm sends it without the provider prefix)."""
    return _model(body) == model.removeprefix("openai/")


def _mark(name: str) -> str:
    """A marker for a debater's position that does not name it (names are scrubbed)."""
    return f"MARK-{list(DEBATERS).index(name)}"


def _position_text(name: str) -> str:
    """A final position that names its author, a colleague and its model in every way."""
    label, model = DEBATERS[name]
    others = [n for n in DEBATERS if n != name]
    return (
        f"{label.upper()}:\nI am {label} ({model}, {model.rsplit('/', 1)[-1]}). "
        f"I agree with {others[0].capitalize()} and {DEBATERS[others[1]][0]}.\n"
        f"{_mark(name)} The eval in `app.py` must go:\n\n"
        '```python\n    return eval(data["code"])\n```\n'
    )


def _labels(body: dict[str, Any]) -> dict[str, str]:
    """debater name → the anonymous label its position got, read from a summarizer request."""
    user = body["messages"][1]["content"]  # a re-ask appends to the conversation
    found = {}
    for label, text in re.findall(r"### (Debater [A-Z])\n\n(.*?)(?=\n### Debater|\Z)", user, re.S):
        for name in DEBATERS:
            if _mark(name) in text:
                found[name] = label
    return found


def _of(by: dict[str, str], *names: str) -> list[str]:
    """The labels of those debaters whose position the summarizer saw."""
    return [by[n] for n in names if n in by]


def _answer(by: dict[str, str], **extra: Any) -> str:
    everyone = sorted(by.values())
    answer = {
        "overview": "The debate was about eval on user input.",
        "consensus": [
            {
                "point": "eval on decoded input runs arbitrary code",
                "supported_by": everyone,
                "file": "app.py",
                "existing_code": '    return eval(data["code"])',
                "severity": "Critical",
                "category": "Security",
            }
        ],
        "disagreements": [
            {
                "topic": "Rewriting the summation loop",
                "sides": [
                    {"position": "Use sum()", "reasons": "shorter", "held_by": _of(by, "carol")},
                    {"position": "Leave it", "reasons": "not in scope", "held_by": _of(by, "bob")},
                ],
            }
        ],
        "action_items": [
            {
                "title": "Replace eval with ast.literal_eval",
                "detail": "literal_eval only accepts literals.",
                "severity": "Critical",
                "category": "Security",
                "file": "app.py",
                "existing_code": '    return eval(data["code"])',
                "improved_code": '    return ast.literal_eval(data["code"])',
                "supported_by": _of(by, "alice", "bob"),
            },
            {
                "title": "Use the built-in sum",
                "detail": "The loop re-implements sum().",
                "severity": "Low",
                "category": "Quality",
                "file": "app.py",
                "existing_code": "    for item in items:\n        result = result + item",
                "improved_code": "    result = sum(items)",
                "supported_by": _of(by, "carol"),
            },
        ],
    }
    answer.update(extra)
    return json.dumps(answer)


class Script:
    """Answers every debater with its position and the summarizer from the labels it sees."""

    def __init__(self) -> None:
        self.fail: set[str] = set()  # debater names whose model answers HTTP 500
        self.summaries: list[str | Reply] = []  # queued summarizer answers; then _answer

    def __call__(self, body: dict[str, Any]) -> Reply | str:
        model = _model(body)
        if _is(body, SUMMARIZER):
            return self.summaries.pop(0) if self.summaries else _answer(_labels(body))
        for name, (_, m) in DEBATERS.items():
            if _is(body, m):
                return Reply.error(500) if name in self.fail else _position_text(name)
        return Reply.error(400, f"unexpected model {model}")


@pytest.fixture
def change_repo(repo: GitRepo) -> GitRepo:
    repo.write("app.py", "import json\n")
    repo.commit("base")
    repo.write("app.py", APP)
    repo.commit("add load and total")
    return repo


async def _conclude(
    llm: ScriptedLLM,
    repo: GitRepo,
    *,
    seed: int = 1,
    speakers: list[Debater] | None = None,
    settings: Settings | None = None,
) -> tuple[Conclusion, list[DebateEvent]]:
    settings = settings or _settings(llm)
    roster = build_roster(settings)
    client = LLMClient(settings, backoff_base=0.0)
    roster.assign(client)
    events: list[DebateEvent] = []

    async def transcript_for(debater: Debater) -> str:
        return f"(as {debater.name} sees it)\n{TRANSCRIPT}"

    def read_text(path: str) -> str | None:
        file = repo.root / path
        return file.read_text(encoding="utf-8") if file.is_file() else None

    conclusion = await conclude(
        client,
        roster,
        roster.debaters if speakers is None else speakers,
        transcript_for,
        repo.git("diff", "HEAD~1"),
        read_text,
        rng=random.Random(seed),
        on_event=events.append,
    )
    return conclusion, events


def _summarizer_requests(llm: ScriptedLLM) -> list[dict[str, Any]]:
    return [b for b in llm.requests if _is(b, SUMMARIZER)]


async def test_nothing_identifying_reaches_the_summarizer(change_repo: GitRepo) -> None:
    with ScriptedLLM(handler=Script()) as llm:
        conclusion, events = await _conclude(llm, change_repo)
    sent = _summarizer_requests(llm)
    assert len(sent) == 1
    text = json.dumps(sent[0]["messages"]).lower()
    for name, (label, model) in DEBATERS.items():
        for term in (name, label, model, model.rsplit("/", 1)[-1], "liddell"):
            assert term.lower() not in text, term
    assert "round 1" not in text  # the transcript is the debaters', not the summarizer's
    assert 'return eval(data[\\"code\\"])' in text  # the change itself is there
    # The positions the report shows are the ones the summarizer saw, scrubbed the same way.
    assert [p.label for p in conclusion.positions] == ["Debater A", "Debater B", "Debater C"]
    for position in conclusion.positions:
        assert "alice" not in position.text.lower() and "bobcat" not in position.text.lower()
        assert "literal" not in position.text  # what they said is kept
        assert 'return eval(data["code"])' in position.text
    summaries = [e for e in events if e.kind is EventKind.SUMMARIES]
    assert summaries[0].payload()["positions"] == [p.model_dump() for p in conclusion.positions]


async def test_each_debater_states_its_position_with_its_own_prompt(change_repo: GitRepo) -> None:
    with ScriptedLLM(handler=Script()) as llm:
        await _conclude(llm, change_repo)
    for name, (_, model) in DEBATERS.items():
        (body,) = [b for b in llm.requests if _is(b, model)]
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        assert f"{name.upper()}-ROLE" in system
        assert "Do not reveal who you are" in system
        assert f"(as {name} sees it)" in user and "+def load(expr):" in user


async def test_the_order_is_shuffled_by_the_seed(change_repo: GitRepo) -> None:
    orders = set()
    for seed in range(6):
        with ScriptedLLM(handler=Script()) as llm:
            await _conclude(llm, change_repo, seed=seed)
        by = _labels(_summarizer_requests(llm)[0])
        orders.add(tuple(sorted(by, key=lambda n: by[n])))
    assert len(orders) > 1


async def test_role_words_stay_ordinary_words(change_repo: GitRepo) -> None:
    roles = {
        "security": ("Security", "openai/model-one"),
        "performance": ("Performance", "openai/model-two"),
    }
    said = {
        "openai/model-one": (
            "Security: As the security reviewer, I hold that this is a security hole.\n"
            "[Security] From my security perspective, the performance cost is irrelevant."
        ),
        "openai/model-two": "Speaking as a performance expert: the loop is slow.",
    }

    def handler(body: dict[str, Any]) -> str | None:
        if _is(body, SUMMARIZER):
            return json.dumps({"overview": "x", "consensus": [], "disagreements": [],
                               "action_items": []})  # fmt: skip
        return next((t for m, t in said.items() if _is(body, m)), None)

    with ScriptedLLM(handler=handler) as llm:
        conclusion, _ = await _conclude(llm, change_repo, settings=_settings(llm, roles))
    user = _summarizer_requests(llm)[0]["messages"][-1]["content"].lower()
    for phrase in ("security reviewer", "[security]", "security:", "security perspective",
                   "performance expert", "model-one", "model-two"):  # fmt: skip
        assert phrase not in user, phrase
    texts = " ".join(p.text for p in conclusion.positions)
    assert "this is a security hole" in texts
    assert "the performance cost is irrelevant" in texts
    assert "the loop is slow" in texts


async def test_action_items_become_anchored_findings_with_confidence_by_support(
    change_repo: GitRepo,
) -> None:
    with ScriptedLLM(handler=Script()) as llm:
        conclusion, events = await _conclude(llm, change_repo)
    assert conclusion.summarizer_error is None
    by_title = {f.title: f for f in conclusion.findings}
    # The consensus point and its action item are one problem: one finding, everyone's support.
    assert sorted(by_title) == ["Replace eval with ast.literal_eval", "Use the built-in sum"]
    agreed = by_title["Replace eval with ast.literal_eval"]
    assert agreed.line == 6 and agreed.end_line == 6
    assert agreed.existing_code == '    return eval(data["code"])'
    assert agreed.fix is FixState.PARSES and agreed.fix_applicable
    assert agreed.confidence == pytest.approx(0.9)
    assert "All 3 debaters agreed." in agreed.comment
    assert sorted(agreed.sources) == ["debate:alice", "debate:bob", "debate:carol"]
    # The quick fix, applied to the file, parses.
    fixed = fix_state("app.py", APP, agreed.line, agreed.end_line, agreed.improved_code or "")
    assert fixed is FixState.PARSES

    contested = by_title["Use the built-in sum"]
    assert (contested.line, contested.end_line) == (11, 12)
    assert contested.confidence == pytest.approx(0.5)
    assert "Contested: held by 1 of 3 debaters." in contested.comment
    assert contested.sources == ["debate:carol"]
    assert contested.fix_applicable

    (summary,) = [e for e in events if e.kind is EventKind.SUMMARY]
    assert summary.data["failed"] is False
    markdown = summary.data["markdown"]
    assert markdown == conclusion.summary_markdown
    for heading in ("### Overview", "### Consensus", "### Disagreements", "### Action items"):
        assert heading in markdown
    assert "not in scope" in markdown and "Replace eval with ast.literal_eval" in markdown


async def test_a_majority_is_medium_confidence(change_repo: GitRepo) -> None:
    script = Script()

    class Majority(Script):
        def __call__(self, body: dict[str, Any]) -> Reply | str:
            if _is(body, SUMMARIZER):
                by = _labels(body)
                answer = json.loads(_answer(by))
                answer["consensus"] = []
                return json.dumps(answer)
            return script(body)

    with ScriptedLLM(handler=Majority()) as llm:
        conclusion, _ = await _conclude(llm, change_repo)
    eval_finding = next(f for f in conclusion.findings if "literal_eval" in f.title)
    assert eval_finding.confidence == pytest.approx(0.7)
    assert "Held by 2 of 3 debaters." in eval_finding.comment
    assert sorted(eval_finding.sources) == ["debate:alice", "debate:bob"]


async def test_an_invalid_summary_is_asked_again_once(change_repo: GitRepo) -> None:
    script = Script()
    script.summaries = ['{"overview": "fine", "verdict": "ship it"}']  # a key not asked for
    with ScriptedLLM(handler=script) as llm:
        conclusion, _ = await _conclude(llm, change_repo)
    sent = _summarizer_requests(llm)
    assert len(sent) == 2
    assert "could not be used" in sent[1]["messages"][-1]["content"]
    assert conclusion.summarizer_error is None and len(conclusion.findings) == 2


async def test_a_summary_invalid_twice_falls_back_to_the_listing(change_repo: GitRepo) -> None:
    script = Script()
    script.summaries = ["no JSON here", "still prose"]
    with ScriptedLLM(handler=script) as llm:
        conclusion, _ = await _conclude(llm, change_repo)
    assert len(_summarizer_requests(llm)) == 2
    assert conclusion.summarizer_error is not None
    assert "invalid model output" in conclusion.summarizer_error
    assert conclusion.findings == []


async def test_a_failing_summarizer_leaves_the_plain_listing(change_repo: GitRepo) -> None:
    script = Script()
    script.summaries = [Reply.error(500), Reply.error(500)]  # every attempt (max_retries = 1)
    with ScriptedLLM(handler=script) as llm:
        conclusion, events = await _conclude(llm, change_repo)
    assert len(_summarizer_requests(llm)) == 2
    assert conclusion.summarizer_error is not None
    assert "the summarizer failed" in conclusion.summarizer_error
    assert conclusion.findings == []
    listing = conclusion.summary_markdown
    for position in conclusion.positions:
        assert f"### {position.label}" in listing
    assert listing.count("> MARK-") == 3  # every position, quoted
    (summary,) = [e for e in events if e.kind is EventKind.SUMMARY]
    assert summary.data == {"markdown": listing, "failed": True}


async def test_a_failing_debater_is_noted_and_the_others_concluded(change_repo: GitRepo) -> None:
    script = Script()
    script.fail = {"bob"}
    with ScriptedLLM(handler=script) as llm:
        conclusion, _ = await _conclude(llm, change_repo)
    assert len(conclusion.positions) == 2
    assert [n for n in conclusion.notes if n.startswith("Bob stated no final position")]
    assert _mark("bob") not in json.dumps(_summarizer_requests(llm)[0])
    # Support is counted among the positions heard: both of two agree.
    eval_finding = next(f for f in conclusion.findings if "literal_eval" in f.title)
    assert "All 2 debaters agreed." in eval_finding.comment
    assert "debate:bob" not in eval_finding.sources


async def test_no_position_at_all_lists_the_end_of_the_debate(change_repo: GitRepo) -> None:
    script = Script()
    script.fail = set(DEBATERS)
    with ScriptedLLM(handler=script) as llm:
        conclusion, events = await _conclude(llm, change_repo)
    assert _summarizer_requests(llm) == []
    assert conclusion.positions == [] and conclusion.findings == []
    assert conclusion.summarizer_error == "no debater stated a final position"
    assert "the eval is dangerous" in conclusion.summary_markdown
    assert len(conclusion.notes) == 3
    assert [e.kind for e in events] == [EventKind.SUMMARIES, EventKind.SUMMARY]


async def test_labels_the_summarizer_made_up_make_no_finding(change_repo: GitRepo) -> None:
    script = Script()
    made_up = json.loads(_answer({"alice": "Debater Q", "bob": "Debater Q", "carol": "Debater Q"}))
    script.summaries = [json.dumps(made_up)]
    with ScriptedLLM(handler=script) as llm:
        conclusion, _ = await _conclude(llm, change_repo)
    assert conclusion.summarizer_error is None
    assert conclusion.findings == []


async def test_cancelled_before_the_summary(change_repo: GitRepo) -> None:
    cancel = CancelToken()
    cancel.cancel("user")
    with ScriptedLLM(handler=Script()) as llm:
        settings = _settings(llm)
        roster = build_roster(settings)
        client = LLMClient(settings, backoff_base=0.0)
        roster.assign(client)

        async def transcript_for(debater: Debater) -> str:
            return ""

        with pytest.raises(Cancelled):
            await conclude(
                *(client, roster, roster.debaters, transcript_for, "", lambda p: None),
                rng=random.Random(0),
                on_event=lambda e: None,
                cancel=cancel,
            )
    assert llm.requests == []


async def test_a_whole_debate_ends_in_anchored_findings_and_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through run_debate: turns, final positions, the summary's action item as a finding in
    the Review with an applicable fix, and the Markdown report showing all of it."""
    isolate_model_env(monkeypatch, tmp_path)
    root = tmp_path / "repo"
    make_repo(root)
    quote = '    query = "SELECT * FROM users WHERE name = \'" + name + "\'"\n'
    quote += "    return db.execute(query).fetchone()"
    fixed = '    return db.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()'

    def conclusion(body: dict[str, Any]) -> str:
        if speaker(body) != "judge":
            return f"I am {speaker(body)}. The query in app/users.py is injectable."
        user = body["messages"][1]["content"]
        assert not any(n in user.lower() for n in NAMES)
        item = {"title": "Use a parameterized query", "detail": "Pass name as a parameter.",
                "severity": "Critical", "category": "Security", "file": "app/users.py",
                "existing_code": quote, "improved_code": fixed,
                "supported_by": ["Debater A", "Debater B", "Debater C"]}  # fmt: skip
        return json.dumps({"overview": "All three agree.", "consensus": [], "disagreements": [],
                           "action_items": [item]})  # fmt: skip

    script = DebateScript(lambda name, rnd, body: f"{name}: injectable" if rnd == 1 else "PASS",
                          conclusion)  # fmt: skip
    with ScriptedLLM(handler=script) as llm:
        settings = debate_settings(llm)
        review = await run_debate(
            DebateRequest(ScopeRequest(ScopeKind.BRANCH, "main")),
            root,
            settings,
            client=LLMClient(settings, backoff_base=0.0),
        )
    (finding,) = review.findings
    assert (finding.file, finding.line, finding.end_line) == ("app/users.py", 5, 6)
    assert finding.fix_applicable and finding.fix is FixState.PARSES
    assert finding.confidence == pytest.approx(0.9) and "All 3 debaters agreed." in finding.comment
    assert sorted(finding.sources) == [f"debate:{n}" for n in NAMES]
    assert review.debate is not None and review.debate.summarizer_error is None
    assert len(review.debate.positions) == 3
    markdown = render(review, "markdown")
    assert "## Neutral summary" in markdown and "### Final positions (anonymous)" in markdown
    assert markdown.count("All three agree.") == 1  # the summary is not repeated
