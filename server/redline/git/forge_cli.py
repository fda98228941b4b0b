"""The forge command-line tools, `gh` (GitHub) and `glab` (GitLab), run the hardened way.

Each tool has an exact allowlist of subcommands, a list of refused options (another repository,
a browser), a clean environment (the git child environment of runner.py plus the tool's own
auth/config variables, never the API keys), a timeout and an output cap. argv is built by
Redline's code; the LLM-facing gh tool (tools/gh_tool.py) adds its own flag allowlist on top.

`GH` is read-only and is what the model-facing tool reaches; `GH_API` (`gh api` only) and
`GLAB`'s `api` are for Redline's own posting code, which builds every argument itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from redline.errors import GitCommandError
from redline.git.binaries import Lookup
from redline.git.process import ProcessResult, run_process
from redline.git.view import RepoView


class Runner(Protocol):
    """What running a forge tool needs from git/runner.py's GitRunner (a protocol, so this
    module does not import the runner that imports it)."""

    timeout: float
    max_output: int

    def forge_path(self, name: str, cwd: Path | None = None) -> str | None: ...

    def lookup(self, name: str, cwd: Path | None = None) -> Lookup: ...

    def child_env(
        self, *, for_gh: bool = False, for_glab: bool = False, cwd: Path | None = None
    ) -> dict[str, str]: ...

    def view(self, cwd: Path) -> RepoView | None: ...


@dataclass(frozen=True)
class ForgeCli:
    """What one forge tool may run, and with which of the parent's variables."""

    name: str  # "gh" | "glab": also the binary's name
    subcommands: frozenset[tuple[str, ...]]
    forbidden: tuple[str, ...]
    pass_env: tuple[str, ...]
    fixed_env: Mapping[str, str]
    login_hint: str


# pr list/checks/status: read-only listings for the LLM-facing gh tool (tools/gh_tool.py), which
# adds its own per-subcommand flag allowlist and pins every call to the workspace's repository.
_GH_PASS_ENV: Final = (
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GH_HOST",
    "GH_CONFIG_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
)
_GH_FIXED_ENV: Final[Mapping[str, str]] = {
    "GH_PROMPT_DISABLED": "1",
    "GH_NO_UPDATE_NOTIFIER": "1",
    "GH_PAGER": "cat",
    "NO_COLOR": "1",
    "GH_SPINNER_DISABLED": "1",
}
GH: Final = ForgeCli(
    name="gh",
    subcommands=frozenset(
        {
            ("auth", "status"),
            ("pr", "diff"),
            ("pr", "view"),
            ("pr", "list"),
            ("pr", "checks"),
            ("pr", "status"),
        }
    ),
    forbidden=("-R", "--repo", "--web", "-w", "--watch"),
    pass_env=_GH_PASS_ENV,
    fixed_env=_GH_FIXED_ENV,
    login_hint="gh auth login",
)
# `gh api`, for posting a review: never reachable through GH (the model's gh tool).
GH_API: Final = ForgeCli(
    name="gh",
    subcommands=frozenset({("api",)}),
    forbidden=GH.forbidden,
    pass_env=_GH_PASS_ENV,
    fixed_env=_GH_FIXED_ENV,
    login_hint=GH.login_hint,
)
# glab's documented variables: tokens, the instance, its config directory. Everything else
# (DEBUG, BROWSER, EDITOR, GLAB_PAGER, the model API keys, ...) is dropped.
GLAB: Final = ForgeCli(
    name="glab",
    subcommands=frozenset({("auth", "status"), ("mr", "view"), ("mr", "diff"), ("api",)}),
    forbidden=("-R", "--repo", "--web", "-w"),
    pass_env=(
        "GITLAB_TOKEN",
        "GITLAB_ACCESS_TOKEN",
        "OAUTH_TOKEN",
        "GITLAB_HOST",
        "GL_HOST",
        "GITLAB_URI",
        "GLAB_CONFIG_DIR",
        "XDG_CONFIG_HOME",
    ),
    fixed_env={
        "NO_PROMPT": "1",
        "GLAB_CHECK_UPDATE": "false",
        "GLAB_SEND_TELEMETRY": "false",
        "NO_COLOR": "1",
        "GLAB_PAGER": "cat",
        "PAGER": "cat",
    },
    login_hint="glab auth login",
)


def check_args(cli: ForgeCli, args: Sequence[str]) -> None:
    """Refuse a subcommand outside the allowlist and every forbidden option, in any spelling
    we know: `--repo x`, `--repo=x`, and a short option with its value attached (`-Rx`)."""
    if not any(tuple(args[: len(sub)]) == sub for sub in cli.subcommands):
        raise GitCommandError(f"{cli.name} subcommand not allowed: {' '.join(args[:2])!r}")
    for arg in args:
        for flag in cli.forbidden:
            short = len(flag) == 2 and not arg.startswith("--")
            if arg == flag or arg.startswith(f"{flag}=") or (short and arg.startswith(flag)):
                raise GitCommandError(f"{cli.name} option not allowed: {arg!r}")


def tool_env(cli: ForgeCli, environ: Mapping[str, str]) -> dict[str, str]:
    """The tool's own variables (auth, host, config) copied from environ, and its fixed ones."""
    env = {key: environ[key] for key in cli.pass_env if environ.get(key)}
    env.update(cli.fixed_env)
    return env


def run_cli(
    runner: Runner,
    cli: ForgeCli,
    cwd: Path,
    args: Sequence[str],
    *,
    timeout: float | None = None,
    max_output: int | None = None,
    input: bytes | None = None,
) -> ProcessResult:
    """Run an allowlisted subcommand of cli in cwd (the workspace's own repository)."""
    check_args(cli, args)
    path = runner.forge_path(cli.name, cwd)
    if not path:
        where = runner.lookup(cli.name, cwd).where()
        raise GitCommandError(f"{cli.name} is not installed", hint=f"install {cli.name}; {where}")
    env = runner.child_env(for_gh=cli.name == "gh", for_glab=cli.name == "glab", cwd=cwd)
    # gh and glab run git themselves (remote lookup): those processes see the view too.
    view = runner.view(cwd)
    if view is not None:
        view.refresh()
        env.update(view.env())
    return run_process(
        [path, *args],
        cwd=cwd,
        env=env,
        timeout=runner.timeout if timeout is None else timeout,
        max_output=runner.max_output if max_output is None else max_output,
        input=input,
        what=f"{cli.name} {' '.join(args[:2])}",
    )


def checked_output(result: ProcessResult, cli: ForgeCli, args: Sequence[str]) -> bytes:
    """stdout, or GitCommandError with the tool's message on a non-zero exit."""
    if result.returncode != 0:
        raise GitCommandError(
            f"{cli.name} {' '.join(args[:2])} failed (exit {result.returncode}): "
            f"{result.error_text}"
        )
    return result.stdout


def cli_available(runner: Runner, cli: ForgeCli, cwd: Path) -> tuple[bool, str]:
    """(usable, reason): the tool is installed and `<tool> auth status` succeeds."""
    if not runner.forge_path(cli.name, cwd):
        return False, f"{cli.name} is not installed"
    try:
        result = run_cli(runner, cli, cwd, ("auth", "status"), timeout=min(runner.timeout, 15.0))
    except GitCommandError as exc:
        return False, f"{cli.name} auth status failed: {exc.message}"
    if result.returncode != 0:
        return False, f"{cli.name} is installed but not logged in"
    return True, "ok"
