"""The debate engine (debate/run.py) in process, with every debater on its own scripted model
over real HTTP, on a real repository: turn order, what each debater is shown, the ways a
debate stops, a failing debater, the user's interjections and stop, the transcript's bound,
and the task record written turn by turn."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from debate_bed import (
    NAMES,
    DebateScript,
    debate_settings,
    is_turn,
    last_user,
    make_repo,
    speaker,
)
from model_env import isolate_model_env
from redline.agent.llm import LLMClient
from redline.debate.events import DebateControl, DebateEvent, Decision, EventKind, TurnSlot
from redline.debate.run import run_debate
from redline.model import Review
from redline.requests import DebateRequest, ScopeKind, ScopeRequest
from redline.store import TaskStore

from scripted_llm import Reply, ScriptedLLM

BRANCH = DebateRequest(ScopeRequest(ScopeKind.BRANCH, "main"))


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_model_env(monkeypatch, tmp_path)


def _run(
    root: Path,
    llm: ScriptedLLM,
    request: DebateRequest = BRANCH,
    *,
    control: DebateControl | None = None,
    store: TaskStore | None = None,
    **debate: Any,
) -> tuple[Review, list[DebateEvent]]:
    settings = debate_settings(llm, **debate)
    events: list[DebateEvent] = []
    review = asyncio.run(
        run_debate(
            request,
            root,
            settings,
            client=LLMClient(settings, backoff_base=0.0),
            on_event=events.append,
            control=control,
            store=store,
        )
    )
    return review, events


def _kinds(events: list[DebateEvent]) -> list[str]:
    out: list[str] = []
    for e in events:
        if e.kind is EventKind.DELTA and out and out[-1] == "delta":
            continue
        out.append(e.kind.value)
    return out


def test_three_debaters_three_rounds_in_order_each_seeing_every_earlier_turn(
    tmp_path: Path,
) -> None:
    make_repo(tmp_path / "repo")
    script = DebateScript(lambda name, rnd, body: f"{name} says point {rnd} about app/users.py")
    with ScriptedLLM(handler=script) as llm:
        review, events = _run(tmp_path / "repo", llm)
        turn_bodies = [b for b in llm.requests if is_turn(b)]

    assert script.order == [(n, r) for r in (1, 2, 3) for n in NAMES]
    debate = review.debate
    assert debate is not None
    assert debate.stop_reason == "rounds" and debate.rounds_held == 3
    assert [(t.speaker, t.round, t.kind) for t in debate.turns] == [
        (n, r, "turn") for r in (1, 2, 3) for n in NAMES
    ]
    # Each debater is shown the change and every turn before its own, verbatim.
    for i, body in enumerate(turn_bodies):
        prompt = last_user(body)
        assert 'query = "SELECT * FROM users WHERE name = \'" + name + "\'"' in prompt
        for earlier in debate.turns[:i]:
            assert earlier.text in prompt
        for later in debate.turns[i:]:
            assert later.text not in prompt
        # Its own role prompt is its system prompt; nobody else's.
        system = body["messages"][0]["content"]
        assert f"You are {speaker(body)}, a reviewer." in system
        assert sum(f"You are {n}," in system for n in NAMES) == 1
    # Streamed: each turn starts, streams its text, finishes — in order — then the end.
    assert _kinds(events) == [
        "started",
        *["turnStarted", "delta", "turnFinished"] * 9,
        "stopped",
        "summaries",
        "summary",
        "final",
    ]
    deltas = "".join(e.data["text"] for e in events if e.kind is EventKind.DELTA)
    assert deltas == "".join(t.text for t in debate.turns)
    # Per debater: its model, calls (three turns and its final position) and tokens.
    assert [(p.name, p.model, p.calls) for p in debate.participants] == [
        (n, f"openai/{n}-model", 4) for n in NAMES
    ]
    assert all(p.tokens > 0 for p in debate.participants)
    assert review.scope_label.startswith("debate: branch feature vs main")
    assert review.failure is None


def test_the_debate_ends_early_when_every_debater_passes(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    script = DebateScript(
        lambda name, rnd, body: f"{name}: the query is injectable" if rnd == 1 else "PASS"
    )
    with ScriptedLLM(handler=script) as llm:
        review, events = _run(tmp_path / "repo", llm, rounds=5)
    assert review.debate is not None
    assert review.debate.stop_reason == "passed"
    assert review.debate.rounds_held == 2
    assert [t.kind for t in review.debate.turns] == ["turn"] * 3 + ["pass"] * 3
    assert len(script.order) == 6  # nothing asked in round 3
    stopped = next(e for e in events if e.kind is EventKind.STOPPED)
    assert stopped.data == {"reason": "passed", "text": "every debater passed in round 2"}


def test_a_failing_debater_is_skipped_with_a_note_and_the_others_go_on(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")

    def turn(name: str, rnd: int, body: dict[str, Any]) -> Reply | str:
        if name == "bob":
            return Reply.error(500, "bob's provider is down")
        return f"{name} round {rnd}"

    script = DebateScript(turn)
    with ScriptedLLM(handler=script) as llm:
        review, events = _run(tmp_path / "repo", llm, rounds=2)
    debate = review.debate
    assert debate is not None
    assert [(t.speaker, t.kind) for t in debate.turns] == [
        ("alice", "turn"),
        ("bob", "skipped"),
        ("carol", "turn"),
        ("alice", "turn"),
        ("carol", "turn"),
    ]
    skipped = debate.turns[1]
    assert skipped.note is not None and "its model failed" in skipped.note
    # Carol, after bob's failure, is shown that he was skipped.
    carol_prompt = last_user([b for b in llm.requests if is_turn(b)][-3])
    assert "[Round 1] Bob: skipped (its model failed" in carol_prompt
    assert any("Bob is out of the debate" in n for n in debate.notes)
    assert [p.out is not None for p in debate.participants] == [False, True, False]
    assert debate.stop_reason == "rounds"
    assert any(e.kind is EventKind.NOTE and "Bob is out" in e.data["text"] for e in events)


def test_with_fewer_than_two_debaters_left_the_debate_ends(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")

    def turn(name: str, rnd: int, body: dict[str, Any]) -> Reply | str:
        return f"{name} speaks" if name == "alice" else Reply.error(500, "down")

    with ScriptedLLM(handler=DebateScript(turn)) as llm:
        review, _ = _run(tmp_path / "repo", llm)
    assert review.debate is not None
    assert review.debate.stop_reason == "debaters"
    assert [t.kind for t in review.debate.turns] == ["turn", "skipped", "skipped"]
    assert review.failure is None  # alice spoke: what was said is summarized


def test_no_debater_could_speak_is_a_failed_debate(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    with ScriptedLLM(handler=DebateScript(lambda *a: Reply.error(401, "bad key"))) as llm:
        review, _ = _run(tmp_path / "repo", llm)
    assert review.failure is not None
    assert review.failure.startswith("the debate could not be held")
    assert review.coverage.notes[0] == review.failure


def test_an_interjection_reaches_the_next_debater(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    control = DebateControl()

    def turn(name: str, rnd: int, body: dict[str, Any]) -> str:
        if name == "alice":
            control.interject("Please consider that names come from an HTTP form.")
        return f"{name} round {rnd}"

    with ScriptedLLM(handler=DebateScript(turn)) as llm:
        review, events = _run(tmp_path / "repo", llm, control=control, rounds=1)
        bodies = [b for b in llm.requests if is_turn(b)]
    debate = review.debate
    assert debate is not None
    assert [(t.speaker, t.kind) for t in debate.turns] == [
        ("alice", "turn"),
        ("user", "interjection"),
        ("bob", "turn"),
        ("carol", "turn"),
    ]
    assert "names come from an HTTP form" not in last_user(bodies[0])
    assert "(the user, interjecting):\nPlease consider that names come from an HTTP form." in (
        last_user(bodies[1])
    )
    inter = next(e for e in events if e.kind is EventKind.INTERJECTION)
    assert inter.data == {"round": 1, "text": "Please consider that names come from an HTTP form."}


def test_before_turn_interjects_and_q_ends_the_debate(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    slots: list[TurnSlot] = []

    async def before_turn(slot: TurnSlot) -> Decision:
        slots.append(slot)
        if len(slots) == 2:
            return Decision.interject("Is the loop a real N+1?")
        if len(slots) == 4:
            return Decision.stop()
        return Decision.go_on()

    control = DebateControl(before_turn=before_turn)
    script = DebateScript(lambda name, rnd, body: f"{name} round {rnd}")
    with ScriptedLLM(handler=script) as llm:
        review, _ = _run(tmp_path / "repo", llm, control=control)
    debate = review.debate
    assert debate is not None
    assert [(s.speaker, s.round) for s in slots] == [
        ("alice", 1),
        ("bob", 1),
        ("carol", 1),
        ("alice", 2),
    ]
    assert [t.speaker for t in debate.turns] == ["alice", "user", "bob", "carol"]
    assert debate.stop_reason == "user"
    assert script.order == [("alice", 1), ("bob", 1), ("carol", 1)]


def test_stop_cuts_a_turn_short_and_keeps_what_it_said(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    control = DebateControl()

    def turn(name: str, rnd: int, body: dict[str, Any]) -> Reply | str:
        if name == "bob":
            threading.Timer(0.5, control.stop).start()
            return Reply.text("bob starts talking and", delay=5.0)
        return f"{name} round {rnd}"

    with ScriptedLLM(handler=DebateScript(turn)) as llm:
        review, events = _run(tmp_path / "repo", llm, control=control)
    debate = review.debate
    assert debate is not None
    assert [(t.speaker, t.kind) for t in debate.turns] == [("alice", "turn"), ("bob", "stopped")]
    assert debate.stop_reason == "user"
    stopped = next(e for e in events if e.kind is EventKind.STOPPED)
    assert stopped.data["text"] == "the user ended the debate"
    # The debate still ends with a conclusion and its final event.
    assert events[-1].kind is EventKind.FINAL


def test_the_budget_ends_the_debate(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    script = DebateScript(lambda name, rnd, body: f"{name} round {rnd} " + "word " * 200)
    settings_budget = {"budget_tokens": 1}
    with ScriptedLLM(handler=script) as llm:
        settings = debate_settings(llm)
        settings.llm.budget_tokens = settings_budget["budget_tokens"]
        events: list[DebateEvent] = []
        review = asyncio.run(
            run_debate(
                BRANCH,
                tmp_path / "repo",
                settings,
                client=LLMClient(settings, backoff_base=0.0),
                on_event=events.append,
            )
        )
    assert review.debate is not None
    assert review.debate.stop_reason == "budget"
    assert [t.speaker for t in review.debate.turns] == ["alice", "bob"]
    assert review.debate.turns[1].kind == "skipped"
    assert any("budget" in n for n in review.debate.notes)


def test_older_turns_are_summarized_by_each_debaters_own_model(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    script = DebateScript(lambda name, rnd, body: f"{name} round {rnd}: " + "detail " * 150)
    with ScriptedLLM(handler=script) as llm:
        review, events = _run(tmp_path / "repo", llm, rounds=4, transcript_tokens=700)
        compactions = [b for b in llm.requests if "You keep the record" in last_user(b)]
        turn_bodies = [b for b in llm.requests if is_turn(b)]
    debate = review.debate
    assert debate is not None and len(debate.turns) == 12
    # Each debater's older turns were folded by its own model, never another's.
    assert {speaker(b) for b in compactions} == set(NAMES)
    last_alice = last_user([b for b in turn_bodies if speaker(b) == "alice"][-1])
    assert "summary by alice" in last_alice and "summary by bob" not in last_alice
    # The transcript part of a prompt stays bounded, however many rounds.
    transcript_sizes = [
        len(last_user(b).split("# The debate so far", 1)[1]) for b in turn_bodies[3:]
    ]
    assert max(transcript_sizes) < 700 * 4 * 1.3
    assert any("summarized for Alice by its own model" in n for n in debate.notes)
    assert any(e.kind is EventKind.NOTE and "summarized" in e.data["text"] for e in events)


def test_every_turn_is_in_the_task_record_as_it_happens(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    store = TaskStore(tmp_path / "tasks")
    seen_in_record: list[list[str]] = []

    def turn(name: str, rnd: int, body: dict[str, Any]) -> str:
        if name == "carol":
            (running,) = store.list(None)
            data = store.load(running.task_id)
            seen_in_record.append([t["speaker"] for t in data.get("turns", [])])
        return f"{name} round {rnd}"

    with ScriptedLLM(handler=DebateScript(turn)) as llm:
        review, _ = _run(tmp_path / "repo", llm, store=store, rounds=1)
    assert seen_in_record == [["alice", "bob"]]
    saved = store.load(review.task_id)
    assert saved["status"] == "done"
    assert [t["speaker"] for t in saved["debate"]["turns"]] == list(NAMES)
    assert saved["review"]["debate"]["stop_reason"] == "rounds"


def test_a_debater_checks_a_claim_with_the_read_only_tools_within_its_step_limit(
    tmp_path: Path,
) -> None:
    make_repo(tmp_path / "repo")

    def turn(name: str, rnd: int, body: dict[str, Any]) -> Reply | str:
        tool_results = [m for m in body["messages"] if m.get("role") == "tool"]
        offered = {t["function"]["name"] for t in body.get("tools", [])}
        assert "write_file" not in offered and {"read_file", "git"} <= offered
        if name == "alice" and not tool_results:
            return Reply.tool("read_file", {"path": "app/users.py"})
        if name == "alice":
            assert "def all_users(db):" in tool_results[0]["content"]
            return "alice: I read app/users.py; all_users queries once per row."
        if name == "bob":  # never stops calling tools: the step limit ends the turn
            return Reply.tool("git", {"command": f"log --oneline -n {len(tool_results) + 1}"})
        return "carol agrees"

    with ScriptedLLM(handler=DebateScript(turn)) as llm:
        review, _ = _run(tmp_path / "repo", llm, rounds=1, turn_steps=3)
    debate = review.debate
    assert debate is not None
    alice, bob, carol = debate.turns
    assert (alice.kind, alice.tool_calls) == ("turn", 1)
    assert alice.text.startswith("alice: I read app/users.py")
    assert (bob.kind, bob.tool_calls) == ("skipped", 3)
    assert bob.note == "no answer within 3 tool steps"
    assert carol.kind == "turn"
    assert debate.participants[1].out is None  # out of steps is not a broken model
