"""What a file is, decided once: its language, the tags its path and content give it, which
analyzers take it, and why it is skipped.

`kind_of(path)` is the verdict from the path alone (cached: the unit builder, the read
decision, the analyzers and the deleted-file search all ask about the same paths);
`kind_with_content(path, content)` adds the language a shell shebang gives a file without a
suffix. What the new version decides about skipping (generated, vendored and minified headers,
large) is added to the unit's tags by new_side.py, starting from the verdict's. Units and
analyzers read the verdict instead of deciding again from the path.

Two language names, for two readers:
- `syntax` is what the unit builder has always called a file's language (functions.language_for:
  `.zsh` is "shell", `.tsx` is "tsx", `.yml` is "yaml"): unit.language, comment prefixes,
  grammars. Unchanged, so reviews stay what they were.
- `language` is what the analyzers choose their files by (`LANGUAGES`), or None. Suffixes are
  matched as written, the way the tools themselves pick files (ruff reads `*.py`/`*.pyi`, not
  `*.PY`); the names of Dockerfiles are matched in any case (Docker's own `-f` takes any name
  and `dockerfile` is common). GitHub reads workflows only from `.github/workflows/` at the top
  of the repository, and an action's metadata from `action.yml`/`action.yaml` in any folder.

An analyzer says which languages it takes in `ANALYZER_LANGUAGES`; `takes(analyzer, kind)` is
the one test analyzers/jobs.py applies.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from redline.diff.functions import has_grammar, language_for
from redline.diff.rules import TAG_SKIPS
from redline.diff.tags import path_tags, prose, split_path, suffix_and_stem
from redline.model import Tag

Language = Literal[
    "python",
    "typescript",
    "javascript",
    "go",
    "java",
    "rust",
    "shell",
    "dockerfile",
    "github-workflow",
]
LANGUAGES: Final[tuple[Language, ...]] = (
    "python",
    "typescript",
    "javascript",
    "go",
    "java",
    "rust",
    "shell",
    "dockerfile",
    "github-workflow",
)

# Analyzer name → the languages whose files it is given. ruff and bandit run here; the others
# are the names the analyzers being added beside them (issue 26) are expected to use: a job
# that is not planned never reads its entry.
ANALYZER_LANGUAGES: Final[Mapping[str, frozenset[Language]]] = {
    "ruff": frozenset({"python"}),
    "bandit": frozenset({"python"}),
    "oxlint": frozenset({"javascript", "typescript"}),
    "ast-grep": frozenset({"python", "javascript", "typescript", "go", "java", "rust"}),
    "shellcheck": frozenset({"shell"}),
    "hadolint": frozenset({"dockerfile"}),
    "zizmor": frozenset({"github-workflow"}),
}

_SUFFIX_LANGUAGES: Final[Mapping[str, Language]] = {
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".go": "go",
    ".java": "java",
    ".rs": "rust",
    ".sh": "shell",
    ".bash": "shell",
}
_DOCKERFILE_NAMES: Final = frozenset({"dockerfile", "containerfile"})
_WORKFLOW_SUFFIXES: Final = (".yml", ".yaml")
_ACTION_NAMES: Final = frozenset({"action.yml", "action.yaml"})
# Declarations of what another file implements: a deleted stub's names (typeshed's `int`,
# `str`) are no evidence that anything still needs the stub.
_STUB_SUFFIXES: Final = (".pyi", ".d.ts", ".d.mts", ".d.cts")
# `#!/bin/sh`, `#! /usr/bin/env bash`, `#!/usr/bin/env -S bash -e`, `#!/usr/local/bin/zsh`.
_SHELL_SHEBANG: Final = re.compile(
    rb"#![ \t]*(?:/\S*/)?(?:env[ \t]+(?:-\S*[ \t]+)*)?(?:sh|bash|dash|ksh|zsh)(?:[ \t]|\r?$)"
)
_SHEBANG_BYTES: Final = 256

# Files whose content is never inspected (no read, no parse, no content tags): they are skipped.
UNREAD_TAGS: Final = frozenset({Tag.LOCKFILE, Tag.VENDORED})
# Deleted files whose definitions are not searched for in the new tree.
_UNSEARCHED_TAGS: Final = frozenset({Tag.VENDORED, Tag.GENERATED, Tag.MINIFIED, Tag.LOCKFILE})


@dataclass(frozen=True, slots=True)
class FileKind:
    """The verdict on one file (see the module docstring)."""

    path: str
    syntax: str | None  # functions.language_for: the unit's language
    language: Language | None  # what the analyzers choose files by
    tags: frozenset[Tag]  # from the path, then from the content once it is judged
    stub: bool  # declarations only (.pyi, .d.ts)
    prose: bool  # documentation text read by people (README, changelogs, .md pages)

    @property
    def unread(self) -> bool:
        """Skipped by its path alone (lockfile, vendored): never read, parsed or tagged."""
        return bool(self.tags & UNREAD_TAGS)

    @property
    def maybe_text(self) -> bool:
        """A file git calls binary that is worth reading to see if its new side is text: its
        name says text (a known language, docs, config). Images and archives are not read."""
        return self.syntax is not None or bool(self.tags & {Tag.DOCS, Tag.CONFIG})

    @property
    def grammar(self) -> bool:
        """Whether enclosing functions can be computed (a grammar is installed). Asked only
        when needed: it loads the grammar."""
        return self.syntax is not None and has_grammar(self.path)

    @property
    def skip_reason(self) -> str | None:
        """Why the file is not reviewed, when its tags alone say so."""
        return tag_skip_reason(self.tags)

    @property
    def analyzers(self) -> frozenset[str]:
        """The analyzers (ANALYZER_LANGUAGES) that take this file."""
        return frozenset(name for name in ANALYZER_LANGUAGES if takes(name, self))

    @property
    def names_searched(self) -> bool:
        """Whether a deletion of this file is searched for in the new tree: not a stub, and
        neither vendored, generated, minified nor a lockfile."""
        return not self.stub and not self.tags & _UNSEARCHED_TAGS


def tag_skip_reason(tags: Iterable[Tag]) -> str | None:
    present = set(tags)
    for tag, reason in TAG_SKIPS:
        if tag in present:
            return reason
    return None


def takes(analyzer: str, kind: FileKind) -> bool:
    """Whether `analyzer` is given the file (an analyzer not in ANALYZER_LANGUAGES takes none)."""
    return kind.language is not None and kind.language in ANALYZER_LANGUAGES.get(
        analyzer, frozenset()
    )


def files_for(analyzer: str, kinds: Iterable[FileKind]) -> list[str]:
    """The paths of `kinds` that `analyzer` takes, in their order."""
    return [kind.path for kind in kinds if takes(analyzer, kind)]


@functools.lru_cache(maxsize=8192)
def kind_of(path: str) -> FileKind:
    """The verdict from the path alone (cached: it depends on the string only)."""
    return FileKind(
        path=path,
        syntax=language_for(path),
        language=path_language(path),
        tags=frozenset(path_tags(path)),
        stub=split_path(path)[1].endswith(_STUB_SUFFIXES),
        prose=prose(path),
    )


def kind_with_content(path: str, content: bytes | None) -> FileKind:
    """kind_of, with the language a shebang gives a file without a suffix."""
    kind = kind_of(path)
    if kind.language is None and content and shell_script(path, content):
        return dataclasses.replace(kind, language="shell")
    return kind


def path_language(path: str) -> Language | None:
    """The analyzers' language of a path (see the module docstring), None when the path alone
    does not say (an extensionless script is settled by its shebang: kind_with_content)."""
    dirs, name = split_path(path)
    if name.endswith((".py", ".pyi")):  # what ruff and bandit were always given (even `.py`)
        return "python"
    lower = name.lower()
    # Before the suffixes: `Dockerfile.go` is the Dockerfile of a Go service, not Go.
    if (
        lower in _DOCKERFILE_NAMES
        or lower.endswith(".dockerfile")
        or (lower.startswith(("dockerfile.", "containerfile.")) and lower != "dockerfile.")
    ) and not lower.endswith((".dockerignore", ".containerignore")):
        return "dockerfile"
    suffix = suffix_and_stem(name)[0]
    language = _SUFFIX_LANGUAGES.get(suffix)
    if language is not None:
        return language
    if name in _ACTION_NAMES or (
        dirs == [".github", "workflows"] and name.endswith(_WORKFLOW_SUFFIXES)
    ):
        return "github-workflow"
    return None


def shell_script(path: str, content: bytes) -> bool:
    """A file without a suffix whose first line is a sh/bash/dash/ksh/zsh shebang."""
    if suffix_and_stem(split_path(path)[1])[0]:
        return False
    first = content[:_SHEBANG_BYTES].split(b"\n", 1)[0]
    return _SHELL_SHEBANG.match(first) is not None
