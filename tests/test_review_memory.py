"""What a review of many files holds at once (issue 23, "keep memory within a few times the
diff"): the context reader keeps a bounded number of file versions, the reviewer stage builds
a file's context and prompt when its call is about to start (not every file's up front), and
neither changes what is sent. Counts of live objects, not timings: benchmarks/big_diff.py
measures the memory itself."""

from __future__ import annotations

import gc
import itertools
import re
import weakref
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import redline.review.supervisor as supervisor
from redline.agent.llm import LLMClient
from redline.config_models import (
    AnalyzerSettings,
    LLMSettings,
    ModelSettings,
    ReviewSettings,
    Settings,
)
from redline.context import ContextProvider
from redline.context.repo_reader import MAX_SOURCES
from redline.diff import build_units
from redline.diff.file_diff import FileDiff
from redline.diff.units import UnitBuilder
from redline.git.runner import GitRunner
from redline.git.scopes import ScopeDiff, ScopeRequest, resolve_scope
from redline.model import ContextLevel
from redline.requests import ScopeKind
from redline.review.batching import (
    BATCH_FILES,
    BATCH_MIN_FILES,
    BATCH_TOKENS,
    SMALL_FILE_TOKENS,
    group_sizes,
    stream_groups,
)
from redline.review.pipeline import plan_review, run_review
from redline.review.reviewer import PreparedFile
from redline.tools import ToolContext

from gitrepo import GitRepo
from review_script import ReviewScript, role_of
from scripted_llm import ScriptedLLM


def module(i: int, functions: int) -> str:
    body = "".join(f"def f_{j}(x):\n    return x * {j} + {i}\n\n" for j in range(functions))
    return f"# module {i}\n" + body


def many_files(repo: GitRepo, files: int, functions: int) -> None:
    repo.write("base.py", "x = 1\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    for i in range(files):
        repo.write(f"pkg/mod_{i:03d}.py", module(i, functions))
    repo.commit("many files")


def test_reader_holds_a_bounded_number_of_files_and_bundles_are_unchanged(
    repo: GitRepo, tmp_path: Path
) -> None:
    files = MAX_SOURCES * 2 + 5
    many_files(repo, files, 6)
    scope: ScopeDiff = resolve_scope(
        repo.root, ScopeRequest("branch", "main"), runner=GitRunner(gh_path="/nonexistent/gh")
    )
    units = build_units(scope.diff_text, scope.read_new)
    assert len(units) >= files

    def provider() -> ContextProvider:
        return ContextProvider(scope, tool_ctx=ToolContext(repo.root, runner=scope.runner))

    bounded = provider()
    unbounded = provider()
    unbounded.reader.max_sources = 10**9  # the reader as it was: every file kept
    most = 0
    for unit in units:
        for level in (ContextLevel.FUNCTION, ContextLevel.FULL_FILE):
            assert bounded.bundle(unit, level).render() == unbounded.bundle(unit, level).render()
        most = max(most, bounded.reader.held())
    assert most <= MAX_SOURCES
    assert unbounded.reader.held() >= files


def live_file_diffs() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is FileDiff)


def test_unit_builder_holds_no_parsed_file_while_the_diff_arrives(repo: GitRepo) -> None:
    """With function metrics the units wait for the new versions: what was fed is parsed
    again at finish, run by run, not held parsed meanwhile; the units are the same."""
    many_files(repo, 30, 6)
    scope = resolve_scope(
        repo.root, ScopeRequest("branch", "main"), runner=GitRunner(gh_path="/nonexistent/gh")
    )
    text = scope.diff_text
    cuts = [0, *(m.start() + 1 for m in re.finditer(r"\ndiff ", text)), len(text)]
    runs = [text[a:b] for a, b in itertools.pairwise(cuts)]
    assert len(runs) >= 30 and "".join(runs) == text
    builder = UnitBuilder(ReviewSettings(), functions=True)
    before = live_file_diffs()
    for run in runs:
        builder.feed(run)
        builder.digest()
    assert live_file_diffs() == before
    units = builder.finish(text, scope.read_new, scope.prefetch_new)
    expected = build_units(text, scope.read_new, ReviewSettings(), prefetch=scope.prefetch_new)
    assert [u.model_dump() for u in units] == [u.model_dump() for u in expected]


def many_files_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: int
) -> tuple[list[int], list[str]]:
    """A model review of `files` new files, one request at a time; per reviewer request, how
    many files' prepared context (bundles and prompt) were alive; and every request's body."""
    repo = GitRepo(tmp_path / "repo")
    # Contexts over SMALL_FILE_TOKENS: one reviewer call per file, none batched.
    many_files(repo, files, 80)
    live = [0]  # PreparedFile is unhashable (a dataclass): counted by finalizers
    prepare = supervisor.prepare_file

    def gone() -> None:
        live[0] -= 1

    def tracked(*args: Any, **kwargs: Any) -> PreparedFile:
        prepared = prepare(*args, **kwargs)
        live[0] += 1
        weakref.finalize(prepared, gone)
        return prepared

    monkeypatch.setattr(supervisor, "prepare_file", tracked)
    alive: list[int] = []

    def on_request(role: str, path: str, body: dict[str, Any]) -> None:
        if role == "reviewer":
            alive.append(live[0])

    with ScriptedLLM(handler=ReviewScript(on_request=on_request)) as llm:
        settings = Settings(
            models=ModelSettings(model="openai/scripted", api_base=llm.base_url, api_key="k"),
            llm=LLMSettings(max_retries=0, timeout=20, max_concurrency=1),
            analyzers=AnalyzerSettings(ruff=False, bandit=False),
        )
        plan = plan_review(repo.root, ScopeRequest(ScopeKind.BRANCH, "main"), settings)
        review = run_review(plan, settings, model_hooks={"client": LLMClient(settings)})
        assert len(review.coverage.reviewed_files) == files
        reviewer = [
            str(b["messages"][-1]["content"]) for b in llm.requests if role_of(b) == "reviewer"
        ]
    return alive, reviewer


def test_reviewers_hold_the_prepared_files_of_calls_in_flight_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = 40
    alive, prompts = many_files_review(tmp_path, monkeypatch, files)
    assert len(prompts) == files
    assert sorted(prompts) == prompts  # the files' calls start in path order, as before
    # In flight (2 × a concurrency of 1), the read-ahead that decides whether to batch, and
    # the group being decided: never every file's.
    assert max(alive) <= 2 + BATCH_MIN_FILES + BATCH_FILES


def old_group_sizes(tokens: list[int]) -> list[list[int]]:
    """group_sizes as it was before it streamed (the reference)."""
    if len(tokens) < BATCH_MIN_FILES:
        return [[i] for i in range(len(tokens))]
    groups: list[list[int]] = []
    current: list[int] = []
    for i, size in enumerate(tokens):
        if size > SMALL_FILE_TOKENS:
            groups.append([i])
            continue
        if current and (
            len(current) >= BATCH_FILES or sum(tokens[c] for c in current) + size > BATCH_TOKENS
        ):
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups


@given(st.lists(st.integers(0, 2 * BATCH_TOKENS), max_size=40))
def test_streamed_groups_are_the_groups_it_always_made(tokens: list[int]) -> None:
    assert group_sizes(tokens) == old_group_sizes(tokens)
    streamed = list(stream_groups(iter(range(len(tokens))), tokens.__getitem__))
    assert streamed == old_group_sizes(tokens)


@given(st.lists(st.integers(0, 2 * BATCH_TOKENS), max_size=40))
def test_stream_groups_holds_few_items_read_and_not_yet_grouped(tokens: list[int]) -> None:
    """What a caller holds while groups are decided: the read-ahead, or the open batch and
    the item that closes it."""
    read = 0
    grouped = 0

    def items() -> Any:
        nonlocal read
        for i in range(len(tokens)):
            read += 1
            yield i

    for group in stream_groups(items(), tokens.__getitem__):
        grouped += len(group)
        assert read - grouped <= max(BATCH_MIN_FILES, BATCH_FILES + 1)
    assert grouped == len(tokens)
