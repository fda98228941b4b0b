"""The model's git command string, turned into a checked `ParsedCommand`.

The command string is attacker text. It is split with shlex (no shell ever runs), then every
token is classified against the policy (tools/git_policy.py): the subcommand, each flag with its
value (always attached to the flag, `--since=...`, so no value can be read as an option),
positionals and paths. `classify_positionals` then tells revisions from paths the way git does,
but strictly: revisions match a strict pattern and must name an existing object (blobs only as
`rev:path` with a checked path), paths must stay inside the repository.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Final

from redline.agent.toolkit import ToolError
from redline.errors import RedlineError
from redline.git.names import check_rel_path
from redline.git.process import decode
from redline.tools.git_output import error_summary
from redline.tools.git_policy import (
    ALLOWED_SUBCOMMANDS,
    BRANCH_WRITES,
    COUNT,
    DANGEROUS_HINTS,
    MAX_PATHS,
    MAX_REVISIONS,
    SPECS,
    Spec,
    check_revision,
)
from redline.tools.names import check_names, shown
from redline.tools.paths import check_pathspec
from redline.tools.sandbox import ToolContext

# Any character that has no business in a git command line: controls, bidi, zero-width.
_BAD_CHARS: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


@dataclass
class ParsedCommand:
    sub: str
    flags: list[str] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    dashdash: bool = False


def tokenize(command: str) -> list[str]:
    if not isinstance(command, str) or not command.strip():
        raise ToolError("command must be a git command such as 'log --oneline -n 5'")
    if len(command) > 4000:
        raise ToolError("command is too long")
    if _BAD_CHARS.search(command):
        raise ToolError("command contains control or invisible characters")
    try:
        tokens = shlex.split(command, posix=True)
    except ValueError as exc:
        raise ToolError(f"cannot parse the command: {exc} (check quotes)") from None
    if tokens and tokens[0] == "git":
        tokens = tokens[1:]
    if not tokens:
        raise ToolError("command names no git subcommand")
    return tokens


def parse(command: str) -> ParsedCommand:
    tokens = tokenize(command)
    sub = tokens[0]
    if sub.startswith("-"):
        raise ToolError(
            f"git options before the subcommand ({shown(sub)}) are not allowed "
            "(-c, -C, --git-dir, --work-tree, --exec-path, ...)"
        )
    spec = SPECS.get(sub)
    if spec is None:
        raise ToolError(
            f"git {shown(sub)} is not allowed; read-only subcommands: "
            + ", ".join(ALLOWED_SUBCOMMANDS)
        )
    parsed = ParsedCommand(sub)
    args = tokens[1:]
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if parsed.dashdash:
            parsed.paths.append(arg)
            continue
        if arg == "--":
            parsed.dashdash = True
            continue
        if not arg.startswith("-") or arg == "-":
            parsed.positionals.append(arg)
            continue
        if sub == "branch" and arg.split("=", 1)[0] in BRANCH_WRITES:
            raise ToolError(f"git branch {shown(arg)} changes branches; branch may only list them")
        if sub == "log" and re.fullmatch(r"-[0-9]{1,6}", arg):  # `log -5`
            parsed.flags.append(f"--max-count={arg[1:]}")
            continue
        if sub == "branch" and arg.split("=", 1)[0] in ("--merged", "--no-merged"):
            # Optional value: `--merged`, `--merged=main`, `--merged main`.
            name, _, value = arg.partition("=")
            if not value and i < len(args) and not args[i].startswith("-"):
                value = args[i]
                i += 1
            parsed.flags.append(f"{name}={check_revision(value)}" if value else name)
            continue
        if arg in spec.flags and arg not in spec.valued:
            parsed.flags.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name.startswith("--") and eq and name in spec.valued:
            parsed.flags.append(f"{name}={spec.valued[name](value)}")
            continue
        if not eq and arg in spec.valued:
            if arg in spec.flags and (i >= len(args) or not _looks_like_value(arg, args[i])):
                parsed.flags.append(arg)  # `--short` alone (rev-parse)
                continue
            if i >= len(args):
                raise ToolError(f"option {shown(arg)} needs a value")
            value = args[i]
            i += 1
            checked = spec.valued[arg](value)
            parsed.flags.append(f"{arg}={checked}" if arg.startswith("--") else f"{arg}{checked}")
            continue
        short = arg[:2]
        if not arg.startswith("--") and len(arg) > 2 and short in spec.valued:
            parsed.flags.append(f"{short}{spec.valued[short](arg[2:])}")  # `-n5`, `-U10`
            continue
        raise ToolError(_unknown_option(sub, arg, spec))
    if len(parsed.paths) > MAX_PATHS:
        raise ToolError(f"at most {MAX_PATHS} paths per command")
    return parsed


def _looks_like_value(flag: str, token: str) -> bool:
    # Only rev-parse's `--short [N]` is ambiguous: a number after it is its length.
    return bool(COUNT.fullmatch(token)) if flag == "--short" else True


def _unknown_option(sub: str, arg: str, spec: Spec) -> str:
    name = arg.split("=", 1)[0]
    for bad, why in DANGEROUS_HINTS.items():
        if name == bad or (len(name) > 3 and bad.startswith(name) and bad.startswith("--")):
            return f"option {shown(arg)} is not allowed for git {sub}: it {why}"
    if name.startswith("--") and any(f.startswith(name) for f in (*spec.flags, *spec.valued)):
        return f"option {shown(arg)} is not allowed: spell options out in full"
    if name in spec.valued:
        return f"option {shown(arg)} is not allowed in this form; use {name} <value>"
    allowed = sorted({*spec.flags, *(f"{v} <value>" for v in spec.valued)})
    return f"option {shown(arg)} is not allowed for git {sub}; allowed: {', '.join(allowed)}"


# -- revisions -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rev:
    text: str  # as git should receive it
    is_range: bool = False


def _split_range(text: str) -> tuple[list[str], str] | None:
    for sep in ("...", ".."):
        if sep in text:
            left, _, right = text.partition(sep)
            return [s for s in (left, right) if s], sep
    return None


def object_types(ctx: ToolContext, names: list[str]) -> dict[str, str | None]:
    """Fully peeled object type of each name (`commit`, `tree`, `blob`) or None if unknown."""
    if not names:
        return {}
    query = "".join(f"{n}^{{}}\n" if ":" not in n else f"{n}\n" for n in names)
    result = ctx.runner.run_git(
        ctx.root, "cat-file", "--batch-check", input=query.encode(), timeout=ctx.limits.git_timeout
    )
    if result.returncode != 0:
        raise ToolError(f"git cat-file failed: {ctx.clean(error_summary(result.error_text))}")
    types: dict[str, str | None] = {}
    lines = decode(result.stdout).splitlines()
    for name, line in zip(names, lines, strict=False):
        fields = line.split()
        types[name] = fields[1] if len(fields) == 3 and not line.endswith(" missing") else None
    return types


def _check_object_path(spec_path: str) -> None:
    """The path half of `rev:path`: a tree path, judged by name only (it is not on disk)."""
    try:
        parts = check_rel_path(spec_path)
    except RedlineError as exc:
        raise ToolError(exc.message) from None
    check_names(parts, spec_path)


def validate_rev_token(token: str, *, allow_object_path: bool) -> list[str]:
    """The object names inside one revision token (one, or two for a range)."""
    if allow_object_path and ":" in token:
        rev, _, obj_path = token.partition(":")
        if not rev:
            raise ToolError(f"{shown(token)}: name the revision before ':' (e.g. HEAD:src/x.py)")
        check_revision(rev)
        _check_object_path(obj_path)
        return [token]
    split = _split_range(token)
    if split is not None:
        sides, _sep = split
        if not sides or any(".." in s for s in sides):
            raise ToolError(f"invalid range {shown(token)}")
        return [check_revision(s) for s in sides]
    return [check_revision(token)]


def classify_positionals(
    ctx: ToolContext, parsed: ParsedCommand, *, allow_object_path: bool = False
) -> tuple[list[Rev], list[str]]:
    """Split positionals into revisions and paths, like git does, but strictly.

    After an explicit `--` every positional must be a revision. Without one, a token that is
    a valid revision and names an existing object is a revision; anything else is a path.
    """
    revs: list[Rev] = []
    paths = [check_pathspec(ctx, p) for p in parsed.paths]
    candidates: dict[str, list[str]] = {}
    for token in parsed.positionals:
        try:
            candidates[token] = validate_rev_token(token, allow_object_path=allow_object_path)
        except ToolError:
            if parsed.dashdash:
                raise
            candidates[token] = []
    names = sorted({n for ns in candidates.values() for n in ns})
    types = object_types(ctx, names)
    for token in parsed.positionals:
        objs = candidates[token]
        if objs and all(types.get(n) for n in objs):
            for n in objs:
                _check_type(token, n, types[n])
            revs.append(Rev(token, is_range=".." in token))
        elif parsed.dashdash:
            raise ToolError(f"unknown revision {shown(token)}")
        elif os.path.lexists(os.path.join(ctx.root, token)):
            paths.append(check_pathspec(ctx, token))
        else:
            raise ToolError(
                f"{shown(token)} is neither a known revision nor a file in the working tree "
                "(put paths after '--')"
            )
    if len(revs) > MAX_REVISIONS:
        raise ToolError(f"at most {MAX_REVISIONS} revisions per command")
    return revs, paths


def _check_type(token: str, name: str, kind: str | None) -> None:
    # A bare blob id (or a tag pointing at one) would print a file's contents without any path
    # check; blobs are reachable only as `rev:path`, where the path is checked.
    if kind == "blob" and ":" not in name:
        raise ToolError(
            f"{shown(token)} is a file object; name it as <revision>:<path> (e.g. HEAD:src/x.py)"
        )
