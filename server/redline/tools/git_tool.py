"""The `git` tool: read-only git for the model, with argv rebuilt by code.

The command string is parsed and checked by tools/git_command.py against the policy in
tools/git_policy.py; the handlers here build the argv git receives from those checked pieces,
revisions after `--end-of-options`, paths after `--`. It runs through the hardened GitRunner
(hardened -c prefix, clean env, filters blanked, --no-ext-diff --no-textconv), and every
diff/log/show also carries the policy's pins: submodules only as pointer changes (git never
runs inside one), and on log/show an explicit preset format with `--no-show-signature`, so
nothing the repository configures chooses the format or verifies a signature.

`status` and `branch` are not run as such: status is assembled from `diff --name-status` and
`ls-files`, branch listing from `for-each-ref` (neither can write anything, and the runner does
not allow the originals). Output goes through tools/git_output.py: diff sections of secret files
(`.env`, keys) omitted, everything redacted and made visible before the model sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from redline.agent.toolkit import ToolError
from redline.errors import RedlineError
from redline.git.process import decode, split_nul
from redline.tools.git_command import (
    ParsedCommand,
    classify_positionals,
    object_types,
    parse,
    tokenize,
    validate_rev_token,
)
from redline.tools.git_output import (
    SECRET_OMITTED,
    error_summary,
    finish_output,
    omit_secret_sections,
)
from redline.tools.git_policy import (
    ALLOWED_SUBCOMMANDS,
    DEFAULT_PRETTY,
    MAX_REVISIONS,
    PRETTY_PRESETS,
    REF_FILTERS,
    REF_PATTERN,
    SIGNATURE_PINS,
    SPECS,
    SUBMODULE_PINS,
    check_revision,
    chooses_format,
)
from redline.tools.names import shown
from redline.tools.paths import check_pathspec
from redline.tools.sandbox import ToolContext

__all__ = [
    "ALLOWED_SUBCOMMANDS",
    "GIT_TOOL_DESCRIPTION",
    "PRETTY_PRESETS",
    "SECRET_OMITTED",
    "SPECS",
    "classify_positionals",
    "error_summary",
    "finish_output",
    "omit_secret_sections",
    "parse",
    "run_git_tool",
    "tokenize",
]


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


def run_git_tool(ctx: ToolContext, command: str) -> str:
    parsed = parse(command)
    handler = _HANDLERS[parsed.sub]
    return handler(ctx, parsed)


def _diff_like(ctx: ToolContext, parsed: ParsedCommand) -> str:
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
    pins = list(SUBMODULE_PINS)
    if sub in ("log", "show"):
        # Before the model's flags: git takes the last format option, and `--oneline` after
        # `--pretty=medium` is oneline (the other way round it would be medium, abbreviated).
        if not chooses_format(flags):
            flags.insert(0, DEFAULT_PRETTY)
        pins += SIGNATURE_PINS
    argv = [
        sub,
        "--no-color",
        *flags,
        *pins,
        "--end-of-options",
        *(r.text for r in revs),
        "--",
        *paths,
    ]
    return finish_output(ctx, _run(ctx, *argv))


def _blame(ctx: ToolContext, parsed: ParsedCommand) -> str:
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
        names = validate_rev_token(token, allow_object_path=False)
        if len(names) != 1:
            raise ToolError("git blame takes a single revision, not a range")
        if object_types(ctx, names).get(names[0]) != "commit":
            raise ToolError(f"unknown revision {shown(token)}")
        rev = [names[0]]
    # The repository's blame.ignoreRevsFile (which git would read and quote from) is never
    # seen: git runs against Redline's private view of the repository (git/view.py).
    # blame has no --end-of-options (git 2.39); the revision passed the strict pattern, which
    # cannot start with '-', so it cannot be read as an option.
    return finish_output(ctx, _run(ctx, "blame", *parsed.flags, *rev, "--", path))


def _rev_parse(ctx: ToolContext, parsed: ParsedCommand) -> str:
    if parsed.paths:
        raise ToolError("git rev-parse takes revisions only")
    if not parsed.positionals:
        raise ToolError("git rev-parse needs a revision (e.g. rev-parse HEAD)")
    if len(parsed.positionals) > MAX_REVISIONS:
        raise ToolError(f"at most {MAX_REVISIONS} revisions per command")
    flags = [f for f in parsed.flags if f not in ("--verify", "-q", "--quiet")]
    lines = []
    for token in parsed.positionals:
        rev = check_revision(token)
        out = _run(
            ctx, "rev-parse", "--verify", "-q", *flags, "--end-of-options", rev, ok_codes=(0, 1)
        )
        lines.append(decode(out).strip() or f"{token}: unknown revision")
    return finish_output(ctx, "\n".join(lines))


def _ls_files(ctx: ToolContext, parsed: ParsedCommand) -> str:
    paths = [check_pathspec(ctx, p) for p in (*parsed.positionals, *parsed.paths)]
    return finish_output(
        ctx, _run(ctx, "ls-files", *parsed.flags, "--", *paths), empty="(no files)"
    )


def _status(ctx: ToolContext, parsed: ParsedCommand) -> str:
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
            *SUBMODULE_PINS,
            "--end-of-options",
            base,
            "--",
            *paths,
        )
    )
    unstaged = _name_status(
        _run(ctx, "diff", "--name-status", "--no-renames", "-z", *SUBMODULE_PINS, "--", *paths)
    )
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


def _branch(ctx: ToolContext, parsed: ParsedCommand) -> str:
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
        if not REF_PATTERN.fullmatch(pattern) or ".." in pattern:
            raise ToolError(f"invalid branch pattern {shown(pattern)}")
        patterns += [f"{ns}/{pattern}" for ns in namespaces]
    if flags & {"-vv"}:
        fmt = "%(HEAD) %(refname:short) %(objectname:short) [%(upstream:short)] %(contents:subject)"
    elif flags & {"-v", "--verbose"}:
        fmt = "%(HEAD) %(refname:short) %(objectname:short) %(contents:subject)"
    else:
        fmt = "%(HEAD) %(refname:short)"
    filters = [f for f in parsed.flags if f.split("=", 1)[0] in REF_FILTERS]
    for f in filters:
        if "=" not in f:
            continue
        name = f.split("=", 1)[1]
        if object_types(ctx, [name]).get(name) is None:
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


_HANDLERS: Final[dict[str, Callable[[ToolContext, ParsedCommand], str]]] = {
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
