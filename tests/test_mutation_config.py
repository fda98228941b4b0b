"""`make mutation`'s settings name what exists: every guard module is mapped to test files that
are there, and every reviewed equivalent mutant names a mapped module and one of its functions
(scripts/mutation.py, scripts/mutation.toml, scripts/mutation-equivalents.toml). The mutation
run itself takes minutes and is not part of the test suite."""

from __future__ import annotations

import ast
import importlib.util
import io
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The modules issue 23 asks to be mutation-tested: every module of redaction/ and these.
GUARDS = [
    "server/redline/git/view.py",
    "server/redline/git/discovery.py",
    "server/redline/git/hardening.py",
    "server/redline/git/hardlinks.py",
    "server/redline/report/sanitize.py",
]


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_runner", ROOT / "scripts/mutation.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


runner = _runner()


def test_every_guard_module_is_mapped_to_existing_test_files() -> None:
    mapping = runner.load_mapping()
    redaction = sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "server/redline/redaction").glob("*.py")
    )
    assert set(GUARDS + redaction) <= set(mapping)
    for module, tests in mapping.items():
        assert (ROOT / module).is_file(), module
        assert tests, f"{module} has no tests"
        for test in tests:
            assert test.startswith("tests/test_") and (ROOT / test).is_file(), (module, test)


def test_every_equivalent_names_a_mapped_function_and_says_why() -> None:
    mapping = runner.load_mapping()
    for eq in runner.load_equivalents():
        assert eq.module in mapping, eq
        tree = ast.parse((ROOT / eq.module).read_text())
        names = set()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.ClassDef):
                names |= {
                    f"{node.name}.{n.name}"
                    for n in node.body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                }
        assert eq.function in names, eq
        # `after` is empty for a mutant that deletes its line (a keyword argument dropped).
        assert eq.before and eq.before != eq.after, eq
        assert len(eq.why.split()) >= 4, eq


def test_modules_are_chosen_by_path_or_directory() -> None:
    mapping = runner.load_mapping()
    assert runner.select(["server/redline/git/hardening.py"], mapping) == [
        "server/redline/git/hardening.py"
    ]
    redaction = runner.select(["server/redline/redaction/"], mapping)
    assert redaction and all(m.startswith("server/redline/redaction/") for m in redaction)
    assert runner.select([], mapping) == list(mapping)
    with pytest.raises(SystemExit, match="not a module listed"):
        runner.select(["server/redline/cli/main.py"], mapping)


def test_workspace_settings_point_mutmut_at_one_module_and_its_tests() -> None:
    text = runner._workspace_settings("server/redline/git/view.py", ["tests/test_a.py"])
    settings = tomllib.loads(text)["tool"]["mutmut"]
    assert settings["only_mutate"] == ["redline/git/view.py"]
    assert settings["pytest_add_cli_args_test_selection"] == ["tests/test_a.py"]


def test_deselected_tests_name_existing_test_functions() -> None:
    for node in runner.load_deselected():
        path, _, name = node.partition("::")
        assert (ROOT / path).is_file(), node
        assert f"def {name}(" in (ROOT / path).read_text(), node


def test_every_mutant_run_empties_redline_caches_before_each_test() -> None:
    # A mutant's process is forked from the one that ran the tests on the original code: an
    # answer cached there would be handed out without running the mutated code.
    text = runner._workspace_settings("server/redline/report/sanitize.py", ["tests/test_a.py"])
    args = tomllib.loads(text)["tool"]["mutmut"]["pytest_add_cli_args"]
    assert args[args.index("mutation_fresh_caches") - 1] == "-p"
    assert repr(str(ROOT / "scripts")) in runner._BOOT
    spec = importlib.util.spec_from_file_location(
        "mutation_fresh_caches", ROOT / "scripts/mutation_fresh_caches.py"
    )
    assert spec and spec.loader
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    from redline.report.sanitize import sanitize_inline, sanitize_markdown

    sanitize_markdown("<b>x</b> @cache-test")
    sanitize_inline("<b>y</b> @cache-test")
    assert sanitize_markdown.cache_info().currsize > 0
    plugin._clear_caches()
    assert sanitize_markdown.cache_info().currsize == 0
    assert sanitize_inline.cache_info().currsize == 0


def test_the_private_tmpdir_is_outside_the_checkout_and_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Below the checkout, a test's "directory outside any repository" was inside this one.
    seen: dict[str, str] = {}

    def fake_run(argv: list[str], **kwargs: object) -> object:
        env = kwargs["env"]
        assert isinstance(env, dict)
        seen["tmp"] = env["TMPDIR"]
        assert Path(env["TMPDIR"]).is_dir()
        return type("Done", (), {"returncode": 0})()

    monkeypatch.setattr(runner.subprocess, "run", fake_run)
    assert runner._mutmut(ROOT / ".mutation" / "x", io.BytesIO(), 1, []) == 0
    tmp = Path(seen["tmp"])
    assert not tmp.resolve().is_relative_to(ROOT)
    assert not tmp.exists()
