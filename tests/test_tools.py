"""The tools doing their normal, useful work: numbered reads, git queries, navigation, reports."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from redline.agent import ToolError, ToolExecutor
from redline.git.runner import GitRunner
from redline.tools import (
    TOOL_NAMES,
    ToolContext,
    ToolLimits,
    build_tool_registry,
    default_report_dir,
    git_show_previous,
    read_file,
    read_function,
    run_gh_tool,
    run_git_tool,
    search_callers,
    write_file,
)
from redline.tools.git_tool import SECRET_OMITTED, omit_secret_sections
from redline.tools.names import is_git_name, is_secret_path, normalize_component
from redline.tools.sandbox import make_visible

from hostile_repos import APP_PY, APP_PY_V1, HostileRepo, build_plain_repo


@pytest.fixture
def plain(tmp_path: Path) -> HostileRepo:
    return build_plain_repo(tmp_path / "p")


@pytest.fixture
def ctx(plain: HostileRepo, tmp_path: Path) -> ToolContext:
    return ToolContext(plain.root, report_dir=tmp_path / "reports", old_rev=plain.first_commit)


# -- read_file -----------------------------------------------------------------------------------


def test_read_file_numbered(ctx: ToolContext) -> None:
    out = read_file(ctx, "app.py")
    lines = out.splitlines()
    assert lines[0] == f"app.py (lines 1-{len(APP_PY.splitlines())} of {len(APP_PY.splitlines())})"
    assert lines[1] == "   1| import os"
    assert "   4| def helper(value):" in lines


def test_read_file_ranges(ctx: ToolContext) -> None:
    out = read_file(ctx, "app.py", start_line=4, end_line=5)
    assert out.splitlines()[1:] == ["   4| def helper(value):", '   5|     """Double a value."""']
    clamped = read_file(ctx, "app.py", start_line=20, end_line=999)
    assert clamped.splitlines()[0] == "app.py (lines 20-22 of 22)"
    with pytest.raises(ToolError, match="past the end"):
        read_file(ctx, "app.py", start_line=100)
    with pytest.raises(ToolError, match="before start_line"):
        read_file(ctx, "app.py", start_line=5, end_line=4)
    with pytest.raises(ToolError, match="1 or more"):
        read_file(ctx, "app.py", start_line=0)


def test_read_file_max_lines_and_size(plain: HostileRepo, tmp_path: Path) -> None:
    (plain.root / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    limits = ToolLimits(max_lines_per_call=10, max_read_bytes=500)
    small = ToolContext(plain.root, report_dir=tmp_path / "r", limits=limits)
    with pytest.raises(ToolError, match="over the 500-byte limit"):
        read_file(small, "big.txt")
    (plain.root / "mid.txt").write_text("".join(f"l{i}\n" for i in range(1, 31)))
    out = read_file(small, "mid.txt", start_line=5)
    assert "lines 5-14 of 30" in out and "continue with start_line=15" in out


def test_read_file_kinds(ctx: ToolContext, plain: HostileRepo) -> None:
    (plain.root / "bin.dat").write_bytes(b"\x00\x01\x02abc")
    with pytest.raises(ToolError, match="binary file"):
        read_file(ctx, "bin.dat")
    (plain.root / "latin.txt").write_bytes(b"caf\xe9\n")
    out = read_file(ctx, "latin.txt")
    assert "not valid UTF-8" in out and "caf\ufffd" in out
    with pytest.raises(ToolError, match="is a directory"):
        read_file(ctx, "pkg")
    with pytest.raises(ToolError, match="does not exist"):
        read_file(ctx, "nope.py")
    (plain.root / "empty.txt").write_text("")
    assert read_file(ctx, "empty.txt") == "empty.txt (empty file)"


def test_read_file_paths_that_are_fine(ctx: ToolContext, plain: HostileRepo) -> None:
    assert "import os" in read_file(ctx, str(plain.root / "app.py"))
    assert "import os" in read_file(ctx, "./app.py")
    os.symlink("app.py", plain.root / "alias.py")  # a symlink that stays inside is followed
    assert read_file(ctx, "alias.py").startswith("alias.py (lines")


def test_read_file_redacts_and_shows_invisible(ctx: ToolContext, plain: HostileRepo) -> None:
    key = "sk-" + "A" * 40
    (plain.root / "c.py").write_text(f'api_key = "{key}"\nx = "\u202eevil"\n')
    out = read_file(ctx, "c.py")
    assert key not in out and "[REDACTED:openai-key:" in out
    assert "\u202e" not in out and "<U+202E>" in out


# -- write_file -----------------------------------------------------------------------------------


def test_write_file_writes_reports(ctx: ToolContext) -> None:
    msg = write_file(ctx, "review.md", "# Review\n")
    assert (ctx.reports / "review.md").read_text() == "# Review\n"
    assert str(ctx.reports / "review.md") in msg
    write_file(ctx, "pr-12/summary.json", '{"ok": true}')
    write_file(ctx, "review.md", "# Second\n")  # overwrite
    assert (ctx.reports / "review.md").read_text() == "# Second\n"
    assert json.loads((ctx.reports / "pr-12" / "summary.json").read_text()) == {"ok": True}
    assert not [p for p in ctx.reports.iterdir() if p.name.endswith(".tmp")]


def test_write_file_limits(plain: HostileRepo, tmp_path: Path) -> None:
    small = ToolContext(
        plain.root, report_dir=tmp_path / "r", limits=ToolLimits(max_write_bytes=10)
    )
    with pytest.raises(ToolError, match="over the 10-byte limit"):
        write_file(small, "a.md", "x" * 11)
    with pytest.raises(ToolError, match="must end in one of"):
        write_file(small, "a.html", "x")


def test_report_dir_default_and_inside_repo(plain: HostileRepo) -> None:
    default = default_report_dir(plain.root)
    assert "reports" in default.parts and not default.is_relative_to(plain.root)
    assert ToolContext(plain.root).reports == default
    with pytest.raises(Exception, match="inside the repository"):
        ToolContext(plain.root, report_dir=plain.root / ".redline")


# -- git ----------------------------------------------------------------------------------------


def test_git_log(ctx: ToolContext, plain: HostileRepo) -> None:
    out = run_git_tool(ctx, "log --oneline")
    assert [line.split(" ", 1)[1] for line in out.splitlines()] == ["second commit", "first commit"]
    assert len(run_git_tool(ctx, "git log --oneline -n 1").splitlines()) == 1
    assert len(run_git_tool(ctx, "log --oneline -1").splitlines()) == 1
    assert "+from app import helper" in run_git_tool(ctx, "log -p -n 1 -- pkg/mod.py")
    assert "AuthorDate:" in run_git_tool(ctx, "log --format=fuller -n1")
    assert "first commit" in run_git_tool(ctx, "log --oneline --author=Test --since=2020-01-01")


def test_git_log_default_count(plain: HostileRepo, tmp_path: Path) -> None:
    for i in range(4):
        plain.repo.commit(f"c{i}")
    small = ToolContext(
        plain.root, report_dir=tmp_path / "r", limits=ToolLimits(default_log_count=3)
    )
    assert len(run_git_tool(small, "log --oneline").splitlines()) == 3


def test_git_diff_show_blame(ctx: ToolContext, plain: HostileRepo) -> None:
    diff = run_git_tool(ctx, f"diff {plain.first_commit} HEAD -- app.py")
    assert "-    return value + value" in diff and "+class Service:" in diff
    stat = run_git_tool(ctx, f"diff --stat {plain.first_commit}..HEAD")
    assert "app.py" in stat and "pkg/mod.py" in stat
    assert run_git_tool(ctx, "diff") == "(no output)"
    (plain.root / "app.py").write_text(APP_PY + "# more\n")
    assert "+# more" in run_git_tool(ctx, "diff app.py")  # a path without '--'
    show = run_git_tool(ctx, "show HEAD --stat")
    assert "second commit" in show and "pkg/mod.py" in show
    old = run_git_tool(ctx, "show HEAD~1:app.py")
    assert old.strip() == APP_PY_V1.strip()
    blame = run_git_tool(ctx, "blame -L 1,2 -- app.py")
    assert len(blame.splitlines()) == 2 and "Test Author" in blame
    assert "import os" in run_git_tool(ctx, f"blame {plain.head[:10]} app.py")


def test_git_status(ctx: ToolContext, plain: HostileRepo) -> None:
    assert run_git_tool(ctx, "status") == "(clean: no changes)"
    (plain.root / "app.py").write_text("changed\n")
    (plain.root / "new.py").write_text("x = 1\n")
    plain.repo.git("add", "new.py")
    (plain.root / "loose.txt").write_text("?\n")
    out = run_git_tool(ctx, "status --porcelain -b")
    assert out.splitlines() == ["## main", " M app.py", "A  new.py", "?? loose.txt"]
    assert run_git_tool(ctx, "status --short -- app.py").splitlines() == [" M app.py"]


def test_git_branch_listing(ctx: ToolContext, plain: HostileRepo) -> None:
    assert run_git_tool(ctx, "branch").splitlines() == ["  feature", "* main"]
    verbose = run_git_tool(ctx, "branch -v")
    assert "first commit" in verbose and "second commit" in verbose
    assert run_git_tool(ctx, "branch --contains HEAD").splitlines() == ["* main"]
    assert run_git_tool(ctx, "branch --merged main").splitlines() == ["  feature", "* main"]
    assert run_git_tool(ctx, "branch --list feat*").splitlines() == ["  feature"]
    assert run_git_tool(ctx, "branch --show-current") == "main"
    assert plain.repo.git("branch", "--list").split() == ["feature", "*", "main"]  # unchanged


def test_git_rev_parse_and_ls_files(ctx: ToolContext, plain: HostileRepo) -> None:
    assert run_git_tool(ctx, "rev-parse HEAD") == plain.head
    assert run_git_tool(ctx, "rev-parse --short HEAD") == plain.head[:7]
    assert run_git_tool(ctx, "rev-parse --abbrev-ref HEAD") == "main"
    assert run_git_tool(ctx, "rev-parse nope") == "nope: unknown revision"
    files = run_git_tool(ctx, "ls-files").splitlines()
    assert files == ["README.md", "app.py", "pkg/mod.py", "util.js"]
    assert run_git_tool(ctx, "ls-files -- pkg").splitlines() == ["pkg/mod.py"]


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("push origin main", "not allowed; read-only subcommands"),
        ("log --onel", "spell options out in full"),
        ("blame --cont=/etc/passwd app.py", "reads an arbitrary file"),
        ("log --oneline --grap", "spell options out in full"),
        ("log --format=%H", "presets"),
        ("diff --output=x", "writes a file"),
        ("log nope-rev", "neither a known revision nor a file"),
        ("log nope -- app.py", "unknown revision"),
        ("branch new", "would create a branch"),
    ],
)
def test_git_refusals_say_why(ctx: ToolContext, command: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        run_git_tool(ctx, command)


def test_omit_secret_sections() -> None:
    text = (
        "commit abc\n\ndiff --git a/.env b/.env\nindex 1..2\n--- a/.env\n+++ b/.env\n"
        "@@ -1 +1 @@\n-A=1\n+A=2\n\ndiff --git a/x.py b/x.py\n+ok\ncommit def\n"
        "diff --git a/k/id_rsa b/k/id_rsa\n+KEY\nabc123 oneline subject\n"
    )
    out = omit_secret_sections(text)
    assert "A=2" not in out and "KEY" not in out
    assert out.count(SECRET_OMITTED) == 2
    assert "+ok" in out and "commit def" in out and "abc123 oneline subject" in out


# -- gh -----------------------------------------------------------------------------------------


def _gh_ctx(plain: HostileRepo, tmp_path: Path) -> tuple[ToolContext, Path]:
    log_file = tmp_path / "gh.log"
    script = tmp_path / "bin" / "gh"
    script.parent.mkdir()
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log_file}"\necho "#12 Demo PR"\n')
    script.chmod(0o755)
    plain.repo.git("remote", "add", "origin", "git@github.com:acme/widget.git")
    runner = GitRunner(gh_path=script)
    return ToolContext(plain.root, runner=runner, report_dir=tmp_path / "r"), log_file


def test_gh_commands(plain: HostileRepo, tmp_path: Path) -> None:
    ctx, log_file = _gh_ctx(plain, tmp_path)
    assert run_gh_tool(ctx, "pr view 12") == "#12 Demo PR"
    run_gh_tool(ctx, "gh pr view #12 --comments")
    run_gh_tool(ctx, "pr view https://github.com/acme/widget/pull/12/files")
    run_gh_tool(ctx, "pr diff 12 --name-only")
    run_gh_tool(ctx, "pr list -s open -L 5 --json number,title")
    run_gh_tool(ctx, "pr checks 12 --required")
    run_gh_tool(ctx, "pr status")
    run_gh_tool(ctx, "pr view feature/x")
    assert log_file.read_text().splitlines() == [
        "pr view 12",
        "pr view --comments 12",
        "pr view 12",
        "pr diff --name-only 12 --color=never",
        "pr list --state=open --limit=5 --json=number,title",
        "pr checks --required 12",
        "pr status",
        "pr view feature/x",
    ]


def test_gh_refusals(plain: HostileRepo, tmp_path: Path) -> None:
    ctx, log_file = _gh_ctx(plain, tmp_path)
    for command, message in (
        ("pr view https://github.com/other/repo/pull/1", "belongs to github.com/'other/repo'"),
        ("pr view 1 --jq .title", "environment variables"),
        ("pr merge 1", "not allowed"),
        ("pr list --limit 1000", "1 to 100"),
        ("pr list 12", "takes no pull request"),
    ):
        with pytest.raises(ToolError, match=message):
            run_gh_tool(ctx, command)
    assert not log_file.exists()


# -- navigation ---------------------------------------------------------------------------------


def test_read_function(ctx: ToolContext, plain: HostileRepo) -> None:
    out = read_function(ctx, "app.py", line=16)
    assert out.splitlines()[0] == "app.py: function Service.run (lines 13-17)"
    assert "  16|             total += helper(i)" in out
    assert read_function(ctx, "app.py", name="Service").startswith("app.py: class Service")
    assert read_function(ctx, "app.py", name="Service.run").startswith(
        "app.py: function Service.run"
    )
    js = read_function(ctx, "util.js", line=7)
    assert js.splitlines()[0] == "util.js: function Box.open (lines 6-8)"
    assert (
        read_function(ctx, "util.js", name="greet").splitlines()[1]
        == "   1| function greet(name) {"
    )
    (plain.root / "m.go").write_text(
        "package m\n\ntype T struct {\n\tn int\n}\n\nfunc (t *T) Get() int {\n\treturn t.n\n}\n"
    )
    assert read_function(ctx, "m.go", line=8).startswith("m.go: function T.Get (lines 7-9)")
    assert read_function(ctx, "m.go", name="T").startswith("m.go: class T (lines 3-5)")


def test_read_function_errors(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="not inside a function"):
        read_function(ctx, "app.py", line=1)
    with pytest.raises(ToolError, match="no function or class named 'nope'"):
        read_function(ctx, "app.py", name="nope")
    with pytest.raises(ToolError, match="no parser"):
        read_function(ctx, "README.md", line=1)
    with pytest.raises(ToolError, match="exactly one"):
        read_function(ctx, "app.py")


def test_search_callers(ctx: ToolContext, plain: HostileRepo, tmp_path: Path) -> None:
    out = search_callers(ctx, "helper")
    lines = out.splitlines()
    assert lines[0] == "5 occurrences of helper"
    assert "app.py:4: def helper(value):  (definition)" in lines
    assert "pkg/mod.py:5: return helper(3)" in lines
    assert (
        search_callers(ctx, "nothing_like_this")
        == "no occurrences of nothing_like_this in tracked files"
    )
    limited = ToolContext(
        plain.root, report_dir=tmp_path / "r", limits=ToolLimits(max_search_results=2)
    )
    assert search_callers(limited, "helper").splitlines()[0] == (
        "5 occurrences of helper (showing the first 2)"
    )
    with pytest.raises(ToolError, match="identifier"):
        search_callers(ctx, "-e x")


def test_git_show_previous(ctx: ToolContext, plain: HostileRepo, tmp_path: Path) -> None:
    out = git_show_previous(ctx, "app.py")
    assert out.splitlines()[1:] == ["   1| def helper(value):", "   2|     return value + value"]
    assert "did not exist" in git_show_previous(ctx, "pkg/mod.py")
    at_head = ToolContext(plain.root, report_dir=tmp_path / "r")  # no old_rev: HEAD
    assert "class Service" in git_show_previous(at_head, "app.py")


# -- registry ------------------------------------------------------------------------------------


async def test_registry(ctx: ToolContext) -> None:
    registry = build_tool_registry(ctx)
    assert registry.names == list(TOOL_NAMES)
    for spec in registry.specs():
        jsonschema.Draft202012Validator.check_schema(spec["function"]["parameters"])
    executor = ToolExecutor(registry)
    result = await executor.run("read_file", {"path": "app.py", "start_line": 1, "end_line": 1})
    assert result.ok and result.content.endswith("   1| import os")
    bad = await executor.run("read_file", {"path": "app.py", "mode": "w"})
    assert not bad.ok and "unexpected field" in bad.content
    subset = build_tool_registry(ctx, ["read_file", "git"])
    assert subset.names == ["read_file", "git"]
    with pytest.raises(ValueError, match="unknown tools"):
        build_tool_registry(ctx, ["shell"])


# -- helpers -------------------------------------------------------------------------------------


def test_name_checks() -> None:
    for name in (".git", ".GIT", ".git.", ".git ", "git~1", "GIT~2", ".g\u200bit", ".git::$DATA"):
        assert is_git_name(name), name
    for name in ("git", ".github", ".gitignore", "x.git"):
        assert not is_git_name(name), name
    for parts in ([".env"], [".env.production"], ["a", "id_rsa.pub"], ["k.PEM"], [".ssh", "x"]):
        assert is_secret_path(parts), parts
    for parts in (["env.py"], ["app.py"], ["docs", "keys.md"]):
        assert not is_secret_path(parts), parts
    assert normalize_component("ＡＢ.") == "ab"
    assert make_visible("a\x1b[31mb\r\nc") == "a<U+001B>[31mb\nc"
