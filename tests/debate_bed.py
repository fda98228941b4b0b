"""A debate test bed: a repository with a change on a branch, debaters each with their own
scripted model, and a handler that plays them (by the model name in the request)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from redline.config_models import Settings

from gitrepo import GitRepo
from scripted_llm import Reply, ScriptedLLM

APP_BEFORE = """\
import sqlite3


def find_user(db, name):
    return db.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()
"""

APP_AFTER = """\
import sqlite3


def find_user(db, name):
    query = "SELECT * FROM users WHERE name = '" + name + "'"
    return db.execute(query).fetchone()


def all_users(db):
    rows = []
    for row in db.execute("SELECT id FROM users").fetchall():
        rows.append(db.execute("SELECT * FROM users WHERE id = ?", (row[0],)).fetchone())
    return rows
"""

NAMES = ("alice", "bob", "carol")
ROUND = re.compile(r"Round (\d+) of (\d+)")
TURN_MARK = "# Your turn"
COMPACT_MARK = "You keep the record of a code review debate"


def make_repo(root: Path) -> GitRepo:
    repo = GitRepo(root)
    repo.write("app/users.py", APP_BEFORE)
    repo.commit("users")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app/users.py", APP_AFTER)
    repo.commit("build the query by hand; list all users")
    return repo


def debate_settings(llm: ScriptedLLM, names: tuple[str, ...] = NAMES, **debate: Any) -> Settings:
    return Settings.model_validate(
        {
            "models": {"api_base": llm.base_url, "api_key": "sk-test-key-not-secret"},
            "llm": {"max_retries": 0, "timeout": 20},
            "debate": {
                "reviewers": {
                    n: {"model": f"openai/{n}-model", "prompt": f"You are {n}, a reviewer."}
                    for n in names
                },
                "summarizer": {"model": "openai/judge-model"},
                **debate,
            },
        }
    )


def speaker(body: dict[str, Any]) -> str:
    return str(body.get("model", "")).removesuffix("-model")


def last_user(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages", [])):
        if m.get("role") == "user":
            content = m.get("content")
            return content if isinstance(content, str) else str(content)
    return ""


def is_turn(body: dict[str, Any]) -> bool:
    return TURN_MARK in last_user(body)


def round_of(body: dict[str, Any]) -> int:
    m = ROUND.search(last_user(body))
    return int(m.group(1)) if m else 0


TurnAnswer = Callable[[str, int, dict[str, Any]], Reply | str | None]


class DebateScript:
    """Plays every debater's turns (`turn(name, round, body)`), compaction and the conclusion
    (`other(body)`); records the order turns were asked in."""

    def __init__(self, turn: TurnAnswer, other: Callable[[dict[str, Any]], Any] | None = None):
        self.turn = turn
        self.other = other
        self.order: list[tuple[str, int]] = []

    def __call__(self, body: dict[str, Any]) -> Reply | str | None:
        if is_turn(body):
            name, rnd = speaker(body), round_of(body)
            self.order.append((name, rnd))
            answer = self.turn(name, rnd, body)
            return Reply.text(answer) if isinstance(answer, str) else answer
        if COMPACT_MARK in last_user(body):
            return Reply.text(f"summary by {speaker(body)}: earlier turns discussed app/users.py")
        if self.other is not None:
            return self.other(body)  # type: ignore[no-any-return]
        return Reply.text("I hold my position on app/users.py.")
