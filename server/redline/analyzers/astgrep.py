"""ast-grep: Redline's own structural rule pack, its argv, and the reading of its JSON output.

The rules are YAML files shipped in the package (`astgrep_rules/`), one rule per document, for
Go, Java, Rust, TypeScript/JavaScript and Python: bug patterns linters miss and reviewers care
about (swallowed errors, resources not closed, SQL and shell built from strings, comparisons
with themselves, `== NaN`, ignored errors, a missing `await`). Their severity, category and
advice are in the one rule table (`rules.RULES`), keyed by the rule id.

Nothing of the reviewed repository configures the run:
- `-c` names a config Redline writes into a private directory (ast-grep would otherwise look for
  an `sgconfig.yml` in the working directory and above, and that file names rule directories,
  test directories and native "custom language" libraries — code).
- The files are copies, in that private directory, of the changed files ast-grep takes; in them
  the suppression comment `ast-grep-ignore` is respelled (same length, so lines and columns stay)
  so a change cannot silence a rule on its own lines.
- `--no-ignore` for every kind of ignore file: the files are named one by one.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from redline.analyzers.base import AnalyzerFailed, RawResult, ToolReport, relative_path

NAME = "ast-grep"
DISTRIBUTION = "ast-grep-cli"  # the package on the index that ships the binary
RULES_PACKAGE = "redline.analyzers.astgrep_rules"

# File suffix → the ast-grep language its file is parsed as. The one place that decides which
# changed files the job takes (`takes`). JavaScript is parsed as TSX (a superset that also
# takes JSX), so one TypeScript rule serves every JS/TS file: the pack's `typescript` rules are
# cloned for `tsx` when the rule directory is written (`rule_documents`).
SUFFIX_LANGUAGE: dict[str, str] = {
    ".go": "go",
    ".java": "java",
    ".rs": "rust",
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".js": "tsx",
    ".jsx": "tsx",
    ".mjs": "tsx",
    ".cjs": "tsx",
}
# ast-grep's own file types for the suffixes it does not map to these languages by itself.
_LANGUAGE_GLOBS = {
    "tsx": ["*.js", "*.jsx", "*.mjs", "*.cjs"],
    "typescript": ["*.mts", "*.cts"],
}
# The suppression comment, respelled in the copies (same length).
_SUPPRESSION = re.compile(rb"ast-grep-ignore", re.IGNORECASE)
_RESPELLED = b"ast-grep-NOPE!!"
# A tsx clone of a rule is named "<id>@tsx"; results are reported under "<id>".
_CLONE = "@tsx"
_ID_LINE = re.compile(r"^id:\s*(\S+)\s*$", re.MULTILINE)
_LANGUAGE_LINE = re.compile(r"^language:\s*(\S+)\s*$", re.MULTILINE)


def takes(path: str) -> bool:
    """Whether ast-grep's rule pack applies to this file (by its suffix)."""
    return language_of(path) is not None


def language_of(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return SUFFIX_LANGUAGE.get(name[dot:].lower()) if dot > 0 else None


def rule_files() -> list[tuple[str, str]]:
    """(file name, text) of every rule file in the pack, sorted by name."""
    root = resources.files(RULES_PACKAGE)
    found = [
        (entry.name, entry.read_text(encoding="utf-8"))
        for entry in root.iterdir()
        if entry.name.endswith(".yml") and entry.is_file()
    ]
    return sorted(found)


def split_documents(text: str) -> list[str]:
    """The YAML documents of one rule file (separated by a line `---`)."""
    docs = re.split(r"^---\s*$", text, flags=re.MULTILINE)
    return [d.strip() + "\n" for d in docs if _ID_LINE.search(d)]


def rule_id(document: str) -> str:
    match = _ID_LINE.search(document)
    if match is None:
        raise ValueError("rule document without an id")
    return match.group(1)


def rule_language(document: str) -> str:
    match = _LANGUAGE_LINE.search(document)
    if match is None:
        raise ValueError(f"rule {rule_id(document)} has no language")
    return match.group(1).lower()


def rule_documents() -> Iterator[str]:
    """Every rule of the pack, typescript rules twice (as themselves and as a tsx clone)."""
    for _, text in rule_files():
        for doc in split_documents(text):
            yield doc
            if rule_language(doc) == "typescript":
                clone = _ID_LINE.sub(lambda m: f"id: {m.group(1)}{_CLONE}", doc, count=1)
                yield _LANGUAGE_LINE.sub("language: tsx", clone, count=1)


def rule_ids() -> list[str]:
    return [rule_id(doc) for _, text in rule_files() for doc in split_documents(text)]


class Workdir:
    """A private directory holding the config, the rules and the copies of the files."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="redline-astgrep-")
        self.root = Path(self._tmp.name)
        self.files = self.root / "files"
        self.config = self.root / "sgconfig.yml"

    def __enter__(self) -> Workdir:
        rules = self.root / "rules"
        rules.mkdir()
        (rules / "redline.yml").write_text("---\n".join(rule_documents()), encoding="utf-8")
        globs = "".join(
            f"  {lang}: [{', '.join(json.dumps(g) for g in pattern)}]\n"
            for lang, pattern in _LANGUAGE_GLOBS.items()
        )
        self.config.write_text(
            f"ruleDirs:\n  - {json.dumps(str(rules))}\nlanguageGlobs:\n{globs}", encoding="utf-8"
        )
        self.files.mkdir()
        return self

    def __exit__(self, *exc: object) -> None:
        self._tmp.cleanup()

    def copy(self, scratch: Path, paths: Sequence[str]) -> None:
        """Copy `paths` from the runner's scratch directory, suppressions respelled."""
        for path in paths:
            source = scratch.joinpath(*path.split("/"))
            target = self.files.joinpath(*path.split("/"))
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(source, "rb") as handle:
                    content = _SUPPRESSION.sub(_RESPELLED, handle.read())
                # "x": never follow or overwrite something that is already there.
                with open(target, "xb") as handle:
                    handle.write(content)
            except OSError as exc:  # the run fails, the review goes on without it
                raise AnalyzerFailed(f"could not copy {path}: {exc.strerror or exc}") from exc


def argv(executable: str, config: Path, files: Sequence[str]) -> list[str]:
    no_ignore = [
        arg
        for kind in ("hidden", "dot", "exclude", "global", "parent", "vcs")
        for arg in ("--no-ignore", kind)
    ]
    return [
        executable,
        "scan",
        "--config",
        str(config),
        "--json=stream",
        "--color",
        "never",
        *no_ignore,
        # "./" keeps a file named like an option ("-x.go") a file.
        *(f"./{f}" for f in files),
    ]


def parse(stdout: bytes, root: Path) -> ToolReport:
    """Read `ast-grep scan --json=stream` (one match object a line, ast-grep 0.51)."""
    results: list[RawResult] = []
    for number, raw in enumerate(stdout.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw.decode("utf-8"))
            results.append(_result(item, root))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise AnalyzerFailed(f"unreadable ast-grep output (line {number}): {exc}") from exc
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise AnalyzerFailed(f"unexpected ast-grep output ({exc!r})") from exc
    return ToolReport(results)


def _result(item: dict[str, Any], root: Path) -> RawResult:
    rule = str(item["ruleId"])
    if rule.endswith(_CLONE):
        rule = rule[: -len(_CLONE)]
    start, end = item["range"]["start"], item["range"]["end"]
    line = int(start["line"]) + 1  # ast-grep counts rows from 0
    end_line = max(line, int(end["line"]) + 1)
    if end_line > line and int(end["column"]) == 0:  # ends at the next row's line break
        end_line -= 1
    return RawResult(
        tool=NAME,
        rule=rule,
        file=relative_path(str(item["file"]), root),
        line=line,
        end_line=end_line,
        message=" ".join(str(item.get("message") or "").split()),
    )
