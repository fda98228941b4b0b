"""`redline init` and `redline config show|validate`: the configuration files from the command
line.

`config validate` speaks to a person by default (which files and variables were checked, then
"valid" or each error) and to a program with `--format json`; it exits 2 when something is
invalid, so a CI step can run it. `redline config` alone prints its help, like `redline` alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from redline import config
from redline.cli.common import EXIT_ERROR, EXIT_OK, Parser, repo_root
from redline.config_templates import write_repo_template
from redline.errors import ConfigError, RedlineError

_REPO_HELP = "repository whose .redline.toml (or [tool.redline]) is read (default: .)"


def add_init_parser(sub: Any) -> None:
    init = sub.add_parser(
        "init",
        help="write a commented configuration file",
        description="Write a configuration file with every section and its defaults, commented "
        "out. Without --repo-file: your user file ($REDLINE_CONFIG, else the platform's config "
        f"directory). With it: {config.REPO_FILE} in the repository, without the sections a "
        "repository may not set.",
    )
    init.add_argument(
        "--repo-file",
        action="store_true",
        help=f"write {config.REPO_FILE} in the repository instead of the user file",
    )
    init.add_argument("--repo", type=Path, default=Path.cwd(), metavar="PATH", help=_REPO_HELP)
    init.add_argument("--force", action="store_true", help="overwrite an existing file")


def add_config_parser(sub: Any) -> None:
    cfg = sub.add_parser(
        "config",
        help="show or validate the merged settings",
        description="Settings merge, lowest to highest: the user file, the repository file, "
        "REDLINE_* environment variables, flags.",
    )
    cfg.set_defaults(print_config_help=cfg.print_help)
    cfg_sub = cfg.add_subparsers(dest="config_command", metavar="COMMAND", parser_class=Parser)
    show = cfg_sub.add_parser("show", help="print every setting and where its value came from")
    show.add_argument("--repo", type=Path, default=Path.cwd(), metavar="PATH", help=_REPO_HELP)
    validate = cfg_sub.add_parser(
        "validate",
        help="check the configuration files and variables; exit 2 if any is invalid",
    )
    validate.add_argument("--repo", type=Path, default=Path.cwd(), metavar="PATH", help=_REPO_HELP)
    validate.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text for a person, json for a program",
    )


def cmd_init(args: argparse.Namespace) -> int:
    if args.repo_file:
        path = write_repo_template(repo_root(args.repo), config.REPO_FILE, force=args.force)
    else:
        path = config.write_template(
            config.user_config_file(), include_models=True, force=args.force
        )
    sys.stderr.write(f"redline: wrote {path}\n")
    return EXIT_OK


def cmd_config(args: argparse.Namespace) -> int:
    if args.config_command is None:
        args.print_config_help()
        return EXIT_OK
    repo: Path | None
    try:
        repo = repo_root(args.repo)
    except RedlineError:
        repo = None  # config still works outside a repository: user file + environment
    if args.config_command == "show":
        loaded = config.load_settings(repo)
        sys.stdout.write(config.describe(loaded))
        return EXIT_OK
    result = _validate(repo)
    if args.format == "json":
        sys.stdout.write(json.dumps(asdict(result), indent=2) + "\n")
    else:
        sys.stdout.write(_describe(result))
    return EXIT_OK if result.valid else EXIT_ERROR


@dataclass
class _Validation:
    valid: bool
    files: list[str]  # the configuration files that were read, lowest layer first
    environment: list[str]  # REDLINE_* variables that are set and were checked
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _validate(repo: Path | None) -> _Validation:
    env = [var for var in config.ENV_KEYS if os.environ.get(var)]
    try:
        loaded = config.load_settings(repo)
    except ConfigError as exc:
        # Loading stops at the first invalid layer; its message names the file (or variable)
        # and every bad key in it.
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        errors = lines[1:] if lines and lines[0] == "invalid configuration" else lines
        files = [str(p) for p in _existing_files(repo)]
        return _Validation(valid=False, files=files, environment=env, errors=errors)
    files = [str(p) for p in loaded.files]
    return _Validation(valid=True, files=files, environment=env, warnings=loaded.warnings)


def _existing_files(repo: Path | None) -> list[Path]:
    """The files a load would read, for the report of a load that failed part-way."""
    candidates = [config.user_config_file()]
    if repo is not None:
        candidates += [repo / config.REPO_FILE, repo / "pyproject.toml"]
    found = [p for p in candidates if p.is_file()]
    if repo is not None and repo / config.REPO_FILE in found:
        found = [p for p in found if p != repo / "pyproject.toml"]  # the dedicated file wins
    return [p for p in found if p.name != "pyproject.toml" or "tool.redline" in _text(p)]


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _describe(result: _Validation) -> str:
    lines = []
    if result.files:
        lines += ["Checked:"] + [f"  {path}" for path in result.files]
    else:
        lines.append("Checked: no configuration file (the defaults apply)")
    if result.environment:
        lines.append("Environment: " + ", ".join(result.environment))
    lines += [f"warning: {w}" for w in result.warnings]
    if result.valid:
        lines.append("Valid.")
    else:
        lines.append("Invalid:")
        lines += [f"  {error}" for error in result.errors]
    return "\n".join(lines) + "\n"
