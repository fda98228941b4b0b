"""Project memory at work in a review (issue 27): the context bundle's callers and similar code
(context/memory_context.py), the agent's tools (tools/memory_tools.py) and the deleted-symbol
check (review/deleted.py + deleted_memory.py) — on real git repositories, with memory built by
the real builder and the real embedding model."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from redline.agent.toolkit import ToolExecutor
from redline.config_models import Settings
from redline.context import ContextProvider
from redline.context.memory_context import SIMILAR_WAIT
from redline.diff import build_units
from redline.git.runner import GitRunner
from redline.git.scopes import ScopeDiff, ScopeRequest, resolve_scope
from redline.memory.build import build_memory
from redline.model import ContextLevel, ReviewUnit
from redline.review import deleted as deleted_mod
from redline.review.deleted import deleted_findings, find_uses
from redline.tools import READ_ONLY_TOOLS, ToolContext, build_tool_registry
from redline.tools.memory_tools import NOT_BUILT, project_memory

from gitrepo import GitRepo

SECRET = "sk-live-abcdefghijklmnop1234"

CLIENT = '''"""An HTTP client."""


class Client:
    def __init__(self, transport):
        self.transport = transport

    def send(self, payload, timeout=30):
        """Send a payload to the server and return its status and body."""
        data = encode(payload)
        response = self.transport.post("/v1/send", data, timeout=timeout)
        return response.status, response.body


def encode(payload):
    return repr(payload).encode()
'''
# The change: send now returns (body, status) — visible only where a caller unpacks it.
CLIENT_NEW = CLIENT.replace(
    "        return response.status, response.body\n",
    "        return response.body, response.status\n",
)
JOBS = f'''from lib.client import Client


def push_report(transport, report):
    """Push a report; the status decides whether to retry."""
    token = "{SECRET}"
    status, body = Client(transport).send({{"report": report, "token": token}})
    if status >= 500:
        raise RuntimeError(body)
    return body
'''
CRON = """from lib.client import Client


def nightly(transport):
    status, _ = Client(transport).send({"job": "nightly"})
    return status
"""
MAILER = '''"""Mail delivery."""


class Mailer:
    def __init__(self, transport):
        self.transport = transport

    def deliver(self, message, timeout=30):
        """Deliver a message to the mail server and return its status and body."""
        data = encode_message(message)
        response = self.transport.post("/v1/mail", data, timeout=timeout)
        return response.status, response.body


def encode_message(message):
    return repr(message).encode()
'''
UNRELATED = """def fibonacci(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
"""


def scope_of(repo: GitRepo) -> ScopeDiff:
    return resolve_scope(
        repo.root, ScopeRequest("branch", "main"), runner=GitRunner(gh_path="/nonexistent/gh")
    )


def unit_of(scope: ScopeDiff, path: str) -> ReviewUnit:
    units = {u.file_path: u for u in build_units(scope.diff_text, scope.read_new)}
    return units[path]


def built(repo: GitRepo) -> None:
    report = build_memory(repo.root, Settings())
    assert report.symbols if hasattr(report, "symbols") else True


@pytest.fixture
def client_repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("lib/__init__.py", "")
    repo.write("lib/client.py", CLIENT)
    repo.write("app/jobs.py", JOBS)
    repo.write("app/cron.py", CRON)
    repo.write("lib/mailer.py", MAILER)
    repo.write("lib/maths.py", UNRELATED)
    repo.commit("base")
    return repo


def change_send(repo: GitRepo, *, drop_cron: bool = False) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("lib/client.py", CLIENT_NEW)
    if drop_cron:
        # After memory was built: its index still names nightly() as a caller.
        repo.git("rm", "-q", "app/cron.py")
    repo.commit("send returns body first")


def sections(rendered: str) -> dict[str, str]:
    out = {}
    for part in re.split(r"^### ", rendered, flags=re.MULTILINE)[1:]:
        title, _, body = part.partition("\n")
        out[title] = body
    return out


# -- the context bundle ------------------------------------------------------------------------


def test_bundle_has_the_changed_functions_caller_and_similar_code(client_repo: GitRepo) -> None:
    built(client_repo)
    change_send(client_repo)
    scope = scope_of(client_repo)
    provider = ContextProvider(scope, token_budget=6000)
    bundle = provider.bundle(unit_of(scope, "lib/client.py"), ContextLevel.FUNCTION)
    rendered = bundle.render()
    shown = sections(rendered)
    callers = [t for t in shown if t.startswith("app/jobs.py ") and "caller of send" in t]
    assert callers == ["app/jobs.py lines 4-10: caller of send (project memory)"], list(shown)
    body = shown[callers[0]]
    assert "status, body = Client(transport).send(" in body
    # The caller's body held a secret: masked like every section.
    assert SECRET not in rendered and "token = " in body
    similar = [t for t in shown if "similar to Client.send" in t]
    assert similar and similar[0].startswith("lib/mailer.py lines 8-12: similar to Client.send ")
    assert re.search(r"\(project memory, similarity 0\.\d\d\)$", similar[0])
    assert not any("lib/maths.py" in t for t in shown)  # nothing alike: not shown
    assert bundle.tokens <= 6000 and not bundle.omitted
    assert provider.memory is not None and len(provider.memory.reads.per_unit) == 1


class CountingEmbedder:
    """The real model, counting the texts it is given."""

    def __init__(self) -> None:
        from redline.memory.embed import load_embedder

        self.real = load_embedder()
        self.name, self.dim = self.real.name, self.real.dim
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts += list(texts)
        return self.real.embed(texts)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingEmbedder:
    """Every embedding memory reading asks for, counted (the query cache emptied first)."""
    from collections import OrderedDict

    from redline.memory import embed, query

    counter = CountingEmbedder()
    monkeypatch.setattr(embed, "load_embedder", lambda: counter)
    monkeypatch.setattr(query, "_QUERY_VECTORS", OrderedDict())
    return counter


def test_similar_code_of_a_function_memory_holds_embeds_nothing(
    client_repo: GitRepo, counting: CountingEmbedder
) -> None:
    """A changed function memory indexed: its stored vector finds similar code (the version
    indexed), no embedding in the review; a function memory does not have is embedded."""
    built(client_repo)
    change_send(client_repo)
    counting.texts.clear()  # the build's
    scope = scope_of(client_repo)
    provider = ContextProvider(scope, token_budget=6000)
    bundle = provider.bundle(unit_of(scope, "lib/client.py"), ContextLevel.FUNCTION)
    similar = [t for t in sections(bundle.render()) if "similar to Client.send" in t]
    assert similar and similar[0].startswith("lib/mailer.py lines 8-12: similar to Client.send ")
    assert counting.texts == []

    # A function added by the change: not in memory, so its text is embedded (once).
    client_repo.write(
        "lib/client.py",
        CLIENT_NEW
        + '\n\ndef resend(client, payload):\n    """Send the payload again."""\n'
        + "    return client.send(payload)\n",
    )
    client_repo.commit("resend")
    scope = scope_of(client_repo)
    provider = ContextProvider(scope, token_budget=6000)
    provider.bundle(unit_of(scope, "lib/client.py"), ContextLevel.FUNCTION)
    assert len(counting.texts) == 1 and "resend" in counting.texts[0], counting.texts


def test_warmed_up_answers_give_the_same_bundle(client_repo: GitRepo) -> None:
    built(client_repo)
    change_send(client_repo)
    scope = scope_of(client_repo)
    unit = unit_of(scope, "lib/client.py")
    cold = ContextProvider(scope).bundle(unit, ContextLevel.FUNCTION)
    provider = ContextProvider(scope)
    provider.warm_memory([unit])
    warm = provider.bundle(unit, ContextLevel.FUNCTION)
    assert warm.render() == cold.render()
    assert provider.memory is not None and provider.memory.reads.warm_ms > 0


def test_a_bundle_does_not_wait_for_slow_similar_code(client_repo: GitRepo) -> None:
    built(client_repo)
    change_send(client_repo)
    scope = scope_of(client_repo)
    unit = unit_of(scope, "lib/client.py")
    provider = ContextProvider(scope)
    assert provider.memory is not None
    memory = provider.memory.memory
    release = threading.Event()

    def slow_similar(*args: object, **kwargs: object) -> list[object]:
        release.wait(20)  # the local model on a very busy machine
        return []

    memory.similar = slow_similar  # type: ignore[method-assign]
    provider.warm_memory([unit])
    started = time.monotonic()
    bundle = provider.bundle(unit, ContextLevel.FUNCTION)
    waited = time.monotonic() - started
    release.set()
    assert waited < SIMILAR_WAIT + 2.0
    titles = list(sections(bundle.render()))
    assert any(t.startswith("app/jobs.py ") and "caller of send" in t for t in titles)
    assert any(
        o.startswith("similar to Client.send (project memory): not ready after 1 s")
        for o in bundle.omitted
    ), bundle.omitted


def test_a_caller_gone_since_the_build_is_skipped(client_repo: GitRepo) -> None:
    built(client_repo)
    change_send(client_repo, drop_cron=True)
    scope = scope_of(client_repo)
    bundle = ContextProvider(scope).bundle(unit_of(scope, "lib/client.py"), ContextLevel.FUNCTION)
    titles = list(sections(bundle.render()))
    assert any(t.startswith("app/jobs.py ") for t in titles)
    assert not any("app/cron.py" in t for t in titles)
    assert not any("cron" in o for o in bundle.omitted)


def test_over_budget_memory_context_is_named_in_omitted(client_repo: GitRepo) -> None:
    built(client_repo)
    change_send(client_repo)
    scope = scope_of(client_repo)
    unit = unit_of(scope, "lib/client.py")
    bare = ContextProvider(scope, use_memory=False).bundle(unit, ContextLevel.FUNCTION)
    # Room for the diff and the enclosing function only.
    tight = ContextProvider(scope, token_budget=bare.tokens + 5).bundle(unit, ContextLevel.FUNCTION)
    assert not any("project memory" in t for t in sections(tight.render()))
    assert sum(s.tokens for s in tight.sections) <= bare.tokens + 5
    assert any("caller of send (project memory) of app/" in o for o in tight.omitted)
    assert any("similar to Client.send (project memory" in o for o in tight.omitted)


def test_without_memory_the_bundle_is_unchanged(client_repo: GitRepo) -> None:
    change_send(client_repo)
    scope = scope_of(client_repo)
    unit = unit_of(scope, "lib/client.py")
    with_memory = ContextProvider(scope).bundle(unit, ContextLevel.FUNCTION)
    without = ContextProvider(scope, use_memory=False).bundle(unit, ContextLevel.FUNCTION)
    assert with_memory.render() == without.render()
    assert not any("memory" in o for o in with_memory.omitted)
    assert "project memory" not in with_memory.render()


# -- the agent's tools -----------------------------------------------------------------------------


async def test_memory_tools_through_the_registry(client_repo: GitRepo) -> None:
    built(client_repo)
    ctx = ToolContext(client_repo.root, settings=Settings())
    registry = build_tool_registry(ctx)
    assert {"callers", "similar_code", "search_memory"} <= set(READ_ONLY_TOOLS)
    assert {"callers", "similar_code", "search_memory"} <= set(registry.names)
    run = ToolExecutor(registry).run

    result = await run("callers", {"symbol": "Client.send"})
    assert result.ok, result.content
    lines = result.content.splitlines()
    assert lines[0] == "2 functions that call send (project memory):"
    assert any(
        line.startswith("app/jobs.py:4-10 function push_report — calls send") for line in lines
    )
    assert any(line.startswith("app/cron.py:4-6 function nightly") for line in lines)
    assert SECRET not in result.content
    one = await run("callers", {"symbol": "send", "limit": 1})
    assert one.content.startswith("1 functions that call send")
    assert not (await run("callers", {"symbol": "send", "limit": 500})).ok  # over the schema's max
    assert not (await run("callers", {"symbol": "x; rm -rf /"})).ok

    similar = await run("similar_code", {"path": "lib/client.py", "name": "Client.send"})
    assert similar.ok, similar.content
    first_hit = similar.content.splitlines()[1]
    assert first_hit.startswith("lib/mailer.py:8-12 method Mailer.deliver")
    assert "Client.send —" not in similar.content  # not itself
    by_code = await run("similar_code", {"code": "def fib(n):\n    a, b = 0, 1\n    return a"})
    assert by_code.ok and by_code.content.splitlines()[1].startswith("lib/maths.py")
    assert not (await run("similar_code", {})).ok

    found = await run("search_memory", {"query": "deliver a message to the mail server"})
    assert found.ok and "Mailer.deliver" in found.content.splitlines()[1]
    for hostile in (
        '"; DROP TABLE symbols; --',
        'NEAR(send deliver) OR "unterminated',
        "* AND NOT ^ {col}:x",
        "\u202edeliver\u200b",
        "x" * 300,
    ):
        answer = await run("search_memory", {"query": hostile, "limit": 3})
        assert answer.ok, (hostile, answer.content)
        assert len(answer.content.splitlines()) <= 2 * 3 + 2
        assert "\u202e" not in answer.content
    assert not (await run("search_memory", {"query": "two\nlines"})).ok
    assert not (await run("search_memory", {"query": "x" * 301})).ok


async def test_memory_tools_say_memory_is_not_built(client_repo: GitRepo) -> None:
    ctx = ToolContext(client_repo.root, settings=Settings())
    run = ToolExecutor(build_tool_registry(ctx, READ_ONLY_TOOLS)).run
    for name, args in (
        ("callers", {"symbol": "send"}),
        ("similar_code", {"code": "def f(): pass"}),
        ("search_memory", {"query": "send"}),
    ):
        result = await run(name, args)
        assert result.ok and result.content == NOT_BUILT
    assert NOT_BUILT == (
        "project memory is not built for this repository (run `redline memory build`)"
    )
    assert project_memory(ctx) is None


# -- deleted-symbol checks -------------------------------------------------------------------------

HELPERS = """def slugify(title):
    return title.lower().replace(" ", "-")


def shout(text):
    return text.upper() + "!"


def orphan_helper(x):
    return x
"""


def deleted_repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "del")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/helpers.py", HELPERS)
    repo.write(
        "pkg/views.py",
        "from pkg.helpers import slugify\n\n\ndef page(title):\n    return slugify(title)\n",
    )
    repo.write(
        "pkg/cli.py", "import pkg.helpers\n\n\ndef main():\n    print(pkg.helpers.shout('hi'))\n"
    )
    repo.write("docs/usage.md", "Call slugify(title) to make a slug.\n")
    repo.write("pyproject.toml", '[project.scripts]\nslug = "pkg.helpers:slugify"\n')
    repo.commit("base")
    return repo


def test_deleted_names_found_the_same_with_and_without_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = deleted_repo(tmp_path)
    build_memory(repo.root, Settings())
    repo.git("checkout", "-q", "-b", "feature")
    repo.git("rm", "-q", "pkg/helpers.py")
    # Changed after the build: memory's index of this file is stale, the file is read as it is.
    repo.write(
        "pkg/late.py", "from pkg.helpers import shout\n\n\ndef late():\n    return shout('x')\n"
    )
    repo.commit("drop helpers")
    scope = scope_of(repo)
    units = build_units(scope.diff_text, scope.read_new)

    grep_units = find_uses(units, scope)
    by_grep = deleted_findings(grep_units)

    def no_grep(*args: object, **kwargs: object) -> object:
        raise AssertionError("git grep ran although memory is built")

    monkeypatch.setattr(deleted_mod, "_grep", no_grep)
    opener_calls: list[int] = []

    def opener() -> object:
        from redline.memory.query import ProjectMemory

        opener_calls.append(1)
        return ProjectMemory.open(repo.root, Settings())

    memory_units = find_uses(units, scope, memory=opener)  # type: ignore[arg-type]
    by_memory = deleted_findings(memory_units)
    assert opener_calls == [1]
    assert [f.model_dump() for f in by_memory] == [f.model_dump() for f in by_grep]
    titles = sorted(f.title for f in by_memory)
    assert titles == [
        "`shout` is still used, but `pkg/helpers.py` is deleted",
        "`slugify` is still used, but `pkg/helpers.py` is deleted",
    ]
    where = {f.title.split("`")[1]: (f.file, f.line) for f in by_memory}
    assert where["slugify"] == ("pkg/views.py", 1)
    assert where["shout"] == ("pkg/cli.py", 5) or where["shout"][0] == "pkg/late.py"
    # The pyproject entry point (a file memory does not index) is found either way.
    uses = {(u.path, u.symbol) for unit in memory_units for u in unit.symbol_uses}
    assert ("pyproject.toml", "slugify") in uses and ("pkg/late.py", "shout") in uses


def test_deleted_names_fall_back_to_grep_without_memory(tmp_path: Path) -> None:
    repo = deleted_repo(tmp_path)
    repo.git("checkout", "-q", "-b", "feature")
    repo.git("rm", "-q", "pkg/helpers.py")
    repo.commit("drop helpers")
    scope = scope_of(repo)
    units = build_units(scope.diff_text, scope.read_new)
    from redline.memory.query import ProjectMemory

    def opener() -> ProjectMemory | None:
        return ProjectMemory.open(repo.root, Settings())

    with_opener = deleted_findings(find_uses(units, scope, memory=opener))
    assert [f.model_dump() for f in with_opener] == [
        f.model_dump() for f in deleted_findings(find_uses(units, scope))
    ]
    assert len(with_opener) == 2
