"""Frames a client gets wrong, seen by a raw client over stdio: a body that is not JSON (or not
UTF-8) behind a valid Content-Length answers JSON-RPC's Parse error (-32700, id null); JSON that
is no message answers Invalid Request (-32600, id null). Never an "Error in server" popup, and
the connection lives on: the next frame is answered as usual."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raw_rpc import RawClient

from gitrepo import GitRepo
from lsp_support import server_env

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


@pytest.fixture
def client(repo: GitRepo, tmp_path: Path) -> Iterator[RawClient]:
    repo.write("a.py", "x = 1\n")
    repo.commit("init")
    c = RawClient(server_env(tmp_path / "cache"), repo.root)
    c.initialize(repo.root)
    yield c
    if c.proc.poll() is None:
        c.close()


def _raw_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _errors_without_id(client: RawClient) -> list[dict[str, object]]:
    return [m for m in client.messages if "error" in m and m.get("id") is None]


def _popups(client: RawClient) -> list[str]:
    return [
        m["params"]["message"] for m in client.messages if m.get("method") == "window/showMessage"
    ]


def _still_answers(client: RawClient) -> None:
    answer = client.request("redline/debugInfo", {}, timeout=10)
    assert "result" in answer, answer


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown"',  # cut short
        b"{not json at all}",
        b'{"jsonrpc": "2.0", "id": 2, "method": "redline/debugInfo", "params": {"a": "\xff\xfe"}}',
        b"",  # an empty body: Content-Length: 0
    ],
    ids=["truncated", "garbage", "not-utf8", "empty"],
)
def test_a_broken_frame_answers_parse_error_and_the_next_frame_is_answered(
    client: RawClient, body: bytes
) -> None:
    client.send_bytes(_raw_frame(body))
    if body:
        answer = client.wait_for(lambda m: "error" in m and m.get("id") is None, timeout=10)
        assert answer["error"]["code"] == PARSE_ERROR, answer
        assert answer["jsonrpc"] == "2.0"
    _still_answers(client)
    assert _popups(client) == []
    assert len(_errors_without_id(client)) == (1 if body else 0)
    assert client.request("shutdown")["result"] is None
    client.notify("exit")
    assert client.close() == 0


@pytest.mark.parametrize(
    "value",
    [[1, 2], 5, "text", None, {"id": 3, "method": "shutdown"}, []],
    ids=["batch", "number", "string", "null", "no-jsonrpc", "empty-batch"],
)
def test_json_that_is_no_message_answers_invalid_request(client: RawClient, value: object) -> None:
    client.send_bytes(_raw_frame(json.dumps(value).encode()))
    answer = client.wait_for(lambda m: "error" in m and m.get("id") is None, timeout=10)
    assert answer["error"]["code"] == INVALID_REQUEST, answer
    _still_answers(client)
    assert _popups(client) == []


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=st.binary(min_size=1, max_size=64))
def test_any_bytes_get_one_answer_and_the_server_lives_on(client: RawClient, body: bytes) -> None:
    """Whatever the body, one error answer without id (or none, when the bytes happen to be a
    valid message) and no popup; the server answers the next request."""
    before = len(_errors_without_id(client))
    client.send_bytes(_raw_frame(body))
    _still_answers(client)
    errors = _errors_without_id(client)[before:]
    assert len(errors) <= 1, errors
    try:
        json.loads(body)
    except ValueError:
        assert [e["error"]["code"] for e in errors] == [PARSE_ERROR], (body, errors)
    assert _popups(client) == []
