"""GitLab merge requests as a review scope (`--mr 7`, `--pr '!7'`, an MR URL) through a fake
`glab`, the local refs/merge-requests/N/head fallback, the hardened glab/gh-api access, and
`forge_ref` / `origin_project` for the posting code."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from redline.cli.main import main
from redline.errors import GitCommandError, RepositoryError, UsageError
from redline.git import UNAVAILABLE_REV, GitRunner, ScopeDiff, ScopeRequest, resolve_scope
from redline.git.forge import (
    Forge,
    ForgeProject,
    ForgeRef,
    forge_ref,
    origin_project,
    parse_pr_arg,
    parse_remote_url,
    remote_parts,
)
from redline.git.repo import Repo

from fake_cli import DIFF, add_change, calls, fake_gh, fake_glab
from gitrepo import GitRepo

SECRETS = {
    "OPENAI_API_KEY": "sk-test-openai-secret",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "GH_TOKEN": "ghp_secret_token",
    "GITLAB_TOKEN": "glpat-secret-token",
}
ORIGIN = "git@gitlab.example.com:Acme/Platform/widget.git"


@pytest.fixture(autouse=True)
def _no_redline_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in list(os.environ):
        # REDLINE_CACHE_DIR stays: conftest points it at a temporary directory.
        if var.startswith("REDLINE_") and var != "REDLINE_CACHE_DIR":
            monkeypatch.delenv(var)
    monkeypatch.setenv("REDLINE_CONFIG", os.devnull)  # no user file


@pytest.fixture
def committed(repo: GitRepo) -> GitRepo:
    repo.write("a.txt", "one\n")
    repo.commit("init")
    return repo


@pytest.fixture
def mr_repo(repo: GitRepo) -> GitRepo:
    return add_change(repo, ORIGIN)


def mr_view(repo: GitRepo, title: str = "Add two") -> dict[str, object]:
    base = repo.git("rev-parse", "main").strip()
    head = repo.git("rev-parse", "feature").strip()
    return {
        "title": title,
        "source_branch": "feature",
        "target_branch": "main",
        "sha": head,
        "diff_refs": {"base_sha": base, "head_sha": head, "start_sha": base},
    }


def mr_scope(repo: GitRepo, arg: str, glab: Path | str, gh: Path | str = "/x/no-gh") -> ScopeDiff:
    runner = GitRunner(glab_path=glab, gh_path=gh)
    return resolve_scope(repo.root, ScopeRequest("pr", arg), runner=runner)


# -- the scope through glab ---------------------------------------------------------------


@pytest.mark.parametrize(
    "arg",
    [
        "!7",
        "https://gitlab.example.com/acme/platform/WIDGET/-/merge_requests/7",
        "https://gitlab.example.com/Acme/Platform/widget/-/merge_requests/7/diffs",
    ],
)
def test_mr_through_glab(
    mr_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arg: str
) -> None:
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    glab = fake_glab(tmp_path, view=mr_view(mr_repo, "Add two\x1b[0m"))

    diff = mr_scope(mr_repo, arg, glab)

    assert diff.diff_text == DIFF
    assert diff.label == 'MR !7 "Add two[0m" (feature → main) — 1 file, +1 −0'
    base = mr_repo.git("rev-parse", "main").strip()
    head = mr_repo.git("rev-parse", "feature").strip()
    assert (diff.old_rev, diff.new_rev) == (base, head)
    assert diff.read_new("a.txt") == b"one\ntwo\n"
    assert calls(tmp_path, "glab") == ["auth status", "mr view 7 --output json", "mr diff 7 --raw"]
    env = dict(
        line.split("=", 1) for line in (tmp_path / "glabdata" / "env").read_text().splitlines()
    )
    assert env["GITLAB_TOKEN"] == SECRETS["GITLAB_TOKEN"]  # glab needs its own auth
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GH_TOKEN"):
        assert key not in env
    assert all(value not in env.values() for key, value in SECRETS.items() if key != "GITLAB_TOKEN")
    assert (env["NO_PROMPT"], env["GLAB_CHECK_UPDATE"], env["NO_COLOR"]) == ("1", "false", "1")
    assert env["PATH"].split(os.pathsep)[0] == str(glab.parent)
    assert env["GIT_CONFIG_COUNT"]  # glab's own git children get the hardened config too


def test_mr_through_glab_without_local_commits(mr_repo: GitRepo, tmp_path: Path) -> None:
    view = {"title": "t", "sha": "f" * 40, "diff_refs": {"base_sha": "e" * 40}}
    diff = mr_scope(mr_repo, "!7", fake_glab(tmp_path, view=view))
    assert diff.diff_text == DIFF
    assert diff.old_rev == UNAVAILABLE_REV and diff.new_rev == UNAVAILABLE_REV
    assert diff.label.startswith('MR !7 "t" (? → ?)')


def test_glab_selected_through_environment(
    mr_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDLINE_GLAB", str(fake_glab(tmp_path, view=mr_view(mr_repo))))
    diff = resolve_scope(mr_repo.root, ScopeRequest("pr", "!7"))
    assert diff.diff_text == DIFF


@pytest.mark.parametrize(
    "url",
    [
        "https://gitlab.com/acme/platform/widget/-/merge_requests/7",  # another host
        "https://gitlab.example.com/acme/widget/-/merge_requests/7",  # the subgroup missing
        "https://gitlab.example.com/acme/platform/widget/sub/-/merge_requests/7",
        "https://gitlab.example.com/other/platform/widget/-/merge_requests/7",
        "https://gitlab.example.com/acme/platform/widget-fork/-/merge_requests/7",
    ],
)
def test_mr_url_for_another_project_is_rejected(mr_repo: GitRepo, tmp_path: Path, url: str) -> None:
    glab = fake_glab(tmp_path, view=mr_view(mr_repo))
    with pytest.raises(RepositoryError) as info:
        mr_scope(mr_repo, url, glab)
    assert info.value.message.startswith("merge request URL is for ")
    assert "but this repository's origin is gitlab.example.com/Acme/Platform/widget" in str(
        info.value.message
    )
    assert calls(tmp_path, "glab") == []  # glab was never asked


def test_mr_url_without_origin_is_rejected(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("a.txt", "one\n")
    repo.commit("init")
    with pytest.raises(RepositoryError, match=r"merge request URL: .*no usable 'origin'"):
        mr_scope(repo, "https://gitlab.com/a/b/-/merge_requests/7", fake_glab(tmp_path))


# -- without glab: the local ref -----------------------------------------------------------


@pytest.mark.parametrize(
    "ref", ["refs/merge-requests/7/head", "refs/remotes/origin/merge-requests/7/head"]
)
def test_local_ref_when_glab_is_not_logged_in(mr_repo: GitRepo, tmp_path: Path, ref: str) -> None:
    mr_repo.git("update-ref", ref, "feature")
    base = mr_repo.git("rev-parse", "main").strip()

    diff = mr_scope(mr_repo, "!7", fake_glab(tmp_path, auth_rc=1))

    assert diff.label == f"MR !7 (local ref {ref} vs main, merge-base {base[:7]}) — 1 file, +1 −0"
    assert diff.read_new("a.txt") == b"one\ntwo\n"
    assert calls(tmp_path, "glab") == ["auth status"]


def test_local_ref_when_glab_is_not_installed(mr_repo: GitRepo, tmp_path: Path) -> None:
    mr_repo.git("update-ref", "refs/merge-requests/7/head", "feature")
    diff = mr_scope(mr_repo, "!7", tmp_path / "missing-glab")
    assert diff.label.startswith("MR !7 (local ref refs/merge-requests/7/head vs main")


def test_local_ref_when_glab_fails(mr_repo: GitRepo, tmp_path: Path) -> None:
    mr_repo.git("update-ref", "refs/merge-requests/5/head", "feature")
    diff = mr_scope(mr_repo, "!5", fake_glab(tmp_path))  # the fake glab knows only !7
    assert diff.label.startswith("MR !5 (local ref refs/merge-requests/5/head vs main")


def test_neither_glab_nor_local_ref_says_what_to_do(mr_repo: GitRepo, tmp_path: Path) -> None:
    with pytest.raises(RepositoryError) as info:
        mr_scope(mr_repo, "!7", tmp_path / "missing-glab")
    assert info.value.message == (
        "cannot load merge request !7: glab is not installed, and there is no local ref "
        "refs/merge-requests/7/head"
    )
    assert info.value.hint is not None
    assert "glab auth login" in info.value.hint
    assert "git fetch origin merge-requests/7/head:refs/merge-requests/7/head" in info.value.hint

    with pytest.raises(RepositoryError, match=r"glab is installed but not logged in"):
        mr_scope(mr_repo, "!7", fake_glab(tmp_path, auth_rc=1))


def test_glab_error_is_reported_with_a_hint(mr_repo: GitRepo, tmp_path: Path) -> None:
    with pytest.raises(RepositoryError) as info:
        mr_scope(mr_repo, "!8", fake_glab(tmp_path))
    assert info.value.message.startswith("cannot load merge request !8: glab mr view failed")
    assert "404 Not Found" in info.value.message
    assert info.value.hint is not None and "merge-requests/8/head" in info.value.hint


def test_github_number_on_a_gitlab_origin_points_at_the_mr_syntax(
    mr_repo: GitRepo, tmp_path: Path
) -> None:
    with pytest.raises(RepositoryError) as info:
        mr_scope(mr_repo, "12", tmp_path / "missing-glab")
    assert "pull request #12: gh is not installed" in info.value.message
    assert info.value.hint is not None and "!12" in info.value.hint


# -- parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arg", "forge", "number", "path"),
    [
        ("12", "github", 12, None),
        ("#12", "github", 12, None),
        ("!7", "gitlab", 7, None),
        ("https://github.com/acme/widget/pull/3", "github", 3, "acme/widget"),
        ("https://gitlab.com/a/b/-/merge_requests/4", "gitlab", 4, "a/b"),
        ("https://gitlab.com/a/b/c/d/-/merge_requests/5/commits", "gitlab", 5, "a/b/c/d"),
    ],
)
def test_parse_pr_arg(arg: str, forge: str, number: int, path: str | None) -> None:
    ref = parse_pr_arg(arg)
    assert (ref.forge, ref.number, ref.path) == (forge, number, path)


@pytest.mark.parametrize(
    "arg",
    [
        "!0",
        "!x",
        "!!7",
        "https://gitlab.com/-/merge_requests/1",
        "https://gitlab.com/a/-/merge_requests/1",
        "https://gitlab.com/a/../b/-/merge_requests/1",
        "https://gitlab.com/a/-/b/-/merge_requests/1",
        "https://user@gitlab.com/a/b/-/merge_requests/1",
        "ftp://gitlab.com/a/b/-/merge_requests/1",
    ],
)
def test_parse_pr_arg_refuses(arg: str) -> None:
    with pytest.raises(UsageError, match=r"invalid pull request or merge request"):
        parse_pr_arg(arg)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@gitlab.com:Group/Sub/Proj.git", ("gitlab.com", "Group/Sub/Proj")),
        ("https://gitlab.example.com/g/s/t/p.git/", ("gitlab.example.com", "g/s/t/p")),
        ("ssh://git@gitlab.com:2222/g/p", ("gitlab.com", "g/p")),
        ("https://github.com/acme/widget.git", ("github.com", "acme/widget")),
        ("https://gitlab.com/single", None),
        ("https://gitlab.com/a/../b", None),
        ("/local/path/repo", None),
    ],
)
def test_remote_parts(url: str, expected: tuple[str, str] | None) -> None:
    assert remote_parts(url) == expected


def test_parse_remote_url_stays_owner_repo() -> None:
    assert parse_remote_url("git@github.com:Acme/Widget.git") == ("github.com", "acme/widget")
    assert parse_remote_url("git@gitlab.com:g/sub/p.git") is None


# -- the hardened glab and gh api ---------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("mr", "view", "7", "-R", "other/proj"),
        ("mr", "view", "7", "--repo", "other/proj"),
        ("mr", "view", "7", "--repo=other/proj"),
        ("mr", "view", "7", "-Rother/proj"),
        ("mr", "view", "7", "--web"),
        ("mr", "view", "7", "-w"),
        ("api", "projects/1", "-R=other/proj"),
    ],
)
def test_glab_forbidden_options_are_refused(
    committed: GitRepo, tmp_path: Path, args: tuple[str, ...]
) -> None:
    glab = fake_glab(tmp_path)
    with pytest.raises(GitCommandError, match=r"glab option not allowed"):
        GitRunner(glab_path=glab).run_glab(committed.root, *args)
    assert calls(tmp_path, "glab") == []


@pytest.mark.parametrize(
    "args",
    [("mr", "merge", "7"), ("mr", "approve", "7"), ("repo", "delete"), ("auth", "login"), ()],
)
def test_glab_subcommand_allowlist(
    committed: GitRepo, tmp_path: Path, args: tuple[str, ...]
) -> None:
    glab = fake_glab(tmp_path)
    with pytest.raises(GitCommandError, match=r"glab subcommand not allowed"):
        GitRunner(glab_path=glab).run_glab(committed.root, *args)
    assert calls(tmp_path, "glab") == []


def test_glab_api_feeds_stdin(committed: GitRepo, tmp_path: Path) -> None:
    glab = fake_glab(tmp_path)
    path = "projects/acme%2Fwidget/merge_requests/7/discussions"
    result = GitRunner(glab_path=glab).run_glab(
        committed.root, "api", path, "-X", "POST", "--input", "-", input=b'{"body": "hi"}'
    )
    assert result.returncode == 0
    assert calls(tmp_path, "glab") == [f"api {path} -X POST --input -"]
    assert (tmp_path / "glabdata" / "stdin").read_bytes() == b'{"body": "hi"}'


def test_run_gh_refuses_api_and_run_gh_api_takes_only_api(
    committed: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    runner = GitRunner(gh_path=fake_gh(tmp_path))
    with pytest.raises(GitCommandError, match=r"gh subcommand not allowed"):
        runner.run_gh(committed.root, "api", "repos/a/b/pulls/1/reviews")
    for args in (("pr", "view", "1"), ("auth", "status"), ("pr", "merge", "1")):
        with pytest.raises(GitCommandError, match=r"gh subcommand not allowed"):
            runner.run_gh_api(committed.root, *args)
    with pytest.raises(GitCommandError, match=r"gh option not allowed"):
        runner.run_gh_api(committed.root, "api", "x", "--repo=other/repo")
    assert calls(tmp_path, "gh") == []

    result = runner.run_gh_api(
        committed.root, "api", "repos/a/b/pulls/1/reviews", "--input", "-", input=b"{}"
    )
    assert result.returncode == 0
    assert calls(tmp_path, "gh") == ["api repos/a/b/pulls/1/reviews --input -"]
    assert (tmp_path / "ghdata" / "stdin").read_bytes() == b"{}"
    env = (tmp_path / "ghdata" / "env").read_text()
    assert f"GH_TOKEN={SECRETS['GH_TOKEN']}" in env
    assert SECRETS["OPENAI_API_KEY"] not in env and SECRETS["GITLAB_TOKEN"] not in env


def test_git_and_gh_environments_do_not_get_gitlab_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    runner = GitRunner()
    assert "GITLAB_TOKEN" not in runner.child_env()
    assert "GITLAB_TOKEN" not in runner.child_env(for_gh=True)
    glab_env = runner.child_env(for_glab=True)
    assert glab_env["GITLAB_TOKEN"] == SECRETS["GITLAB_TOKEN"]
    assert "GH_TOKEN" not in glab_env and "OPENAI_API_KEY" not in glab_env


def test_glab_path_must_be_absolute() -> None:
    with pytest.raises(RepositoryError, match=r"glab path must be absolute"):
        GitRunner(glab_path="glab")


# -- origin_project and forge_ref, for posting -----------------------------------------------


@pytest.mark.parametrize(
    ("origin", "forge", "expected"),
    [
        (ORIGIN, None, ForgeProject("gitlab", "gitlab.example.com", "Acme/Platform/widget")),
        (
            "https://github.com/acme/widget.git",
            None,
            ForgeProject("github", "github.com", "acme/widget"),
        ),
        (
            "https://git.corp.example/g/p.git",
            None,
            ForgeProject("github", "git.corp.example", "g/p"),
        ),
        (
            "https://git.corp.example/g/p.git",
            "gitlab",
            ForgeProject("gitlab", "git.corp.example", "g/p"),
        ),
    ],
)
def test_origin_project(
    repo: GitRepo, origin: str, forge: Forge | None, expected: ForgeProject
) -> None:
    repo.git("remote", "add", "origin", origin)
    assert origin_project(Repo(repo.root, GitRunner()), forge=forge) == expected


def test_origin_project_without_origin(repo: GitRepo) -> None:
    assert origin_project(Repo(repo.root, GitRunner())) is None


def test_forge_ref_gitlab(mr_repo: GitRepo, tmp_path: Path) -> None:
    view = mr_view(mr_repo)
    base = mr_repo.git("rev-parse", "main").strip()
    head = mr_repo.git("rev-parse", "feature").strip()
    repo = Repo(mr_repo.root, runner=GitRunner(glab_path=fake_glab(tmp_path, view=view)))
    url = "https://gitlab.example.com/acme/platform/widget/-/merge_requests/7"
    project = ForgeProject("gitlab", "gitlab.example.com", "Acme/Platform/widget")
    assert forge_ref(repo, url) == ForgeRef(project, 7, head, base, base)
    assert forge_ref(repo, "!7") == ForgeRef(project, 7, head, base, base)
    assert "mr diff 7 --raw" not in calls(tmp_path, "glab")  # no diff fetched
    with pytest.raises(RepositoryError, match=r"merge request URL is for"):
        forge_ref(repo, "https://gitlab.example.com/acme/other/-/merge_requests/7")
    with pytest.raises(RepositoryError, match=r"cannot load merge request !9"):
        forge_ref(repo, "!9")


def test_forge_ref_gitlab_local_ref(mr_repo: GitRepo, tmp_path: Path) -> None:
    repo = Repo(mr_repo.root, runner=GitRunner(glab_path=tmp_path / "missing-glab"))
    project = ForgeProject("gitlab", "gitlab.example.com", "Acme/Platform/widget")
    assert forge_ref(repo, "!7") == ForgeRef(project, 7, None, None, None)
    mr_repo.git("update-ref", "refs/merge-requests/7/head", "feature")
    head = mr_repo.git("rev-parse", "feature").strip()
    assert forge_ref(repo, "!7") == ForgeRef(project, 7, head, None, None)


def test_forge_ref_github(repo: GitRepo, tmp_path: Path) -> None:
    gh_repo = add_change(repo, "https://github.com/acme/widget.git")
    base = gh_repo.git("rev-parse", "main").strip()
    head = gh_repo.git("rev-parse", "feature").strip()
    gh = fake_gh(tmp_path, view={"headRefOid": head.upper(), "baseRefOid": base})
    project = ForgeProject("github", "github.com", "acme/widget")

    repo_gh = Repo(gh_repo.root, runner=GitRunner(gh_path=gh))
    assert forge_ref(repo_gh, "https://github.com/Acme/widget/pull/12") == ForgeRef(
        project, 12, head, base, None
    )
    assert calls(tmp_path, "gh")[-1] == "pr view 12 --json headRefOid,baseRefOid"

    no_gh = Repo(gh_repo.root, runner=GitRunner(gh_path=tmp_path / "missing-gh"))
    gh_repo.git("update-ref", "refs/pull/12/head", "feature")
    assert forge_ref(no_gh, "#12") == ForgeRef(project, 12, head, None, None)
    with pytest.raises(RepositoryError, match=r"pull request URL is for github.com/other/widget"):
        forge_ref(no_gh, "https://github.com/other/widget/pull/12")


# -- the command line ---------------------------------------------------------------------


def test_cli_review_mr(
    mr_repo: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("REDLINE_GLAB", str(fake_glab(tmp_path, view=mr_view(mr_repo))))
    monkeypatch.setenv("OPENAI_API_KEY", SECRETS["OPENAI_API_KEY"])
    for argv in (["--mr", "7"], ["--pr", "!7"], ["--mr", "!7"]):
        code = main(["review", *argv, "--format", "json", "--repo", str(mr_repo.root)])
        out, err = capsys.readouterr()
        assert code == 0, err
        report = json.loads(out)
        assert report["scope"] == "pr"
        assert report["scope_label"] == 'MR !7 "Add two" (feature → main) — 1 file, +1 −0'
    assert calls(tmp_path, "glab").count("mr diff 7 --raw") == 3
    assert SECRETS["OPENAI_API_KEY"] not in (tmp_path / "glabdata" / "env").read_text()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--mr", "abc"], "--mr 'abc': not a merge request number"),
        (["--mr", "7", "--pr", "7"], "not allowed with argument"),
    ],
)
def test_cli_mr_bad_input(
    mr_repo: GitRepo, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    try:
        code = main(["review", *argv, "--repo", str(mr_repo.root)])
    except SystemExit as exc:
        code = int(exc.code or 0)
    _, err = capsys.readouterr()
    assert code == 2
    assert message in err
    assert "Traceback" not in err
