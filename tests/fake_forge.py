#!/usr/bin/env python3
"""A fake `gh` and `glab` for the posting tests: answers like the real CLIs and REST APIs.

Installed by tests/test_publish.py as `<dir>/gh` and `<dir>/glab` (copies of this file). The
forge's state lives in `<dir>/state.json` — the pull request, its diff, the comments, notes and
discussions, the account, and which new-side lines the forge's own diff shows (`valid`) — and
every call is appended to `<dir>/calls.jsonl` (argv, stdin, the environment's keys), so a test
asserts on what was sent. Standard library only: the runner gives it a scrubbed environment.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STATE = HERE / "state.json"
TOOL = Path(sys.argv[0]).name


def load() -> dict[str, Any]:
    return json.loads(STATE.read_text())


def save(state: dict[str, Any]) -> None:
    STATE.write_text(json.dumps(state, indent=1))


def reply(status: int, data: Any) -> int:
    reason = {200: "OK", 201: "Created", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
              422: "Unprocessable Entity"}.get(status, "Status")  # fmt: skip
    sys.stdout.write(f"HTTP/2.0 {status} {reason}\r\nContent-Type: application/json\r\n\r\n")
    sys.stdout.write(json.dumps(data))
    if status >= 300:
        sys.stderr.write(f"{TOOL}: {reason} (HTTP {status})\n")
        return 1
    return 0


def page(items: list[Any], query: str) -> list[Any]:
    params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
    size = int(params.get("per_page", "30"))
    number = int(params.get("page", "1"))
    return items[(number - 1) * size : number * size]


def line_ok(state: dict[str, Any], path: str, line: object) -> bool:
    return isinstance(line, int) and line in state["valid"].get(path, [])


def github(state: dict[str, Any], method: str, endpoint: str, body: Any) -> int:
    path, _, query = endpoint.partition("?")
    # `actor`: who the token posts as when it may not read /user (Actions' GITHUB_TOKEN).
    me = {"login": state.get("actor") or state["login"]}
    repo = f"repos/{state['slug']}"
    n = state["number"]
    if state.get("api_down"):
        sys.stderr.write("HTTP 401: Bad credentials\n")
        return 1
    if (method, path) == ("GET", "user"):
        return (
            reply(200, me)
            if state["login"]
            else reply(403, {"message": "Resource not accessible by integration"})
        )
    if (method, path) == ("GET", f"{repo}/pulls/{n}"):
        # `api_head`: the PR's head as the API says it, when it moved on since `pr view`.
        head = state.get("api_head") or state["pr"]["headRefOid"]
        return reply(200, {"number": n, "head": {"sha": head}})
    if (method, path) == ("GET", f"{repo}/issues/{n}/comments"):
        return reply(200, page(state["issue_comments"], query))
    if (method, path) == ("POST", f"{repo}/issues/{n}/comments"):
        state["next_id"] += 1
        url = f"https://github.com/{state['slug']}/pull/{n}#issuecomment-{state['next_id']}"
        comment = {"id": state["next_id"], "body": body["body"], "user": me, "html_url": url}
        state["issue_comments"].append(comment)
        save(state)
        return reply(201, comment)
    match = re.fullmatch(rf"{re.escape(repo)}/issues/comments/(\d+)", path)
    if method == "PATCH" and match:
        for comment in state["issue_comments"]:
            if comment["id"] == int(match.group(1)):
                if comment["user"]["login"] != me["login"]:
                    return reply(403, {"message": "Must have admin rights to Repository."})
                comment["body"] = body["body"]
                save(state)
                return reply(200, comment)
        return reply(404, {"message": "Not Found"})
    if (method, path) == ("GET", f"{repo}/pulls/{n}/comments"):
        return reply(200, page(state["review_comments"], query))
    if (method, path) == ("POST", f"{repo}/pulls/{n}/reviews"):
        if body.get("commit_id") != state["pr"]["headRefOid"]:
            return reply(
                422,
                {
                    "message": "Unprocessable Entity",
                    "errors": ["commit_id is not part of the pull request"],
                },
            )
        comments = body.get("comments", [])
        bad = [
            c
            for c in comments
            if not all(
                line_ok(state, c["path"], x) for x in (c.get("start_line", c["line"]), c["line"])
            )
        ]
        if bad:
            return reply(
                422, {"message": "Unprocessable Entity", "errors": ["Line could not be resolved"]}
            )
        for c in comments:
            state["next_id"] += 1
            state["review_comments"].append({"id": state["next_id"], "user": me, **c})
        save(state)
        return reply(200, {"id": 1, "state": "COMMENTED"})
    if (method, path) == ("POST", f"{repo}/pulls/{n}/comments"):
        c = body
        if not all(
            line_ok(state, c["path"], x) for x in (c.get("start_line", c["line"]), c["line"])
        ):
            return reply(
                422,
                {"message": "Validation Failed", "errors": [{"field": "line", "code": "invalid"}]},
            )
        state["next_id"] += 1
        state["review_comments"].append({"id": state["next_id"], "user": me, **c})
        save(state)
        return reply(201, state["review_comments"][-1])
    return reply(404, {"message": f"Not Found: {method} {path}"})


def gitlab(state: dict[str, Any], method: str, endpoint: str, body: Any) -> int:
    path, _, query = endpoint.partition("?")
    me = {"username": state["login"]}
    mr = f"projects/{state['project_id']}/merge_requests/{state['number']}"
    if (method, path) == ("GET", "user"):
        return reply(200, me)
    if (method, path) == ("GET", mr):
        return reply(200, {"iid": state["number"], "diff_refs": state["mr"]["diff_refs"]})
    if (method, path) == ("GET", f"{mr}/notes"):
        return reply(200, page(state["issue_comments"], query))
    if (method, path) == ("POST", f"{mr}/notes"):
        state["next_id"] += 1
        note = {"id": state["next_id"], "body": body["body"], "author": me}
        state["issue_comments"].append(note)
        save(state)
        return reply(201, note)
    match = re.fullmatch(rf"{re.escape(mr)}/notes/(\d+)", path)
    if method == "PUT" and match:
        for note in state["issue_comments"]:
            if note["id"] == int(match.group(1)):
                note["body"] = body["body"]
                save(state)
                return reply(200, note)
        return reply(404, {"message": "404 Not found"})
    if (method, path) == ("GET", f"{mr}/discussions"):
        return reply(200, page(state["review_comments"], query))
    if (method, path) == ("POST", f"{mr}/discussions"):
        position = body.get("position") or {}
        refs = state["mr"]["diff_refs"]
        if any(position.get(k) != refs[k] for k in ("base_sha", "head_sha", "start_sha")):
            return reply(400, {"message": '400 Bad request - Note {:position=>["is invalid"]}'})
        if not line_ok(state, position.get("new_path", ""), position.get("new_line")):
            return reply(
                400,
                {"message": "400 Bad request - Note {:line_code=>[must be a valid line code]}"},
            )
        state["next_id"] += 1
        note = {"id": state["next_id"], "body": body["body"], "author": me, "position": position}
        state["review_comments"].append({"id": f"d{state['next_id']}", "notes": [note]})
        save(state)
        return reply(201, state["review_comments"][-1])
    return reply(404, {"message": f"404 Not found: {method} {path}"})


def main(argv: list[str]) -> int:
    stdin = ""
    if "--input" in argv and argv[argv.index("--input") + 1] == "-":
        stdin = sys.stdin.read()
    with (HERE / "calls.jsonl").open("a") as log:
        log.write(
            json.dumps({"tool": TOOL, "argv": argv, "stdin": stdin, "env": sorted(os.environ)})
            + "\n"
        )
    state = load()
    if argv[:2] == ["auth", "status"]:
        return 0 if state.get("logged_in", True) else 1
    if TOOL == "gh" and argv[:2] == ["pr", "view"]:
        print(json.dumps(state["pr"]))
        return 0
    if argv[:2] in (["pr", "diff"], ["mr", "diff"]):
        sys.stdout.write(state["diff"])
        return 0
    if TOOL == "glab" and argv[:2] == ["mr", "view"]:
        print(json.dumps(state["mr"]))
        return 0
    if argv[:1] == ["api"]:
        method = argv[argv.index("--method") + 1] if "--method" in argv else "GET"
        endpoint = argv[-1]
        body = json.loads(stdin) if stdin else None
        return (github if TOOL == "gh" else gitlab)(state, method, endpoint, body)
    sys.stderr.write(f"{TOOL}: unknown command {argv!r}\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
