"""The debate through the language server: `redline.debate` runs a job like a review, its events
arrive as `redline/debate` notifications in order, `redline.debateInterject` and
`redline.debateStop` steer it, and the summary's action items become diagnostics with quick
fixes. A real server process, a real git repository, and scripted debaters over HTTP (one
model string each, so the script knows who is speaking)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from redline.debate.events import DebateEvent, EventKind
from redline.lsp.debate_stream import DELTA_INTERVAL, DebateStream

from gitrepo import GitRepo
from lsp_support import Session, plain, server_env, start_session, stop_session
from scripted_llm import Reply, ScriptedLLM

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")

APP = "app/loader.py"
BASE = "import json\n\n\ndef load(path):\n    with open(path) as f:\n        return json.load(f)\n"
# The change under debate (0-based line 5 is the eval).
CHANGED = (
    "import json\n\n\ndef load(path):\n    with open(path) as f:\n        return eval(f.read())\n"
)
EVAL_LINE = 5
EXISTING = "        return eval(f.read())"
IMPROVED = "        return json.load(f)"
INTERJECTION = "Please consider that the file comes from users."


def model_of(body: dict[str, Any]) -> str:
    return str(body.get("model", "")).rsplit("/", 1)[-1]


def prompt_text(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages", []))


class DebateScript:
    """Alice and Bob argue (each answer names who spoke and how often); the judge answers the
    summary: one action item that quotes the eval line and replaces it. `slow` holds a
    debater's first turn that many seconds (long enough to interject or stop during it)."""

    def __init__(self, slow: dict[str, float] | None = None) -> None:
        self.slow = dict(slow or {})
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()
        self.speaking = threading.Event()  # a slow turn is in flight

    def __call__(self, body: dict[str, Any]) -> Reply:
        model = model_of(body)
        with self.lock:
            self.calls[model] = n = self.calls.get(model, 0) + 1
        if model == "judge":
            return Reply.text(json.dumps(JUDGEMENT))
        delay = self.slow.pop(model, 0.0) if n == 1 else 0.0
        if delay:
            self.speaking.set()
        return Reply.text(
            f"{model} (answer {n}): the eval on line 6 runs whatever the file holds.", delay=delay
        )


JUDGEMENT = {  # the shape prompts/debate/summarizer.md asks for
    "overview": "The debate was about loading a file with eval; all agree it must go.",
    "consensus": [
        {
            "point": "eval() on file contents executes arbitrary code",
            "supported_by": ["Debater A", "Debater B"],
        }
    ],
    "disagreements": [],
    "action_items": [
        {
            "title": "Do not eval file contents",
            "detail": "eval() runs whatever the file holds; parse it as JSON instead.",
            "severity": "High",
            "category": "Security",
            "file": APP,
            "existing_code": EXISTING,
            "improved_code": IMPROVED,
            "supported_by": ["Debater A", "Debater B"],
        }
    ],
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git = GitRepo(tmp_path / "repo")
    git.write(APP, BASE)
    git.commit("loader")
    git.write(APP, CHANGED)  # uncommitted: the change the debate is about
    return git.root


def debate_env(cache: Path, llm: ScriptedLLM, rounds: int = 2) -> dict[str, str]:
    cache.mkdir(parents=True, exist_ok=True)
    base = llm.base_url
    user = cache / "user.toml"
    user.write_text(
        f"""
[llm]
max_retries = 0
timeout = 30

[debate]
rounds = {rounds}

[debate.reviewers.alice]
model = "openai/alice"
api_base = "{base}"
label = "Alice"
prompt = "You review for security."

[debate.reviewers.bob]
model = "openai/bob"
api_base = "{base}"
label = "Bob"
prompt = "You review for maintainability."

[debate.summarizer]
model = "openai/judge"
api_base = "{base}"
""",
        encoding="utf-8",
    )
    return server_env(cache, REDLINE_CONFIG=str(user), REDLINE_API_KEY="sk-test-key-not-secret")


class Debate:
    """A session that records the `redline/debate` notifications."""

    def __init__(self, session: Session) -> None:
        self.s = session
        self.events: list[dict[str, Any]] = []

        @session.client.feature("redline/debate")
        def _event(params: Any) -> None:
            self.events.append(plain(params))

    def of(self, task_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for e in self.events
            if e["taskId"] == task_id and (kind is None or e["event"] == kind)
        ]

    async def start(self, **args: Any) -> str:
        result = plain(await self.s.command("redline.debate", {"scope": "uncommitted", **args}))
        return str(result["taskId"])

    async def first(self, task_id: str, kind: str, timeout: float = 30) -> dict[str, Any]:
        found: list[dict[str, Any]] = await self.s.until(
            lambda: self.of(task_id, kind), timeout, f"a {kind} event"
        )
        return found[0]


@pytest.fixture
def script(request: pytest.FixtureRequest) -> DebateScript:
    # Parametrized indirectly with {debater: seconds} to hold that debater's first turn.
    return DebateScript(getattr(request, "param", None))


@pytest.fixture
def llm(script: DebateScript) -> Iterator[ScriptedLLM]:
    with ScriptedLLM(handler=script) as server:
        yield server


@pytest.fixture
async def debate(repo: Path, tmp_path: Path, llm: ScriptedLLM) -> AsyncIterator[Debate]:
    s = await start_session(repo, "vscode", debate_env(tmp_path / "cache", llm))
    d = Debate(s)
    yield d
    await stop_session(s)


def speakers(events: list[dict[str, Any]], kind: str) -> list[tuple[int, str]]:
    return [(e["round"], e["speaker"]) for e in events if e["event"] == kind]


# -- a whole debate -----------------------------------------------------------------------------


async def test_a_debate_streams_its_turns_then_the_summary_and_publishes_the_action_item(
    debate: Debate, llm: ScriptedLLM
) -> None:
    s = debate.s
    s.open(APP)
    task_id = await debate.start()
    end = await s.finished(task_id, timeout=60)
    assert end["state"] == "finished", end
    assert end["scope"] == "debate"
    events = debate.of(task_id)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "started" and kinds[-1] == "final", kinds
    started = events[0]
    assert [d["name"] for d in started["debaters"]] == ["alice", "bob"]
    assert started["rounds"] == 2
    assert {e["folder"] for e in events} == {s.uri(".")}
    # Two rounds, the debaters in turn; every turn's text streamed between its start and end.
    order = [(1, "alice"), (1, "bob"), (2, "alice"), (2, "bob")]
    assert speakers(events, "turnStarted") == order
    assert speakers(events, "turnFinished") == order
    for rnd, who in order:
        start = next(
            i
            for i, e in enumerate(events)
            if e["event"] == "turnStarted" and (e["round"], e["speaker"]) == (rnd, who)
        )
        finish = next(
            i
            for i, e in enumerate(events)
            if e["event"] == "turnFinished" and (e["round"], e["speaker"]) == (rnd, who)
        )
        streamed = "".join(e["text"] for e in events[start:finish] if e["event"] == "delta")
        assert f"{who} (answer" in streamed, (rnd, who, streamed)
        assert all(e["speaker"] == who for e in events[start + 1 : finish] if e["event"] == "delta")
        assert events[finish]["text"].startswith(f"{who} (answer")
    # Then the anonymous positions, the summary, the outcome: in that order, after the turns.
    tail = [k for k in kinds if k in ("stopped", "summaries", "summary", "final")]
    assert tail == ["stopped", "summaries", "summary", "final"], kinds
    assert debate.of(task_id, "stopped")[0]["reason"] == "rounds"
    positions = debate.of(task_id, "summaries")[0]["positions"]
    assert sorted(p["label"] for p in positions) == ["Debater A", "Debater B"]
    summary = debate.of(task_id, "summary")[0]
    assert not summary["failed"]
    assert "Do not eval file contents" in summary["markdown"]
    assert debate.of(task_id, "final")[0]["findings"] >= 1
    # The action item is a diagnostic on the eval line, with the improved code as its fix.
    await s.until(lambda: EVAL_LINE in s.lines_of(APP), 10, "the action item's diagnostic")
    diag = next(d for d in s.client.diagnostics[s.uri(APP)] if d.range.start.line == EVAL_LINE)
    assert "Do not eval file contents" in diag.message
    pos = types.Position(line=EVAL_LINE, character=10)
    actions = await s.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri(APP)),
            range=types.Range(start=pos, end=pos),
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    fixes = [
        a
        for a in actions or []
        if isinstance(a, types.CodeAction)
        and a.kind == types.CodeActionKind.QuickFix
        and a.edit is not None
    ]
    assert fixes, actions
    edit = fixes[0].edit
    assert edit is not None
    changes = [
        e
        for c in edit.document_changes or []
        if isinstance(c, types.TextDocumentEdit)
        for e in c.edits
    ] or next(iter((edit.changes or {}).values()), [])
    assert any(IMPROVED.strip() in e.new_text for e in changes), changes
    assert all("eval(" not in e.new_text for e in changes)

    # The sidebar lists it under the debate, and the report carries the debate.
    def listed() -> list[str]:
        return [row["title"] for row in s.rows()] if s.listed_task == task_id else []

    await s.until(lambda: "Do not eval file contents" in listed(), 10, "redline/findings")
    report = plain(await s.client.protocol.send_request_async("redline/report", {}))
    assert "Do not eval file contents" in report["markdown"]
    assert "alice (answer 1)" in report["markdown"]  # the transcript
    # The debaters and the judge were each asked under their own model.
    assert {model_of(b) for b in llm.requests} == {"alice", "bob", "judge"}
    assert (await s.debug_info())["running"] == []


# -- steering -------------------------------------------------------------------------------


@pytest.mark.parametrize("script", [{"alice": 3.0}], indirect=True)
async def test_an_interjection_during_a_turn_reaches_the_next_debater(
    debate: Debate, llm: ScriptedLLM, script: DebateScript
) -> None:
    s = debate.s
    task_id = await debate.start(rounds=1)
    await debate.first(task_id, "turnStarted")
    await s.until(script.speaking.is_set, 20, "alice's slow turn")
    answer = plain(
        await s.command("redline.debateInterject", {"taskId": task_id, "text": INTERJECTION})
    )
    assert answer == {"queued": True}
    end = await s.finished(task_id, timeout=60)
    assert end["state"] == "finished", end
    events = debate.of(task_id)
    kinds = [(e["event"], e.get("speaker")) for e in events]
    said = kinds.index(("interjection", None))
    assert kinds.index(("turnFinished", "alice")) < said < kinds.index(("turnStarted", "bob"))
    assert events[said]["text"] == INTERJECTION
    # Bob heard it; Alice's turn, asked before it was said, did not.
    bob = [b for b in llm.requests if model_of(b) == "bob"]
    assert bob and INTERJECTION in prompt_text(bob[0])
    alice_first = next(b for b in llm.requests if model_of(b) == "alice")
    assert INTERJECTION not in prompt_text(alice_first)


@pytest.mark.parametrize("script", [{"alice": 20.0}], indirect=True)
async def test_stop_ends_the_debate_early_and_still_summarizes(
    debate: Debate, llm: ScriptedLLM, script: DebateScript
) -> None:
    s = debate.s
    task_id = await debate.start(rounds=5)
    await debate.first(task_id, "turnStarted")
    await s.until(script.speaking.is_set, 20, "alice's slow turn")
    assert plain(await s.command("redline.debateStop", {"taskId": task_id})) == {"stopping": True}
    end = await s.finished(task_id, timeout=30)  # long before the 20 s turn would have ended
    assert end["state"] == "finished", end
    stopped = debate.of(task_id, "stopped")
    assert [e["reason"] for e in stopped] == ["user"]
    kinds = [e["event"] for e in debate.of(task_id)]
    assert kinds.index("stopped") < kinds.index("summary") < kinds.index("final")
    assert speakers(debate.of(task_id), "turnStarted") == [(1, "alice")]  # no one spoke after
    assert any(model_of(b) == "judge" for b in llm.requests)
    # The debate is over: steering it now is refused, and says why.
    with pytest.raises(JsonRpcException, match=f"no debate {task_id} is running") as info:
        await s.command("redline.debateInterject", {"taskId": task_id, "text": "hello?"})
    assert info.value.code == types.LSPErrorCodes.RequestFailed.value


@pytest.mark.parametrize("script", [{"alice": 20.0}], indirect=True)
async def test_cancel_aborts_a_debate_without_a_summary(
    debate: Debate, llm: ScriptedLLM, script: DebateScript
) -> None:
    s = debate.s
    task_id = await debate.start(rounds=2)
    await s.until(script.speaking.is_set, 20, "alice's slow turn")
    await s.command("redline.cancel", {"taskId": task_id})
    end = await s.finished(task_id, timeout=15)
    assert end["state"] == "cancelled", end
    await asyncio.sleep(0.3)  # anything still on its way would have arrived
    kinds = {e["event"] for e in debate.of(task_id)}
    assert not kinds & {"summary", "final"}, kinds
    assert not any(model_of(b) == "judge" for b in llm.requests)


# -- bad arguments ------------------------------------------------------------------------------


async def test_bad_arguments_are_refused_with_the_reason(debate: Debate) -> None:
    s = debate.s
    for args, message in [
        ({"scope": "uncommitted", "rounds": 0}, "rounds must be a whole number from 1 to 20"),
        ({"scope": "uncommitted", "rounds": 21}, "rounds must be a whole number from 1 to 20"),
        ({"scope": "uncommitted", "rounds": "many"}, "rounds must be a whole number"),
        ({"scope": "uncommitted", "rounds": True}, "rounds must be a whole number"),
        ({"scope": "uncommitted", "rounds": 2.5}, "rounds must be a whole number"),
        ({"scope": "everything"}, "unknown scope 'everything'"),
        ({"scope": "commit"}, "the commit scope needs a revision"),
    ]:
        with pytest.raises(JsonRpcInvalidParams, match=message):
            await s.command("redline.debate", args)
    with pytest.raises(JsonRpcInvalidParams, match="an interjection needs text"):
        await s.command("redline.debateInterject", {"taskId": "abc", "text": "   "})
    with pytest.raises(JsonRpcInvalidParams, match="which debate"):
        await s.command("redline.debateInterject", {"text": "hello"})
    with pytest.raises(JsonRpcInvalidParams, match="which debate"):
        await s.command("redline.debateStop", {})
    with pytest.raises(JsonRpcInvalidParams, match="expects one object argument"):
        await s.command("redline.debateStop", "abc")
    # Well-formed, but there is no such debate: RequestFailed.
    for name, args in [
        ("redline.debateStop", {"taskId": "nope"}),
        ("redline.debateInterject", {"taskId": "nope", "text": "hi"}),
    ]:
        with pytest.raises(JsonRpcException, match="no debate nope is running") as info:
            await s.command(name, args)
        assert info.value.code == types.LSPErrorCodes.RequestFailed.value
    assert (await s.debug_info())["running"] == []
    assert debate.events == []


# -- coalescing ---------------------------------------------------------------------------------


class _Protocol:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def notify(self, method: str, params: dict[str, Any]) -> None:
        assert method == "redline/debate"
        self.sent.append(params)


class _Server:
    def __init__(self) -> None:
        self.protocol = _Protocol()


class _Job:
    task_id = "t1"
    cancelled = False


async def test_deltas_are_coalesced_per_speaker_and_never_overtake_other_events() -> None:
    """Hundreds of tiny deltas from the engine's thread reach the client as a few
    notifications, in order, with nothing lost, and all before the turn's end."""
    loop = asyncio.get_running_loop()
    ls = _Server()
    stream = DebateStream(ls, "file:///w", _Job(), loop)  # type: ignore[arg-type]
    pieces = [f"w{i} " for i in range(400)]

    def engine() -> None:
        stream.on_event(DebateEvent(EventKind.TURN_STARTED, {"round": 1, "speaker": "a"}))
        for piece in pieces:
            stream.on_event(
                DebateEvent(EventKind.DELTA, {"round": 1, "speaker": "a", "text": piece})
            )
        stream.on_event(DebateEvent(EventKind.TURN_FINISHED, {"round": 1, "speaker": "a"}))
        stream.on_event(DebateEvent(EventKind.DELTA, {"round": 1, "speaker": "b", "text": "x"}))
        stream.on_event(DebateEvent(EventKind.DELTA, {"round": 1, "speaker": "b", "text": "y"}))

    await asyncio.to_thread(engine)
    await asyncio.sleep(DELTA_INTERVAL * 3)  # the last deltas go out on the timer
    sent = ls.protocol.sent
    assert [(m["event"], m.get("speaker")) for m in sent if m["event"] != "delta"] == [
        ("turnStarted", "a"),
        ("turnFinished", "a"),
    ]
    finished = next(i for i, m in enumerate(sent) if m["event"] == "turnFinished")
    a_deltas = [m for m in sent[:finished] if m["event"] == "delta"]
    assert "".join(m["text"] for m in a_deltas) == "".join(pieces)
    assert 1 <= len(a_deltas) < 20  # coalesced, not one per piece
    assert [m["text"] for m in sent[finished + 1 :]] == ["xy"]
    assert all(m["taskId"] == "t1" and m["folder"] == "file:///w" for m in sent)


async def test_a_cancelled_debate_streams_nothing_more() -> None:
    loop = asyncio.get_running_loop()
    ls = _Server()
    job = _Job()
    stream = DebateStream(ls, "file:///w", job, loop)  # type: ignore[arg-type]
    stream.on_event(DebateEvent(EventKind.DELTA, {"round": 1, "speaker": "a", "text": "held"}))
    await asyncio.sleep(0)
    job.cancelled = True
    stream.on_event(DebateEvent(EventKind.SUMMARY, {"markdown": "late", "failed": False}))
    await asyncio.sleep(DELTA_INTERVAL * 3)
    assert ls.protocol.sent == []


async def test_a_debate_without_a_model_fails_and_says_how_to_set_one(
    repo: Path, tmp_path: Path
) -> None:
    s = await start_session(repo, "vscode", server_env(tmp_path / "cache"))
    try:
        task_id = plain(await s.command("redline.debate", {"scope": "uncommitted"}))["taskId"]
        end = await s.finished(task_id, timeout=30)
        assert end["state"] == "failed", end
        assert "debate needs a model" in end["error"]
        shown = [m.message for m in s.client.messages if m.type == types.MessageType.Error]
        assert any("debate needs a model" in m for m in shown), shown
    finally:
        await stop_session(s)
