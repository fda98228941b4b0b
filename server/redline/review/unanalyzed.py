"""Which files a review without a model really looked at.

With no model (none configured, or one that could not be used), only the static analyzers
review, and each reads only its own languages: a Markdown file, or a Python file whose analyzer
is missing, was looked at by nothing. Such a file is listed as not reviewed, with the reason,
never under "Reviewed" (a reader takes that list for what was checked).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from redline.model import AnalyzerRun, SkippedFile

# The statuses of an analyzer run that read its files (see AnalyzerRun.status).
_READ = frozenset({"ok", "partial"})

# How a reason names a file's kind, by extension; others are named by their extension.
_KINDS = {
    ".md": "Markdown", ".markdown": "Markdown", ".rst": "reStructuredText", ".txt": "plain text",
    ".js": "JavaScript", ".jsx": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript",
    ".ts": "TypeScript", ".tsx": "TypeScript", ".go": "Go", ".rs": "Rust", ".java": "Java",
    ".kt": "Kotlin", ".swift": "Swift", ".rb": "Ruby", ".php": "PHP", ".c": "C", ".h": "C",
    ".cc": "C++", ".cpp": "C++", ".hpp": "C++", ".cs": "C#", ".sh": "shell scripts",
    ".bash": "shell scripts", ".zsh": "shell scripts", ".sql": "SQL", ".html": "HTML",
    ".css": "CSS", ".scss": "SCSS", ".json": "JSON", ".yml": "YAML", ".yaml": "YAML",
    ".toml": "TOML", ".xml": "XML", ".lua": "Lua", ".ini": "INI", ".cfg": "INI", ".py": "Python",
    ".pyi": "Python",
}  # fmt: skip


def kind_of(path: str) -> str:
    """ "Markdown", "TypeScript", ".lock files", or "files like Makefile" (no extension)."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot <= 0:
        return f"files like {name}"
    ext = name[dot:].lower()
    return _KINDS.get(ext, f"{ext} files")


def unanalyzed(
    paths: Iterable[str], given: Mapping[str, Sequence[str]], runs: Sequence[AnalyzerRun]
) -> list[SkippedFile]:
    """The files of `paths` no analyzer read, each with why: none reads its kind, or the ones
    that would have did not run. `given`: analyzer name → the files it was handed."""
    status = {run.name: run.status for run in runs}
    read = {p for name, files in given.items() if status.get(name) in _READ for p in files}
    out: list[SkippedFile] = []
    for path in sorted(set(paths) - read):
        tried = [name for name, files in given.items() if path in files]
        if tried:
            why = ", ".join(f"{name}: {status.get(name, 'did not run')}" for name in tried)
            reason = f"not reviewed: no analyzer ran on it ({why}) and no model ran"
        else:
            reason = f"not reviewed: no analyzer for {kind_of(path)} and no model ran"
        out.append(SkippedFile(path=path, reason=reason))
    return out
