"""Secrets end to end: a repository full of them (tests/secret_corpus.py, 60 kinds) reviewed by
the CLI (`review` and `ask`) and by the language server, with a scripted model on 127.0.0.1 that
records every request body — and that, playing a compromised model, writes a secret into its
own answers.

Asserted on effects: no corpus value in any request the model received, in any file under the
cache directory (task records, cached answers), in the report, on stderr, in the language
server's log file, or in anything the editor received (diagnostics, log and show messages,
review-state and findings notifications, hovers); the same secret gets the same placeholder in
every file; ordinary code reaches the model unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from model_env import isolate_model_env
from redline.cli.main import main
from redline.redaction import get_redactor

from gitrepo import GitRepo
from lsp_support import Session, plain, server_env, start_session, stop_session
from review_script import ReviewScript, role_of
from scripted_llm import Reply, ScriptedLLM
from secret_corpus import CORPUS, ORDINARY

API_KEY = "sk-test-key-not-secret"
STRIPE = next(s for s in CORPUS if s.kind == "stripe-live")
DSN = next(s for s in CORPUS if s.kind == "postgres-dsn")
PASSWORD = next(s for s in CORPUS if s.kind == "python-password")
STRIPE_KEY, DSN_PASSWORD, DB_PASSWORD = STRIPE.needles[0], DSN.needles[0], PASSWORD.needles[0]
# The same secrets again in another file: their placeholders must match.
REUSE = (
    "deploy/release.sh",
    f"#!/bin/sh\nexport STRIPE_SECRET_KEY={STRIPE_KEY}\n"
    f"psql postgresql://app_user:{DSN_PASSWORD}@db.internal:5432/app -c 'select 1'\n",
)
NEEDLES = sorted({n for s in CORPUS for n in s.needles} | {API_KEY})
# Lines of ordinary code that name secrets without holding one: they must reach the model.
READABLE = [
    "token = get_token()",
    "max_tokens = 100",
    "password_hash = hash_password(secret)",
    'token_type = "bearer"',
    'secret = os.environ["APP_SECRET"]',
    "def load(password_file: str) -> str:",
    "const password = creds.password;",
    "password_min_length: 12",
    "secret_name: app-session",
]


def build_repo(root: Path) -> GitRepo:
    repo = GitRepo(root)
    repo.write("README.md", "# shop\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    for secret in CORPUS:
        path = repo.root / secret.path
        existing = path.read_text() if path.exists() else ""
        repo.write(secret.path, existing + secret.text)
    for rel, text in [*ORDINARY.items(), REUSE]:
        repo.write(rel, text)
    repo.commit("add services, keys and configuration")
    return repo


def leaks(text: str) -> list[str]:
    return [n for n in NEEDLES if n in text]


def cache_leaks(cache: Path) -> dict[str, list[str]]:
    found = {}
    for path in cache.rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", errors="replace")
            if hits := leaks(text):
                found[str(path.relative_to(cache))] = hits
    return found


class LeakyModel:
    """The review script, plus a compromised model: its reviewer answer for billing/stripe.py
    quotes the real key (as if it had it from elsewhere), so what Redline stores and shows of
    a model's answer is checked too, not only what it sends."""

    def __init__(self) -> None:
        self.script = ReviewScript(
            findings={
                "billing/stripe.py": [
                    {
                        "line": 1,
                        "severity": "High",
                        "category": "Security",
                        "title": "Hard-coded Stripe key",
                        "comment": f"The live key {STRIPE_KEY} is committed; rotate it.",
                        "existing_code": f'stripe.api_key = "{STRIPE_KEY}"',
                        "improved_code": 'stripe.api_key = os.environ["STRIPE_API_KEY"]',
                        "confidence": 0.9,
                    }
                ]
            }
        )

    def __call__(self, body: dict[str, Any]) -> Reply:
        return self.script(body)


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_model_env(
        monkeypatch, tmp_path, user_config="[llm]\nmax_retries = 0\ntimeout = 30\n", api_key=API_KEY
    )


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return build_repo(tmp_path / "repo")


@pytest.fixture
def model() -> LeakyModel:
    return LeakyModel()


@pytest.fixture
def llm(model: LeakyModel) -> Iterator[ScriptedLLM]:
    with ScriptedLLM(handler=model) as server:
        yield server


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_review_sends_stores_and_shows_no_secret(
    repo: GitRepo, llm: ScriptedLLM, model: LeakyModel, tmp_path: Path, capsys: Any
) -> None:
    code, out, err = cli(
        capsys,
        "review", "--branch", "main", "--repo", str(repo.root), "--format", "json",
        "--model", "openai/scripted", "--api-base", llm.base_url,
    )  # fmt: skip
    assert code == 0, err
    sent = json.dumps(llm.requests)
    # Every file went to a reviewer (small files share a call: each under its own heading).
    reviewed = {
        path
        for r in llm.requests
        if role_of(r) == "reviewer"
        for path in re.findall(r"^# File under review: `(.+?)`", user_text(r), re.MULTILINE)
    }
    assert {s.path for s in CORPUS} - {".env"} <= reviewed

    assert leaks(sent) == []
    assert cache_leaks(tmp_path / "cache") == {}
    assert leaks(out) == [] and leaks(err) == []

    # The reviewer can still say what is where, and two mentions stay linked.
    redactor = get_redactor()
    for value, kind in ((STRIPE_KEY, "stripe-key"), (DSN_PASSWORD, "url-password")):
        placeholder = redactor.placeholder(value, kind)
        prompts = [user_text(r) for r in llm.requests if role_of(r) == "reviewer"]
        assert sum(p.count(placeholder) for p in prompts) >= 2, (kind, placeholder)
    assert redactor.placeholder(DB_PASSWORD, "password") in sent

    # Ordinary code is not masked.
    for line in READABLE:
        assert json.dumps(line)[1:-1] in sent, line

    # The finding survives with the key masked in the report.
    report = json.loads(out)
    stripe = next(f for f in report["findings"] if f["title"] == "Hard-coded Stripe key")
    assert "[REDACTED:stripe-key:" in stripe["comment"]


def user_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


AGENT_MARK = "You are Redline's review agent"


def test_ask_tool_results_and_submissions_carry_no_secret(
    repo: GitRepo, model: LeakyModel, tmp_path: Path, capsys: Any
) -> None:
    steps = [
        Reply.tool("git", {"command": "diff main...HEAD"}),
        Reply.tool("read_file", {"path": "config/database.yml"}),
        Reply.tool("read_file", {"path": "config/settings.json"}),
        Reply.tool("git", {"command": "show HEAD:billing/stripe.py"}),
        Reply.tool("read_file", {"path": "keys/deploy.ppk"}),
        Reply.tool("read_file", {"path": ".env"}),
        Reply.tool(
            "submit_review",
            {
                "summary": f"Keys are committed, e.g. {STRIPE_KEY} and {DB_PASSWORD}.",
                "findings": [
                    {
                        "file": "app/settings.py",
                        "line": 1,
                        "severity": "High",
                        "category": "Security",
                        "title": "Hard-coded database password",
                        "comment": f"{DB_PASSWORD} is in the code.",
                        "existing_code": f'DB_PASSWORD = "{DB_PASSWORD}"',
                        "confidence": 0.9,
                    }
                ],
            },
        ),
    ]

    def handler(body: dict[str, Any]) -> Reply:
        messages = body.get("messages", [])
        if not messages or AGENT_MARK not in str(messages[0].get("content")):
            return model(body)
        step = sum(1 for m in messages if m.get("role") == "assistant")
        return steps[min(step, len(steps) - 1)]

    with ScriptedLLM(handler=handler) as llm:
        code, out, err = cli(
            capsys,
            "ask", "review the feature branch against main", "--repo", str(repo.root),
            "--format", "json", "--model", "openai/scripted", "--api-base", llm.base_url,
        )  # fmt: skip
        requests = list(llm.requests)
    assert code == 0, err
    tool_results = [
        str(m["content"]) for r in requests for m in r["messages"] if m.get("role") == "tool"
    ]
    assert len(tool_results) >= 5
    assert any("[REDACTED:" in t for t in tool_results)  # the tools did return secrets, masked
    assert leaks(json.dumps(requests)) == []
    assert cache_leaks(tmp_path / "cache") == {}
    assert leaks(out) == [] and leaks(err) == []


# -- the language server ---------------------------------------------------------------------


@pytest.fixture
async def session(repo: GitRepo, llm: ScriptedLLM, tmp_path: Path) -> AsyncIterator[Session]:
    cache = tmp_path / "lsp-cache"
    cache.mkdir()
    user = cache / "user.toml"
    user.write_text("[llm]\nmax_retries = 0\ntimeout = 30\n", encoding="utf-8")
    env = server_env(
        cache,
        REDLINE_CONFIG=str(user),
        REDLINE_MODEL="openai/scripted",
        REDLINE_API_BASE=llm.base_url,
        REDLINE_API_KEY=API_KEY,
        REDLINE_LSP_LOG="DEBUG",
        REDLINE_LSP_LOG_FILE=str(tmp_path / "lsp.log"),
    )
    s = await start_session(repo.root, "vscode", env)
    yield s
    await stop_session(s)


async def test_the_editor_and_the_server_log_see_no_secret(
    session: Session, llm: ScriptedLLM, tmp_path: Path
) -> None:
    s = session
    task = await s.review(scope="branch", base="main")
    done = await s.finished(task, timeout=90)
    assert done["state"] == "finished", done
    # A hover on the compromised model's finding and on an analyzer's hard-coded password.
    hovers = []
    for rel in ("billing/stripe.py", "app/settings.py"):
        s.open(rel)
        hover = await s.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=s.uri(rel)),
                position=types.Position(line=0, character=4),
            )
        )
        hovers.append(json.dumps(plain(hover.contents) if hover else None, default=str))
    assert any("[REDACTED:" in h for h in hovers)

    received = {
        "diagnostics": [d.message for ds in s.client.diagnostics.values() for d in ds],
        "log": [m.message for m in s.client.log_messages],
        "show": [m.message for m in s.client.messages],
        "states": s.states,
        "findings": s.findings,
        "hovers": hovers,
    }
    assert received["diagnostics"], "the review published no diagnostics"
    assert leaks(json.dumps(received, default=str)) == []
    assert leaks(json.dumps(llm.requests)) == []
    assert cache_leaks(tmp_path / "lsp-cache") == {}
    log = (tmp_path / "lsp.log").read_text(encoding="utf-8")
    assert "language server starting" in log
    assert leaks(log) == []
