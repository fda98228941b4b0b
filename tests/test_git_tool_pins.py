"""The git tool's pins, against repositories that configure git from places the -c prefix misses.

Submodules: a checked-out submodule has its own `.git/config` (in `.git/modules/<name>/config`)
and `.gitattributes`. Stock git runs `git status` inside a dirty submodule (and `git diff`
inside it with `diff.submodule=diff`), and those children run the submodule's filters, diff
drivers and textconv. Formats: with no format on the command line, `git log`/`git show` use the
repository's `format.pretty`, whose `%G?` runs gpg.x509.program / gpg.ssh.program.

Each case asserts on effects: no marker file after the tool ran, then the same command through
stock git trips a marker (the fixture was live when the tool ran), and the tool's output still
shows what a reviewer needs (a submodule as its pointer change).

Every case runs twice (`layers`): through the production runner, whose private view
(git/view.py) already hides the repository's config, and through the runner without its view,
where the tool's own pins are all that stands between git and that config — as they are inside
a submodule, where the view's config file does not apply and only the pins and the -c prefix
reach git.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from redline.agent import ToolError
from redline.git.runner import GitRunner
from redline.tools import ToolContext, run_git_tool

from gitrepo import _ENV, GitRepo


def _git(cwd: Path, *args: str, input: bytes | None = None, check: bool = True) -> str:
    """Stock git with the fixture identity: builds the fixtures and runs the controls."""
    out = subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=_ENV,
        input=input,
        capture_output=True,
        check=False,
        timeout=60,
    )
    if check and out.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {out.stderr.decode(errors='replace')}")
    return out.stdout.decode("utf-8", errors="replace")


def _script(path: Path, marker: Path, tail: str = "") -> str:
    path.write_text(f'#!/bin/sh\ntouch "{marker}"\n{tail}')
    path.chmod(0o755)
    return str(path)


def _hostile_module_config(evil: Path, markers: Path, driver: str, tag: str) -> str:
    """Config for one checked-out submodule: the drivers its `.gitattributes` names
    (`<driver>evil`) and every other program, each dropping the marker `<tag>-<kind>`."""

    def script(kind: str, tail: str = "") -> str:
        return _script(evil / f"{tag}-{kind}.sh", markers / f"{tag}-{kind}", tail)

    filter_clean = script("filter-clean", "cat\n")
    smudge = script("filter-smudge", "cat\n")
    textconv = script("textconv", 'cat "$1"\n')
    command = script("diff-command")
    external = script("diff-external")
    fsmonitor = script("fsmonitor")
    return f"""
[filter "{driver}evil"]
\tclean = {filter_clean}
\tsmudge = {smudge}
[diff "{driver}evil"]
\ttextconv = {textconv}
\tcommand = {command}
[diff]
\texternal = {external}
[core]
\tfsmonitor = {fsmonitor}
"""


def _make_source(path: Path, level: str) -> GitRepo:
    repo = GitRepo(path)
    repo.write("f.txt", "one\n")
    # The submodule's own attributes name its own drivers (not blanked by the superproject's
    # runner, which only knows the superproject's filter names).
    repo.write(".gitattributes", f"* filter={level}evil diff={level}evil\n")
    repo.commit(f"{level} first")
    return repo


def _dirty(work: Path) -> None:
    """Same size, new content, new mtime: git must read the file (through the clean filter)."""
    target = work / "f.txt"
    target.write_text("two\n")
    later = time.time() + 5
    os.utime(target, (later, later))
    (work / "untracked.txt").write_text("new\n")


@dataclass
class SubmoduleRepo:
    root: Path
    markers: Path
    pointer_at_head: tuple[str, str]  # the submodule commits HEAD moved sub between
    pointer_in_tree: str  # the submodule commit checked out in the work tree (not staged)

    def markers_present(self) -> list[str]:
        return sorted(os.listdir(self.markers))


# Marker prefixes: the top-level submodules, and the ones nested in them (depth 2).
TOP_LEVEL = ("sub-", "quiet-")
NESTED = ("subsub-", "quiet.subsub-")


def build_submodule_repo(base: Path, *, depth: int) -> SubmoduleRepo:
    """A superproject with two hostile submodules (each with `subsub` inside at depth 2).

    `sub`: HEAD moves it (for log -p/show), the work tree moves it again (diff/status).
    `quiet`: its pointer never moves; git could only learn anything about it by looking inside
    (a changed pointer alone already says "modified", so git would not look inside `sub` for
    `diff --name-status`). Every level's work tree is dirty. The hostile configuration goes in
    after the last commit.
    """
    markers = base / "markers"
    markers.mkdir(parents=True)
    evil = base / "evil"
    evil.mkdir()
    sub_source = _make_source(base / "subsrc", "sub")
    if depth == 2:
        _make_source(base / "subsubsrc", "subsub")
        _git(sub_source.root, "submodule", "add", "-q", str(base / "subsubsrc"), "subsub")
        sub_source.commit("add subsub")
    superproject = GitRepo(base / "super")
    root = superproject.root
    superproject.write("app.py", "x = 1\n")
    superproject.commit("first")
    for name in ("sub", "quiet"):
        _git(root, "submodule", "add", "-q", str(sub_source.root), name)
        # Committed by the author, read from the work tree: beats diff.ignoreSubmodules.
        _git(root, "config", "-f", ".gitmodules", f"submodule.{name}.ignore", "none")
    if depth == 2:
        _git(root, "submodule", "update", "-q", "--init", "--recursive")
    superproject.commit("add sub")
    sub = root / "sub"
    before = _git(sub, "rev-parse", "HEAD").strip()
    (sub / "g.txt").write_text("bump\n")
    _git(sub, "add", "g.txt")
    _git(sub, "commit", "-q", "-m", "sub second")
    after = _git(sub, "rev-parse", "HEAD").strip()
    superproject.commit("bump sub")
    (sub / "h.txt").write_text("more\n")
    _git(sub, "add", "h.txt")
    _git(sub, "commit", "-q", "-m", "sub third")
    in_tree = _git(sub, "rev-parse", "HEAD").strip()
    if depth == 2:
        subsub = sub / "subsub"
        (subsub / "g.txt").write_text("bump\n")
        _git(subsub, "add", "g.txt")
        _git(subsub, "commit", "-q", "-m", "subsub second")

    # -- after the last commit: hostile configuration and dirty work trees -------------------
    with open(root / ".git" / "config", "a") as fh:
        # Make stock git enter the submodules as eagerly as it can.
        fh.write(
            "[diff]\n\tsubmodule = diff\n\tignoreSubmodules = none\n"
            "[submodule]\n\trecurse = true\n[status]\n\tsubmoduleSummary = true\n"
        )
    for name in ("sub", "quiet"):
        module_dir = root / ".git" / "modules" / name
        with open(module_dir / "config", "a") as fh:
            fh.write(_hostile_module_config(evil, markers, "sub", name))
        _dirty(root / name)
        if depth == 2:
            nested_tag = "subsub" if name == "sub" else "quiet.subsub"
            with open(module_dir / "modules" / "subsub" / "config", "a") as fh:
                fh.write(_hostile_module_config(evil, markers, "subsub", nested_tag))
            _dirty(root / name / "subsub")
    return SubmoduleRepo(root, markers, (before, after), in_tree)


@pytest.fixture(params=["view", "no-view"])
def layers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """`no-view`: GitRunner runs git in the repository itself, as before git/view.py."""
    if request.param == "no-view":
        monkeypatch.setattr(GitRunner, "view", lambda self, cwd: None)
    return str(request.param)


def _ctx(root: Path, tmp_path: Path) -> ToolContext:
    return ToolContext(root, report_dir=tmp_path / "reports")


def _assert_pointer_change(out: str, old: str, new: str) -> None:
    assert f"-Subproject commit {old}\n" in out + "\n"
    assert f"+Subproject commit {new}\n" in out + "\n"
    assert "-dirty" not in out  # git never looked inside a submodule's work tree
    assert "Submodule " not in out  # nor ran a diff (or log) inside one
    assert "diff --git a/quiet " not in out  # a submodule whose pointer did not move: not shown


# -- submodules ----------------------------------------------------------------------------------

SUBMODULE_COMMANDS = ("diff", "diff HEAD", "status", "log -p -n 1", "show")


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("command", SUBMODULE_COMMANDS)
def test_submodules_are_never_entered(
    tmp_path: Path, layers: str, depth: int, command: str
) -> None:
    repo = build_submodule_repo(tmp_path / "h", depth=depth)
    out = run_git_tool(_ctx(repo.root, tmp_path), command)
    assert repo.markers_present() == []

    old, new = repo.pointer_at_head
    if command == "status":
        assert out.splitlines() == [" M sub"]
    elif command.startswith("diff"):
        _assert_pointer_change(out, new, repo.pointer_in_tree)
    else:
        _assert_pointer_change(out, old, new)

    # Control: the same command through stock git runs the submodule's programs, so the
    # fixture was live when the tool ran (and, at depth 2, the nested submodule's as well).
    _git(repo.root, *command.split(), check=False)
    present = repo.markers_present()
    assert any(m.startswith(TOP_LEVEL) for m in present), present
    if depth == 2 and not command.startswith(("log", "show")):
        # log/show compare commits; only the work-tree commands reach the nested level.
        assert any(m.startswith(NESTED) for m in present), present


OTHER_FORMS = (
    "diff --stat",
    "diff --name-status HEAD",
    "diff --cached",
    "diff --stat HEAD~1 -- sub",
    "log --stat -n 2",
    "show --name-only",
    "ls-files -m",
    "ls-files --others --exclude-standard",
    "ls-files -s -- sub",
    "status --short -- sub",
    "blame app.py",
    "branch -v",
    "rev-parse --short HEAD",
)


def test_other_forms_do_not_enter_submodules(tmp_path: Path, layers: str) -> None:
    repo = build_submodule_repo(tmp_path / "h", depth=2)
    ctx = _ctx(repo.root, tmp_path)
    for command in OTHER_FORMS:
        run_git_tool(ctx, command)
        assert repo.markers_present() == [], command


REFUSED = (
    "diff --submodule=diff",
    "diff --submodule diff",
    "diff --submodule=log HEAD~1",
    "diff --submod=diff",
    "diff --ignore-submodules=none",
    "diff --ignore-submodules",
    "log -p --submodule=diff -n 1",
    "show --submodule=diff",
    "show --ignore-submodules=none",
    "ls-files --recurse-submodules",
    "status --ignore-submodules=none",
)


def test_model_cannot_choose_how_submodules_are_handled(tmp_path: Path) -> None:
    repo = build_submodule_repo(tmp_path / "h", depth=1)
    ctx = _ctx(repo.root, tmp_path)
    for command in REFUSED:
        with pytest.raises(ToolError, match="not allowed"):
            run_git_tool(ctx, command)
    assert repo.markers_present() == []


def test_gitmodules_ignore_all_does_not_hide_a_pointer_change(tmp_path: Path, layers: str) -> None:
    """A committed `.gitmodules` with `ignore = all` hides a submodule bump from stock git."""
    repo = build_submodule_repo(tmp_path / "h", depth=1)
    _git(repo.root, "config", "-f", ".gitmodules", "submodule.sub.ignore", "all")
    ctx = _ctx(repo.root, tmp_path)
    old, new = repo.pointer_at_head
    assert "Subproject commit" not in _git(repo.root, "log", "-p", "-n", "1")  # control
    _assert_pointer_change(run_git_tool(ctx, "log -p -n 1"), old, new)
    _assert_pointer_change(run_git_tool(ctx, "diff"), new, repo.pointer_in_tree)
    assert " M sub" in run_git_tool(ctx, "status").splitlines()
    assert repo.markers_present() == []


# -- formats and signatures ----------------------------------------------------------------------


@dataclass
class SignedRepo:
    root: Path
    markers: Path
    commits: list[str]  # newest first: x509-signed, ssh-signed, plain

    def markers_present(self) -> list[str]:
        return sorted(os.listdir(self.markers))


def _signed_looking_commit(repo: GitRepo, parent: str, armor: str, message: str) -> str:
    tree = repo.git("rev-parse", f"{parent}^{{tree}}").strip()
    body = (
        f"tree {tree}\nparent {parent}\n"
        "author Test Author <author@example.invalid> 1767225600 +0000\n"
        "committer Test Author <author@example.invalid> 1767225600 +0000\n"
        f"gpgsig -----BEGIN {armor}-----\n \n AAAA\n -----END {armor}-----\n"
        f"\n{message}\n"
    )
    return repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=body.encode()).strip()


def build_signed_repo(base: Path) -> SignedRepo:
    """Commits carrying SSH and X.509 signature blocks, and a config whose default format
    (`format.pretty = %G? %H`) verifies them with programs that drop markers."""
    markers = base / "markers"
    markers.mkdir(parents=True)
    evil = base / "evil"
    evil.mkdir()
    repo = GitRepo(base / "repo")
    repo.write("app.py", "x = 1\n")
    plain = repo.commit("plain")
    ssh = _signed_looking_commit(repo, plain, "SSH SIGNATURE", "ssh-signed")
    x509 = _signed_looking_commit(repo, ssh, "SIGNED MESSAGE", "x509-signed")
    repo.git("update-ref", "refs/heads/main", x509)
    allowed = base / "allowed_signers"
    allowed.write_text("")
    gpg_x509 = _script(evil / "gpgsm.sh", markers / "gpg-x509", "exit 1\n")
    gpg_ssh = _script(evil / "ssh-keygen.sh", markers / "gpg-ssh", "exit 1\n")
    gpg = _script(evil / "gpg.sh", markers / "gpg", "exit 1\n")
    with open(repo.root / ".git" / "config", "a") as fh:
        fh.write(
            f'[format]\n\tpretty = "%G? %H"\n'
            f"[gpg]\n\tprogram = {gpg}\n"
            f'[gpg "x509"]\n\tprogram = {gpg_x509}\n'
            f'[gpg "ssh"]\n\tprogram = {gpg_ssh}\n\tallowedSignersFile = {allowed}\n'
            f"[log]\n\tshowSignature = true\n"
        )
    return SignedRepo(repo.root, markers, [x509, ssh, plain])


FORMAT_COMMANDS = (
    "log",
    "log -n 2",
    "log -p",
    "log --stat --graph",
    "log --oneline",
    "log --format=fuller",
    "show",
    "show --stat",
    "show --no-patch HEAD~1",
    "show --oneline",
)


@pytest.mark.parametrize("command", FORMAT_COMMANDS)
def test_no_format_from_the_repository(tmp_path: Path, layers: str, command: str) -> None:
    repo = build_signed_repo(tmp_path / "s")
    out = run_git_tool(_ctx(repo.root, tmp_path), command)
    assert repo.markers_present() == []
    x509, ssh, _plain = repo.commits
    commit, subject = (ssh, "ssh-signed") if "HEAD~1" in command else (x509, "x509-signed")
    # A preset, never `%G? %H`: no line starts with a signature status letter and an id.
    assert not any(line.startswith(("N ", "B ", "E ", "U ")) for line in out.splitlines())
    if "--oneline" in command:
        assert out.splitlines()[0] == f"{commit[:7]} {subject}"
    elif "--format=fuller" in command:
        assert "AuthorDate:" in out and subject in out
    else:
        assert f"commit {commit}" in out and "Author: Test Author" in out  # medium
        assert "Date:" in out and subject in out

    # Control: stock git with the same command verifies a signature through the programs.
    _git(repo.root, *command.split(), check=False)
    assert {"gpg-x509", "gpg-ssh"} & set(repo.markers_present())


def test_oneline_stays_oneline(tmp_path: Path, layers: str) -> None:
    repo = build_signed_repo(tmp_path / "s")
    out = run_git_tool(_ctx(repo.root, tmp_path), "log --oneline")
    x509, ssh, plain = repo.commits
    assert out.splitlines() == [
        f"{x509[:7]} x509-signed",
        f"{ssh[:7]} ssh-signed",
        f"{plain[:7]} plain",
    ]
    assert repo.markers_present() == []
