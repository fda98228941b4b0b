"""The scripted server on its own (plain HTTP, no litellm): the contract other tests rely on."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from scripted_llm import Reply, ScriptedLLM


def post(llm: ScriptedLLM, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(
        llm.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer k"},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


BODY = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}]}


def test_replies_in_order_and_requests_recorded() -> None:
    script = [
        Reply.text("one", usage={"prompt_tokens": 7, "completion_tokens": 2}),
        Reply.tool("add", {"a": 1}),
        Reply.rate_limited(retry_after=3),
        Reply.error(503),
        Reply.garbage("nope"),
        Reply.truncated("cut"),
    ]
    with ScriptedLLM(script) as llm:
        status, _, raw = post(llm, BODY)
        data = json.loads(raw)
        assert status == 200
        assert data["choices"][0]["message"]["content"] == "one"
        assert data["choices"][0]["finish_reason"] == "stop"
        assert data["usage"] == {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}

        data = json.loads(post(llm, BODY)[2])
        call = data["choices"][0]["message"]["tool_calls"][0]
        assert call["function"] == {"name": "add", "arguments": '{"a": 1}'}
        assert data["choices"][0]["finish_reason"] == "tool_calls"

        status, headers, _ = post(llm, BODY)
        assert status == 429 and headers["Retry-After"] == "3"
        assert post(llm, BODY)[0] == 503
        assert post(llm, BODY)[2] == b"nope"
        assert json.loads(post(llm, BODY)[2])["choices"][0]["finish_reason"] == "length"

        status, _, raw = post(llm, BODY)
        assert status == 400 and b"script exhausted" in raw
        assert len(llm.requests) == 7 and llm.requests[0] == BODY
        assert llm.headers[0]["authorization"] == "Bearer k"


def test_handler_and_default() -> None:
    def handler(body: dict[str, Any]) -> str | None:
        return "echo: " + body["messages"][-1]["content"] if body["model"] == "echo" else None

    with ScriptedLLM(handler=handler, default={"content": "fallback"}) as llm:
        first = json.loads(post(llm, {**BODY, "model": "echo"})[2])
        second = json.loads(post(llm, BODY)[2])
    assert first["choices"][0]["message"]["content"] == "echo: hi"
    assert second["choices"][0]["message"]["content"] == "fallback"


def test_stream_is_server_sent_events() -> None:
    with ScriptedLLM([Reply.text("abcdef")]) as llm:
        body = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
        status, headers, raw = post(llm, body)
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    events = [line[6:] for line in raw.decode().split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "abcdef"
    assert chunks[-1]["usage"]["total_tokens"] > 0


def test_delay_and_close_does_not_hang() -> None:
    llm = ScriptedLLM([Reply.slow(30)]).start()
    with pytest.raises(OSError):
        urllib.request.urlopen(
            urllib.request.Request(
                llm.base_url + "/chat/completions", data=json.dumps(BODY).encode()
            ),
            timeout=0.2,
        )
    start = time.monotonic()
    llm.close()
    assert time.monotonic() - start < 2


def test_standalone(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [{"content": "first"}], "default": "again"}))
    with ScriptedLLM() as probe:  # borrow a free port
        port = probe.port
    server = str(Path(__file__).parent / "scripted_llm.py")
    proc = subprocess.Popen(
        [sys.executable, server, "--port", str(port), "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert "scripted model server" in proc.stdout.readline()
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        for expected in ("first", "again", "again"):
            req = urllib.request.Request(url, data=json.dumps(BODY).encode())
            with urllib.request.urlopen(req, timeout=5) as resp:
                assert json.loads(resp.read())["choices"][0]["message"]["content"] == expected
    finally:
        proc.terminate()
        proc.wait(timeout=5)
