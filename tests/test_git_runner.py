"""The hardened runner: binaries, environment, limits, allowlists, a hostile repository, and
the PR scope through a fake `gh`."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from redline.errors import GitCommandError, RepositoryError, UsageError
from redline.git import (
    UNAVAILABLE_REV,
    GitRunner,
    ScopeDiff,
    ScopeRequest,
    find_repo_root,
    resolve_scope,
)
from redline.git.hardening import TRUSTED_DIRS
from redline.git.pr import parse_remote_url

from fake_cli import DIFF, add_change, fake_gh, script
from gitrepo import _ENV as GITREPO_ENV
from gitrepo import GitRepo

SECRETS = {
    "OPENAI_API_KEY": "sk-test-openai-secret",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "GH_TOKEN": "ghp_secret_token",
    "GITHUB_TOKEN": "ghp_other_secret",
}


@pytest.fixture(autouse=True)
def _no_redline_gh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDLINE_GH", raising=False)


@pytest.fixture
def committed(repo: GitRepo) -> GitRepo:
    repo.write("a.txt", "one\n")
    repo.commit("init")
    return repo


# -- binaries and environment -------------------------------------------------------------


def test_git_is_never_taken_from_the_repository_on_path(
    committed: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PATH names the repository's own bin/ (absolute and relative): neither is searched.
    script(committed.root / "bin" / "git", "touch /nonexistent\n")
    script(committed.root / "bin" / "gh", "exit 0\n")
    monkeypatch.setenv("PATH", f"{committed.root / 'bin'}:bin:{os.environ['PATH']}")
    monkeypatch.chdir(committed.root)

    runner = GitRunner()

    assert runner.git_path is not None
    assert not runner.git_path.startswith(str(committed.root))
    assert runner.gh_path is None or not runner.gh_path.startswith(str(committed.root))


def test_child_env_is_an_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    hostile = {
        **SECRETS,
        "GIT_DIR": "/elsewhere",
        "GIT_CONFIG_GLOBAL": "/evil",
        "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='touch x'",
        "GIT_EXTERNAL_DIFF": "/evil",
        "PAGER": "/evil",
        "LD_PRELOAD": "/evil.so",
        "PATH": "/workspace/bin:/usr/bin",
        "HOME": "/home/dev",
    }
    runner = GitRunner(environ=hostile)

    git_env = runner.child_env()
    gh_env = runner.child_env(for_gh=True)

    assert git_env == {
        "PATH": os.pathsep.join(TRUSTED_DIRS),
        "HOME": "/home/dev",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_PAGER": "cat",
        "GIT_EDITOR": "false",
    }
    assert gh_env["GH_TOKEN"] == SECRETS["GH_TOKEN"]
    assert gh_env["GITHUB_TOKEN"] == SECRETS["GITHUB_TOKEN"]
    assert "OPENAI_API_KEY" not in gh_env and "GIT_DIR" not in gh_env
    assert "/workspace" not in gh_env["PATH"]
    # gh's own git children get the hardened config through GIT_CONFIG_COUNT.
    keys = {gh_env[f"GIT_CONFIG_KEY_{i}"] for i in range(int(gh_env["GIT_CONFIG_COUNT"]))}
    assert {"core.fsmonitor", "core.hooksPath", "diff.external", "protocol.allow"} <= keys


def test_real_child_environment_and_argv(
    tmp_path: Path, committed: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fake git records exactly what a child process receives."""
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    record = tmp_path / "record"
    fake = script(
        tmp_path / "fakebin" / "git",
        f'env > "{record}.env"\nprintf "%s\\n" "$@" "-----" >> "{record}.argv"\n',
    )

    runner = GitRunner(git_path=fake)  # kept: its views are removed when it is collected
    runner.git(committed.root, "diff", "--stat", "HEAD")

    env_text = (record.with_suffix(".env")).read_text()
    for key, value in SECRETS.items():
        assert key not in env_text and value not in env_text
    # git is pointed at Redline's private view of the repository, never at the caller's
    # GIT_DIR nor at the repository's own .git (whose config the author controls).
    env = dict(line.split("=", 1) for line in env_text.splitlines() if "=" in line)
    assert env["GIT_DIR"] != "/elsewhere" and "redline-views-" in env["GIT_DIR"]
    assert env["GIT_WORK_TREE"] == str(committed.root.resolve())
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert Path(env["GIT_CONFIG_GLOBAL"]).read_bytes() == b""
    calls = [
        c.strip("\n").split("\n") for c in record.with_suffix(".argv").read_text().split("-----")
    ]
    config_call, diff_call = calls[0], calls[1]
    # The repository's config is only ever read as data, to copy the object format and such:
    # Redline reads the file (without following a link) and git parses it from stdin.
    assert config_call[:3] == ["config", "--file", "-"]
    assert diff_call[:3] == ["--no-pager", "--literal-pathspecs", "-c"]
    for setting in (
        "core.fsmonitor=false",
        "core.hooksPath=/dev/null",
        "diff.external=",
        "protocol.allow=never",
        "safe.bareRepository=explicit",
        "credential.helper=",
        "gpg.program=false",
    ):
        assert setting in diff_call
    diff_at = diff_call.index("diff")
    assert diff_call[diff_at:] == ["diff", "--no-ext-diff", "--no-textconv", "--stat", "HEAD"]


def test_timeout(tmp_path: Path) -> None:
    fake = script(tmp_path / "git", "exec sleep 10\n")
    runner = GitRunner(git_path=fake, timeout=0.3)
    started = time.monotonic()
    with pytest.raises(GitCommandError, match=r"git rev-parse timed out after 0.3 s"):
        runner.git(tmp_path, "rev-parse", "HEAD")
    assert time.monotonic() - started < 5


def test_output_cap(committed: GitRepo) -> None:
    committed.write("big.txt", "x" * 50_000)
    committed.commit("big")
    runner = GitRunner(max_output=10_000)
    with pytest.raises(GitCommandError, match=r"git cat-file: output exceeds 10000 bytes"):
        runner.git(committed.root, "cat-file", "blob", "HEAD:big.txt")
    assert len(GitRunner().git(committed.root, "cat-file", "blob", "HEAD:big.txt")) == 50_000


def test_nonzero_exit_reports_sanitized_stderr(tmp_path: Path) -> None:
    fake = script(
        tmp_path / "git",
        'for a; do [ "$a" = config ] && exit 1; done\n'
        "printf 'fatal: \\033[31mboom\\007 %0500d\\n' 0 >&2\nexit 3\n",
    )
    with pytest.raises(GitCommandError) as info:
        GitRunner(git_path=fake).git(tmp_path, "rev-parse", "HEAD")
    message = info.value.message
    assert message.startswith("git rev-parse failed (exit 3): fatal: [31mboom ")
    assert "\x1b" not in message and "\x07" not in message


def test_stderr_is_truncated(tmp_path: Path) -> None:
    fake = script(
        tmp_path / "git",
        'for a; do [ "$a" = config ] && exit 1; done\n'
        'head -c 100000 /dev/zero | tr "\\0" e >&2\nexit 1\n',
    )
    with pytest.raises(GitCommandError, match=r"…\(truncated\)$") as info:
        GitRunner(git_path=fake).git(tmp_path, "rev-parse", "HEAD")
    assert len(info.value.message) < 2100


def test_subcommand_allowlists(committed: GitRepo) -> None:
    runner = GitRunner(gh_path="/bin/true")
    for args in (("push",), ("fetch",), ("branch", "-D", "main"), ("-c", "x=y", "diff")):
        with pytest.raises(GitCommandError, match=r"git subcommand not allowed"):
            runner.git(committed.root, *args)
    with pytest.raises(GitCommandError, match=r"git add is only allowed on a private index"):
        runner.git(committed.root, "add", "-A")
    with pytest.raises(GitCommandError, match=r"may not write objects"):
        runner.git(committed.root, "hash-object", "-w", "a.txt")
    with pytest.raises(GitCommandError, match=r"git config is only allowed for reading"):
        runner.git(committed.root, "config", "core.fsmonitor", "x")
    with pytest.raises(GitCommandError, match=r"gh subcommand not allowed"):
        runner.gh(committed.root, "repo", "delete")
    for flag in ("-R", "--repo=x/y", "--web"):
        with pytest.raises(GitCommandError, match=r"gh option not allowed"):
            runner.gh(committed.root, "pr", "view", "1", flag)


def test_find_repo_root(committed: GitRepo, tmp_path: Path) -> None:
    (committed.root / "pkg" / "sub").mkdir(parents=True)
    assert find_repo_root(committed.root / "pkg" / "sub") == committed.root.resolve()
    assert find_repo_root(committed.root / "a.txt") == committed.root.resolve()
    with pytest.raises(RepositoryError, match=r"is not inside a git working tree"):
        find_repo_root(committed.root / ".git")
    bare = tmp_path / "bare.git"
    GitRepo(tmp_path / "seed").git("init", "-q", "--bare", str(bare))
    with pytest.raises(RepositoryError, match=r"bare"):
        find_repo_root(bare)


def test_hostile_core_worktree_is_ignored(committed: GitRepo, tmp_path: Path) -> None:
    """The work tree is the directory that holds .git: the repository's core.worktree is
    configuration its author controls, and git never reads that configuration."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret").write_text("OUTSIDE\n")
    committed.git("config", "core.worktree", str(elsewhere))
    committed.write("mine.txt", "inside\n")
    diff = resolve_scope(committed.root, ScopeRequest("uncommitted"))
    assert diff.repo_root == committed.root.resolve()
    assert "mine.txt" in diff.diff_text and "OUTSIDE" not in diff.diff_text


# -- a fully hostile repository -----------------------------------------------------------


def _hostile_repo(tmp_path: Path) -> tuple[GitRepo, Path]:
    marks = tmp_path / "marks"
    marks.mkdir()
    tools = tmp_path / "tools"

    def hook(name: str, tail: str = "") -> str:
        return str(script(tools / name, f'touch "{marks}/{name}"\n{tail}'))

    repo = GitRepo(tmp_path / "hostile")
    repo.write(".gitattributes", "*.txt diff=evil filter=evil\n*.md filter=x=y\n")
    repo.write("a.txt", "one\n")
    repo.write("doc.md", "doc\n")
    repo.commit("init")
    repo.checkout("-b", "feature")
    repo.write("a.txt", "one\ntwo\n")
    repo.commit("feature")
    repo.git("update-ref", "refs/pull/7/head", "HEAD")
    repo.checkout("main")

    # Work-tree changes (staged, unstaged, untracked, of each attribute kind) made before the
    # config turns hostile, then back-dated so git must re-read (and clean-filter) them.
    repo.write("a.txt", "one\nchanged\n")
    repo.write("doc.md", "doc changed\n")
    repo.write("staged.txt", "staged\n")
    repo.git("add", "staged.txt")
    repo.write("untracked.txt", "untracked\n")
    past = time.time() - 3600
    for name in ("a.txt", "doc.md", "staged.txt", "untracked.txt"):
        os.utime(repo.root / name, (past, past))

    config = {
        "core.fsmonitor": hook("fsmonitor"),
        "core.pager": hook("pager", "cat\n"),
        "core.editor": hook("editor"),
        "diff.external": hook("external"),
        "diff.evil.command": hook("diffcommand"),
        "diff.evil.textconv": hook("textconv", 'cat "$1"\n'),
        "filter.evil.clean": hook("clean", "cat\n"),
        "filter.evil.smudge": hook("smudge", "cat\n"),
        "filter.evil.process": hook("process"),
        "filter.evil.required": "true",
        "filter.x=y.clean": hook("clean_eq", "cat\n"),
        "gpg.program": hook("gpg"),
        "log.showSignature": "true",
        "core.sshCommand": hook("ssh"),
        "credential.helper": hook("credential"),
    }
    for key, value in config.items():
        repo.git("config", key, value)
    for name in ("post-index-change", "reference-transaction", "pre-commit", "post-checkout"):
        script(repo.root / ".git" / "hooks" / name, f'touch "{marks}/hook-{name}"\n')
    assert os.listdir(marks) == []
    return repo, marks


def test_hostile_repository_runs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, marks = _hostile_repo(tmp_path)
    monkeypatch.setenv("GIT_PAGER", "")  # must not matter: the child env is rebuilt
    runner = GitRunner(gh_path=tmp_path / "no-gh")
    requests = [
        ScopeRequest("uncommitted"),
        ScopeRequest("staged"),
        ScopeRequest("branch", "main"),
        ScopeRequest("commit", "feature"),
        ScopeRequest("since", "main"),
        ScopeRequest("range", "main...feature"),
        ScopeRequest("pr", "7"),
    ]
    diffs: list[ScopeDiff] = []
    for request in requests:
        diff = resolve_scope(repo.root, request, runner=runner)
        diffs.append(diff)
        for path in ("a.txt", "doc.md", "staged.txt", "untracked.txt"):
            diff.read_old(path)
            diff.read_new(path)

    assert sorted(os.listdir(marks)) == []
    assert "+changed" in diffs[0].diff_text and "+untracked" in diffs[0].diff_text
    assert "+two" in diffs[3].diff_text and "+two" in diffs[6].diff_text

    # Control: plain git in the same repository does run the planted programs, so the
    # assertion above is meaningful.
    for args in (
        ["diff"],
        ["config", "--unset", "filter.evil.process"],  # lets the next ones get further
        ["diff"],
        ["-c", "diff.evil.command=", "-c", "diff.external=", "log", "-p", "-1", "feature"],
        ["update-ref", "refs/x", "HEAD"],
    ):
        subprocess.run(["git", *args], cwd=repo.root, env=GITREPO_ENV, capture_output=True)
    assert set(os.listdir(marks)) >= {
        "fsmonitor",
        "process",
        "clean",
        "clean_eq",
        "smudge",
        "external",
        "diffcommand",
        "textconv",
        "hook-post-index-change",
        "hook-reference-transaction",
    }


# -- pull requests ------------------------------------------------------------------------


@pytest.fixture
def pr_repo(repo: GitRepo) -> GitRepo:
    return add_change(repo, "https://github.com/acme/widget.git")


def pr_scope(repo: GitRepo, arg: str, gh: Path | str) -> ScopeDiff:
    return resolve_scope(repo.root, ScopeRequest("pr", arg), runner=GitRunner(gh_path=gh))


def test_pr_through_gh(pr_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    base = pr_repo.git("rev-parse", "main").strip()
    head = pr_repo.git("rev-parse", "feature").strip()
    gh = fake_gh(
        tmp_path,
        view={
            "baseRefName": "main",
            "headRefName": "feature",
            "title": "Add two\x1b[0m",
            "headRefOid": head,
            "baseRefOid": base,
        },
    )

    diff = pr_scope(pr_repo, "https://github.com/ACME/widget/pull/12", gh)

    assert diff.diff_text == DIFF
    assert diff.label == 'PR #12 "Add two[0m" (feature → main) — 1 file, +1 −0'
    assert (diff.old_rev, diff.new_rev) == (base, head)
    assert diff.read_old("a.txt") == b"one\n"
    assert diff.read_new("a.txt") == b"one\ntwo\n"
    calls = (tmp_path / "ghdata" / "calls").read_text().splitlines()
    assert calls == [
        "auth status",
        "pr view 12 --json baseRefName,headRefName,title,headRefOid,baseRefOid",
        "pr diff 12 --color=never",
    ]
    env = (tmp_path / "ghdata" / "env").read_text()
    assert f"GH_TOKEN={SECRETS['GH_TOKEN']}" in env  # gh needs its own auth
    assert SECRETS["OPENAI_API_KEY"] not in env and SECRETS["ANTHROPIC_API_KEY"] not in env


def test_pr_through_gh_without_local_commits(pr_repo: GitRepo, tmp_path: Path) -> None:
    gh = fake_gh(tmp_path, view={"title": "t", "headRefOid": "f" * 40, "baseRefOid": "e" * 40})

    diff = pr_scope(pr_repo, "#12", gh)

    assert diff.diff_text == DIFF
    assert diff.old_rev == UNAVAILABLE_REV and diff.new_rev == UNAVAILABLE_REV
    assert diff.read_old("a.txt") is None and diff.read_new("a.txt") is None


def test_pr_gh_selected_through_environment(
    pr_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gh = fake_gh(tmp_path, view={"title": "t"})
    monkeypatch.setenv("REDLINE_GH", str(gh))
    diff = resolve_scope(pr_repo.root, ScopeRequest("pr", "12"))
    assert diff.diff_text == DIFF


@pytest.mark.parametrize(
    "ref", ["refs/pull/12/head", "refs/remotes/origin/pull/12/head", "refs/remotes/origin/pr/12"]
)
def test_pr_local_ref_fallback_when_gh_is_not_logged_in(
    pr_repo: GitRepo, tmp_path: Path, ref: str
) -> None:
    gh = fake_gh(tmp_path, auth_rc=1)
    pr_repo.git("update-ref", ref, "feature")
    base = pr_repo.git("rev-parse", "main").strip()

    diff = pr_scope(pr_repo, "12", gh)

    assert diff.label == f"PR #12 (local ref {ref} vs main, merge-base {base[:7]}) — 1 file, +1 −0"
    assert "+two\n" in diff.diff_text
    assert diff.read_new("a.txt") == b"one\ntwo\n"
    assert (tmp_path / "ghdata" / "calls").read_text() == "auth status\n"


def test_pr_local_ref_when_gh_fails(pr_repo: GitRepo, tmp_path: Path) -> None:
    gh = fake_gh(tmp_path)
    pr_repo.git("update-ref", "refs/pull/5/head", "feature")
    diff = pr_scope(pr_repo, "5", gh)  # the fake gh knows only #12
    assert diff.label.startswith("PR #5 (local ref refs/pull/5/head vs main")


def test_pr_without_gh_or_local_ref_says_what_to_do(pr_repo: GitRepo, tmp_path: Path) -> None:
    with pytest.raises(RepositoryError) as info:
        pr_scope(pr_repo, "12", tmp_path / "missing-gh")
    assert info.value.message == (
        "cannot load pull request #12: gh is not installed, and there is no local ref "
        "refs/pull/12/head"
    )
    assert info.value.hint is not None
    assert "gh auth login" in info.value.hint
    assert "git fetch origin pull/12/head:refs/pull/12/head" in info.value.hint

    gh = fake_gh(tmp_path, auth_rc=1)
    with pytest.raises(RepositoryError, match=r"gh is installed but not logged in"):
        pr_scope(pr_repo, "12", gh)


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/other/widget/pull/12",
        "https://github.com/acme/widget-fork/pull/12",
        "https://evil.example/acme/widget/pull/12",
        "https://user@github.com/acme/widget/pull/12",
    ],
)
def test_pr_url_for_another_repository_is_rejected(
    pr_repo: GitRepo, tmp_path: Path, url: str
) -> None:
    gh = fake_gh(tmp_path, view={"title": "t"})
    with pytest.raises((RepositoryError, UsageError)) as info:
        pr_scope(pr_repo, url, gh)
    assert "pull request" in str(info.value)
    assert not (tmp_path / "ghdata" / "calls").exists()  # gh was never asked


def test_pr_url_without_origin_is_rejected(committed: GitRepo, tmp_path: Path) -> None:
    gh = fake_gh(tmp_path, view={"title": "t"})
    with pytest.raises(RepositoryError, match=r"no usable 'origin' remote"):
        pr_scope(committed, "https://github.com/acme/widget/pull/12", gh)


@pytest.mark.parametrize(
    "arg", ["abc", "12; rm -rf /", "-R other/repo", "0", "ftp://github.com/a/b/pull/1"]
)
def test_pr_bad_argument(pr_repo: GitRepo, tmp_path: Path, arg: str) -> None:
    with pytest.raises(UsageError, match=r"invalid pull request"):
        pr_scope(pr_repo, arg, tmp_path / "missing-gh")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/acme/widget.git", ("github.com", "acme/widget")),
        ("git@github.com:Acme/Widget.git", ("github.com", "acme/widget")),
        ("ssh://git@github.com:22/acme/widget", ("github.com", "acme/widget")),
        ("https://www.github.com/acme/widget/", ("github.com", "acme/widget")),
        ("/local/path/repo", None),
    ],
)
def test_parse_remote_url(url: str, expected: tuple[str, str] | None) -> None:
    assert parse_remote_url(url) == expected
