"""Code navigation tools: read_function, search_callers, git_show_previous.

read_function reuses the diff layer's tree-sitter spans (redline.diff.functions) for functions
and adds class/type spans here. search_callers is a bounded `git grep` through the hardened
runner. git_show_previous reads the old side of the change through ls-tree + cat-file
(Repo.read_blob), never through a worktree path. All three apply the same path rules as
read_file and return cleaned (redacted, control-free) text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

from tree_sitter import Node, Parser

from redline.agent.toolkit import ToolError
from redline.diff.functions import function_spans, has_grammar, language_for, load_language
from redline.errors import FileTooLargeError, RedlineError
from redline.git.names import check_rel_path, validate_revision
from redline.git.process import ProcessResult, decode
from redline.git.repo import Repo
from redline.git.runner import GitRunner
from redline.tools.git_output import error_summary
from redline.tools.names import check_names, is_git_name, is_secret_path, shown
from redline.tools.paths import read_repo_bytes
from redline.tools.read_file import decode_text, number_lines, select_lines
from redline.tools.sandbox import ToolContext

_SYMBOL: Final = re.compile(
    r"[A-Za-z_$][A-Za-z0-9_$]{0,99}(?:\.[A-Za-z_$][A-Za-z0-9_$]{0,99}){0,4}"
)
_DEFINITION: Final = r"(?:def|class|function|func|fn|interface|type|struct|const|let|var)\s+"


@dataclass(frozen=True)
class Definition:
    start: int  # 1-based, decorators included
    end: int
    name: str  # qualified
    kind: str  # "function" or "class"


# -- read_function ------------------------------------------------------------------------------


_CLASS_NODES: Final = {
    "python": ("class_definition",),
    "javascript": ("class_declaration", "class"),
    "typescript": ("class_declaration", "abstract_class_declaration", "interface_declaration"),
    "tsx": ("class_declaration", "abstract_class_declaration", "interface_declaration"),
    "go": ("type_spec",),
    "java": (
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
    ),
    "rust": ("struct_item", "enum_item", "trait_item", "union_item"),
}


@cache
def _parser(kind: str) -> Parser | None:
    language = load_language(kind)
    return Parser(language) if language is not None else None


def class_spans(path: str, source: bytes) -> list[Definition]:
    """Classes (Go: type declarations, TS: also interfaces) with qualified names."""
    kind = language_for(path)
    parser = _parser(kind) if kind else None
    if kind is None or parser is None:
        return []
    try:
        root = parser.parse(source).root_node
    except Exception:
        return []
    wanted = set(_CLASS_NODES.get(kind, ()))
    found: list[Definition] = []

    def walk(node: Node, prefix: list[str]) -> None:
        for child in node.named_children:
            names = prefix
            if child.type in wanted:
                name_node = child.child_by_field_name("name")
                if name_node is not None and name_node.text is not None:
                    own = name_node.text.decode("utf-8", errors="replace")
                    names = [*prefix, own]
                    start = child.start_point[0]
                    parent = child.parent
                    if parent is not None and parent.type == "decorated_definition":
                        start = parent.start_point[0]
                    if kind == "go" and parent is not None and parent.type == "type_declaration":
                        start = parent.start_point[0]
                    found.append(
                        Definition(start + 1, child.end_point[0] + 1, ".".join(names), "class")
                    )
            walk(child, names)

    walk(root, [])
    return found


def definitions(path: str, source: bytes) -> list[Definition]:
    funcs = [Definition(s.start, s.end, s.name, "function") for s in function_spans(path, source)]
    return funcs + class_spans(path, source)


def read_function(
    ctx: ToolContext, path: str, line: int | None = None, name: str | None = None
) -> str:
    if (line is None) == (name is None or name == ""):
        raise ToolError("give exactly one of line (a line inside the function) or name")
    rp, data = read_repo_bytes(ctx, path)
    text, note = decode_text(data, path)
    if not has_grammar(rp.rel):
        raise ToolError(
            f"no parser for {shown(path)} (Python, JavaScript, TypeScript and Go are supported); "
            "use read_file with start_line/end_line"
        )
    defs = definitions(rp.rel, data)
    lines = text.splitlines()
    if line is not None:
        if isinstance(line, bool) or not isinstance(line, int) or line < 1:
            raise ToolError("line must be a positive integer")
        if line > len(lines):
            raise ToolError(f"line {line} is past the end of {shown(path)} ({len(lines)} lines)")
        containing = [d for d in defs if d.start <= line <= d.end]
        if not containing:
            raise ToolError(
                f"line {line} of {shown(path)} is not inside a function or class; "
                "use read_file with a line range"
            )
        # Innermost: the latest start, then the shortest span; functions win ties over classes.
        chosen = max(containing, key=lambda d: (d.start, -d.end, d.kind == "function"))
        others: list[Definition] = []
    else:
        assert name is not None
        wanted = name.strip()
        exact = [d for d in defs if d.name == wanted]
        tail = [d for d in defs if d.name.rsplit(".", 1)[-1] == wanted.rsplit(".", 1)[-1]]
        matches = exact or tail
        if not matches:
            known = ", ".join(sorted({d.name for d in defs})[:30]) or "none"
            raise ToolError(
                f"no function or class named {shown(wanted)} in {shown(path)}; definitions: {known}"
            )
        chosen, others = matches[0], matches[1:]
    first, last, range_note = select_lines(
        lines, chosen.start, chosen.end, ctx.limits.max_lines_per_call, shown(path)
    )
    parts = [f"{rp.rel}: {chosen.kind} {chosen.name} (lines {chosen.start}-{chosen.end})"]
    if note:
        parts.append(note)
    parts.append(number_lines(lines[first - 1 : last], first))
    if range_note:
        parts.append(range_note)
    if others:
        listed = ", ".join(f"{d.name} (line {d.start})" for d in others[:10])
        parts.append(f"note: other definitions with that name: {listed}")
    return ctx.clean("\n".join(parts))


# -- search_callers ---------------------------------------------------------------------------


def git_grep_words(
    runner: GitRunner,
    root: Path,
    words: Sequence[str],
    *,
    rev: str | None = None,
    cached: bool = False,
    timeout: float | None = None,
    max_output: int | None = None,
) -> ProcessResult:
    """One bounded `git grep` for whole-word occurrences of any of `words` (fixed strings) in
    the tracked files: of the work tree, of the index (`cached`) or of commit `rev`. Through the
    hardened runner: no textconv, no pager, binary files left out. Read it with grep_hits."""
    args = ["grep", "-n", "-z", "-w", "-F", "-I", "--no-color", "--no-textconv", "--full-name"]
    if cached:
        args.append("--cached")
    for word in words:
        args += ["-e", word]
    if rev is not None:
        args.append(rev)
    return runner.run_git(root, *args, "--", timeout=timeout, max_output=max_output)


# Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN): names are joined into
# alternations of at most this many bytes, one `-e` each.
_ALTERNATION_BYTES: Final = 32 * 1024
_ERE_SPECIAL: Final = re.compile(r"[\\.\[\]()*+?{}|^$]")


def word_alternations(words: Sequence[str]) -> list[str]:
    """`words` as few POSIX extended regexes `(a|b|…)` as the argument limit allows: a few
    patterns, however many words, where git grep's cost grows with the number of `-e`."""
    out: list[str] = []
    chunk: list[str] = []
    size = 0
    for word in words:
        escaped = _ERE_SPECIAL.sub(lambda m: "\\" + m.group(), word)
        cost = len(escaped.encode("utf-8", errors="surrogatepass")) + 1
        if chunk and size + cost > _ALTERNATION_BYTES:
            out.append("(" + "|".join(chunk) + ")")
            chunk, size = [], 0
        chunk.append(escaped)
        size += cost
    if chunk:
        out.append("(" + "|".join(chunk) + ")")
    return out


def git_grep_any_word(
    runner: GitRunner,
    root: Path,
    words: Sequence[str],
    *,
    rev: str | None = None,
    cached: bool = False,
    timeout: float | None = None,
    max_output: int | None = None,
) -> ProcessResult:
    """git_grep_words for many words: one pass over the tree with the words compiled into one
    alternation (word_alternations) instead of one `-e` per word, whose cost grows with their
    number (on mypy's tree, 50 names took 7.5 s and 200 names 68 s). The same records, read
    with grep_hits; which word a line holds is for the caller to tell (`-w` applies to the
    whole match, as with -F)."""
    args = ["grep", "-n", "-z", "-w", "-E", "-I", "--no-color", "--no-textconv", "--full-name"]
    if cached:
        args.append("--cached")
    for pattern in word_alternations(words):
        args += ["-e", pattern]
    if rev is not None:
        args.append(rev)
    return runner.run_git(root, *args, "--", timeout=timeout, max_output=max_output)


def grep_hits(result: ProcessResult, rev: str | None = None) -> Iterator[tuple[str, str, str]]:
    """(path, line number, line) of each git_grep_words hit, leaving out secret files (.env,
    keys: never shown, not even one line) and git's own."""
    prefix = f"{rev}:" if rev is not None else ""
    allowed_paths: dict[str, bool] = {}  # decided per path: a file has many hits
    for record in decode(result.stdout).split("\n"):
        fields = record.split("\0", 2)
        if len(fields) != 3:
            continue
        path, lineno, content = fields
        path = path.removeprefix(prefix)
        allowed = allowed_paths.get(path)
        if allowed is None:
            parts = [p for p in path.split("/") if p]
            allowed = not (is_secret_path(parts) or any(is_git_name(p) for p in parts))
            allowed_paths[path] = allowed
        if allowed:
            yield path, lineno, content


_DEFINITION_HEAD: Final = re.compile(_DEFINITION)


def defines(symbol: str, text: str) -> bool:
    """definition_of(symbol).search(text), without compiling a pattern per symbol: a deleted
    file's search checks thousands of names. A definition keyword with its spaces can be
    followed by a name only where it ends, so each keyword's match is looked at once."""
    name = symbol.rsplit(".", 1)[-1]
    if not name:
        return False
    last_is_word = _is_word(name[-1])
    for match in _DEFINITION_HEAD.finditer(text):
        end = match.end()
        if text.startswith(name, end):
            after = text[end + len(name) : end + len(name) + 1]
            if last_is_word != (bool(after) and _is_word(after)):  # what `\b` asks
                return True
    return False


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def definition_of(symbol: str) -> re.Pattern[str]:
    """A line that defines `symbol` (its last dotted part) rather than using it."""
    return re.compile(_DEFINITION + re.escape(symbol.rsplit(".", 1)[-1]) + r"\b")


def search_callers(ctx: ToolContext, symbol: str) -> str:
    if not isinstance(symbol, str) or not _SYMBOL.fullmatch(symbol.strip()):
        raise ToolError(
            "symbol must be an identifier such as parse_config or Client.send "
            "(letters, digits, _, $ and dots)"
        )
    symbol = symbol.strip()
    limit = ctx.limits.max_search_results
    try:
        result = git_grep_words(
            ctx.runner,
            ctx.root,
            [symbol],
            timeout=ctx.limits.git_timeout,
            max_output=ctx.limits.max_git_output_bytes,
        )
    except RedlineError as exc:
        raise ToolError(ctx.clean(exc.message)) from None
    if result.returncode == 1:
        return f"no occurrences of {symbol} in tracked files"
    if result.returncode != 0:
        raise ToolError(f"git grep failed: {ctx.clean(error_summary(result.error_text))}")
    hits: list[str] = []
    total = 0
    width = ctx.limits.max_line_chars
    definition = definition_of(symbol)
    for path, lineno, content in grep_hits(result):
        total += 1
        if len(hits) >= limit:
            continue
        content = content.strip()
        if len(content) > width:
            content = content[:width] + " …"
        mark = "  (definition)" if definition.search(content) else ""
        hits.append(f"{path}:{lineno}: {content}{mark}")
    if not hits:
        return f"no occurrences of {symbol} in tracked files"
    header = f"{total} occurrence{'s' if total != 1 else ''} of {symbol}"
    if total > len(hits):
        header += f" (showing the first {len(hits)})"
    return ctx.clean(header + "\n" + "\n".join(hits))


# -- git_show_previous -------------------------------------------------------------------------


def git_show_previous(ctx: ToolContext, path: str) -> str:
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path must be a repository-relative file path")
    rel = path.replace("\\", "/").removeprefix("./")
    try:
        parts = check_rel_path(rel)
    except RedlineError as exc:
        raise ToolError(exc.message) from None
    check_names(parts, path)
    rev = ctx.old_rev or "HEAD"
    try:
        validate_revision(rev)
        data = Repo(ctx.root, ctx.runner).read_blob(rev, "/".join(parts), ctx.limits.max_read_bytes)
    except FileTooLargeError as exc:
        raise ToolError(ctx.clean(exc.message)) from None
    except RedlineError as exc:
        raise ToolError(ctx.clean(exc.message)) from None
    label = rev if len(rev) < 40 else rev[:12]
    if data is None:
        return ctx.clean(f"{'/'.join(parts)} did not exist at {label} (a new file in this change)")
    text, note = decode_text(data, path)
    lines = text.splitlines()
    first, last, range_note = select_lines(
        lines, None, None, ctx.limits.max_lines_per_call, shown(path)
    )
    out = [f"{'/'.join(parts)} at {label} (before the change, {len(lines)} lines)"]
    if note:
        out.append(note)
    if lines:
        out.append(number_lines(lines[first - 1 : last], first))
    if range_note:
        out.append(range_note.replace("continue with start_line", "the rest starts at line"))
    return ctx.clean("\n".join(out))


def find_definition(defs: Sequence[Definition], name: str) -> Definition | None:
    """The definition named exactly name, else the first whose last dotted segment matches."""
    exact = [d for d in defs if d.name == name]
    tail = [d for d in defs if d.name.rsplit(".", 1)[-1] == name.rsplit(".", 1)[-1]]
    matches = exact or tail
    return matches[0] if matches else None


__all__ = [
    "Definition",
    "class_spans",
    "definitions",
    "git_show_previous",
    "read_function",
    "search_callers",
]
