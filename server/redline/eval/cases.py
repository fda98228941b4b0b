"""A case's repository: a temporary repository at a base commit, and one branch per case with
the mutated file committed on it, so that reviewing `base..head` reviews exactly the planted
change.

Two sources:

- `--repo PATH`: a shallow clone of the user's repository at its HEAD commit (`--no-local
  --depth 1`: only that commit's objects are copied, not the whole history).
- `--corpus bundled`: a new repository whose first commit holds the bundled corpus (and
  Redline's own sources when a mutant was planted in them).

git runs with Redline's hardened `-c` prefix (`git/hardening.py` HARDENED_CONFIG), a clean
environment (the runner's allowlist) without the user's global or system configuration (so no
filter, hook or alias of theirs runs), hooks off, no template directory, and a fixed author
and date, so the same seed gives the same commits. Case commits are written with plumbing
(hash-object, a private index, write-tree, commit-tree, update-ref): the work tree is checked
out once, at the base, and never touched again. The runner's own allowlist refuses clone and
commit (reviews never write), hence this module's small runner on the same defences.

`case_workspace` removes the temporary directory when it ends, whatever ends it (an error,
Ctrl+C).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from redline.errors import GitCommandError, RepositoryError
from redline.eval.truth import Mutant
from redline.git.hardening import HARDENED_CONFIG
from redline.git.process import run_process
from redline.git.runner import GitRunner
from redline.requests import ScopeKind, ScopeRequest

# Files the mutation generator may read, by extension (the languages of truth.LANGUAGES).
SOURCE_SUFFIXES = (".py", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go")
MAX_SOURCE_BYTES = 200_000
_TIMEOUT = 300.0
_IDENTITY = {
    "GIT_AUTHOR_NAME": "Redline eval",
    "GIT_AUTHOR_EMAIL": "eval@redline.invalid",
    "GIT_COMMITTER_NAME": "Redline eval",
    "GIT_COMMITTER_EMAIL": "eval@redline.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
    # Neither the user's ~/.gitconfig nor the system's: no filter, alias or hook of theirs.
    "GIT_CONFIG_GLOBAL": "/dev/null",
}
_CASE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class Case:
    case_id: str
    mutant: Mutant
    repo: Path  # the temporary repository
    base: str  # the commit the case branches from (full object id)
    head: str  # the case's commit: base + the mutated file

    @property
    def scope(self) -> ScopeRequest:
        return ScopeRequest(ScopeKind.RANGE, f"{self.base}..{self.head}")


class _Git:
    """git in one temporary repository, hardened as the review's runner is (see module doc)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        runner = GitRunner()
        if not runner.git_path:
            raise RepositoryError("git is not installed", hint="install git to run redline eval")
        self.path = runner.git_path
        self.env = {**runner.child_env(), **_IDENTITY}

    def __call__(
        self,
        *args: str,
        cwd: Path | None = None,
        input: bytes | str | None = None,
        index: Path | None = None,
        extra: Sequence[str] = (),
    ) -> str:
        out = self.raw(*args, cwd=cwd, input=input, index=index, extra=extra)
        return out.decode("utf-8", errors="replace")

    def raw(
        self,
        *args: str,
        cwd: Path | None = None,
        input: bytes | str | None = None,
        index: Path | None = None,
        extra: Sequence[str] = (),
    ) -> bytes:
        prefix = [self.path, "--no-pager"]
        for key, value in HARDENED_CONFIG:
            prefix += ["-c", f"{key}={value}"]
        prefix += list(extra)
        env = dict(self.env)
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        result = run_process(
            [*prefix, *args],
            cwd=cwd or self.root,
            env=env,
            timeout=_TIMEOUT,
            max_output=256 * 1024 * 1024,
            input=input.encode("utf-8") if isinstance(input, str) else input,
            what=f"git {args[0]}",
        )
        if result.returncode != 0:
            raise GitCommandError(
                f"git {args[0]} failed (exit {result.returncode}): {result.error_text}"
            )
        return result.stdout


@dataclass
class Workspace:
    """The temporary repository the cases of one eval run live in."""

    root: Path  # the temporary directory (removed at the end)
    repo: Path
    base: str = ""
    cases: list[Case] = field(default_factory=list)
    _git: _Git | None = None

    @property
    def git(self) -> _Git:
        if self._git is None:
            self._git = _Git(self.repo)
        return self._git

    def source_files(self) -> list[tuple[str, str]]:
        """The base commit's source files the generator can mutate: (path, text), sorted.
        Read from the commit's objects, never through the work tree."""
        listing = self.git("ls-tree", "-r", "-z", "-l", "--full-tree", self.base)
        wanted: list[tuple[str, str]] = []
        for entry in listing.split("\0"):
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            if len(parts) != 4 or parts[1] != "blob" or parts[0] not in ("100644", "100755"):
                continue  # symlinks and submodules are not source
            if path.endswith(SOURCE_SUFFIXES) and 0 < int(parts[3]) <= MAX_SOURCE_BYTES:
                wanted.append((path, parts[2]))
        if not wanted:
            return []
        batch = self.git.raw("cat-file", "--batch", input="".join(f"{o}\n" for _, o in wanted))
        out: list[tuple[str, str]] = []
        pos = 0
        for path, _oid in wanted:
            header_end = batch.index(b"\n", pos)
            size = int(batch[pos:header_end].split()[2])
            data = batch[header_end + 1 : header_end + 1 + size]
            pos = header_end + 1 + size + 1
            if b"\0" in data:
                continue
            try:
                out.append((path, data.decode("utf-8")))
            except UnicodeDecodeError:
                continue
        return sorted(out)

    def add_case(self, case_id: str, mutant: Mutant) -> Case:
        """Commit the mutated file on `refs/heads/eval/<case_id>`, branching from the base."""
        if not _CASE_ID.match(case_id):
            raise ValueError(f"bad case id {case_id!r}")
        path = mutant.bug.file
        if path.startswith("/") or ".." in path.split("/") or not path:
            raise ValueError(f"bad mutant path {path!r}")
        git = self.git
        blob = git(
            "hash-object", "-w", "--no-filters", "--stdin", input=mutant.source.encode("utf-8")
        ).strip()
        mode = "100644"
        listed = git("ls-tree", self.base, "--", path).split()
        if listed and listed[0] in ("100644", "100755"):
            mode = listed[0]
        index = self.root / f"index-{case_id}"
        try:
            git("read-tree", self.base, index=index)
            git("update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", index=index)
            tree = git("write-tree", index=index).strip()
        finally:
            index.unlink(missing_ok=True)
        message = f"eval case {case_id}: {mutant.bug.operator} in {path}"
        head = git("commit-tree", tree, "-p", self.base, "-m", message).strip()
        git("update-ref", f"refs/heads/eval/{case_id}", head)
        case = Case(case_id=case_id, mutant=mutant, repo=self.repo, base=self.base, head=head)
        self.cases.append(case)
        return case


@contextlib.contextmanager
def case_workspace() -> Iterator[Workspace]:
    """A temporary directory for one eval run's repository, removed when the block ends."""
    root = Path(tempfile.mkdtemp(prefix="redline-eval-"))
    try:
        yield Workspace(root=root, repo=root / "repo")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def clone_head(ws: Workspace, source: Path) -> str:
    """Clone the repository at `source` at its HEAD commit into the workspace; the base."""
    from redline.git.runner import find_repo_root

    runner = GitRunner()
    root = find_repo_root(source, runner=runner)
    want = runner.git(root, "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}")
    want_oid = want.decode().strip()
    git = _Git(ws.root)
    git(
        "clone",
        "--quiet",
        "--no-local",
        "--depth",
        "1",
        "--template=",
        "--",
        str(root),
        str(ws.repo),
        cwd=ws.root,
        # The user's repository is read through git's file transport (the hardened prefix
        # forbids every transport); hooks stay off for the checkout.
        extra=("-c", "protocol.file.allow=always"),
    )
    ws.base = git("rev-parse", "HEAD", cwd=ws.repo).strip()
    if ws.base != want_oid:
        raise RepositoryError(
            f"the clone of {root} is at {ws.base[:12]}, not at HEAD {want_oid[:12]}",
            hint="check out a branch (not a detached HEAD) and run redline eval again",
        )
    return ws.base


def commit_files(ws: Workspace, files: Sequence[tuple[str, str]]) -> str:
    """A new repository in the workspace whose first commit holds `files`; the base."""
    git = _Git(ws.root)
    git("init", "--quiet", "--template=", "-b", "main", str(ws.repo), cwd=ws.root)
    for path, text in files:
        if path.startswith("/") or ".." in path.split("/"):
            raise ValueError(f"bad corpus path {path!r}")
        target = ws.repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    ws.git("add", "-A")
    ws.git("commit", "--quiet", "--no-verify", "-m", "eval corpus")
    ws.base = ws.git("rev-parse", "HEAD").strip()
    return ws.base


def case_id(index: int, mutant: Mutant) -> str:
    """`c007-off_by_one`: the case's number (1-based) and its operator."""
    operator = re.sub(r"[^a-z0-9_]", "_", mutant.bug.operator.lower())[:40]
    return f"c{index:03d}-{operator}"


def add_cases(ws: Workspace, mutants: Sequence[Mutant]) -> list[Case]:
    return [ws.add_case(case_id(i, m), m) for i, m in enumerate(mutants, 1)]


def generate_mutants(
    files: Sequence[tuple[str, str]], *, seed: int, limit: int | None
) -> list[Mutant]:
    """The generator's mutants of `files` (imported here: tree-sitter's grammars load only
    when an eval plants bugs)."""
    from redline.eval.mutate import generate

    return generate(list(files), seed=seed, limit=limit)


def bundled_files() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The bundled corpus (`eval/corpus`), and Redline's own sources."""
    from redline.eval.mutate.sources import corpus_files, redline_files

    return corpus_files(), redline_files()


def bundled_base(
    mutants: Sequence[Mutant], corpus: Sequence[tuple[str, str]], own: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """What the bundled base commit holds: the corpus, plus Redline's sources when a mutant
    was planted in one of them."""
    own_paths = {p for p, _ in own}
    if any(m.bug.file in own_paths for m in mutants):
        corpus_paths = {p for p, _ in corpus}
        return [*corpus, *(f for f in own if f[0] not in corpus_paths)]
    return list(corpus)
