"""context/provider.py (with requested.py and repo_reader.py) against real git repositories:
levels, requests, budget, safety."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from redline.context import ContextBundle, ContextProvider
from redline.context.budget import merge_ranges, subtract_ranges
from redline.context.format import format_patch, module_header_end, split_lines
from redline.context.request import ContextRequest
from redline.diff import build_units
from redline.git.runner import GitRunner
from redline.git.scopes import ScopeDiff, ScopeRequest, resolve_scope
from redline.model import ContextLevel, ReviewUnit
from redline.tools import ToolContext

from gitrepo import GitRepo

SECRET = "sk-live-abcdefghijklmnop1234"
FILLER = "".join(f"\n\ndef filler_{i}(x):\n    return x + {i}\n" for i in range(40))
OLD = f'''"""Billing."""

import os
from decimal import Decimal

API_KEY = "{SECRET}"


class Service:
    def __init__(self, rate):
        self.rate = rate

    def total(self, items):
        if not items:
            return Decimal(0)
        count = len(items)
        assert count > 0
        subtotal = sum(items)
        return subtotal * self.rate

    def refund(self, amount):
        return -amount
{FILLER}
def far_away():
    return "the end"
'''
NEW = OLD.replace(
    "        return subtotal * self.rate\n",
    "        discount = Decimal(os.environ.get('DISCOUNT', '0'))\n"
    "        return (subtotal - discount) * self.rate\n",
)
CALLER = "from billing import Service\n\n\ndef run():\n    return Service(1).total([3])\n"


def line_of(text: str, needle: str) -> int:
    for n, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return n
    raise AssertionError(needle)


def branch_scope(repo: GitRepo) -> ScopeDiff:
    return resolve_scope(
        repo.root, ScopeRequest("branch", "main"), runner=GitRunner(gh_path="/nonexistent/gh")
    )


def units_of(scope: ScopeDiff) -> dict[str, ReviewUnit]:
    return {u.file_path: u for u in build_units(scope.diff_text, scope.read_new)}


@pytest.fixture
def billing(repo: GitRepo) -> GitRepo:
    repo.write("billing.py", OLD)
    repo.write("app/caller.py", CALLER)
    repo.write(".env", "DB_PASSWORD=hunter2hunter2\n")
    repo.commit("base")
    repo.checkout("-b", "feature")
    repo.write("billing.py", NEW)
    repo.commit("discount")
    return repo


def provider(repo: GitRepo, scope: ScopeDiff, tmp_path: Path, **kwargs: int) -> ContextProvider:
    ctx = ToolContext(repo.root, runner=scope.runner, report_dir=tmp_path / "reports")
    return ContextProvider(scope, tool_ctx=ctx, **kwargs)


def make(
    billing: GitRepo,
    tmp_path: Path,
    level: ContextLevel,
    requests: list[ContextRequest] | None = None,
    **kwargs: int,
) -> ContextBundle:
    scope = branch_scope(billing)
    unit = units_of(scope)["billing.py"]
    return provider(billing, scope, tmp_path, **kwargs).bundle(unit, level, requests or [])


def kinds(bundle: ContextBundle) -> list[str]:
    return [s.kind for s in bundle.sections]


def body(bundle: ContextBundle, kind: str) -> str:
    return "\n".join(s.text for s in bundle.sections if s.kind == kind)


# -- levels ---------------------------------------------------------------------------------------


def test_diff_only_numbers_new_lines(billing: GitRepo, tmp_path: Path) -> None:
    b = make(billing, tmp_path, ContextLevel.DIFF_ONLY)
    assert kinds(b) == ["diff"] and b.omitted == []
    diff = b.sections[0].text
    added = line_of(NEW, "return (subtotal - discount)")
    assert f"{added:>4} +|         return (subtotal - discount) * self.rate" in diff
    assert "__new hunk__" in diff and "__old hunk__" in diff
    assert "     -|         return subtotal * self.rate" in diff
    assert "self.rate = rate" not in b.render()  # __init__ is outside the diff context


def test_function_level_does_not_repeat_a_function_the_diff_shows_whole(
    billing: GitRepo, tmp_path: Path
) -> None:
    # Service.refund (2 lines) is inside the diff's own context lines: sending it again as a
    # "function" section would only repeat them.
    new = NEW.replace("        return -amount\n", "        return -abs(amount)\n")
    billing.write("billing.py", new)
    billing.commit("refund")
    b = make(billing, tmp_path, ContextLevel.FUNCTION)
    functions = [s.title for s in b.sections if s.kind == "function"]
    assert len(functions) == 1 and "Service.total" in functions[0]  # not Service.refund
    start = line_of(new, "def refund")
    assert f"{start:>4}  |     def refund(self, amount):" in b.sections[0].text


def test_function_level_has_whole_method_only(repo: GitRepo, tmp_path: Path) -> None:
    body_lines = [f"        step_{i} = amount + {i}" for i in range(12)]
    old = "\n".join(
        ["class Service:", "    def pay(self, amount):", *body_lines, "        return amount", ""]
    )
    old += FILLER
    new = old.replace("        step_6 = amount + 6", "        step_6 = amount - 6")
    repo.write("billing.py", old)
    repo.commit("base")
    repo.checkout("-b", "feature")
    repo.write("billing.py", new)
    repo.commit("change")
    scope = branch_scope(repo)
    unit = units_of(scope)["billing.py"]
    b = provider(repo, scope, tmp_path).bundle(unit, ContextLevel.FUNCTION, [])
    assert kinds(b) == ["diff", "function"]
    section = b.sections[1]
    start, end = line_of(new, "def pay"), line_of(new, "return amount")
    assert f"lines {start}-{end}" in section.title and "Service.pay" in section.title
    numbered = split_lines(section.text)
    assert numbered[0] == f"{start:>4}  |     def pay(self, amount):"
    assert numbered[-1] == f"{end:>4}  |         return amount"
    assert len(numbered) == end - start + 1
    assert "filler_0" not in section.text


def test_file_context_adds_header_and_window(billing: GitRepo, tmp_path: Path) -> None:
    b = make(billing, tmp_path, ContextLevel.FILE_CONTEXT)
    text = b.render()
    assert "import os" in text and "from decimal import Decimal" in text
    assert "def refund" in text  # within 40 lines of the change
    assert "far_away" not in text  # much further away
    assert b.tokens > 0 and b.omitted == []
    # Function and window overlap: shown once, merged.
    # once: in the function section (the diff's context lines start below it)
    assert text.count("def total(self, items):") == 1


def test_full_file(billing: GitRepo, tmp_path: Path) -> None:
    b = make(billing, tmp_path, ContextLevel.FULL_FILE, token_budget=20_000)
    whole = [s for s in b.sections if "whole file" in s.title]
    assert len(whole) == 1 and kinds(b) == ["diff", "file"]
    assert "far_away" in whole[0].text
    assert len(split_lines(whole[0].text)) == len(split_lines(NEW))


def test_no_parser_falls_back_to_hunk_margin(repo: GitRepo, tmp_path: Path) -> None:
    lines = [f"line {i}" for i in range(1, 101)]
    repo.write("notes.txt", "\n".join(lines) + "\n")
    repo.commit()
    repo.checkout("-b", "feature")
    lines[49] = "changed"
    repo.write("notes.txt", "\n".join(lines) + "\n")
    repo.commit()
    scope = branch_scope(repo)
    unit = units_of(scope)["notes.txt"]
    b = provider(repo, scope, tmp_path, hunk_margin=5).bundle(unit, ContextLevel.FUNCTION)
    assert kinds(b) == ["diff", "hunk"]
    assert "lines 45-55" in b.sections[1].title and "no parser" in b.sections[1].title


# -- requests -------------------------------------------------------------------------------------


def test_callers_found_across_files(billing: GitRepo, tmp_path: Path) -> None:
    b = make(billing, tmp_path, ContextLevel.DIFF_ONLY, [ContextRequest(kind="callers")])
    callers = body(b, "callers")
    assert "app/caller.py:5:" in callers and "Service(1).total([3])" in callers
    assert "billing.py" in callers and "(definition)" in callers
    explicit = make(
        billing, tmp_path, ContextLevel.DIFF_ONLY, [ContextRequest(kind="callers", target="run")]
    )
    assert "app/caller.py:4: def run():  (definition)" in body(explicit, "callers")


def test_callers_in_uncommitted_work_tree(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("billing.py", OLD)
    repo.write("app/caller.py", CALLER)
    repo.commit()
    repo.write("billing.py", NEW)
    scope = resolve_scope(repo.root, ScopeRequest("uncommitted"))
    unit = units_of(scope)["billing.py"]
    b = provider(repo, scope, tmp_path).bundle(
        unit, ContextLevel.FUNCTION, [ContextRequest(kind="callers", target="Service.total")]
    )
    assert "app/caller.py:5:" in body(b, "callers")
    assert "discount" in body(b, "function")


def test_previous_version_shows_old_code(billing: GitRepo, tmp_path: Path) -> None:
    req = [ContextRequest(kind="previous_version")]
    b = make(billing, tmp_path, ContextLevel.DIFF_ONLY, req, token_budget=20_000)
    [section] = [s for s in b.sections if s.kind == "previous_version"]
    assert "old-side line numbers" in section.title and "whole file" in section.title
    old_line = line_of(OLD, "return subtotal * self.rate")
    assert f"{old_line:>4}  |         return subtotal * self.rate" in section.text
    assert "discount" not in section.text


def test_previous_version_of_big_file_is_the_old_function(billing: GitRepo, tmp_path: Path) -> None:
    req = [ContextRequest(kind="previous_version")]
    b = make(billing, tmp_path, ContextLevel.DIFF_ONLY, req, token_budget=900)
    [section] = [s for s in b.sections if s.kind == "previous_version"]
    assert "old version of Service.total" in section.title
    assert "return subtotal * self.rate" in section.text and "far_away" not in section.text


def test_file_and_search_requests(billing: GitRepo, tmp_path: Path) -> None:
    reqs = [
        ContextRequest(kind="file", target="app/caller.py"),
        ContextRequest(kind="search", target="Decimal("),
    ]
    b = make(billing, tmp_path, ContextLevel.DIFF_ONLY, reqs)
    assert kinds(b) == ["diff", "file", "search"]
    assert "   5  |     return Service(1).total([3])" in body(b, "file")
    assert "billing.py:" in body(b, "search") and "Decimal(os.environ" in body(b, "search")


def test_named_function_in_another_file(billing: GitRepo, tmp_path: Path) -> None:
    b = make(
        billing, tmp_path, ContextLevel.DIFF_ONLY, [ContextRequest(kind="function", target="run")]
    )
    [section] = [s for s in b.sections if s.kind == "function"]
    assert section.title.startswith("app/caller.py lines 4-5") and "function run" in section.title


def test_dedupe_same_function_requested_twice(billing: GitRepo, tmp_path: Path) -> None:
    reqs = [
        ContextRequest(kind="function", target="Service.total"),
        ContextRequest(kind="function", target="total"),
        ContextRequest(kind="function"),
        ContextRequest(kind="callers", target="total"),
        ContextRequest(kind="callers", target="total"),
    ]
    b = make(billing, tmp_path, ContextLevel.FUNCTION, reqs)
    assert kinds(b) == ["diff", "function", "callers"]
    assert b.render().count("subtotal = sum(items)") == 2  # diff context + function, not more


def test_refused_requests_are_reported(billing: GitRepo, tmp_path: Path) -> None:
    reqs = [
        ContextRequest(kind="file", target="../outside.txt"),
        ContextRequest(kind="file", target=".git/config"),
        ContextRequest(kind="file", target="missing.py"),
        ContextRequest(kind="callers", target="not a symbol; rm -rf"),
    ]
    b = make(billing, tmp_path, ContextLevel.DIFF_ONLY, reqs)
    assert kinds(b) == ["diff"]
    joined = "\n".join(b.omitted)
    assert "'..' is not allowed" in joined and ".git directory is off limits" in joined
    assert "missing.py" in joined and "callers" in joined


# -- budget -------------------------------------------------------------------------------------


def test_tiny_budget_keeps_diff_and_lists_the_rest(billing: GitRepo, tmp_path: Path) -> None:
    reqs = [ContextRequest(kind="callers", target="total")]
    b = make(billing, tmp_path, ContextLevel.FULL_FILE, reqs, token_budget=10)
    assert kinds(b) == ["diff"]
    joined = "\n".join(b.omitted)
    assert "the diff alone" in joined
    assert "function Service.total" in joined and "Uses of total" in joined
    assert "whole file" in joined


def test_budget_keeps_priority_order(billing: GitRepo, tmp_path: Path) -> None:
    b = make(billing, tmp_path, ContextLevel.FULL_FILE, token_budget=550)
    assert kinds(b)[:2] == ["diff", "function"]
    assert any("whole file" in o for o in b.omitted)
    assert sum(s.tokens for s in b.sections) <= 550 + 50


# -- safety and odd content -----------------------------------------------------------------------


def test_secrets_redacted_and_env_refused(billing: GitRepo, tmp_path: Path) -> None:
    billing.write("config.py", 'PASSWORD_HINT = "none"\nDSN = "db://u@h/hunter2hunter2"\n')
    reqs = [
        ContextRequest(kind="file", target=".env"),
        ContextRequest(kind="file", target="./.ENV"),
        ContextRequest(kind="search", target="DB_PASSWORD"),
    ]
    b = make(billing, tmp_path, ContextLevel.FULL_FILE, reqs, token_budget=20_000)
    text = b.render()
    assert SECRET not in text and "[REDACTED" in text
    assert "hunter2hunter2" not in text
    assert any("secret file" in o for o in b.omitted)
    assert "DB_PASSWORD=" not in text  # grep never shows a line of .env


def test_env_value_literal_in_code_is_masked(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("db.py", "def connect():\n    return 1\n")
    repo.commit()
    repo.write(".env", "DB_PASSWORD=hunter2hunter2\n")
    repo.write("db.py", "def connect():\n    return open_db('hunter2hunter2')\n")
    scope = resolve_scope(repo.root, ScopeRequest("uncommitted"))
    unit = units_of(scope)["db.py"]
    b = provider(repo, scope, tmp_path).bundle(unit, ContextLevel.FULL_FILE)
    assert "hunter2hunter2" not in b.render()


def test_secret_file_unit_is_withheld(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("deploy.pem", "old\n")
    repo.commit()
    repo.write("deploy.pem", "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n")
    scope = resolve_scope(repo.root, ScopeRequest("uncommitted"))
    unit = units_of(scope)["deploy.pem"]
    b = provider(repo, scope, tmp_path).bundle(unit, ContextLevel.FULL_FILE)
    assert "MIIBOgIBAAJBAKj34" not in b.render()
    assert "content withheld" in b.sections[0].text


def test_non_utf8_and_binary(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("latin.py", b"def f():\n    return 'caf\xe9'\n")
    repo.write("blob.bin", b"\x00\x01\x02" * 10)
    repo.commit()
    repo.checkout("-b", "feature")
    repo.write("latin.py", b"def f():\n    return 'th\xe9'\n")
    repo.write("blob.bin", b"\x00\x03\x02" * 10)
    repo.commit()
    scope = branch_scope(repo)
    units = units_of(scope)
    p = provider(repo, scope, tmp_path)
    latin = p.bundle(units["latin.py"], ContextLevel.FULL_FILE)
    assert "not valid UTF-8" in latin.render() and "th\ufffd" in latin.render()
    binary = p.bundle(units["blob.bin"], ContextLevel.FULL_FILE)
    assert kinds(binary) == ["diff"] and "Binary files" in binary.sections[0].text
    assert any("binary file" in o for o in binary.omitted)


def test_deleted_file_and_new_file(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("gone.py", "def f():\n    return 1\n")
    repo.commit()
    repo.checkout("-b", "feature")
    (repo.root / "gone.py").unlink()
    repo.write("fresh.py", "def g():\n    return 2\n")
    repo.commit()
    scope = branch_scope(repo)
    units = units_of(scope)
    p = provider(repo, scope, tmp_path)
    gone = p.bundle(units["gone.py"], ContextLevel.FUNCTION)
    assert kinds(gone) == ["diff"] and any("no new version" in o for o in gone.omitted)
    fresh = p.bundle(
        units["fresh.py"], ContextLevel.FULL_FILE, [ContextRequest(kind="previous_version")]
    )
    assert any("new in this change" in o for o in fresh.omitted)
    assert "   2 +|     return 2" in fresh.render()


def test_digest_changes_iff_rendered_content_changes(billing: GitRepo, tmp_path: Path) -> None:
    a = make(billing, tmp_path, ContextLevel.FUNCTION)
    b = make(billing, tmp_path, ContextLevel.FUNCTION)
    assert a.render() == b.render() and a.digest() == b.digest()
    c = make(billing, tmp_path, ContextLevel.FILE_CONTEXT)
    assert c.render() != a.render() and c.digest() != a.digest()
    assert re.fullmatch(r"[0-9a-f]{64}", a.digest())


def test_render_fences_survive_backticks(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("doc.py", 'def f():\n    return "x"\n')
    repo.commit()
    repo.write("doc.py", 'def f():\n    return """```\n```"""\n')
    scope = resolve_scope(repo.root, ScopeRequest("uncommitted"))
    unit = units_of(scope)["doc.py"]
    rendered = provider(repo, scope, tmp_path).bundle(unit, ContextLevel.FUNCTION).render()
    assert "\n````\n" in rendered  # a fence longer than the code's own backtick runs


def test_files_read_once(billing: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scope = branch_scope(billing)
    unit = units_of(scope)["billing.py"]
    p = provider(billing, scope, tmp_path)
    calls: list[str] = []
    original = scope.read_old

    def counting(path: str) -> bytes | None:
        calls.append(path)
        return original(path)

    monkeypatch.setattr(scope, "read_old", counting)
    for _ in range(3):
        p.bundle(unit, ContextLevel.FUNCTION, [ContextRequest(kind="previous_version")])
    assert calls == ["billing.py"]


# -- pure helpers ---------------------------------------------------------------------------------


def test_range_arithmetic() -> None:
    assert merge_ranges([(5, 9), (1, 3), (4, 4), (20, 22)]) == [(1, 9), (20, 22)]
    assert subtract_ranges([(1, 20)], [(5, 8), (15, 30)]) == [(1, 4), (9, 14)]
    assert subtract_ranges([(5, 8)], [(1, 20)]) == []


def test_module_header_end() -> None:
    py = ["'''doc'''", "import os", "from x import (", "    a,", ")", "", "def f(): pass"]
    assert module_header_end(py) == 5
    go = ["package main", "", "import (", '  "fmt"', ")", "func main() {}"]
    assert module_header_end(go) == 5
    assert module_header_end(["x = 1"] * 30) == 10


def test_format_patch_without_hunks() -> None:
    text, fd = format_patch("diff --git a/a b/a\nold mode 100644\nnew mode 100755\n")
    assert fd is not None and "new mode 100755" in text


def test_long_function_falls_back_to_lines_around_the_change(repo: GitRepo, tmp_path: Path) -> None:
    body_lines = "".join(f"    v{i} = compute({i})\n" for i in range(300))
    repo.write("long.py", f"def long():\n{body_lines}    return v0\n")
    repo.commit()
    repo.write(
        "long.py", f"def long():\n{body_lines.replace('compute(150)', 'other(150)')}    return v0\n"
    )
    scope = resolve_scope(repo.root, ScopeRequest("uncommitted"))
    unit = units_of(scope)["long.py"]
    p = provider(repo, scope, tmp_path, token_budget=600, hunk_margin=5)
    b = p.bundle(unit, ContextLevel.FUNCTION)
    assert kinds(b) == ["diff", "hunk"] and b.omitted == []
    assert "lines 147-157: ±5 lines around the change in long" in b.sections[1].title


def test_symlinks_are_never_followed(repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("PRIVATE CONTENT\n")
    repo.write("a.py", "def f():\n    return 1\n")
    repo.commit()
    repo.write("a.py", "def f():\n    return 2\n")
    (repo.root / "link.txt").symlink_to(outside / "private.txt")
    (repo.root / "sub").symlink_to(outside)
    scope = resolve_scope(repo.root, ScopeRequest("uncommitted"))
    unit = units_of(scope)["a.py"]
    reqs = [
        ContextRequest(kind="file", target="link.txt"),
        ContextRequest(kind="file", target="sub/private.txt"),
        ContextRequest(kind="file", target=str(outside / "private.txt")),
    ]
    b = provider(repo, scope, tmp_path).bundle(unit, ContextLevel.DIFF_ONLY, reqs)
    assert "PRIVATE CONTENT" not in b.render()
    # A symlink reads as its link text, as git stores it; the target is never opened.
    assert body(b, "file").endswith(f"| {outside / 'private.txt'}")
    assert len(b.omitted) == 2  # sub/ is a symlink; the absolute path is outside the repository
