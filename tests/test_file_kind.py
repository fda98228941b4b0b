"""The per-file verdict (diff/file_kind.py), over generated paths: every suffix, its case,
nested and Unicode directories, Dockerfile and workflow names, shebangs."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redline.diff.file_kind import (
    ANALYZER_LANGUAGES,
    LANGUAGES,
    files_for,
    kind_of,
    kind_with_content,
    path_language,
    takes,
)
from redline.diff.functions import language_for
from redline.diff.tags import path_tags
from redline.model import Tag

SUFFIXES = {
    ".py": "python",
    ".pyi": "python",
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
OTHER_SUFFIXES = (".c", ".rb", ".zsh", ".yml", ".yaml", ".json", ".md", ".txt", ".toml", "")

# A path component: any characters but "/" and NUL, not "." or "..", never empty.
component = (
    st.text(st.characters(exclude_characters="/\0"), min_size=1, max_size=12)
    .filter(lambda c: c not in (".", ".."))
    .map(lambda c: c.lstrip("."))
    .filter(bool)
)
dirs = st.lists(component, max_size=5)
# A stem that neither names a Dockerfile nor ends in a dot (a trailing dot would be the suffix's).
stem = component.filter(
    lambda s: (
        not s.lower().startswith(("dockerfile", "containerfile"))
        and not s.lower().endswith(".dockerfile")
        and not s.endswith(".")
    )
)


def _path(directories: list[str], name: str) -> str:
    return "/".join([*directories, name])


@given(dirs, stem, st.sampled_from(sorted(SUFFIXES)))
@example(["ünïcødé", "深い", "a b"], "module", ".py")
@example([".github", "workflows"], "release", ".sh")
def test_every_suffix_gives_its_language_in_any_folder(
    directories: list[str], name: str, suffix: str
) -> None:
    path = _path(directories, name + suffix)
    kind = kind_of(path)
    assert kind.language == SUFFIXES[suffix]
    assert kind.syntax == language_for(path)  # the unit's language stays what it was
    assert kind.tags == frozenset(path_tags(path))


@given(dirs, stem, st.sampled_from(sorted(SUFFIXES)))
def test_a_suffix_in_another_case_is_not_one_the_tools_read(
    directories: list[str], name: str, suffix: str
) -> None:
    upper = suffix.upper()
    path = _path(directories, name + upper)
    if not path.endswith((".py", ".pyi")):  # a stem ending in ".py" before ".PY"
        assert kind_of(path).language is None


@given(dirs, stem.filter(lambda s: "." not in s), st.sampled_from(OTHER_SUFFIXES))
@example(["src"], "run", "")
def test_other_suffixes_have_no_analyzer_language(
    directories: list[str], name: str, suffix: str
) -> None:
    if directories[:2] == [".github", "workflows"] and len(directories) == 2:
        directories = ["src", *directories]
    path = _path(directories, name + suffix)
    if path.endswith(("/action.yml", "/action.yaml")) or path in ("action.yml", "action.yaml"):
        return
    kind = kind_of(path)
    assert kind.language is None
    assert kind.analyzers == frozenset()


@given(dirs, st.text(st.characters(exclude_characters="/\0"), max_size=20))
def test_ruff_and_bandit_take_exactly_the_files_they_took_before(
    directories: list[str], name: str
) -> None:
    path = _path(directories, name or "x")
    before = path.endswith((".py", ".pyi"))  # the old analyzers/jobs.py rule
    assert takes("ruff", kind_of(path)) is before
    assert takes("bandit", kind_of(path)) is before


CASES = st.sampled_from(
    ["Dockerfile", "dockerfile", "DOCKERFILE", "Containerfile", "containerfile"]
)


@given(dirs, CASES)
def test_dockerfiles_by_name_in_any_case(directories: list[str], name: str) -> None:
    assert path_language(_path(directories, name)) == "dockerfile"


@example([], "go", "Dockerfile")  # another language's suffix after it (found by hypothesis)
@example([], "bash", "dockerfile")
@given(
    dirs,
    # `Dockerfile.py` stays Python: ruff and bandit were always given every `.py` file.
    component.filter(lambda s: "." not in s and s not in ("py", "pyi")),
    st.sampled_from(["Dockerfile", "dockerfile"]),
)
def test_dockerfile_with_a_variant_before_or_after(
    directories: list[str], variant: str, base: str
) -> None:
    assert path_language(_path(directories, f"{base}.{variant}")) == "dockerfile"
    assert path_language(_path(directories, f"{variant}.{base}")) == "dockerfile"
    assert path_language(_path(directories, f"{variant}.Dockerfile")) == "dockerfile"


@pytest.mark.parametrize("name", ["Dockerfile.dockerignore", ".dockerignore", "docker-compose.yml"])
def test_files_next_to_a_dockerfile_are_not_one(name: str) -> None:
    assert path_language(name) is None


@given(
    component.filter(lambda s: "/" not in s and not s.endswith(".")),
    st.sampled_from([".yml", ".yaml"]),
)
def test_workflows_only_where_github_reads_them(name: str, suffix: str) -> None:
    assert path_language(f".github/workflows/{name}{suffix}") == "github-workflow"
    assert path_language(f".github/workflows/sub/{name}{suffix}") is None  # not read by GitHub
    assert path_language(f"src/.github/workflows/{name}{suffix}") is None
    assert path_language(f".github/{name}{suffix}") is None


@given(dirs)
def test_action_metadata_in_any_folder(directories: list[str]) -> None:
    for name in ("action.yml", "action.yaml"):
        assert path_language(_path(directories, name)) == "github-workflow"
    assert path_language(_path(directories, "Action.yml")) is None


SHELL_SHEBANGS = st.sampled_from(
    [
        b"#!/bin/sh",
        b"#!/bin/bash",
        b"#!/usr/bin/env bash",
        b"#!/usr/bin/env -S bash -e",
        b"#! /bin/sh -eu",
        b"#!/usr/local/bin/zsh",
        b"#!/bin/dash\r",
        b"#!/usr/bin/env ksh",
    ]
)
OTHER_SHEBANGS = st.sampled_from(
    [b"#!/usr/bin/env python3", b"#!/usr/bin/node", b"#!/bin/bashful", b"# not a shebang", b""]
)


@given(dirs, component.filter(lambda s: "." not in s), SHELL_SHEBANGS, st.binary(max_size=60))
def test_an_extensionless_file_with_a_shell_shebang_is_shell(
    directories: list[str], name: str, shebang: bytes, rest: bytes
) -> None:
    path = _path(directories, name)
    if kind_of(path).language is not None:  # "Dockerfile": its name says more than a first line
        return
    kind = kind_with_content(path, shebang + b"\n" + rest)
    assert kind.language == "shell"
    assert "shellcheck" in kind.analyzers
    assert kind_with_content(path + ".txt", shebang + b"\n").language is None
    assert kind_of(path).language is None  # the path alone does not say


@given(dirs, component.filter(lambda s: "." not in s), OTHER_SHEBANGS)
def test_other_first_lines_are_not_shell(directories: list[str], name: str, first: bytes) -> None:
    path = _path(directories, name)
    if kind_of(path).language is None:
        assert kind_with_content(path, first + b"\necho hi\n").language is None


@pytest.mark.parametrize(
    ("path", "searched"),
    [
        ("lib/mod.py", True),
        ("stubs/builtins.pyi", False),
        ("types/index.d.ts", False),
        ("src/index.ts", True),
        ("vendor/lib/x.go", False),
        ("api/service_pb2.py", False),
        ("mypy/typeshed/stdlib/os.pyi", False),
    ],
)
def test_which_deletions_are_searched(path: str, searched: bool) -> None:
    assert kind_of(path).names_searched is searched


def test_every_analyzer_names_known_languages() -> None:
    for languages in ANALYZER_LANGUAGES.values():
        assert languages <= set(LANGUAGES)
    kinds = [kind_of(p) for p in ("a.py", "b.ts", "c.go", "Dockerfile", ".github/workflows/ci.yml")]
    assert files_for("ruff", kinds) == ["a.py"]
    assert files_for("oxlint", kinds) == ["b.ts"]
    assert files_for("hadolint", kinds) == ["Dockerfile"]
    assert files_for("zizmor", kinds) == [".github/workflows/ci.yml"]
    assert files_for("no-such-analyzer", kinds) == []


def test_the_verdict_carries_the_skip_its_tags_decide() -> None:
    assert kind_of("uv.lock").skip_reason == "lockfile: generated by a package manager"
    assert kind_of("node_modules/x/index.js").unread
    assert Tag.VENDORED in kind_of("node_modules/x/index.js").tags
    assert kind_of("src/app.py").skip_reason is None
