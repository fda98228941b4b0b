"""Agent loop, tool executor and session, against the scripted server where a model is needed."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from redline.agent import Agent, LLMClient, Session, Tool, ToolError, ToolExecutor, ToolRegistry
from redline.agent.loop import LOOP_STOP_AT
from redline.agent.session import TRIMMED, estimate_tokens
from redline.agent.toolkit import ToolResult, validate
from redline.config_models import LLMSettings, ModelSettings, Settings

from scripted_llm import Reply, ScriptedLLM

NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}


def add(a: float, b: float) -> str:
    return str(a + b)


async def submit(answer: str) -> dict[str, str]:
    if not answer.strip():
        raise ToolError("answer must not be empty")
    return {"answer": answer.strip()}


def registry() -> ToolRegistry:
    return ToolRegistry(
        [
            Tool("add", "Add two numbers.", NUMBERS, add),
            Tool(
                "submit",
                "Submit the final answer.",
                {
                    "type": "object",
                    "properties": {"answer": {"type": "string"}},
                    "required": ["answer"],
                },
                submit,
                terminal=True,
            ),
        ]
    )


def make_agent(
    llm: ScriptedLLM,
    max_steps: int = 10,
    *,
    tools: ToolRegistry | None = None,
    executor: ToolExecutor | None = None,
    **limits: Any,
) -> Agent:
    limits.setdefault("max_retries", 0)
    settings = Settings(
        models=ModelSettings(model="openai/scripted", api_base=llm.base_url, api_key="test-key"),
        llm=LLMSettings(**limits),
    )
    client = LLMClient(settings, backoff_base=0.01)
    tools = tools if tools is not None else registry()
    return Agent(client, "ask", tools, "You add numbers.", max_steps=max_steps, executor=executor)


class RecordingExecutor(ToolExecutor):
    """Notes each call's name before running it, as `redline ask` does for its progress."""

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self.names: list[str] = []

    async def run(self, name: str, arguments: str | dict[str, Any] | None) -> ToolResult:
        self.names.append(name)
        return await super().run(name, arguments)


# -- the loop ----------------------------------------------------------------------------------


async def test_tool_round_trip_then_submit() -> None:
    script = [
        Reply.tool("add", {"a": 2, "b": 3}),
        Reply.tool("submit", {"answer": ""}),  # rejected by the handler: the model retries
        Reply.tool("submit", {"answer": " 5 "}),
    ]
    with ScriptedLLM(script) as llm:
        result = await make_agent(llm).run("What is 2 + 3?")
    assert result.stop_reason == "submitted" and result.ok
    assert result.submitted == {"answer": "5"}
    assert result.steps == 3 and result.tool_calls == 3
    assert result.usage.calls == 3 and result.usage.total_tokens > 0

    first, second, third = llm.requests
    assert first["messages"] == [
        {"role": "system", "content": "You add numbers."},
        {"role": "user", "content": "What is 2 + 3?"},
    ]
    assert [t["function"]["name"] for t in first["tools"]] == ["add", "submit"]
    call = second["messages"][2]["tool_calls"][0]
    assert call["function"]["name"] == "add"
    tool_msg = second["messages"][3]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == call["id"]
    assert tool_msg["content"] == "5"
    assert third["messages"][-1]["content"] == "error: answer must not be empty"


async def test_terminal_tool_without_return_value_submits_its_arguments() -> None:
    with ScriptedLLM([Reply.tool("done", {"verdict": "ok"})]) as llm:
        agent = make_agent(llm)
        agent.registry.register(
            Tool("done", "Finish.", {"type": "object"}, lambda verdict: None, terminal=True)
        )
        result = await agent.run("x")
    assert result.stop_reason == "submitted"
    assert result.submitted == {"verdict": "ok"}


async def test_final_answer_without_tools() -> None:
    with ScriptedLLM([Reply.tool("add", {"a": 1, "b": 1}), Reply.text("It is 2.")]) as llm:
        result = await make_agent(llm).run("1 + 1?")
    assert result.stop_reason == "final_answer"
    assert result.content == "It is 2."
    assert result.submitted is None
    assert result.messages[-1] == {"role": "assistant", "content": "It is 2."}


async def test_task_as_messages() -> None:
    with ScriptedLLM([Reply.text("ok")]) as llm:
        await make_agent(llm).run(
            [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
        )
    roles = [m["role"] for m in llm.requests[0]["messages"]]
    assert roles == ["system", "user", "user"]


async def test_max_steps() -> None:
    with ScriptedLLM(
        handler=lambda body: Reply.tool("add", {"a": len(body["messages"]), "b": 1})
    ) as llm:
        result = await make_agent(llm, max_steps=3).run("count forever")
    assert result.stop_reason == "max_steps"
    assert result.steps == 3 and len(llm.requests) == 3
    assert "3 steps" in (result.error or "")


async def test_a_run_may_lower_the_step_limit_without_changing_the_agent() -> None:
    with ScriptedLLM(
        handler=lambda body: Reply.tool("add", {"a": len(body["messages"]), "b": 1})
    ) as llm:
        agent = make_agent(llm, max_steps=5)
        result = await agent.run("count forever", max_steps=2)
    assert result.stop_reason == "max_steps"
    assert result.steps == 2 and len(llm.requests) == 2
    assert agent.max_steps == 5


async def test_calls_run_through_the_executor_the_agent_was_built_with() -> None:
    tools = registry()
    executor = RecordingExecutor(tools)
    script = [Reply.tool("add", {"a": 1, "b": 2}), Reply.tool("nope", {}), Reply.text("3")]
    with ScriptedLLM(script) as llm:
        result = await make_agent(llm, tools=tools, executor=executor).run("1 + 2?")
    assert result.stop_reason == "final_answer"
    assert executor.names == ["add", "nope"]


def test_an_executor_of_another_registry_is_refused() -> None:
    with ScriptedLLM([]) as llm, pytest.raises(ValueError, match="registry"):
        make_agent(llm, executor=ToolExecutor(registry()))


async def test_loop_detection_warns_then_stops() -> None:
    with ScriptedLLM(default=Reply.tool("add", {"a": 1, "b": 2})) as llm:
        result = await make_agent(llm).run("loop")
    assert result.stop_reason == "loop"
    assert result.steps == LOOP_STOP_AT
    tool_results = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert tool_results[:2] == ["3", "3"]
    assert "identical arguments 3 times" in tool_results[2]
    assert "ends the run" in tool_results[2]


async def test_loop_counter_resets_on_a_different_call() -> None:
    script = [Reply.tool("add", {"a": 1, "b": 2})] * 2 + [Reply.tool("add", {"b": 2, "a": 2})]
    script += [Reply.tool("add", {"a": 1, "b": 2})] * 2 + [Reply.text("done")]
    with ScriptedLLM(script) as llm:
        result = await make_agent(llm).run("x")
    assert result.stop_reason == "final_answer"
    assert all(not m["content"].startswith("error") for m in result.messages if m["role"] == "tool")


async def test_model_error_stops_with_reason() -> None:
    with ScriptedLLM([Reply.tool("add", {"a": 1, "b": 2}), Reply.error(500)]) as llm:
        result = await make_agent(llm).run("x")
    assert result.stop_reason == "error"
    assert "server error" in (result.error or "")
    assert result.steps == 1


async def test_budget_stops_with_reason() -> None:
    reply = Reply.tool("add", {"a": 1, "b": 2}, usage={"prompt_tokens": 50, "completion_tokens": 5})
    with ScriptedLLM([reply, Reply.text("never")]) as llm:
        result = await make_agent(llm, budget_tokens=40).run("x")
    assert result.stop_reason == "budget"
    assert len(llm.requests) == 1
    assert "55 of 40 tokens" in (result.error or "")


# -- the executor ------------------------------------------------------------------------------


async def test_executor_turns_every_failure_into_a_result() -> None:
    def boom() -> str:
        raise RuntimeError("disk on fire")

    # The hanging tools wait on events only the test sets, so the executor must answer at the
    # timeout while they are still running; a wall-clock bound would race the machine's load.
    cancelled: list[bool] = []
    release, returned = threading.Event(), threading.Event()

    async def hang() -> str:
        try:
            await asyncio.Event().wait()  # never set
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    def hang_sync() -> str:
        release.wait(10)  # the bound only keeps a broken executor from hanging the suite
        returned.set()
        return "never"

    reg = registry()
    empty = {"type": "object", "properties": {}}
    reg.register(Tool("boom", "", empty, boom))
    reg.register(Tool("hang", "", empty, hang, timeout=0.1))
    reg.register(Tool("hang_sync", "", empty, hang_sync, timeout=0.1))
    ex = ToolExecutor(reg)

    unknown = await ex.run("rm_rf", "{}")
    assert not unknown.ok and unknown.content.startswith("error: unknown tool 'rm_rf'")
    assert "add" in unknown.content

    bad_json = await ex.run("add", '{"a": 1, "b": ')
    assert not bad_json.ok and "not a valid JSON object" in bad_json.content

    not_object = await ex.run("add", "[1, 2]")
    assert "expected an object" in not_object.content

    invalid = await ex.run("add", json.dumps({"a": "one", "c": 3}))
    assert not invalid.ok
    assert "a must be number, got string" in invalid.content
    assert "missing required field 'b'" in invalid.content
    assert "unexpected field 'c'" in invalid.content

    raised = await ex.run("boom", "{}")
    assert raised.content == "error: boom failed: RuntimeError: disk on fire"

    # An async tool is cancelled at its timeout; a sync one cannot be, so its thread is left to
    # finish in the background and the executor answers without waiting for it.
    try:
        timed_out = await asyncio.wait_for(ex.run("hang", ""), 10)
        assert timed_out.content == "error: hang timed out after 0.1 s"
        assert cancelled == [True]
        timed_out = await ex.run("hang_sync", "")
        assert timed_out.content == "error: hang_sync timed out after 0.1 s"
        assert not returned.is_set()
    finally:
        release.set()

    ok = await ex.run("add", {"a": 1, "b": 2.5})
    assert ok.ok and ok.content == "3.5"


async def test_executor_caps_output() -> None:
    reg = ToolRegistry(
        [Tool("big", "", {"type": "object"}, lambda: "x" * 60_000)]  # sync lambda is fine
    )
    result = await ToolExecutor(reg).run("big", None)
    assert result.ok
    assert result.content.startswith("x" * 50_000)
    assert result.content.endswith("[output truncated: 50,000 of 60,000 characters shown]")
    assert result.value == "x" * 60_000  # the handler's own value is kept whole


async def test_executor_serialises_non_text_results() -> None:
    reg = ToolRegistry([Tool("info", "", {"type": "object"}, lambda: {"lines": [1, 2]})])
    result = await ToolExecutor(reg).run("info", "{}")
    assert json.loads(result.content) == {"lines": [1, 2]}


def test_registry() -> None:
    reg = registry()
    assert "add" in reg and len(reg) == 2
    assert reg.specs()[0] == {
        "type": "function",
        "function": {"name": "add", "description": "Add two numbers.", "parameters": NUMBERS},
    }
    with pytest.raises(ValueError, match="already registered"):
        reg.register(Tool("add", "", {}, add))


def test_validate_subset() -> None:
    schema = {
        "type": "object",
        "properties": {
            "severity": {"enum": ["High", "Low"]},
            "lines": {"type": "array", "items": {"type": "integer", "minimum": 1}},
            "flag": {"type": "boolean"},
        },
    }
    assert validate(schema, {"severity": "High", "lines": [1, 2], "flag": True}) == []
    problems = validate(schema, {"severity": "Meh", "lines": [0, True], "flag": 1})
    assert problems == [
        "severity must be one of ['High', 'Low']",
        "lines[0] must be >= 1",
        "lines[1] must be integer, got boolean",
        "flag must be boolean, got integer",
    ]


# -- the session -------------------------------------------------------------------------------


def test_session_fit_trims_oldest_tool_outputs_first() -> None:
    s = Session.start("system prompt " * 50, "the task " * 50)
    for i in range(4):
        s.messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "read", "arguments": "{}"},
                    }
                ],
            }
        )
        s.add_tool_result(f"c{i}", "read", f"{i}" * 4000)
    system, task = s.messages[0]["content"], s.messages[1]["content"]
    before = s.estimate_tokens()
    assert before > 4000

    # Room for about two of the four outputs: the two oldest go.
    assert s.fit(int((before - 1900) / 0.75) + 1)
    tools = [m["content"] for m in s.messages if m["role"] == "tool"]
    assert tools[0] == TRIMMED.format(n=4000)
    assert tools[1] == TRIMMED.format(n=4000)
    assert tools[2] == "2" * 4000 and tools[3] == "3" * 4000
    assert s.trimmed_chars == 8000

    # Even when nothing fits, the system prompt, the task and the latest turn are kept.
    assert not s.fit(100)
    assert s.messages[0]["content"] == system and s.messages[1]["content"] == task
    assert [m["content"] for m in s.messages if m["role"] == "tool"][-1] == "3" * 4000
    assert s.estimate_tokens() < before


def test_session_fit_is_a_no_op_when_small() -> None:
    s = Session.start("sys", "task")
    snapshot = [dict(m) for m in s.messages]
    assert s.fit(128_000)
    assert s.messages == snapshot
    assert estimate_tokens("abcd" * 10) == 10
