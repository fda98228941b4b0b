"""The `git` tool: read-only git for the model, with argv rebuilt by code.

The command string is attacker text. It is split with shlex (no shell ever runs), then every
token is classified by code: an exact subcommand allowlist, a per-subcommand flag allowlist
with exact spellings (unknown options, abbreviations and unlisted `=` forms are refused), preset
output formats only, revisions matched by a strict pattern and resolved (blobs are refused
except as `rev:path` with a checked path), paths checked to stay inside the repository. The argv
git receives is built from those pieces, values always attached to their flag (`--since=...`)
so no value can be read as an option, revisions after `--end-of-options`, paths after `--`.
It runs through the hardened GitRunner (hardened -c prefix, clean env, filters blanked,
--no-ext-diff --no-textconv).

`status` and `branch` are not run as such: status is assembled from `diff --name-status` and
`ls-files`, branch listing from `for-each-ref` (neither can write anything, and the runner does
not allow the originals). Diff sections of secret files (`.env`, keys) are omitted from every
output, and everything is redacted and made visible before the model sees it.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from redline.agent.tools import ToolError
from redline.errors import RedlineError
from redline.git.repo import check_rel_path, validate_revision
from redline.git.runner import decode, split_nul
from redline.tools.context import ToolContext
from redline.tools.paths import check_names, check_pathspec, is_git_name, is_secret_path, shown

ALLOWED_SUBCOMMANDS: Final = (
    "diff",
    "log",
    "show",
    "status",
    "blame",
    "branch",
    "rev-parse",
    "ls-files",
)

# git's built-in pretty formats. None of them shows signatures (`%G?` would run gpg.program).
PRETTY_PRESETS: Final = frozenset(
    {"oneline", "short", "medium", "full", "fuller", "reference", "raw"}
)
DATE_PRESETS: Final = frozenset(
    {"relative", "local", "iso", "iso8601", "iso-strict", "rfc", "short", "raw", "human", "unix"}
)
MAX_REVISIONS: Final = 10
MAX_PATHS: Final = 50
SECRET_OMITTED: Final = "[contents of a secret file omitted by Redline]"

# Any character that has no business in a git command line: controls, bidi, zero-width.
_BAD_CHARS: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_COUNT: Final = re.compile(r"[0-9]{1,6}")
_DATE: Final = re.compile(r"[A-Za-z0-9 :.,/+-]{1,40}")
_DIFF_FILTER: Final = re.compile(r"[ACDMRTUXBacdmrtuxb*]{1,12}")
_BLAME_RANGE: Final = re.compile(r"[1-9][0-9]{0,6}(?:,[+-]?[0-9]{1,7})?|,[+-]?[1-9][0-9]{0,6}")
_REF_PATTERN: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/*?-]{0,200}")

Validator = Callable[[str], str]


def _count(value: str) -> str:
    if not _COUNT.fullmatch(value):
        raise ToolError(f"expected a number, got {shown(value)}")
    return value


def _date(value: str) -> str:
    if not _DATE.fullmatch(value):
        raise ToolError(f"invalid date {shown(value)} (e.g. 2.weeks.ago, 2026-01-31)")
    return value


def _text(value: str) -> str:
    if not value or len(value) > 200:
        raise ToolError("search text must be 1 to 200 characters")
    return value


def _pretty(value: str) -> str:
    if value not in PRETTY_PRESETS:
        presets = ", ".join(sorted(PRETTY_PRESETS))
        raise ToolError(
            f"format {shown(value)} is not allowed; use one of the presets: {presets} "
            "(custom format strings are not allowed)"
        )
    return value


def _date_format(value: str) -> str:
    if value not in DATE_PRESETS:
        raise ToolError(f"date format must be one of {', '.join(sorted(DATE_PRESETS))}")
    return value


def _diff_filter(value: str) -> str:
    if not _DIFF_FILTER.fullmatch(value):
        raise ToolError("--diff-filter takes letters from ACDMRTUXB")
    return value


def _blame_range(value: str) -> str:
    if not _BLAME_RANGE.fullmatch(value):
        raise ToolError("-L takes <start>,<end> line numbers (regex and :funcname forms are off)")
    return value


def _abbrev(value: str) -> str:
    if not _COUNT.fullmatch(value) or not 4 <= int(value) <= 64:
        raise ToolError("abbreviation length must be between 4 and 64")
    return value


def _revision(value: str) -> str:
    try:
        return validate_revision(value)
    except RedlineError as exc:
        raise ToolError(exc.message) from None


@dataclass(frozen=True)
class _Spec:
    flags: frozenset[str] = frozenset()
    valued: dict[str, Validator] = field(default_factory=dict)  # flag → validator
    aliases: dict[str, str] = field(default_factory=dict)  # spelling → canonical flag


_DIFF_COMMON: Final = frozenset(
    {
        "--stat",
        "--numstat",
        "--shortstat",
        "--name-only",
        "--name-status",
        "--summary",
        "-w",
        "--ignore-all-space",
        "-b",
        "--ignore-space-change",
        "--ignore-blank-lines",
        "-M",
        "--find-renames",
        "--no-renames",
        "--patience",
        "--histogram",
        "--minimal",
        "-W",
        "--function-context",
        "--no-color",
        "-R",
    }
)
_DIFF_VALUED: Final[dict[str, Validator]] = {
    "-U": _count,
    "--unified": _count,
    "--diff-filter": _diff_filter,
}

SPECS: Final[dict[str, _Spec]] = {
    "diff": _Spec(
        flags=_DIFF_COMMON | {"--cached", "--staged", "--merge-base", "--raw"},
        valued=dict(_DIFF_VALUED),
    ),
    "log": _Spec(
        flags=_DIFF_COMMON
        | {
            "--oneline",
            "-p",
            "--patch",
            "--no-patch",
            "--no-merges",
            "--merges",
            "--first-parent",
            "--graph",
            "--decorate",
            "--no-decorate",
            "--all",
            "--reverse",
            "--follow",
            "--abbrev-commit",
            "--no-abbrev-commit",
            "--date-order",
            "--topo-order",
            "-i",
            "--regexp-ignore-case",
            "-F",
            "--fixed-strings",
        },
        valued={
            **_DIFF_VALUED,
            "-n": _count,
            "--max-count": _count,
            "--skip": _count,
            "--since": _date,
            "--after": _date,
            "--until": _date,
            "--before": _date,
            "--author": _text,
            "--committer": _text,
            "--grep": _text,
            "--format": _pretty,
            "--pretty": _pretty,
            "--date": _date_format,
        },
    ),
    "show": _Spec(
        flags=_DIFF_COMMON
        | {"--oneline", "--no-patch", "-s", "--abbrev-commit", "--first-parent", "-p", "--patch"},
        valued={**_DIFF_VALUED, "--format": _pretty, "--pretty": _pretty, "--date": _date_format},
    ),
    "blame": _Spec(
        flags=frozenset(
            {
                "-w",
                "-M",
                "-C",
                "-s",
                "-e",
                "--show-email",
                "-l",
                "-t",
                "-f",
                "--show-name",
                "-n",
                "--show-number",
                "--root",
                "-p",
                "--porcelain",
                "--line-porcelain",
                "-b",
            }
        ),
        valued={"-L": _blame_range, "--date": _date_format},
    ),
    "rev-parse": _Spec(
        flags=frozenset(
            {"--short", "--abbrev-ref", "--symbolic-full-name", "--verify", "-q", "--quiet"}
        ),
        valued={"--short": _abbrev},
    ),
    "ls-files": _Spec(
        flags=frozenset(
            {
                "-c",
                "--cached",
                "-o",
                "--others",
                "-m",
                "--modified",
                "-d",
                "--deleted",
                "-s",
                "--stage",
                "-u",
                "--unmerged",
                "-t",
                "--exclude-standard",
                "--error-unmatch",
            }
        ),
    ),
    "status": _Spec(flags=frozenset({"--porcelain", "--short", "-s", "-b", "--branch"})),
    "branch": _Spec(
        flags=frozenset(
            {
                "--list",
                "-l",
                "-a",
                "--all",
                "-r",
                "--remotes",
                "-v",
                "-vv",
                "--verbose",
                "--show-current",
            }
        ),
        valued={
            "--contains": _revision,
            "--no-contains": _revision,
        },
    ),
}

# Options that exist only to write, execute, read outside the repository or reach the network:
# refused by the allowlist anyway, named here so the model is told why.
_DANGEROUS_HINTS: Final = {
    "--output": "writes a file",
    "-o": "writes a file",
    "--no-index": "reads files outside the repository",
    "--contents": "reads an arbitrary file",
    "--ignore-revs-file": "reads an arbitrary file",
    "--ignore-rev": "is not needed for review",
    "-S": "reads an arbitrary file (blame) or searches with a pickaxe",
    "--ext-diff": "runs an external program",
    "--textconv": "runs a conversion program",
    "--exec": "runs a program",
    "--upload-pack": "runs a program",
    "--show-signature": "runs gpg",
    "-O": "runs a program",
    "--open-files-in-pager": "runs a program",
}
_BRANCH_WRITES: Final = frozenset(
    {
        "-d",
        "-D",
        "--delete",
        "-m",
        "-M",
        "--move",
        "-c",
        "-C",
        "--copy",
        "-f",
        "--force",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "-t",
        "--track",
        "--no-track",
        "--create-reflog",
    }
)


@dataclass
class _Parsed:
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


def parse(command: str) -> _Parsed:
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
    parsed = _Parsed(sub)
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
        if sub == "branch" and arg.split("=", 1)[0] in _BRANCH_WRITES:
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
            parsed.flags.append(f"{name}={_revision(value)}" if value else name)
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
    return bool(_COUNT.fullmatch(token)) if flag == "--short" else True


def _unknown_option(sub: str, arg: str, spec: _Spec) -> str:
    name = arg.split("=", 1)[0]
    for bad, why in _DANGEROUS_HINTS.items():
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
class _Rev:
    text: str  # as git should receive it
    is_range: bool = False


def _split_range(text: str) -> tuple[list[str], str] | None:
    for sep in ("...", ".."):
        if sep in text:
            left, _, right = text.partition(sep)
            return [s for s in (left, right) if s], sep
    return None


def _object_types(ctx: ToolContext, names: list[str]) -> dict[str, str | None]:
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


def _validate_rev_token(token: str, *, allow_object_path: bool) -> list[str]:
    """The object names inside one revision token (one, or two for a range)."""
    if allow_object_path and ":" in token:
        rev, _, obj_path = token.partition(":")
        if not rev:
            raise ToolError(f"{shown(token)}: name the revision before ':' (e.g. HEAD:src/x.py)")
        _revision(rev)
        _check_object_path(obj_path)
        return [token]
    split = _split_range(token)
    if split is not None:
        sides, _sep = split
        if not sides or any(".." in s for s in sides):
            raise ToolError(f"invalid range {shown(token)}")
        return [_revision(s) for s in sides]
    return [_revision(token)]


def classify_positionals(
    ctx: ToolContext, parsed: _Parsed, *, allow_object_path: bool = False
) -> tuple[list[_Rev], list[str]]:
    """Split positionals into revisions and paths, like git does, but strictly.

    After an explicit `--` every positional must be a revision. Without one, a token that is
    a valid revision and names an existing object is a revision; anything else is a path.
    """
    revs: list[_Rev] = []
    paths = [check_pathspec(ctx, p) for p in parsed.paths]
    candidates: dict[str, list[str]] = {}
    for token in parsed.positionals:
        try:
            candidates[token] = _validate_rev_token(token, allow_object_path=allow_object_path)
        except ToolError:
            if parsed.dashdash:
                raise
            candidates[token] = []
    names = sorted({n for ns in candidates.values() for n in ns})
    types = _object_types(ctx, names)
    for token in parsed.positionals:
        objs = candidates[token]
        if objs and all(types.get(n) for n in objs):
            for n in objs:
                _check_type(token, n, types[n])
            revs.append(_Rev(token, is_range=".." in token))
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


# -- running ---------------------------------------------------------------------------------------


def _run(ctx: ToolContext, *argv: str, ok_codes: tuple[int, ...] = (0,)) -> bytes:
    try:
        result = ctx.runner.run_git(
            ctx.root,
            *argv,
            timeout=ctx.limits.git_timeout,
            max_output=ctx.limits.max_git_output_bytes,
        )
    except RedlineError as exc:
        message = exc.message
        if "output exceeds" in message:
            message += " — narrow the command (a path after --, -n, --stat)"
        raise ToolError(ctx.clean(message)) from None
    if result.returncode not in ok_codes:
        raise ToolError(
            f"git {argv[0]} failed (exit {result.returncode}): "
            + ctx.clean(error_summary(result.error_text))
        )
    return result.stdout


def error_summary(stderr: str) -> str:
    """git's own fatal/error lines only.

    Warnings can quote files git read on the way (a hostile `core.attributesFile` pointing at
    a secret yields "... is not a valid attribute name" with a piece of a line), so they are
    not passed on; the fatal line says what the model needs to know.
    """
    lines = [
        line for line in stderr.splitlines() if line.startswith(("fatal:", "error:", "usage:"))
    ]
    return "\n".join(lines[:5]) if lines else "(git printed no error message)"


def finish_output(ctx: ToolContext, data: bytes | str, *, empty: str = "(no output)") -> str:
    text = data if isinstance(data, str) else decode(data)
    text = omit_secret_sections(text)
    limit = ctx.limits.max_output_chars
    # Cut before cleaning (redaction over megabytes of log -p costs seconds), with a margin so
    # a secret straddling the cut is still seen whole by the patterns, then cut again.
    cut = len(text) > 2 * limit + 1000
    text = ctx.clean(text[: 2 * limit + 1000] if cut else text).rstrip("\n")
    if not text.strip():
        return empty
    if cut or len(text) > limit:
        text = (
            text[:limit]
            + f"\n[output truncated at {limit:,} characters; narrow it with a path, -n or --stat]"
        )
    return text


_SECTION_START: Final = ("diff --git ", "diff --cc ", "diff --combined ")
_SECTION_HEADERS: Final = (
    "index ",
    "old mode",
    "new mode",
    "deleted file",
    "new file",
    "similarity",
    "dissimilarity",
    "rename ",
    "copy ",
    "Binary files",
    "GIT binary patch",
    "literal ",
    "delta ",
)


def _header_names_secret(line: str) -> bool:
    # Conservative: any path-like piece of the header that is a secret name hides the section.
    pieces = re.split(r"[\s\"']+", line)
    for piece in pieces:
        parts = [p for p in piece.split("/") if p]
        if parts and (is_secret_path(parts) or any(is_git_name(p) for p in parts)):
            return True
        if parts and is_secret_path(parts[-1:]):
            return True
    return False


def omit_secret_sections(text: str) -> str:
    """Drop the body of every diff section whose file is a secret file (.env, keys, ...)."""
    if "diff --" not in text:
        return text
    out: list[str] = []
    skipping = False
    for line in text.split("\n"):
        if line.startswith(_SECTION_START):
            skipping = _header_names_secret(line)
            out.append(line)
            if skipping:
                out.append(SECRET_OMITTED)
            continue
        if skipping:
            # Inside a section every line is a header, a hunk line (' ', '+', '-', '@', '\')
            # or empty; anything else (`commit ...`, a oneline log entry) ends it.
            if not line or line[0] in " +-@\\" or line.startswith(_SECTION_HEADERS):
                continue
            skipping = False
        out.append(line)
    return "\n".join(out)


def run_git_tool(ctx: ToolContext, command: str) -> str:
    parsed = parse(command)
    handler = _HANDLERS[parsed.sub]
    return handler(ctx, parsed)


def _diff_like(ctx: ToolContext, parsed: _Parsed) -> str:
    sub = parsed.sub
    revs, paths = classify_positionals(ctx, parsed, allow_object_path=sub == "show")
    flags = list(parsed.flags)
    if sub == "diff" and (len(revs) > 2 or (len(revs) == 2 and any(r.is_range for r in revs))):
        raise ToolError("git diff compares at most two revisions (or one range)")
    if sub == "log" and not any(f.startswith(("--max-count", "-n")) for f in flags):
        flags.append(f"--max-count={ctx.limits.default_log_count}")
    for i, flag in enumerate(flags):
        if flag.startswith(("--max-count=", "-n")):
            count = flag.split("=", 1)[1] if "=" in flag else flag[2:]
            if int(count) > ctx.limits.max_log_count:
                flags[i] = f"--max-count={ctx.limits.max_log_count}"
    if "--follow" in flags and len(paths) != 1:
        raise ToolError("--follow needs exactly one path")
    argv = [sub, "--no-color", *flags, "--end-of-options", *(r.text for r in revs), "--", *paths]
    return finish_output(ctx, _run(ctx, *argv))


def _blame(ctx: ToolContext, parsed: _Parsed) -> str:
    positionals = list(parsed.positionals)
    paths = list(parsed.paths)
    if not parsed.dashdash and positionals:
        paths = [positionals.pop()]  # `blame [rev] file`: the file comes last
    if len(paths) != 1:
        raise ToolError("git blame needs exactly one file: blame [<rev>] [--] <file>")
    if len(positionals) > 1:
        raise ToolError("git blame takes at most one revision")
    path = check_pathspec(ctx, paths[0])
    rev: list[str] = []
    if positionals:
        token = positionals[0]
        names = _validate_rev_token(token, allow_object_path=False)
        if len(names) != 1:
            raise ToolError("git blame takes a single revision, not a range")
        if _object_types(ctx, names).get(names[0]) != "commit":
            raise ToolError(f"unknown revision {shown(token)}")
        rev = [names[0]]
    _check_ignore_revs_config(ctx)
    # blame has no --end-of-options (git 2.39); the revision passed the strict pattern, which
    # cannot start with '-', so it cannot be read as an option.
    return finish_output(ctx, _run(ctx, "blame", *parsed.flags, *rev, "--", path))


def _check_ignore_revs_config(ctx: ToolContext) -> None:
    """Refuse blame when config names an ignore-revs file outside the repository.

    git reads `blame.ignoreRevsFile` on every blame and quotes a bad line in its error, so a
    hostile `.git/config` pointing it at ~/.ssh/id_rsa or .env leaks a line. The key is a
    list that no `-c` or `--ignore-revs-file=` can reset (git sorts the list, and the reset
    entry sorts first), so the only defence is to check every value before running blame.
    """
    out = decode(_run(ctx, "config", "--get-all", "blame.ignoreRevsFile", ok_codes=(0, 1)))
    for value in out.splitlines():
        if not value:
            continue
        try:
            if value.startswith("~"):
                raise ToolError("home directory")
            check_pathspec(ctx, value)
        except ToolError:
            raise ToolError(
                "refusing git blame: the repository's git config sets blame.ignoreRevsFile to "
                "a file outside the repository (or a secret file), which git would read"
            ) from None


def _rev_parse(ctx: ToolContext, parsed: _Parsed) -> str:
    if parsed.paths:
        raise ToolError("git rev-parse takes revisions only")
    if not parsed.positionals:
        raise ToolError("git rev-parse needs a revision (e.g. rev-parse HEAD)")
    if len(parsed.positionals) > MAX_REVISIONS:
        raise ToolError(f"at most {MAX_REVISIONS} revisions per command")
    flags = [f for f in parsed.flags if f not in ("--verify", "-q", "--quiet")]
    lines = []
    for token in parsed.positionals:
        rev = _revision(token)
        out = _run(
            ctx, "rev-parse", "--verify", "-q", *flags, "--end-of-options", rev, ok_codes=(0, 1)
        )
        lines.append(decode(out).strip() or f"{token}: unknown revision")
    return finish_output(ctx, "\n".join(lines))


def _ls_files(ctx: ToolContext, parsed: _Parsed) -> str:
    paths = [check_pathspec(ctx, p) for p in (*parsed.positionals, *parsed.paths)]
    return finish_output(
        ctx, _run(ctx, "ls-files", *parsed.flags, "--", *paths), empty="(no files)"
    )


def _status(ctx: ToolContext, parsed: _Parsed) -> str:
    """`git status --short` assembled from read-only diff and ls-files calls."""
    paths = [check_pathspec(ctx, p) for p in (*parsed.positionals, *parsed.paths)]
    head = decode(_run(ctx, "rev-parse", "--verify", "-q", "HEAD", ok_codes=(0, 1))).strip()
    base = head or _empty_tree(ctx)
    staged = _name_status(
        _run(
            ctx,
            "diff",
            "--cached",
            "--name-status",
            "--no-renames",
            "-z",
            "--end-of-options",
            base,
            "--",
            *paths,
        )
    )
    unstaged = _name_status(_run(ctx, "diff", "--name-status", "--no-renames", "-z", "--", *paths))
    untracked = [
        decode(p)
        for p in split_nul(
            _run(ctx, "ls-files", "--others", "--exclude-standard", "-z", "--", *paths)
        )
    ]
    lines = []
    if "-b" in parsed.flags or "--branch" in parsed.flags:
        branch = decode(
            _run(ctx, "rev-parse", "--abbrev-ref", "--verify", "-q", "HEAD", ok_codes=(0, 1))
        ).strip()
        lines.append(f"## {branch or 'HEAD (no branch)'}")
    for path in sorted(set(staged) | set(unstaged)):
        x, y = staged.get(path, " "), unstaged.get(path, " ")
        if "U" in (x, y):
            x = y = "U"
        lines.append(f"{x}{y} {path}")
    lines += [f"?? {p}" for p in sorted(untracked) if not p.endswith("/")]
    return finish_output(ctx, "\n".join(lines), empty="(clean: no changes)")


def _empty_tree(ctx: ToolContext) -> str:
    out = _run(ctx, "hash-object", "-t", "tree", "--no-filters", "--stdin")
    return decode(out).strip()


def _name_status(data: bytes) -> dict[str, str]:
    records = split_nul(data)
    found: dict[str, str] = {}
    for i in range(0, len(records) - 1, 2):
        found[decode(records[i + 1])] = decode(records[i])[:1]
    return found


def _branch(ctx: ToolContext, parsed: _Parsed) -> str:
    """Branch listing through for-each-ref: no form of it can create, move or delete a ref."""
    flags = set(parsed.flags)
    if parsed.paths:
        raise ToolError("git branch takes no paths")
    if "--show-current" in flags:
        out = _run(ctx, "rev-parse", "--abbrev-ref", "--verify", "-q", "HEAD", ok_codes=(0, 1))
        return finish_output(ctx, out, empty="(detached HEAD)")
    listing = bool(flags & {"--list", "-l"})
    if parsed.positionals and not listing:
        raise ToolError(
            f"git branch {shown(parsed.positionals[0])} would create a branch; branch may only "
            "list branches (use --list <pattern> to filter)"
        )
    namespaces = ["refs/heads"]
    if flags & {"-r", "--remotes"}:
        namespaces = ["refs/remotes"]
    if flags & {"-a", "--all"}:
        namespaces = ["refs/heads", "refs/remotes"]
    patterns: list[str] = []
    for pattern in parsed.positionals:
        if not _REF_PATTERN.fullmatch(pattern) or ".." in pattern:
            raise ToolError(f"invalid branch pattern {shown(pattern)}")
        patterns += [f"{ns}/{pattern}" for ns in namespaces]
    if flags & {"-vv"}:
        fmt = "%(HEAD) %(refname:short) %(objectname:short) [%(upstream:short)] %(contents:subject)"
    elif flags & {"-v", "--verbose"}:
        fmt = "%(HEAD) %(refname:short) %(objectname:short) %(contents:subject)"
    else:
        fmt = "%(HEAD) %(refname:short)"
    filters = [f for f in parsed.flags if f.split("=", 1)[0] in _REF_FILTERS]
    for f in filters:
        if "=" not in f:
            continue
        name = f.split("=", 1)[1]
        if _object_types(ctx, [name]).get(name) is None:
            raise ToolError(f"unknown revision {shown(name)}")
    out = _run(
        ctx,
        "for-each-ref",
        f"--format={fmt}",
        "--sort=refname",
        *filters,
        *(patterns or namespaces),
    )
    lines = [line for line in decode(out).splitlines() if not line.rstrip().endswith("/HEAD")]
    return finish_output(ctx, "\n".join(lines), empty="(no branches)")


_REF_FILTERS: Final = frozenset({"--contains", "--no-contains", "--merged", "--no-merged"})

_HANDLERS: Final[dict[str, Callable[[ToolContext, _Parsed], str]]] = {
    "diff": _diff_like,
    "log": _diff_like,
    "show": _diff_like,
    "blame": _blame,
    "rev-parse": _rev_parse,
    "ls-files": _ls_files,
    "status": _status,
    "branch": _branch,
}

GIT_TOOL_DESCRIPTION: Final = (
    "Run a read-only git command in the repository under review, e.g. 'log --oneline -n 10', "
    "'diff HEAD~1 -- src/app.py', 'show HEAD --stat', 'show HEAD~1:src/app.py', "
    "'blame -L 10,30 src/app.py', 'branch -a', 'status --short', 'ls-files -- src', "
    "'rev-parse --short HEAD'. Subcommands: " + ", ".join(ALLOWED_SUBCOMMANDS) + ". "
    "Only common read-only options are accepted, spelled out in full; log/show formats are "
    "presets (" + ", ".join(sorted(PRETTY_PRESETS)) + "). Paths go after '--'."
)
