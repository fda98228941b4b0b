"""LLMClient against the scripted server, through litellm's real HTTP path.

The client is `agent/llm.py` (models in order, fallbacks, unusable models) over its parts:
`routing.py` (model, api_base and key per role), `attempts.py` (retries, truncation re-ask,
one request), `spend_limits.py` (budget, request cap) and `model_info.py` (limits, price).
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from redline.agent import (
    BudgetExceeded,
    LLMClient,
    LLMError,
    LLMNotConfigured,
    LLMTimeout,
    LLMTruncated,
    redact,
)
from redline.agent.attempts import TRUNCATION_NOTE
from redline.agent.llm import ModelUnusable, load_litellm, parse_retry_after
from redline.config_models import LLMSettings, ModelSettings, RoleModel, Settings

from scripted_llm import Reply, ScriptedLLM

ROOT = Path(__file__).resolve().parents[1]
USER = [{"role": "user", "content": "hello"}]


def make_settings(
    llm: ScriptedLLM,
    model: str = "openai/scripted",
    fallbacks: list[str] | None = None,
    **limits: Any,
) -> Settings:
    limits.setdefault("timeout", 5.0)
    limits.setdefault("max_retries", 2)
    return Settings(
        models=ModelSettings(
            model=model, api_base=llm.base_url, api_key="test-key", fallbacks=fallbacks or []
        ),
        llm=LLMSettings(**limits),
    )


def make_client(settings: Settings, **kw: Any) -> LLMClient:
    kw.setdefault("backoff_base", 0.01)  # keep the suite fast; backoff itself is tested below
    return LLMClient(settings, **kw)


class SleepRecorder:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def test_plain_completion_records_usage() -> None:
    reply = Reply.text("hi there", usage={"prompt_tokens": 12, "completion_tokens": 3})
    with ScriptedLLM([reply]) as llm:
        client = make_client(make_settings(llm))
        r = await client.complete("reviewer", USER)
    assert r.content == "hi there"
    assert r.finish_reason == "stop"
    assert r.tool_calls == []
    assert r.model == "openai/scripted"
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (12, 3)
    assert r.usage.cost_usd is None  # not in the price map
    body = llm.requests[0]
    assert body["model"] == "scripted"
    assert body["messages"] == USER
    assert body["temperature"] == 0.0
    assert llm.headers[0]["authorization"] == "Bearer test-key"
    ledger = client.ledger
    assert ledger.total_tokens == 15
    assert not ledger.cost_complete
    assert ledger.by_role()["reviewer"].calls == 1
    rec = ledger.records[0]
    assert (rec.role, rec.model, rec.finish_reason, rec.error) == (
        "reviewer",
        "openai/scripted",
        "stop",
        None,
    )
    assert rec.latency_s > 0
    assert "unpriced (model not in litellm's price map)" in ledger.describe()


async def test_known_model_is_priced() -> None:
    reply = Reply.text("ok", usage={"prompt_tokens": 1000, "completion_tokens": 100})
    with ScriptedLLM([reply]) as llm:
        client = make_client(make_settings(llm, model="openai/gpt-4o-mini"))
        r = await client.complete("planner", USER)
    assert r.usage.cost_usd is not None and r.usage.cost_usd > 0
    assert client.ledger.cost_complete
    assert client.ledger.cost_usd == pytest.approx(r.usage.cost_usd)
    assert "$" in client.ledger.describe()


async def test_per_role_model_and_tools_are_sent() -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "add", "parameters": {"type": "object", "properties": {}}},
        }
    ]
    with ScriptedLLM([Reply.tool("add", {"a": 1, "b": 2})]) as llm:
        settings = make_settings(llm)
        settings.models.roles["verifier"] = RoleModel(model="openai/checker")
        client = make_client(settings)
        r = await client.complete("verifier", USER, tools=tools, max_tokens=50)
    assert llm.requests[0]["model"] == "checker"
    assert llm.requests[0]["tools"] == tools
    assert llm.requests[0]["max_tokens"] == 50
    assert r.finish_reason == "tool_calls"
    assert [(c.name, json.loads(c.arguments)) for c in r.tool_calls] == [("add", {"a": 1, "b": 2})]
    assert r.tool_calls[0].id.startswith("call_")


async def test_rate_limit_honours_retry_after() -> None:
    with ScriptedLLM([Reply.rate_limited(retry_after=1), Reply.text("ok")]) as llm:
        client = make_client(make_settings(llm))
        start = time.monotonic()
        r = await client.complete("reviewer", USER)
        elapsed = time.monotonic() - start
    assert r.content == "ok"
    assert elapsed >= 0.9
    assert len(llm.requests) == 2
    assert [rec.error for rec in client.ledger.records] == ["rate_limit", None]


async def test_retry_after_http_date_and_cap() -> None:
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    with ScriptedLLM(
        [Reply.rate_limited(retry_after=soon), Reply.rate_limited(3600), Reply.text("ok")]
    ) as llm:
        sleep = SleepRecorder()
        client = make_client(make_settings(llm), sleep=sleep, retry_after_cap=60)
        assert (await client.complete("reviewer", USER)).content == "ok"
    assert 25 <= sleep.waits[0] <= 30
    assert sleep.waits[1] == 60  # capped


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "2"}, 60) == 2
    assert parse_retry_after({"retry-after": "1.5"}, 60) == 1.5
    assert parse_retry_after({"retry-after-ms": "250"}, 60) == 0.25
    assert parse_retry_after({"retry-after": "999"}, 10) == 10
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 60) == 0
    assert parse_retry_after({"retry-after": "soon"}, 60) is None
    assert parse_retry_after({}, 60) is None
    assert parse_retry_after(None, 60) is None


async def test_server_errors_are_retried_with_backoff() -> None:
    with ScriptedLLM([Reply.error(500), Reply.error(503), Reply.text("ok")]) as llm:
        sleep = SleepRecorder()
        client = LLMClient(make_settings(llm), sleep=sleep, backoff_base=1.0)
        r = await client.complete("reviewer", USER)
    assert r.content == "ok"
    assert len(llm.requests) == 3
    # Exponential with jitter in [0.5, 1] × step: 1st wait in [0.5, 1], 2nd in [1, 2].
    assert 0.5 <= sleep.waits[0] <= 1.0
    assert 1.0 <= sleep.waits[1] <= 2.0
    assert [rec.error for rec in client.ledger.records] == ["server", "server", None]


async def test_retries_exhausted_gives_clear_error() -> None:
    with ScriptedLLM([Reply.error(500, "upstream exploded")] * 3) as llm:
        client = make_client(make_settings(llm, max_retries=2))
        with pytest.raises(LLMError) as info:
            await client.complete("reviewer", USER)
    msg = str(info.value)
    assert "openai/scripted" in msg and "server error" in msg and "3 attempts" in msg
    assert "upstream exploded" in msg
    assert info.value.model == "openai/scripted"


async def test_client_errors_are_not_retried() -> None:
    with ScriptedLLM([Reply.error(401, "bad key"), Reply.text("never")]) as llm:
        client = make_client(make_settings(llm))
        with pytest.raises(LLMError) as info:
            await client.complete("reviewer", USER)
    assert len(llm.requests) == 1
    assert "the key was refused (401)" in str(info.value)
    assert info.value.hint and "REDLINE_API_KEY" in info.value.hint


async def test_timeout_then_fallback_succeeds() -> None:
    with ScriptedLLM([Reply.slow(3), Reply.slow(3), Reply.text("from backup")]) as llm:
        settings = make_settings(llm, fallbacks=["openai/backup"], timeout=0.3, max_retries=1)
        client = make_client(settings)
        r = await client.complete("reviewer", USER)
    assert r.content == "from backup"
    assert r.model == "openai/backup"
    assert [b["model"] for b in llm.requests] == ["scripted", "scripted", "backup"]
    assert [rec.error for rec in client.ledger.records] == ["timeout", "timeout", None]
    assert client.ledger.models == ["openai/backup"]


async def test_timeout_without_fallback_raises_llm_timeout() -> None:
    # Replies that would take an hour: the client can only raise LLMTimeout if it gives up on
    # each attempt at its timeout. (The outer wait_for only keeps a broken client from hanging
    # the suite. A wall-clock bound here also timed the first litellm import.)
    with ScriptedLLM([Reply.slow(3600), Reply.slow(3600)]) as llm:
        client = make_client(make_settings(llm, timeout=0.3, max_retries=1))
        with pytest.raises(LLMTimeout) as info:
            await asyncio.wait_for(client.complete("reviewer", USER), 60)
    assert "openai/scripted timed out after 0.3 s (2 attempts)" in str(info.value)
    # (Not len(llm.requests): under load an attempt can time out before its request arrives.)
    assert [rec.error for rec in client.ledger.records] == ["timeout", "timeout"]


async def test_fallback_on_other_provider_does_not_inherit_api_base_or_key() -> None:
    with ScriptedLLM() as llm:
        client = make_client(make_settings(llm, fallbacks=["openai/b", "anthropic/c"]))
        assert client.models_for("reviewer") == [
            ("openai/scripted", llm.base_url),
            ("openai/b", llm.base_url),
            ("anthropic/c", None),
        ]
        # Nor does it carry the configured key: litellm reads ANTHROPIC_API_KEY for it.
        assert [key for _, _, key in client._routes.targets("reviewer")] == [
            "test-key",
            "test-key",
            None,
        ]


async def test_garbage_body_is_a_clear_error() -> None:
    with ScriptedLLM([Reply.garbage(), Reply.garbage(), Reply.text("never")]) as llm:
        client = make_client(make_settings(llm, max_retries=1))
        with pytest.raises(LLMError) as info:
            await client.complete("reviewer", USER)
    assert len(llm.requests) == 2  # retried like a 5xx
    assert "not valid JSON" in str(info.value)
    assert info.value.hint and "api_base" in info.value.hint


async def test_garbage_then_success() -> None:
    with ScriptedLLM([Reply.garbage(), Reply.text("fine")]) as llm:
        client = make_client(make_settings(llm))
        assert (await client.complete("reviewer", USER)).content == "fine"


async def test_truncated_answer_is_asked_again_with_more_room() -> None:
    with ScriptedLLM([Reply.truncated(), Reply.text("short and whole")]) as llm:
        client = make_client(make_settings(llm))
        r = await client.complete("reviewer", USER, max_tokens=100)
    assert r.content == "short and whole"
    assert r.finish_reason == "stop"
    first, second = llm.requests
    assert first["max_tokens"] == 100
    assert second["max_tokens"] == 200
    assert second["messages"][:-1] == USER
    assert second["messages"][-1] == {"role": "user", "content": TRUNCATION_NOTE}
    assert r.usage.calls == 2  # the truncated attempt is part of what the answer cost


async def test_truncated_twice_raises() -> None:
    with ScriptedLLM([Reply.truncated(), Reply.truncated("still cut")]) as llm:
        client = make_client(make_settings(llm))
        with pytest.raises(LLMTruncated) as info:
            await client.complete("reviewer", USER, max_tokens=100)
    assert info.value.response.content == "still cut"
    assert info.value.response.finish_reason == "length"
    assert "cut off" in str(info.value)


async def test_budget_exceeded_sends_nothing() -> None:
    reply = Reply.text("ok", usage={"prompt_tokens": 8, "completion_tokens": 4})
    with ScriptedLLM([reply, Reply.text("never")]) as llm:
        client = make_client(make_settings(llm, budget_tokens=10))
        await client.complete("reviewer", USER)
        with pytest.raises(BudgetExceeded) as info:
            await client.complete("reviewer", USER)
    assert len(llm.requests) == 1
    assert info.value.spent_tokens == 12
    assert "12 of 10 tokens" in str(info.value)


async def test_usd_budget() -> None:
    reply = Reply.text("ok", usage={"prompt_tokens": 100_000, "completion_tokens": 0})
    with ScriptedLLM([reply]) as llm:
        client = make_client(make_settings(llm, model="openai/gpt-4o-mini", budget_usd=0.001))
        await client.complete("reviewer", USER)
        with pytest.raises(BudgetExceeded, match=r"\$"):
            await client.complete("reviewer", USER)
    assert len(llm.requests) == 1


async def test_concurrency_limit() -> None:
    with ScriptedLLM(handler=lambda body: Reply.slow(0.2, "ok")) as llm:
        client = make_client(make_settings(llm, max_concurrency=2))
        results = await asyncio.gather(*(client.complete("reviewer", USER) for _ in range(6)))
    assert [r.content for r in results] == ["ok"] * 6
    assert llm.max_in_flight == 2


async def test_prompt_tokens_read_from_the_providers_cache_are_reported() -> None:
    usage: Any = {"prompt_tokens": 1000, "completion_tokens": 10}
    usage["prompt_tokens_details"] = {"cached_tokens": 800}
    with ScriptedLLM([Reply.text("ok", usage=usage), Reply.text("ok")]) as llm:
        client = make_client(make_settings(llm))
        first = await client.complete("reviewer", USER)
        await client.complete("reviewer", USER)
    assert first.usage.cached_tokens == 800
    assert client.ledger.cached_tokens == 800
    assert "800 prompt tokens from the provider's cache" in client.ledger.describe()


async def test_a_rate_limit_halves_the_requests_in_flight() -> None:
    # The provider says 429 once; the calls sent after it go at most half as many at once.
    with ScriptedLLM(
        [Reply.rate_limited(retry_after=0.01)], handler=lambda body: Reply.slow(0.2, "ok")
    ) as llm:
        client = make_client(make_settings(llm, max_concurrency=8))
        await client.complete("reviewer", USER)  # 429, then retried: ok
        llm.max_in_flight = 0
        results = await asyncio.gather(*(client.complete("reviewer", USER) for _ in range(8)))
        peak = llm.max_in_flight
        # Successes raise it again, one per round: the limit comes back.
        await asyncio.gather(*(client.complete("reviewer", USER) for _ in range(24)))
        llm.max_in_flight = 0
        await asyncio.gather(*(client.complete("reviewer", USER) for _ in range(8)))
    assert [r.content for r in results] == ["ok"] * 8
    assert peak == 4
    assert llm.max_in_flight == 8


async def test_secrets_are_redacted_before_sending() -> None:
    aws = "AKIAIOSFODNN7EXAMPLE"
    openai_key = "sk-proj-" + "x1y2z3" * 6
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "review this"},
        {"role": "user", "content": f"config:\nAWS_KEY={aws}\nOPENAI={openai_key}\n{pem}"},
        {"role": "user", "content": [{"type": "text", "text": 'password = "hunter2!"'}]},
    ]
    with ScriptedLLM([Reply.text("ok")]) as llm:
        client = make_client(make_settings(llm))
        await client.complete("reviewer", messages)
    sent = json.dumps(llm.requests[0])
    for secret in (aws, openai_key, "MIIEowIBAAKCAQEA7", "hunter2"):
        assert secret not in sent
    assert "[REDACTED:" in sent
    original = messages[1]["content"]
    assert isinstance(original, str) and aws in original  # the caller's messages are untouched


async def test_streaming_delivers_deltas_and_full_response() -> None:
    pieces: list[tuple[str, int]] = []
    with ScriptedLLM([Reply.text("streamed answer, in pieces")]) as llm:
        client = make_client(make_settings(llm))
        r = await client.complete(
            "debater", USER, on_delta=lambda text, n: pieces.append((text, n))
        )
    assert llm.requests[0]["stream"] is True
    assert len(pieces) > 1
    assert "".join(p for p, _ in pieces) == "streamed answer, in pieces"
    assert r.content == "streamed answer, in pieces"
    assert r.usage.total_tokens > 0


async def test_streaming_tool_calls() -> None:
    with ScriptedLLM([Reply.tool("add", {"a": 2, "b": 3})]) as llm:
        client = make_client(make_settings(llm))
        r = await client.complete("debater", USER, on_delta=lambda text, n: None)
    assert [(c.name, json.loads(c.arguments)) for c in r.tool_calls] == [("add", {"a": 2, "b": 3})]


async def test_not_configured() -> None:
    client = LLMClient(Settings())
    with pytest.raises(LLMNotConfigured):
        await client.complete("reviewer", USER)
    assert not client.is_configured("reviewer")


def test_litellm_is_hardened() -> None:
    litellm = load_litellm()
    assert litellm.suppress_debug_info is True
    assert litellm.turn_off_message_logging is True
    assert litellm.set_verbose is False
    assert litellm.success_callback == [] and litellm.callbacks == []
    assert logging.getLogger("LiteLLM").level == logging.WARNING


def test_importing_agent_does_not_import_litellm() -> None:
    code = "import redline.agent, sys; assert 'litellm' not in sys.modules, 'litellm imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


async def test_streamed_truncation_restarts_with_a_new_answer_number() -> None:
    pieces: list[tuple[str, int]] = []
    with ScriptedLLM([Reply.truncated("cut off tex"), Reply.text("whole")]) as llm:
        client = make_client(make_settings(llm))
        r = await client.complete(
            "debater", USER, max_tokens=10, on_delta=lambda text, n: pieces.append((text, n))
        )
    assert r.content == "whole"
    assert "".join(p for p, n in pieces if n == 0) == "cut off tex"
    assert "".join(p for p, n in pieces if n == 1) == "whole"


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx", "abcdefghijklmnop"),
        ("key: AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
        ("ghp_" + "a1" * 18, "a1a1a1a1a1a1"),
        ("github_pat_" + "B2" * 20, "B2B2B2B2B2B2"),
        ("slack xoxb-123456789012-abcdefgh", "123456789012"),
        ('{"client_secret": "s3cr3t-value"}', "s3cr3t-value"),
        ("DB_PASSWORD=correcthorse", "correcthorse"),
        ("https://bob:pa55word@db.example.com/x", "pa55word"),
        ("Authorization: Bearer abc.def.ghi123", "abc.def.ghi123"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----",
            "b3Blbn",
        ),
    ],
)
def test_redact_masks_secrets(text: str, gone: str) -> None:
    out = redact(text)
    assert gone not in out and "[REDACTED:" in out


@pytest.mark.parametrize(
    "code",
    ["token = get_token()", "max_tokens = 100", "self.token = token", "password: str"],
)
def test_redact_keeps_ordinary_code_readable(code: str) -> None:
    assert redact(code) == code


def test_redact_keeps_json_valid() -> None:
    args = json.dumps({"api_key": "abc123456", "path": "a.py"})
    redacted = json.loads(redact(args))
    assert redacted["path"] == "a.py" and redacted["api_key"].startswith("[REDACTED:")


# -- a model that cannot be used ------------------------------------------------------------


async def test_a_refused_key_skips_fallbacks_on_the_same_provider_and_later_calls() -> None:
    with ScriptedLLM(default=Reply.error(401, "bad key")) as llm:
        client = make_client(make_settings(llm, fallbacks=["openai/backup"]))
        for _ in range(3):  # e.g. parallel reviewers: only the first call reaches the server
            with pytest.raises(ModelUnusable) as info:
                await client.complete("reviewer", USER)
    assert len(llm.requests) == 1  # the same key would be refused for openai/backup too
    assert info.value.kind == "auth"
    assert client.unusable is not None and client.unusable.message == str(info.value.message)


async def test_an_unknown_model_is_not_retried_but_its_fallback_is_tried() -> None:
    replies = [Reply.error(404, "The model `scripted` does not exist"), Reply.text("from backup")]
    with ScriptedLLM(replies) as llm:
        client = make_client(make_settings(llm, fallbacks=["openai/backup"]))
        r = await client.complete("reviewer", USER)
    assert r.content == "from backup" and r.model == "openai/backup"
    assert [q["model"] for q in llm.requests] == ["scripted", "backup"]
    assert client.unusable is not None
    assert client.unusable.message == (
        f"model openai/scripted at {llm.base_url}: the server does not know this model (404): "
        "The model `scripted` does not exist"
    )


async def test_a_host_name_that_does_not_resolve_is_named_and_not_retried() -> None:
    settings = Settings(
        models=ModelSettings(
            model="openai/x", api_base="http://no-such-host.invalid/v1", api_key="k"
        ),
        llm=LLMSettings(timeout=5.0, max_retries=2),
    )
    client = make_client(settings)
    with pytest.raises(ModelUnusable) as info:
        await client.complete("reviewer", USER)
    assert info.value.message == (
        "model openai/x at http://no-such-host.invalid/v1: the host name no-such-host.invalid "
        "does not resolve"
    )
    assert client.requests_sent == 1
