"""`--post`: the review on the pull request, as a user runs it (the real CLI in a subprocess, a
real repository) against fake `gh`/`glab` executables that answer like GitHub's and GitLab's
REST APIs (tests/fake_forge.py). Asserted on what the forge ends up holding and on each request
that was sent: a summary created then updated in place, inline comments with suggestion blocks
on the right lines, a refused line moved to the summary, no duplicates on a re-run, a dry run
that sends nothing. Pure parts (diff map, placement, bodies, markers) are tested directly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from redline.enums import Category, FixState, Severity
from redline.model import Finding, Review
from redline.publish.bodies import MAX_BODY, inline_body, summary_body
from redline.publish.diff_map import diff_map
from redline.publish.markers import posted_finding, summary_kind
from redline.publish.placement import place
from redline.publish.transport import parse_included

from forge_bed import Forge, github_forge
from gitrepo import GitRepo

SLUG = "acme/widgets"

# Ruff, offline: S602 (shell=True with a variable command) on line 6, F401 (unused `os`, fixed
# by deleting the line) on line 1.
BASE = "x = 1\n"
FEATURE = "import os\nimport subprocess\n\n\ndef run(cmd):\n    subprocess.call(cmd, shell=True)\n"


# -- the pure parts -------------------------------------------------------------------------

DIFF = """diff --git a/a.py b/a.py
index 1111111..2222222 100644
--- a/a.py
+++ b/a.py
@@ -1,4 +1,5 @@
 one
-two
+TWO
+three
 four
 five
@@ -20,2 +21,2 @@ def f():
 keep
-old
+new
diff --git a/old.py b/new.py
similarity index 90%
rename from old.py
rename to new.py
index 3333333..4444444 100644
--- a/old.py
+++ b/new.py
@@ -3,1 +3,1 @@
-a
+b
"""


def finding(
    line: int | None,
    end: int | None = None,
    improved: str | None = None,
    file: str = "a.py",
    fix: FixState = FixState.PARSES,
    title: str = "A problem",
    fid: str = "RL-000000000001",
) -> Finding:
    return Finding(
        id=fid, file=file, line=line, end_line=end, severity=Severity.HIGH,
        category=Category.FUNCTIONALITY, title=title, comment="Why it matters.", existing_code="x",
        improved_code=improved, confidence=0.8, sources=["model:m"], fix=fix,
    )  # fmt: skip


def test_diff_map_knows_added_context_and_old_lines() -> None:
    dmap = diff_map(DIFF)
    assert dmap.is_added("a.py", 2) and dmap.is_added("a.py", 3)
    assert not dmap.is_added("a.py", 1)
    assert dmap.old_line("a.py", 1) == 1 and dmap.old_line("a.py", 4) == 3
    assert dmap.old_line("a.py", 2) is None  # added: no old side
    assert dmap.covers("a.py", 1, 5) and not dmap.covers("a.py", 5, 21)  # two hunks
    assert dmap.hunk("a.py", 10) is None
    assert dmap.old_path("new.py") == "old.py" and dmap.old_path("a.py") == "a.py"


def test_placement_spans_a_suggestion_only_over_exactly_its_lines() -> None:
    dmap = diff_map(DIFF)
    spanning = finding(2, 3, "TWO = 2\nthree = 3", fid="RL-00000000000a")
    across_hunks = finding(5, 21, "x", fid="RL-00000000000b")
    not_applicable = finding(2, 2, "y", fix=FixState.DOES_NOT_PARSE, fid="RL-00000000000c")
    outside = finding(10, fid="RL-00000000000d")
    unanchored = finding(None, fid="RL-00000000000e")
    earlier = finding(22, fid="RL-00000000000f")
    placed = place(
        [spanning, across_hunks, not_applicable, outside, unanchored, earlier],
        dmap,
        posted={"RL-00000000000f"},
    )
    by_id = {c.finding.id: c for c in placed.inline}
    assert (by_id["RL-00000000000a"].first, by_id["RL-00000000000a"].last) == (2, 3)
    assert by_id["RL-00000000000a"].suggestion
    # Cannot span two hunks: a one-line comment on the first line, code shown as text.
    assert (by_id["RL-00000000000b"].first, by_id["RL-00000000000b"].last) == (5, 5)
    assert not by_id["RL-00000000000b"].suggestion
    assert not by_id["RL-00000000000c"].suggestion
    assert [f.id for f in placed.outside] == ["RL-00000000000d", "RL-00000000000e"]
    assert [f.id for f in placed.already] == ["RL-00000000000f"]


def test_inline_bodies_carry_suggestions_for_each_forge() -> None:
    dmap = diff_map(DIFF)
    [comment] = place([finding(2, 3, "TWO = 2\nthree = 3")], dmap, set()).inline
    github = inline_body(comment, "github")
    assert "```suggestion\nTWO = 2\nthree = 3\n```" in github
    assert posted_finding(github) == "RL-000000000001"
    # GitLab anchors on the last line and reaches up: -1 line above, +0 below.
    assert "```suggestion:-1+0\nTWO = 2\nthree = 3\n```" in inline_body(comment, "gitlab")
    [deletion] = place([finding(2, 2, "")], dmap, set()).inline
    assert "```suggestion\n```" in inline_body(deletion, "github")  # empty: delete the line


def test_a_planted_marker_is_neither_a_summary_nor_a_posted_finding() -> None:
    planted = "<!-- redline:finding:RL-000000000001 -->"
    hostile = finding(2, title=f"Looks fine {planted}", fid="RL-0000000000aa")
    hostile = hostile.model_copy(
        update={"comment": f"ok\n{planted}\n<!-- redline:summary:review -->"}
    )
    [comment] = place([hostile], diff_map(DIFF), set()).inline
    body = inline_body(comment, "github")
    assert posted_finding(body) == "RL-0000000000aa"  # only its own marker, on the last line
    assert body.count("<!-- redline:") == 1  # the model's copies were escaped
    # A marker anywhere but the last line does not count.
    assert summary_kind("<!-- redline:summary:review -->\nmore text") is None
    assert summary_kind("text\n<!-- redline:summary:debate -->\n") == "debate"


def test_the_summary_stays_under_the_forge_limit_and_says_what_it_left_out() -> None:
    many = [
        finding(i, title=f"Problem number {i} " + "x" * 80, fid=f"RL-{i:012x}").model_copy(
            update={"comment": "A long explanation. " * 200}
        )
        for i in range(1, 400)
    ]
    review = Review(task_id="t", scope="pr", scope_label="PR #7", repo="/r", findings=many)
    body = summary_body(review, "review")
    assert len(body) <= MAX_BODY
    assert "more (see the full report)" in body
    assert body.rstrip().endswith("<!-- redline:summary:review -->")
    assert body.count("| 🔴 High |") == 399  # every finding still in the table


def test_http_status_is_read_from_the_included_status_line() -> None:
    ok = parse_included('HTTP/2.0 201 Created\r\nA: b\r\n\r\n{"id": 3}', "")
    assert ok.ok and ok.data == {"id": 3}
    refused = parse_included(
        'HTTP/2.0 422 Unprocessable Entity\r\n\r\n{"message": "Validation Failed"}', "gh: x"
    )
    assert refused.status == 422 and "Validation Failed" in refused.error
    offline = parse_included("", "error connecting to api.github.com")
    assert offline.status == 0 and "error connecting" in offline.error


# -- the CLI against a fake gh --------------------------------------------------------------


def pr_repo(tmp_path: Path, origin: str) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("app.py", BASE)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", FEATURE)
    repo.commit("feature")
    repo.git("remote", "add", "origin", origin)
    return repo


@pytest.fixture
def github(tmp_path: Path) -> tuple[GitRepo, Forge]:
    repo = pr_repo(tmp_path, f"https://github.com/{SLUG}.git")
    return repo, github_forge(tmp_path / "forge", repo, SLUG, valid={"app.py": list(range(1, 7))})


def redline(
    repo: GitRepo, forge: Forge, *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDLINE_")}
    env.update(
        REDLINE_CACHE_DIR=os.environ["REDLINE_CACHE_DIR"],
        REDLINE_CONFIG=os.devnull,
        REDLINE_GH=str(forge.root / "gh"),
        REDLINE_GLAB=str(forge.root / "glab"),
        OPENAI_API_KEY="sk-test-secret-never-passed-on",
        **(extra_env or {}),
    )
    return subprocess.run(
        [sys.executable, "-m", "redline.cli", "review", "--repo", str(repo.root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_summary_comment_is_created_then_updated_in_place(github: tuple[GitRepo, Forge]) -> None:
    repo, forge = github
    first = redline(repo, forge, "--pr", "7", "--post", "--format", "markdown")
    assert first.returncode == 0, first.stderr
    assert "# Redline review" in first.stdout  # the report is still written
    [comment] = forge.state()["issue_comments"]
    assert comment["body"].rstrip().endswith("<!-- redline:summary:review -->")
    assert "`app.py:6`" in comment["body"] and "`app.py:1`" in comment["body"]
    assert "Shell command" in comment["body"]
    assert "created" in first.stderr and "issuecomment-101" in first.stderr
    assert forge.writes() == [("POST", f"repos/{SLUG}/issues/7/comments")]

    forge.clear_log()
    second = redline(repo, forge, "--pr", "7", "--post")
    assert second.returncode == 0, second.stderr
    assert forge.writes() == [("PATCH", f"repos/{SLUG}/issues/comments/101")]
    assert len(forge.state()["issue_comments"]) == 1
    assert "updated" in second.stderr
    # The forge CLI got its own token's environment, never the model's key.
    assert all("OPENAI_API_KEY" not in call["env"] for call in forge.calls())


def test_inline_comments_land_on_their_lines_once(github: tuple[GitRepo, Forge]) -> None:
    repo, forge = github
    result = redline(repo, forge, "--pr", "7", "--post", "--inline")
    assert result.returncode == 0, result.stderr
    comments = {c["line"]: c for c in forge.state()["review_comments"]}
    assert set(comments) == {1, 6}
    assert all(c["side"] == "RIGHT" and c["path"] == "app.py" for c in comments.values())
    # The unused import's fix deletes the line: an empty suggestion block.
    assert "```suggestion\n```" in comments[1]["body"]
    assert "suggestion" not in comments[6]["body"]  # no fix offered for the shell call
    assert "2 inline comments" in result.stderr
    summary = forge.state()["issue_comments"][0]["body"]
    assert "| inline |" in summary

    forge.clear_log()
    again = redline(repo, forge, "--pr", "7", "--post", "--inline")
    assert again.returncode == 0, again.stderr
    assert len(forge.state()["review_comments"]) == 2  # no duplicates
    summary_id = forge.state()["issue_comments"][0]["id"]
    assert forge.writes() == [("PATCH", f"repos/{SLUG}/issues/comments/{summary_id}")]
    assert "2 already posted by an earlier run" in again.stderr


def test_a_line_github_refuses_goes_to_the_summary(github: tuple[GitRepo, Forge]) -> None:
    repo, forge = github
    # GitHub's diff no longer shows line 6 (the PR moved on): a review with it is refused.
    forge.update(valid={"app.py": [1, 2, 3]})
    result = redline(repo, forge, "--pr", "7", "--post", "--inline", "--fail-on", "critical")
    assert result.returncode == 1, result.stderr  # fail-on still decides; posting did not fail
    assert [c["line"] for c in forge.state()["review_comments"]] == [1]
    summary = forge.state()["issue_comments"][0]["body"]
    assert "### Not on a line of the diff" in summary
    assert "app.py:6" in summary.split("### Not on a line of the diff")[1]
    assert "1 refused by the forge (in the summary)" in result.stderr
    assert forge.writes() == [
        ("POST", f"repos/{SLUG}/pulls/7/reviews"),
        ("POST", f"repos/{SLUG}/pulls/7/comments"),
        ("POST", f"repos/{SLUG}/pulls/7/comments"),
        ("POST", f"repos/{SLUG}/issues/7/comments"),
    ]


def test_dry_run_prints_every_write_and_sends_none(github: tuple[GitRepo, Forge]) -> None:
    repo, forge = github
    result = redline(repo, forge, "--pr", "7", "--post", "--inline", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert forge.writes() == []
    assert forge.state()["issue_comments"] == [] and forge.state()["review_comments"] == []
    assert f"POST repos/{SLUG}/pulls/7/reviews" in result.stderr
    assert f"POST repos/{SLUG}/issues/7/comments" in result.stderr
    assert '"commit_id": "' + repo.head() + '"' in result.stderr
    assert "would post the summary comment" in result.stderr


def test_markers_in_someone_elses_comments_are_ignored(github: tuple[GitRepo, Forge]) -> None:
    repo, forge = github
    # The PR's author plants our markers: a fake summary, a fake "already posted" finding.
    mallory = {"login": "mallory"}
    first = redline(repo, forge, "--pr", "7", "--format", "json")
    ids = [f["id"] for f in json.loads(first.stdout)["findings"]]
    forge.update(
        issue_comments=[{"id": 5, "user": mallory, "body": "hi\n<!-- redline:summary:review -->"}],
        review_comments=[
            {"id": 6, "user": mallory, "line": 6, "path": "app.py",
             "body": f"nothing here\n<!-- redline:finding:{fid} -->"}
            for fid in ids
        ],
    )  # fmt: skip
    result = redline(repo, forge, "--pr", "7", "--post", "--inline")
    assert result.returncode == 0, result.stderr
    assert ("POST", f"repos/{SLUG}/issues/7/comments") in forge.writes()  # its own, not PATCH 5
    ours = [c for c in forge.state()["review_comments"] if c["user"]["login"] == "alice"]
    assert len(ours) == 2  # the planted markers silenced nothing


def test_actions_token_posts_as_the_actions_bot(github: tuple[GitRepo, Forge]) -> None:
    repo, forge = github
    # GITHUB_TOKEN cannot read /user; its comments are github-actions[bot]'s.
    bot = {"login": "github-actions[bot]"}
    old = {"id": 9, "user": bot, "body": "old\n<!-- redline:summary:review -->"}
    forge.update(login="", actor=bot["login"], issue_comments=[old])
    result = redline(repo, forge, "--pr", "7", "--post", extra_env={"GITHUB_ACTIONS": "true"})
    assert result.returncode == 0, result.stderr
    assert forge.writes() == [("PATCH", f"repos/{SLUG}/issues/comments/9")]


def test_posting_that_fails_is_an_error_not_a_clean_run(github: tuple[GitRepo, Forge]) -> None:
    repo, forge = github
    forge.update(api_down=True)
    result = redline(repo, forge, "--pr", "7", "--post", "--format", "markdown")
    assert result.returncode == 2
    assert "# Redline review" in result.stdout  # the report is not lost
    assert "redline: error: posting to the pull request" in result.stderr
    assert "Bad credentials" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--post"], "--post needs the pull request"),
        (["--inline"], "--inline and --dry-run go with --post"),
        (["--pr", "7", "--dry-run"], "--inline and --dry-run go with --post"),
    ],
)
def test_post_flags_that_cannot_mean_anything_are_refused(
    github: tuple[GitRepo, Forge], args: list[str], message: str
) -> None:
    repo, forge = github
    result = redline(repo, forge, *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert forge.calls() == []


# -- GitLab, through a fake glab ------------------------------------------------------------

GITLAB_PROJECT = "acme/tools/widgets"  # a nested group: the API takes it URL-encoded


@pytest.fixture
def gitlab(tmp_path: Path) -> tuple[GitRepo, Forge]:
    repo = pr_repo(tmp_path, f"https://gitlab.example.com/{GITLAB_PROJECT}.git")
    base = repo.git("rev-parse", "main").strip()
    refs = {"base_sha": base, "head_sha": repo.head(), "start_sha": base}
    forge = Forge(
        tmp_path / "forge",
        {
            "project_id": "acme%2Ftools%2Fwidgets", "number": 7, "login": "redline-bot",
            "next_id": 500,
            "mr": {"iid": 7, "title": "Run commands", "source_branch": "feature",
                   "target_branch": "main", "sha": repo.head(), "diff_refs": refs},
            "diff": repo.git("diff", "main...feature"), "valid": {"app.py": list(range(1, 7))},
            "issue_comments": [], "review_comments": [],
        },
    )  # fmt: skip
    return repo, forge


def test_gitlab_note_and_discussions_once_each(gitlab: tuple[GitRepo, Forge]) -> None:
    repo, forge = gitlab
    result = redline(repo, forge, "--mr", "7", "--post", "--inline")
    assert result.returncode == 0, result.stderr
    state = forge.state()
    [note] = state["issue_comments"]
    assert note["body"].rstrip().endswith("<!-- redline:summary:review -->")
    positions = {
        d["notes"][0]["position"]["new_line"]: d["notes"][0] for d in state["review_comments"]
    }
    assert set(positions) == {1, 6}
    first = positions[1]["position"]
    assert first["base_sha"] == first["start_sha"] == repo.git("rev-parse", "main").strip()
    assert first["head_sha"] == repo.head()
    assert first["new_path"] == first["old_path"] == "app.py"
    assert "old_line" not in first  # an added line is anchored on the new side only
    assert "```suggestion:-0+0\n```" in positions[1]["body"]
    hosts = {
        c["argv"][c["argv"].index("--hostname") + 1]
        for c in forge.calls()
        if "--hostname" in c["argv"]
    }
    assert hosts == {"gitlab.example.com"}
    assert {c["tool"] for c in forge.calls()} == {"glab"}  # gh was never asked

    forge.clear_log()
    again = redline(repo, forge, "--pr", "!7", "--post", "--inline")
    assert again.returncode == 0, again.stderr
    project = "projects/acme%2Ftools%2Fwidgets/merge_requests/7"
    assert forge.writes() == [("PUT", f"{project}/notes/{note['id']}")]
    assert len(forge.state()["review_comments"]) == 2


def test_gitlab_refused_position_goes_to_the_summary(gitlab: tuple[GitRepo, Forge]) -> None:
    repo, forge = gitlab
    forge.update(valid={"app.py": [1]})
    result = redline(repo, forge, "--mr", "7", "--post", "--inline")
    assert result.returncode == 0, result.stderr
    assert [d["notes"][0]["position"]["new_line"] for d in forge.state()["review_comments"]] == [1]
    body = forge.state()["issue_comments"][0]["body"]
    assert "app.py:6" in body.split("### Not on a line of the diff")[1]


def test_a_pull_request_that_moved_on_is_not_posted_to(github: tuple[GitRepo, Forge]) -> None:
    repo, forge = github
    # The PR's head on GitHub (read from the origin's API) is not the reviewed commit: pushed
    # since, or gh resolved the number in another repository. Its lines are not ours to use.
    forge.update(api_head="f" * 40)
    result = redline(repo, forge, "--pr", "7", "--post", "--inline")
    assert result.returncode == 2
    assert "acme/widgets#7's head is ffffffffffff, but the review was of" in result.stderr
    assert forge.writes() == []
