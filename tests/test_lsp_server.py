"""`redline lsp` end to end: pytest-lsp drives `python -m redline.lsp` over stdio with the VS Code
and Neovim client profiles, against real git repositories (the demo repository for the offline
analyzers, a scripted OpenAI-compatible model where a test needs one). Spec warnings are
errors."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from redline.store import TaskStore

from demo_findings import NEAR_MISS, NOT_PARSING, SHELL
from demo_findings import PHANTOM as DEMO_PHANTOM
from gitrepo import GitRepo
from lsp_support import Session, plain, server_env, start_session, stop_session
from review_script import ReviewScript, role_of
from scripted_llm import Reply, ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import demo

pytestmark = pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")

REPORTS = "app/reports.py"
# The demo's planted problems (0-based lines): unused import, shell injection, bare except,
# mutable default.
DEMO_LINES = [3, 20, 26, 30]
# The change's files with a finding: app/reports.py and the feature's files in other languages
# (one finding each: tests/test_lsp_languages.py).
DEMO_FILES = sorted({path for path, _line in demo.EXPECTED.values()})
OTHER_FINDINGS = len(demo.EXPECTED) - len(DEMO_LINES)

# Quotes code that is not in the file: no diagnostic, but the sidebar must still list it.
PHANTOM = dict(DEMO_PHANTOM, file=REPORTS, line=5)


@pytest.fixture
def demo_repo(tmp_path: Path) -> Path:
    return demo.build_demo_repo(tmp_path / "demo")


@pytest.fixture(params=["vscode", "neovim"])
def profile(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
async def session(demo_repo: Path, profile: str, cache: Path) -> AsyncIterator[Session]:
    s = await start_session(demo_repo, profile, server_env(cache))
    yield s
    await stop_session(s)


@pytest.fixture
async def vscode(demo_repo: Path, cache: Path) -> AsyncIterator[Session]:
    s = await start_session(demo_repo, "vscode", server_env(cache))
    yield s
    await stop_session(s)


class SlowReviewer:
    """The scripted reviewer, with reviewer calls held for `delay` seconds while `slow`."""

    def __init__(self, script: ReviewScript, delay: float = 8.0) -> None:
        self.script = script
        self.delay = delay
        self.slow = threading.Event()
        self.slow.set()
        self.reviewer_started = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = self.script(body)
        if role_of(body) == "reviewer":
            self.reviewer_started.set()
            if self.slow.is_set():
                reply.delay = self.delay
        return reply


@pytest.fixture
def script() -> ReviewScript:
    return ReviewScript(findings={REPORTS: [SHELL, PHANTOM, NOT_PARSING, NEAR_MISS]})


@pytest.fixture
def slow(script: ReviewScript) -> SlowReviewer:
    return SlowReviewer(script)


@pytest.fixture
def llm(slow: SlowReviewer) -> Iterator[ScriptedLLM]:
    with ScriptedLLM(handler=slow) as server:
        yield server


def model_env(cache: Path, llm: ScriptedLLM) -> dict[str, str]:
    cache.mkdir(parents=True, exist_ok=True)
    user = cache / "user.toml"
    user.write_text("[llm]\nmax_retries = 0\ntimeout = 30\n", encoding="utf-8")
    return server_env(
        cache,
        REDLINE_CONFIG=str(user),
        REDLINE_MODEL="openai/scripted",
        REDLINE_API_BASE=llm.base_url,
        REDLINE_API_KEY="sk-test-key-not-secret",
    )


@pytest.fixture
async def model_session(demo_repo: Path, cache: Path, llm: ScriptedLLM) -> AsyncIterator[Session]:
    s = await start_session(demo_repo, "vscode", model_env(cache, llm))
    yield s
    await stop_session(s)


def diagnostics(s: Session, rel: str) -> list[types.Diagnostic]:
    found = s.client.diagnostics.get(s.uri(rel), [])
    return sorted(found, key=lambda d: d.range.start.line)


async def code_actions(
    s: Session, rel: str, line: int, only: list[str] | None = None
) -> list[types.CodeAction]:
    pos = types.Position(line=line, character=2)
    result = await s.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri(rel)),
            range=types.Range(start=pos, end=pos),
            context=types.CodeActionContext(diagnostics=diagnostics(s, rel), only=only),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


def text_edit_of(action: types.CodeAction) -> types.TextEdit:
    edit = action.edit
    assert edit is not None
    if edit.document_changes:
        change = edit.document_changes[0]
        assert isinstance(change, types.TextDocumentEdit)
        first = change.edits[0]
        assert isinstance(first, types.TextEdit)
        return first
    assert edit.changes
    return next(iter(edit.changes.values()))[0]


# -- the offline review -------------------------------------------------------------------------


async def test_branch_review_publishes_diagnostics_progress_and_sidebar(session: Session) -> None:
    before = await session.debug_info()
    # initialize did no engine import and no git work; nothing imported litellm
    assert before["engineLoaded"] is False and before["litellmLoaded"] is False

    task = await session.review(scope="branch", base="main")
    end = await session.finished(task)
    assert end["state"] == "finished", end
    # app/reports.py's four, and one in each of the five files in other languages.
    assert end["counts"] == {"Critical": 1, "High": 2, "Medium": 3, "Low": 3, "Info": 0}
    assert end["findings"] == 9 and "coverage" in end and end["tokens"] == 0

    diags = diagnostics(session, REPORTS)
    assert [d.range.start.line for d in diags] == DEMO_LINES
    severity = {d.range.start.line: d.severity for d in diags}
    assert severity == {
        3: types.DiagnosticSeverity.Information,
        20: types.DiagnosticSeverity.Error,
        26: types.DiagnosticSeverity.Warning,
        30: types.DiagnosticSeverity.Warning,
    }
    shell = diags[1]
    assert shell.source == "redline" and shell.code == "Security"
    assert isinstance(shell.data, dict) and str(shell.data["id"]).startswith("RL-")
    assert shell.message.startswith("Shell command built from non-constant input")
    line = (session.root / REPORTS).read_text(encoding="utf-8").splitlines()[20]
    assert (shell.range.start.character, shell.range.end.character) == (4, len(line))
    # Only files with findings are touched (app/text.py and the rest are not).
    assert set(session.client.diagnostics) == {session.uri(p) for p in DEMO_FILES}

    # Work-done progress: begin (cancellable), reports, end.
    # The end of the progress may arrive just after the `finished` state: wait for it.
    def progress() -> list[Any]:
        found = [v for k, v in session.client.progress_reports.items() if task in str(k)]
        done = found and isinstance(found[0][-1], types.WorkDoneProgressEnd)
        return found[0] if done else []

    reports = await session.until(progress)
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert any(isinstance(r, types.WorkDoneProgressReport) for r in reports)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)

    states = [s["state"] for s in session.states if s.get("taskId") == task]
    assert states[0] == "started" and states[-1] == "finished"
    stages = {s.get("stage") for s in session.states if s.get("taskId") == task}
    assert {"collecting", "analyzing", "done"} <= stages

    # The analyzers' findings are sent early (before the review exists, so without a task id);
    # the review's own notification may come after `finished`, so wait for it.
    sidebar = await session.until(
        lambda: [f for f in session.findings if f["files"] and f.get("taskId") == task]
    )
    last = sidebar[-1]
    assert sorted(f["path"] for f in last["files"]) == DEMO_FILES
    reports = next(f for f in last["files"] if f["path"] == REPORTS)
    assert sorted(f["line"] for f in reports["findings"]) == [4, 21, 27, 31]

    after = await session.debug_info()
    assert after["engineLoaded"] is True and after["litellmLoaded"] is False

    # Writes to stdout (print, and fd 1 as a child process would) never reach the protocol
    # stream: the session keeps working.
    probe = await session.debug_info(probeStdout=True)
    assert probe["pid"] == after["pid"]
    assert (await session.debug_info())["running"] == []


async def test_every_scope_reviews_and_clears_what_left_the_scope(
    vscode: Session, demo_repo: Path
) -> None:
    s = vscode
    for request in (
        {"scope": "commit", "ref": "HEAD"},
        {"scope": "since", "ref": "main"},
        {"scope": "range", "range": "main..feature/export"},
        {"scope": "branch"},  # base from the default branch detection
    ):
        end = await s.finished(await s.review(**request))
        assert end["state"] == "finished", (request, end)
        assert s.lines_of(REPORTS) == DEMO_LINES, request

    # Uncommitted: a new problem in app/text.py; app/reports.py is not in this scope any more.
    text = demo_repo / "app/text.py"
    text.write_text(
        text.read_text(encoding="utf-8") + "\n\ndef risky():\n    try:\n        pass\n"
        "    except:\n        pass\n",
        encoding="utf-8",
    )
    end = await s.finished(await s.review(scope="uncommitted"))
    assert end["state"] == "finished", end
    assert set(s.lines_of("app/text.py")) == {17}
    assert s.lines_of(REPORTS) == []  # cleared: it had Redline diagnostics, now out of scope

    subprocess.run(["git", "add", "app/text.py"], cwd=demo_repo, check=True)
    end = await s.finished(await s.review(scope="staged"))
    assert end["state"] == "finished" and set(s.lines_of("app/text.py")) == {17}

    # pr needs gh and a GitHub remote; ask needs a model: both fail with a message, no crash.
    end = await s.finished(await s.review(scope="pr", pr="12"))
    assert end["state"] == "failed" and end["error"]
    asked = plain(await s.command("redline.ask", {"request": "review the branch"}))
    end = await s.finished(asked["taskId"])
    assert end["state"] == "failed" and "model" in end["error"].lower()
    assert any(m.type == types.MessageType.Error for m in s.client.messages)

    # Invalid arguments answer InvalidParams with the message, the one thing sent (the client
    # shows its error answer; tests/test_neovim_messages.py).
    with pytest.raises(JsonRpcInvalidParams, match="unknown scope 'everything'"):
        await s.command("redline.review", {"scope": "everything"})
    with pytest.raises(JsonRpcInvalidParams, match="the commit scope needs a revision"):
        await s.command("redline.review", {"scope": "commit"})
    with pytest.raises(JsonRpcInvalidParams, match="unknown export format 'pdf'"):
        await s.command("redline.export", {"format": "pdf"})
    assert not any("unknown scope 'everything'" in m.message for m in s.client.messages)
    # Well-formed but impossible: RequestFailed, with the message.
    with pytest.raises(JsonRpcException, match="no current finding with id 'RL-nope'") as info:
        await s.command("redline.dismiss", {"id": "RL-nope", "reason": "x"})
    assert info.value.code == types.LSPErrorCodes.RequestFailed.value
    assert (await s.debug_info())["running"] == []


# -- ranges in the negotiated encoding ----------------------------------------------------------

EMOJI_BASE = "import subprocess\n\n\ndef run(cmd: str) -> int:\n    return 0\n"
EMOJI_NEW = (
    "import subprocess\n"
    "\n"
    "\n"
    "def run(cmd: str) -> int:\n"
    "    # 📦 pack the release\n"
    '    note = "🚀"; return subprocess.call(cmd + note, shell=True)\n'
)


async def test_ranges_use_the_negotiated_position_encoding(
    tmp_path: Path, profile: str, cache: Path
) -> None:
    repo = GitRepo(tmp_path / "emoji")
    repo.write("tool.py", EMOJI_BASE)
    repo.commit("base")
    repo.checkout("-b", "feature")
    repo.write("tool.py", EMOJI_NEW)
    repo.commit("shell out")
    s = await start_session(repo.root, profile, server_env(cache))
    try:
        assert s.encoding == ("utf-8" if profile == "neovim" else "utf-16")
        end = await s.finished(await s.review(scope="branch", base="main"))
        assert end["state"] == "finished", end
        flagged = EMOJI_NEW.splitlines()[5]
        diag = next(d for d in diagnostics(s, "tool.py") if d.range.start.line == 5)
        units = (
            len(flagged.encode("utf-8"))
            if s.encoding == "utf-8"
            else len(flagged.encode("utf-16-le")) // 2
        )
        assert diag.range.start.character == 4
        assert diag.range.end.character == units
        assert units != len(flagged)  # the emoji makes the encodings differ

        # Typing after the emoji on the finding's line is seen in client units too: the
        # finding goes stale (withdrawn by default) only because its code changed.
        s.open("tool.py", EMOJI_NEW)
        pos = types.Position(line=4, character=units)  # past the end of line 4: clamped
        s.edit("tool.py", 2, types.Range(start=pos, end=pos), "!")
        await s.until(lambda: 5 in s.lines_of("tool.py"), what="line 5 still flagged")
    finally:
        await stop_session(s)


# -- findings follow the code ---------------------------------------------------------------------


async def test_edits_move_findings_and_editing_their_code_withdraws_them(
    session: Session,
) -> None:
    s = session
    await s.finished(await s.review(scope="branch", base="main"))
    s.open(REPORTS)
    top = types.Position(line=0, character=0)
    s.edit(REPORTS, 2, types.Range(start=top, end=top), "# one\n# two\n")
    await s.until(lambda: s.lines_of(REPORTS) == [5, 22, 28, 32], what="findings moved by 2")

    # Rewrite the bare except (now line 28): its finding is withdrawn, the others stay.
    start = types.Position(line=28, character=4)
    end = types.Position(line=28, character=len("    except:"))
    s.edit(REPORTS, 3, types.Range(start=start, end=end), "except OSError:")
    await s.until(lambda: s.lines_of(REPORTS) == [5, 22, 32], what="bare except withdrawn")

    # Hover on a finding shows the whole explanation as Markdown.
    hover = await s.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=s.uri(REPORTS)),
            position=types.Position(line=22, character=10),
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "shell=True" in hover.contents.value and "Redline:" in hover.contents.value


async def test_stale_findings_can_be_marked_instead(demo_repo: Path, cache: Path) -> None:
    s = await start_session(
        demo_repo,
        "neovim",
        server_env(cache),
        configuration={"redline": {"staleDisplay": "mark"}},
    )
    try:
        await s.finished(await s.review(scope="branch", base="main"))
        s.open(REPORTS)
        start = types.Position(line=26, character=4)
        end = types.Position(line=26, character=len("    except:"))
        s.edit(REPORTS, 2, types.Range(start=start, end=end), "except OSError:")

        def stale() -> bool:
            return any(d.message.startswith("(may be stale)") for d in diagnostics(s, REPORTS))

        await s.until(stale, what="a may-be-stale diagnostic")
        assert s.lines_of(REPORTS) == DEMO_LINES
    finally:
        await stop_session(s)


async def test_changes_on_disk_reanchor_or_withdraw(vscode: Session, demo_repo: Path) -> None:
    s = vscode
    await s.finished(await s.review(scope="branch", base="main"))
    path = demo_repo / REPORTS
    path.write_text("# moved\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    s.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=s.uri(REPORTS), type=types.FileChangeType.Changed)]
        )
    )
    await s.until(lambda: s.lines_of(REPORTS) == [4, 21, 27, 31], what="re-anchored on disk")
    path.unlink()
    s.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=s.uri(REPORTS), type=types.FileChangeType.Deleted)]
        )
    )
    await s.until(lambda: s.lines_of(REPORTS) == [] and s.uri(REPORTS) in s.client.diagnostics)


# -- code actions ---------------------------------------------------------------------------------


async def test_code_actions_fix_dismiss_and_honour_only(session: Session) -> None:
    s = session
    await s.finished(await s.review(scope="branch", base="main"))
    uri = s.open(REPORTS)

    assert await code_actions(s, REPORTS, 30, only=[types.CodeActionKind.Refactor]) == []
    actions = await code_actions(s, REPORTS, 30)
    titles = [a.title for a in actions]
    assert any(t.startswith("Redline: apply fix") for t in titles), titles
    assert any(t.startswith("Redline: dismiss finding") for t in titles)
    assert titles[-1] == "Redline: dismiss all Redline findings in this file"
    fix = next(a for a in actions if a.title.startswith("Redline: apply fix"))
    assert fix.kind == types.CodeActionKind.QuickFix
    assert not fix.is_preferred  # an analyzer's fix, not verified by a model
    assert fix.diagnostics and fix.diagnostics[0].range.start.line == 30
    edit = text_edit_of(fix)
    assert "seen=None" in edit.new_text and "if seen is None:" in edit.new_text

    # The bare except has no suggested code: no fix, only dismissals.
    no_fix = await code_actions(s, REPORTS, 26)
    assert not any(a.edit for a in no_fix)

    # The client applies the edit, then runs the action's command: the finding is closed.
    s.edit(REPORTS, 2, edit.range, edit.new_text)
    assert fix.command is not None
    await s.command(fix.command.command, *(fix.command.arguments or []))
    await s.until(lambda: s.lines_of(REPORTS) == [3, 20, 26], what="fixed finding closed")
    assert uri in s.client.diagnostics

    # A review run after the fix (the file on disk still has the old code) neither shows the
    # fixed finding nor counts it in its "finished" state (the status bar's counts).
    end = await s.finished(plain(await s.command("redline.rerun"))["taskId"])
    left = 3 + OTHER_FINDINGS
    assert end["findings"] == left and sum(end["counts"].values()) == left, end
    assert s.lines_of(REPORTS) == [3, 20, 26]


# -- dismissals, export -------------------------------------------------------------------------


async def test_dismissals_persist_across_reviews_and_sessions(
    vscode: Session, demo_repo: Path, cache: Path
) -> None:
    s = vscode
    await s.finished(await s.review(scope="branch", base="main"))
    bare = next(d for d in diagnostics(s, REPORTS) if d.range.start.line == 26)
    assert isinstance(bare.data, dict)
    finding_id = bare.data["id"]
    result = plain(await s.command("redline.dismiss", {"id": finding_id, "reason": "legacy"}))
    assert result == {"dismissed": [finding_id]}
    await s.until(lambda: s.lines_of(REPORTS) == [3, 20, 30], what="dismissed finding removed")
    stored = (demo_repo / ".redline" / "dismissed.toml").read_text(encoding="utf-8")
    assert finding_id in stored and 'reason = "legacy"' in stored

    end = await s.finished(plain(await s.command("redline.rerun"))["taskId"])
    assert end["state"] == "finished"
    assert s.lines_of(REPORTS) == [3, 20, 30]

    out = demo_repo.parent / "exports"
    for fmt, name in (("markdown", "r.md"), ("json", "r.json"), ("sarif", "r.sarif")):
        done = plain(await s.command("redline.export", {"format": fmt, "path": str(out / name)}))
        assert done["path"] == str(out / name)
    exported = json.loads((out / "r.json").read_text(encoding="utf-8"))
    assert len(exported["findings"]) == 3 + OTHER_FINDINGS
    assert json.loads((out / "r.sarif").read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert "Shell command" in (out / "r.md").read_text(encoding="utf-8")

    cleared = plain(await s.command("redline.clear"))
    assert cleared == {"cleared": True}
    await s.until(lambda: s.lines_of(REPORTS) == [], what="cleared")

    again = await start_session(demo_repo, "neovim", server_env(cache))
    try:
        await again.finished(await again.review(scope="branch", base="main"))
        assert again.lines_of(REPORTS) == [3, 20, 30]
    finally:
        await stop_session(again)


# -- settings ---------------------------------------------------------------------------------


async def test_settings_from_the_editor_never_choose_the_model(
    demo_repo: Path, cache: Path
) -> None:
    s = await start_session(
        demo_repo,
        "vscode",
        server_env(cache),
        init_options={
            "minSeverity": "Medium",
            "model": "openai/evil",
            "apiBase": "http://attacker.invalid",
            "apiKey": "sk-stolen",
        },
    )
    try:
        end = await s.finished(await s.review(scope="branch", base="main"))
        assert end["state"] == "finished"
        assert s.lines_of(REPORTS) == [20, 26, 30]  # the Low finding is below the minimum
        assert end["coverage"]["models"] == []  # offline: the workspace could not set a model
        info = await s.debug_info()
        assert info["settings"]["minSeverity"] == "Medium" and info["litellmLoaded"] is False
        warnings = [
            m.message for m in s.client.log_messages if "ignored editor setting" in m.message
        ]
        assert len(warnings) == 3
    finally:
        await stop_session(s)


async def test_auto_review_on_save(demo_repo: Path, cache: Path) -> None:
    s = await start_session(
        demo_repo,
        "vscode",
        server_env(cache),
        init_options={"redline": {"autoReviewOnSave": True, "saveDebounce": 0.1}},
    )
    try:
        first = await s.review(scope="branch", base="main")
        await s.finished(first)
        s.open(REPORTS)
        s.client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=s.uri(REPORTS))
            )
        )
        started = await s.until(
            lambda: [x for x in s.states if x["state"] == "started" and x["taskId"] != first],
            what="a review started by the save",
        )
        end = await s.finished(started[0]["taskId"])
        assert end["state"] == "finished" and s.lines_of(REPORTS) == DEMO_LINES
    finally:
        await stop_session(s)


# -- not a repository ---------------------------------------------------------------------------


async def test_a_folder_that_is_not_a_git_repository(tmp_path: Path, cache: Path) -> None:
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    (plain_dir / "x.py").write_text("import os\n", encoding="utf-8")
    s = await start_session(plain_dir, "neovim", server_env(cache))
    try:
        end = await s.finished(await s.review(scope="uncommitted"))
        assert end["state"] == "failed" and "not a git repository" in end["error"]
        shown = await s.until(lambda: s.client.messages, what="window/showMessage")
        assert shown[0].type == types.MessageType.Error
        assert "not a git repository" in shown[0].message
        assert (await s.debug_info())["running"] == []  # still serving
        assert s.client.diagnostics == {}
    finally:
        await stop_session(s)


# -- a file deleted mid-review (held in the analyzer stage by a custom analyzer the test gates) --


async def test_a_file_deleted_mid_review(demo_repo: Path, cache: Path) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    sarif = json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "held"}}}]})
    # The analyzer says it has started, then waits until the test opens the gate: the file is
    # deleted while the review is certainly in the analyzer stage, whatever the machine's load
    # (a sleeping analyzer raced the test's own wait for that stage).
    started, gate = cache / "analyzer-started", cache / "analyzer-gate"
    script = cache / "held_analyzer.py"
    script.write_text(
        "import pathlib, time\n"
        f"pathlib.Path({str(started)!r}).touch()\n"
        "deadline = time.monotonic() + 60  # only if the test never opens the gate\n"
        f"while not pathlib.Path({str(gate)!r}).exists() and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
        f"print({sarif!r})\n",
        encoding="utf-8",
    )
    user = cache / "user.toml"
    command = [sys.executable, str(script)]
    user.write_text(
        f'[[analyzers.custom]]\nname = "held"\ncommand = {json.dumps(command)}\n',
        encoding="utf-8",
    )
    gate.touch()  # the first review runs straight through
    s = await start_session(demo_repo, "vscode", server_env(cache, REDLINE_CONFIG=str(user)))
    try:
        await s.finished(await s.review(scope="branch", base="main"))
        assert s.lines_of(REPORTS) == DEMO_LINES
        gate.unlink()
        started.unlink()
        task = await s.review(scope="branch", base="main")
        await s.until(
            lambda: (
                started.exists()
                and any(x.get("taskId") == task and x.get("stage") == "analyzing" for x in s.states)
            ),
            what="the analyzer stage, with the analyzer running",
        )
        assert s.state_of(task, "finished") is None
        (demo_repo / REPORTS).unlink()
        gate.touch()
        end = await s.finished(task)
        assert end["state"] == "finished", end
        # Nothing points into a file that is gone: its diagnostics were withdrawn.
        assert s.uri(REPORTS) in s.client.diagnostics and s.lines_of(REPORTS) == []
        assert (await s.debug_info())["running"] == []
    finally:
        gate.touch()  # never leave the analyzer waiting
        await stop_session(s)


# -- with a model: cancellation that really stops the work, supersession, a verified fix -------


async def test_model_reviews_cancel_supersede_and_offer_verified_fixes(
    model_session: Session, slow: SlowReviewer, llm: ScriptedLLM, cache: Path
) -> None:
    """One server for every model scenario: importing litellm costs seconds per process."""
    s = model_session

    async def in_flight() -> str:
        slow.reviewer_started.clear()
        task = await s.review(scope="branch", base="main")
        await s.until(slow.reviewer_started.is_set, timeout=40, what="a reviewer call in flight")
        return task

    # 1. Cancelled by command while the model is answering: it stops at once, not when the
    #    model answers (the reviewer call is held for `slow.delay` seconds).
    task = await in_flight()
    assert plain(await s.command("redline.cancel", {"taskId": task})) == {"cancelled": [task]}
    end = await s.finished(task, timeout=slow.delay / 2)
    assert end["state"] == "cancelled"
    record = TaskStore(cache / "review_content").load(task)
    assert record["status"] == "cancelled"
    roles = [role_of(r) for r in llm.requests]
    assert "verifier" not in roles and "summarizer" not in roles
    progress = s.client.progress_reports[f"redline-review-{task}"]
    assert isinstance(progress[-1], types.WorkDoneProgressEnd)
    assert (await s.debug_info())["running"] == []

    # 2. Cancelled from the progress UI (window/workDoneProgress/cancel).
    task = await in_flight()
    token = f"redline-review-{task}"
    s.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    end = await s.finished(task, timeout=slow.delay / 2)
    assert end["state"] == "cancelled"

    # 3. A second review cancels the first (and says so), then finishes.
    first = await in_flight()
    slow.slow.clear()
    second = await s.review(scope="commit", ref="HEAD")
    end = await s.finished(first, timeout=slow.delay / 2)
    assert end["state"] == "cancelled" and "superseded" in end["reason"]
    assert any(
        first in m.message and second in m.message and "cancelled" in m.message
        for m in s.client.log_messages
    )
    published_before_end = len(s.findings)
    done = await s.finished(second, timeout=40)
    assert done["state"] == "finished", done
    assert done["tokens"] > 0 and done["coverage"]["models"]
    # The stages arrive in order, typed (no parsing of the text), with the spend so far.
    states = [x for x in s.states if x.get("taskId") == second]
    stages = list(dict.fromkeys(x["stage"] for x in states if "stage" in x))
    assert stages == [
        "collecting",
        "splitting",
        "analyzing",
        "planning",
        "reviewing",
        "verifying",
        "summarizing",
        "done",
    ]
    reviewing = [x for x in states if x["state"] == "progress" and x["stage"] == "reviewing"]
    assert reviewing[0]["done"] == 0 and reviewing[-1]["done"] == reviewing[-1]["total"] >= 1
    spent = [x["tokens"] for x in states if "tokens" in x]
    assert spent == sorted(spent) and 0 < spent[-1] <= done["tokens"]
    # The final counts are the findings the sidebar lists.
    rows = s.rows()
    assert done["findings"] == sum(done["counts"].values()) == len(rows)
    assert (await s.debug_info())["litellmLoaded"] is True
    assert 20 in s.lines_of(REPORTS)
    # Results went out file by file before the end (the analyzers' first), not only at the end,
    # each list naming the review it belongs to.
    assert len(s.findings) > published_before_end + 1
    assert {n["taskId"] for n in s.findings[published_before_end:]} == {second}
    # The unanchored finding has no diagnostic, but the sidebar lists it under its file.
    listed = s.listed.values()
    rows = [row for entry in listed if entry["path"] == REPORTS for row in entry["findings"]]
    phantom = [row for row in rows if row["title"] == "Code the model imagined"]
    assert len(phantom) == 1 and phantom[0]["unanchored"] is True and phantom[0]["line"] is None
    diagnostics = s.client.diagnostics.get(s.uri(REPORTS), [])
    assert not any("imagined" in d.message for d in diagnostics)

    # 4. The model's fix, verified CORRECT by the verifier and parsing: the preferred action.
    s.open(REPORTS)
    actions = await code_actions(s, REPORTS, 20)
    fix = next(a for a in actions if a.title.startswith("Redline: apply fix"))
    assert fix.is_preferred
    assert 'subprocess.call(["zip"' in text_edit_of(fix).new_text

    # 5. Issue 10. A fix the pipeline found not to parse is only shown, labelled, never applied;
    #    so is one whose quote is not in the file (one identifier renamed), whose diagnostic
    #    says its location is approximate.
    actions = await code_actions(s, REPORTS, NOT_PARSING["line"] - 1)
    mine = [a for a in actions if NOT_PARSING["title"] in a.title]
    assert mine[0].title == (
        f"Redline: show suggested code (does not parse as is) — {NOT_PARSING['title']}"
    )
    assert not any(a.title.startswith("Redline: apply fix") or a.edit for a in mine)
    actions = await code_actions(s, REPORTS, NEAR_MISS["line"] - 1)
    mine = [a for a in actions if NEAR_MISS["title"] in a.title]
    assert mine and not any(a.title.startswith("Redline: apply fix") or a.edit for a in mine)
    published = s.client.diagnostics.get(s.uri(REPORTS), [])
    near = [d for d in published if NEAR_MISS["title"] in d.message]
    assert len(near) == 1 and near[0].range.start.line == NEAR_MISS["line"] - 1
    assert near[0].message.startswith("(approximate location: quoted code not in the file) ")


# -- stdout carries JSON-RPC only ---------------------------------------------------------------


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _unframe(data: bytes) -> list[dict[str, Any]]:
    """Split raw stdout into messages; fail on any byte that is not part of a framed message."""
    messages = []
    while data:
        header, sep, rest = data.partition(b"\r\n\r\n")
        assert sep and header.startswith(b"Content-Length: "), f"stray output: {data[:80]!r}"
        length = int(header.split(b"\r\n")[0].split(b":")[1])
        messages.append(json.loads(rest[:length]))
        data = rest[length:]
    return messages


def test_stdout_holds_nothing_but_framed_json_rpc(demo_repo: Path, cache: Path) -> None:
    """The pygls client skips junk between messages; VS Code's does not. So read the raw
    stream: the stdout probe (a write to sys.stdout and one to fd 1) must land on stderr."""
    root = demo_repo.as_uri()
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": root, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "redline/debugInfo",
         "params": {"probeStdout": True}},
        {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand",
         "params": {"command": "redline.review", "arguments": [{"scope": "everything"}]}},
        {"jsonrpc": "2.0", "id": 4, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "redline.lsp"],
        input=b"".join(_frame(r) for r in requests),
        capture_output=True,
        env=server_env(cache),
        timeout=30,
    )
    messages = _unframe(proc.stdout)
    by_id = {m.get("id"): m for m in messages}
    assert by_id[2]["result"]["litellmLoaded"] is False
    assert b"stdout probe (sys.stdout" in proc.stderr and b"stdout probe (fd 1)" in proc.stderr
    # A command's invalid arguments: an InvalidParams answer, a line in the log, no traceback
    # (pygls would log one, as for a crash).
    assert by_id[3]["error"]["code"] == -32602
    assert "unknown scope 'everything'" in by_id[3]["error"]["message"]
    assert b"unknown scope 'everything'" in proc.stderr and b"Traceback" not in proc.stderr
    assert proc.returncode == 0
