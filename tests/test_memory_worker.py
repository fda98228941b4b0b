"""`redline memory worker`'s request lines (memory/worker.py): any line is either the paths
it names or a clear RedlineError, never another exception (generated lines), and the serving
loop answers every line, one JSON line each, until its input ends. The worker building for
real is tested through the installed CLI (tests/test_memory_cli.py) and the language server
(tests/test_memory_refresh.py, tests/test_lsp_memory_refresh.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.config_models import Settings
from redline.errors import RedlineError
from redline.memory import worker as worker_mod
from redline.memory.worker import parse_request, serve

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


@given(st.text(max_size=200))
def test_any_text_is_paths_or_a_clear_error(line: str) -> None:
    try:
        paths = parse_request(line)
    except RedlineError as exc:
        assert str(exc).startswith("memory worker: ")
        return
    assert paths is None or all(isinstance(p, str) and p for p in paths)


@given(_json)
def test_any_json_is_paths_or_a_clear_error(value: object) -> None:
    try:
        paths = parse_request(json.dumps(value))
    except RedlineError:
        return
    assert isinstance(value, dict) and value["paths"] == paths


@given(st.lists(st.text(min_size=1, max_size=30), max_size=20) | st.none())
def test_well_formed_requests_round_trip(paths: list[str] | None) -> None:
    assert parse_request(json.dumps({"paths": paths})) == paths


def test_serve_answers_each_line_and_ends_with_its_input(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    asked: list[list[str] | None] = []

    def fake_build(self: worker_mod.Worker, paths: list[str] | None) -> dict[str, object]:
        asked.append(paths)
        return {"ok": True, "summary": "done", "seconds": 0.0, "embedded": 0}

    monkeypatch.setattr(worker_mod.Worker, "_build", fake_build)
    lines = b'{"paths": null}\n\nnot json\n{"paths": ["a.py"]}\n' + b"x" * (2 << 20) + b"\n"
    out = io.BytesIO()
    assert serve(tmp_path, Settings(), io.BytesIO(lines), out) == 0
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert asked == [None, ["a.py"]]
    assert [a["ok"] for a in answers] == [True, False, True, False]
    assert answers[1]["error"].startswith("redline: error: memory worker: a request is")
    assert answers[3]["error"] == "redline: error: memory worker: request too long"
