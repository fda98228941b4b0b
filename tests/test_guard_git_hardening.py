"""The rules of git/hardening.py, one test per rule, asserted on what a git child would get: the
argv built, the environment built, the binary chosen, the calls refused.

Written so that inverting any rule (a flipped comparison, a dropped override, a name misspelt)
fails a test here: `make mutation MODULES=server/redline/git/hardening.py` checks that they do.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from redline.errors import GitCommandError, RepositoryError
from redline.git.hardening import (
    HARDENED_CONFIG,
    TRUSTED_DIRS,
    check_git_args,
    clean_env,
    config_env,
    hardened_argv,
    resolve_binary,
)

GIT = "/usr/bin/git"


def _overrides(argv: list[str]) -> dict[str, str]:
    """The `-c key=value` pairs of an argv, in order."""
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    return dict(p.split("=", 1) for p in pairs)


# -- the argv ------------------------------------------------------------------------------


def test_argv_starts_with_the_absolute_git_then_no_pager_and_literal_pathspecs() -> None:
    argv = hardened_argv(GIT, ["rev-parse", "HEAD"])
    assert argv[:3] == [GIT, "--no-pager", "--literal-pathspecs"]
    assert argv[-2:] == ["rev-parse", "HEAD"]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("core.fsmonitor", "false"),
        ("core.hooksPath", "/dev/null"),
        ("core.pager", "cat"),
        ("core.editor", "false"),
        ("diff.external", ""),
        ("gpg.program", "false"),
        ("gpg.x509.program", "false"),
        ("gpg.ssh.program", "false"),
        ("log.showSignature", "false"),
        ("safe.bareRepository", "explicit"),
        ("protocol.allow", "never"),
        ("credential.helper", ""),
        ("color.ui", "false"),
    ],
)
def test_a_c_override_of_every_program_running_setting_is_always_present(
    key: str, value: str
) -> None:
    """a -c override of core.fsmonitor (and every other setting that can run a program, fetch,
    or page) is present on every call, whatever the subcommand."""
    for args in (["diff", "HEAD"], ["status"], ["rev-parse", "HEAD"], []):
        argv = hardened_argv(GIT, args)
        assert _overrides(argv)[key] == value, (key, args)


def test_every_override_is_a_separate_c_before_the_subcommand() -> None:
    argv = hardened_argv(GIT, ["log", "-1"])
    sub = argv.index("log")
    prefix = argv[3:sub]
    assert prefix == [x for key, value in HARDENED_CONFIG for x in ("-c", f"{key}={value}")]


@pytest.mark.parametrize("sub", ["diff", "log", "show"])
def test_diff_log_and_show_get_no_external_diff_and_no_textconv_right_after_the_subcommand(
    sub: str,
) -> None:
    argv = hardened_argv(GIT, [sub, "--stat", "HEAD"])
    at = argv.index(sub)
    assert argv[at:] == [sub, "--no-ext-diff", "--no-textconv", "--stat", "HEAD"]


def test_blame_gets_no_textconv_only() -> None:
    argv = hardened_argv(GIT, ["blame", "--porcelain", "a.py"])
    at = argv.index("blame")
    assert argv[at:] == ["blame", "--no-textconv", "--porcelain", "a.py"]


@pytest.mark.parametrize("args", [["ls-files", "-z"], ["grep", "-n", "x"], ["cat-file", "-t", "x"]])
def test_other_subcommands_keep_their_argv_unchanged(args: list[str]) -> None:
    argv = hardened_argv(GIT, args)
    assert argv[-len(args) :] == args
    assert "--no-ext-diff" not in argv and "--no-textconv" not in argv
    assert len(argv) == 3 + 2 * len(HARDENED_CONFIG) + len(args)


def test_the_callers_argv_is_not_changed_in_place() -> None:
    args = ["diff", "HEAD"]
    hardened_argv(GIT, args)
    assert args == ["diff", "HEAD"]


def test_an_empty_argv_gets_only_the_prefix() -> None:
    overrides = [x for key, value in HARDENED_CONFIG for x in ("-c", f"{key}={value}")]
    assert hardened_argv(GIT, []) == [GIT, "--no-pager", "--literal-pathspecs", *overrides]


# -- the environment -----------------------------------------------------------------------


def test_the_child_environment_is_built_from_the_allowlist_only() -> None:
    environ = {
        "HOME": "/home/dev",
        "TMPDIR": "/tmp/dev",
        "USER": "dev",
        "LOGNAME": "dev",
        "OPENAI_API_KEY": "sk-secret",
        "GH_TOKEN": "ghp_secret",
        "GIT_DIR": "/elsewhere",
        "GIT_CONFIG_GLOBAL": "/evil",
        "PAGER": "/evil",
        "PATH": "/workspace/bin",
    }
    env = clean_env(environ, ["/usr/bin", "/bin"])
    assert env == {
        "PATH": "/usr/bin" + os.pathsep + "/bin",
        "HOME": "/home/dev",
        "TMPDIR": "/tmp/dev",
        "USER": "dev",
        "LOGNAME": "dev",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_PAGER": "cat",
        "GIT_EDITOR": "false",
    }


def test_path_is_the_given_directories_never_the_callers() -> None:
    env = clean_env({"PATH": "/workspace/bin:/usr/bin"}, list(TRUSTED_DIRS))
    assert env["PATH"].split(os.pathsep) == list(TRUSTED_DIRS)


def test_an_empty_passed_variable_is_left_out_and_home_defaults_to_nonexistent() -> None:
    env = clean_env({"HOME": "", "USER": ""}, ["/usr/bin"])
    assert env["HOME"] == "/nonexistent"
    assert "USER" not in env and "TMPDIR" not in env


def test_fixed_variables_beat_the_callers() -> None:
    env = clean_env({"HOME": "/h", "LC_ALL": "de_DE", "GIT_PAGER": "less"}, ["/usr/bin"])
    assert env["LC_ALL"] == "C" and env["GIT_PAGER"] == "cat"


def test_config_pairs_become_numbered_git_config_variables_from_zero() -> None:
    env = config_env([("core.fsmonitor", "false"), ("diff.external", "")])
    assert env == {
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": "false",
        "GIT_CONFIG_KEY_1": "diff.external",
        "GIT_CONFIG_VALUE_1": "",
        "GIT_CONFIG_COUNT": "2",
    }


def test_no_config_pairs_means_no_count_variable() -> None:
    assert config_env([]) == {}


def test_every_hardened_override_reaches_gh_and_glab_through_the_count_variables() -> None:
    env = config_env(HARDENED_CONFIG)
    count = int(env["GIT_CONFIG_COUNT"])
    pairs = [(env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"]) for i in range(count)]
    assert pairs == list(HARDENED_CONFIG)


# -- the binary ----------------------------------------------------------------------------


def test_git_is_found_in_the_trusted_directories_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "git"
    planted.write_text("#!/bin/sh\n")
    planted.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    found = resolve_binary("git", None)
    assert found is not None and os.path.dirname(found) in TRUSTED_DIRS


def test_a_binary_in_no_trusted_directory_is_not_found() -> None:
    assert resolve_binary("redline-no-such-tool", None) is None


def test_an_explicit_binary_must_be_an_absolute_path() -> None:
    with pytest.raises(RepositoryError, match=r"git path must be absolute, got 'bin/git'"):
        resolve_binary("git", "bin/git")


def test_an_explicit_executable_file_is_used(tmp_path: Path) -> None:
    fake = tmp_path / "git"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert resolve_binary("git", fake) == str(fake)


def test_an_explicit_file_that_cannot_run_or_a_directory_is_not_used(tmp_path: Path) -> None:
    plain = tmp_path / "git"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(0o644)
    assert resolve_binary("git", plain) is None
    directory = tmp_path / "gitdir"
    directory.mkdir()
    assert resolve_binary("git", directory) is None


# -- refused calls -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args", [[], ["push"], ["fetch"], ["branch"], ["status"], ["-c", "x=y", "diff"], ["DIFF"]]
)
def test_a_subcommand_outside_the_allowlist_is_refused(args: list[str]) -> None:
    with pytest.raises(GitCommandError, match=r"^git subcommand not allowed"):
        check_git_args(args, private_index=True)


def test_the_refusal_names_only_the_refused_subcommand() -> None:
    with pytest.raises(GitCommandError) as info:
        check_git_args(["push", "--force", "origin"], private_index=True)
    assert info.value.message == "git subcommand not allowed: ['push']"


@pytest.mark.parametrize(
    "sub",
    [
        "blame",
        "cat-file",
        "diff",
        "for-each-ref",
        "grep",
        "hash-object",
        "log",
        "ls-files",
        "ls-tree",
        "merge-base",
        "rev-list",
        "rev-parse",
        "show",
        "symbolic-ref",
        "version",
    ],
)
def test_an_allowlisted_read_subcommand_is_accepted(sub: str) -> None:
    check_git_args([sub], private_index=False)


def test_git_add_is_refused_on_the_users_index_and_allowed_on_a_private_one() -> None:
    with pytest.raises(GitCommandError, match=r"^git add is only allowed on a private index file$"):
        check_git_args(["add", "-N", "a.py"], private_index=False)
    check_git_args(["add", "-N", "a.py"], private_index=True)


@pytest.mark.parametrize("flag", ["-w", "--w", "--write", "--wr"])
def test_hash_object_may_not_write_objects_in_any_spelling(flag: str) -> None:
    with pytest.raises(GitCommandError, match=r"^git hash-object may not write objects$"):
        check_git_args(["hash-object", flag, "a.py"], private_index=True)


def test_hash_object_without_w_is_accepted() -> None:
    check_git_args(["hash-object", "--stdin", "-t", "blob"], private_index=False)


@pytest.mark.parametrize(
    "flag",
    [
        "--add",
        "--replace-all",
        "--unset",
        "--unset-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
        "-f",
        "--file",
        "--blob",
        "--global",
        "--system",
    ],
)
def test_git_config_with_a_write_or_file_option_is_refused_even_with_get(flag: str) -> None:
    with pytest.raises(
        GitCommandError, match=r"^git config is only allowed for reading \(--get/--get-regexp\)$"
    ):
        check_git_args(["config", "--get", flag, "core.x"], private_index=True)


def test_git_config_without_a_read_option_is_refused() -> None:
    with pytest.raises(
        GitCommandError, match=r"^git config is only allowed for reading \(--get/--get-regexp\)$"
    ):
        check_git_args(["config", "core.fsmonitor", "touch x"], private_index=True)


@pytest.mark.parametrize("flag", ["--get", "--get-all", "--get-regexp"])
def test_git_config_reads_are_accepted(flag: str) -> None:
    check_git_args(["config", flag, "remote.origin.url"], private_index=False)


@pytest.mark.parametrize(
    "option",
    ["-O", "-Ovi", "-Oless", "--open-files-in-pager", "--open", "--op", "--op=vi", "--open=a=b"],
)
def test_git_grep_may_not_open_files_in_a_pager_in_any_spelling(option: str) -> None:
    """git accepts any unambiguous prefix of a long option, with or without `=value`."""
    with pytest.raises(GitCommandError, match=r"^git grep may not open files in a pager$"):
        check_git_args(["grep", "-n", option, "needle"], private_index=True)
    with pytest.raises(GitCommandError, match=r"^git grep may not open files in a pager$"):
        check_git_args(["grep", option, "needle"], private_index=True)  # first of all


@pytest.mark.parametrize("option", ["-o", "--or", "--", "--o", "-n", "--only-matching", "-e"])
def test_git_grep_options_that_are_not_the_pager_option_are_accepted(option: str) -> None:
    """Only spellings git reads as --open-files-in-pager are refused: `--` ends the options and
    `--o` is ambiguous (git refuses it itself)."""
    check_git_args(["grep", option, "needle"], private_index=True)


def test_the_grep_rule_looks_at_grep_calls_only() -> None:
    check_git_args(["log", "-O", "order.txt"], private_index=False)
