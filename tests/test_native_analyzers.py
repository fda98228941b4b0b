"""The native analyzers of issue 26 — oxlint, shellcheck, hadolint, zizmor — end to end: the
installed CLI on real git repositories (findings on the changed lines only, coverage, turning
one off), a change that plants tool configuration meant to run code or silence findings, and
a missing, crashing or hanging tool beside ruff."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redline.analyzers import kinds, run_analyzers
from redline.config_models import AnalyzerSettings

from gitrepo import GitRepo
from real_clients import REDLINE, client_env

NATIVE = ("oxlint", "shellcheck", "hadolint", "zizmor")

# Each base file has a problem on an unchanged line; the change adds one more.
BASE = {
    "web/app.ts": "export function first(x: number): boolean {\n  debugger;\n  return x > 0;\n}\n",
    "scripts/deploy.sh": '#!/bin/bash\nfor f in $(ls *.txt); do echo "$f"; done\n',
    "Dockerfile": "FROM python:3.12\nRUN cd /srv && make\n",
    ".github/workflows/ci.yml": textwrap.dedent(
        """\
        on: push
        jobs:
          build:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/setup-python@v5
        """
    ),
}
ADDED = {
    "web/app.ts": "export function second(x: number): boolean {\n  return x == NaN;\n}\n",
    "scripts/deploy.sh": 'cd /tmp\nrm -rf "$TARGET"/*\n',
    "Dockerfile": "FROM ubuntu\nRUN sudo apt-get update\n",
    ".github/workflows/triage.yml": textwrap.dedent(
        """\
        on:
          issues:
          pull_request_target:
        jobs:
          triage:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/checkout@v4
                with:
                  ref: ${{ github.event.pull_request.head.ref }}
              - run: echo "${{ github.event.issue.title }}"
              - uses: someone/label-action@v2
        """
    ),
}


def _repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "r")
    for path, text in BASE.items():
        repo.write(path, text)
    repo.commit("base")
    for path, text in ADDED.items():
        old = BASE.get(path, "")
        repo.write(path, old + text)
    repo.git("add", "-A")  # the new workflow is a change too
    return repo


def _review(repo: GitRepo, tmp_path: Path, *extra: str, **env: str) -> dict[str, Any]:
    proc = subprocess.run(
        [str(REDLINE), "review", "--repo", str(repo.root), "--format", "json", *extra],
        env=client_env(tmp_path, **env),
        capture_output=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    review: dict[str, Any] = json.loads(proc.stdout)
    return review


def _by_tool(review: dict[str, Any]) -> dict[str, set[tuple[str, int, str]]]:
    out: dict[str, set[tuple[str, int, str]]] = {}
    for f in review["findings"]:
        for source in f["sources"]:
            tool, rule = source.split(":", 1)
            out.setdefault(tool, set()).add((f["file"], f["line"], rule))
    return out


def test_each_kind_of_change_gets_offline_findings_on_its_changed_lines_only(
    tmp_path: Path,
) -> None:
    review = _review(_repo(tmp_path), tmp_path)
    found = _by_tool(review)
    assert ("web/app.ts", 6, "eslint/use-isnan") in found["oxlint"]
    assert ("scripts/deploy.sh", 3, "SC2164") in found["shellcheck"]
    assert ("scripts/deploy.sh", 4, "SC2115") in found["shellcheck"]
    assert ("Dockerfile", 3, "DL3006") in found["hadolint"]
    assert ("Dockerfile", 4, "DL3004") in found["hadolint"]
    triage = ".github/workflows/triage.yml"
    assert (triage, 11, "template-injection") in found["zizmor"]
    assert (triage, 3, "dangerous-triggers") in found["zizmor"]
    # GitHub's own action at a tag is allowed (Redline's pinning policy); a third party's is not.
    assert (triage, 8, "unpinned-uses") not in found["zizmor"]
    assert (triage, 12, "unpinned-uses") in found["zizmor"]
    # The base's own problems (unchanged lines) are not the change's: debugger on line 2,
    # `ls` in a for loop, `cd` in RUN, the unpinned setup-python of ci.yml (unchanged file).
    assert not [f for f in found["oxlint"] if f[1] < 5]
    assert not [f for f in found["shellcheck"] if f[1] < 3]
    # SC2164 says what goes wrong, not only shellcheck's rule link (its body had nothing more).
    (cd,) = [f for f in review["findings"] if f["sources"] == ["shellcheck:SC2164"]]
    assert cd["comment"].startswith("When the directory is missing"), cd["comment"]
    assert not [f for f in found["hadolint"] if f[1] < 3]
    assert not [f for f in found["zizmor"] if f[0] != triage]
    # zizmor's findings are security findings.
    categories = {f["category"] for f in review["findings"] if f["sources"][0].startswith("zizmor")}
    assert categories == {"Security"}
    injection = next(f for f in review["findings"] if f["rule_id"] == "template-injection")
    assert injection["severity"] == "High"
    # No fix is offered that Redline cannot check parses (shellcheck's `|| exit` for SC2164).
    native = [f for f in review["findings"] if f["sources"][0].split(":")[0] in NATIVE]
    assert all(f["improved_code"] is None for f in native)


def test_coverage_names_each_with_version_files_findings_and_time(tmp_path: Path) -> None:
    review = _review(_repo(tmp_path), tmp_path)
    runs = {run["name"]: run for run in review["coverage"]["analyzers"]}
    expected_files = {"oxlint": 1, "shellcheck": 1, "hadolint": 1, "zizmor": 1}
    for name in NATIVE:
        run = runs[name]
        assert run["status"] == "ok", run
        assert run["version"], run
        assert run["files"] == expected_files[name]
        assert run["findings"] >= 1
        assert run["seconds"] is not None and run["seconds"] >= 0
    markdown = _review_text(_repo(tmp_path / "md"), tmp_path)
    assert "  - zizmor 1.32.0: ok, 1 file, 3 findings, " in markdown
    assert " s\n" in markdown.split("  - oxlint ", 1)[1]


def _review_text(repo: GitRepo, tmp_path: Path) -> str:
    proc = subprocess.run(
        [str(REDLINE), "review", "--repo", str(repo.root), "--format", "markdown"],
        env=client_env(tmp_path),
        capture_output=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode()


@pytest.mark.parametrize("name", NATIVE)
def test_turning_one_off_in_the_user_file_removes_it(tmp_path: Path, name: str) -> None:
    user = tmp_path / "user.toml"
    user.write_text(f"[analyzers]\n{name} = false\n", encoding="utf-8")
    review = _review(_repo(tmp_path), tmp_path, REDLINE_CONFIG=str(user))
    assert name not in {run["name"] for run in review["coverage"]["analyzers"]}
    assert name not in _by_tool(review)
    assert set(NATIVE) - {name} <= set(_by_tool(review))


def test_a_repository_cannot_turn_them_off(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    repo.write(".redline.toml", "[analyzers]\noxlint = false\nzizmor = false\n")
    repo.git("add", "-A")
    review = _review(repo, tmp_path)
    assert {"oxlint", "zizmor"} <= set(_by_tool(review))


# -- configuration planted by the change ---------------------------------------------------------


def _plant(repo: GitRepo, marker: Path) -> None:
    """Every tool configuration the change could bring: code that would write `marker` when
    run, and data that would silence every finding if it were read."""
    js = f"require('fs').writeFileSync({json.dumps(str(marker))}, 'ran');\nmodule.exports = {{}};\n"
    for name in (
        "eslint.config.js",
        "eslint.config.mjs",
        "oxlint.config.js",
        "web/oxlint.config.ts",
        "plugin.js",
        "web/plugin.js",
    ):
        repo.write(name, js)
    rc = {"jsPlugins": ["./plugin.js"], "rules": {"use-isnan": "off"}, "ignorePatterns": ["**"]}
    repo.write(".oxlintrc.json", json.dumps(rc))
    repo.write("web/.oxlintrc.json", json.dumps(rc))
    repo.write(".eslintignore", "*\n")
    repo.write(".gitignore", "*.ts\n*.sh\n")
    # A fake node and shell on every path a tool could look in: none of them is on its PATH.
    fake = f"#!/bin/sh\necho ran > {marker}\n"
    for name in ("node", "bin/node", "node_modules/.bin/node", "bin/bash", "bin/sh"):
        repo.write(name, fake)
        os.chmod(repo.root / name, 0o755)
    # shellcheck: checks off and sources followed outside the tree, if the rc were read.
    repo.write(".shellcheckrc", "disable=all\nexternal-sources=true\nsource-path=/\n")
    repo.write("scripts/.shellcheckrc", "disable=all\n")
    # hadolint: every rule ignored, in the project file and the user-level places.
    ignore_all = "ignored:\n" + "".join(f"  - DL{n}\n" for n in range(3000, 3062))
    repo.write(".hadolint.yaml", ignore_all)
    repo.write(".hadolint.yml", ignore_all)
    repo.write(".config/hadolint.yaml", ignore_all)
    # zizmor: every audit this change trips turned off.
    off = "rules:\n" + "".join(
        f"  {a}:\n    disable: true\n"
        for a in ("template-injection", "dangerous-triggers", "unpinned-uses")
    )
    repo.write("zizmor.yml", off)
    repo.write(".github/zizmor.yml", off)
    repo.git("add", "-A")


def test_planted_configuration_neither_runs_nor_silences(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    marker = tmp_path / "ran.marker"
    _plant(repo, marker)
    # The analyzer scratch directory holds these files (they are changed files): the tools
    # must not pick them up there either.
    found = _by_tool(_review(repo, tmp_path, PATH=f"{repo.root}/bin:.:{os.environ['PATH']}"))
    assert not marker.exists()
    assert ("web/app.ts", 6, "eslint/use-isnan") in found["oxlint"]
    assert ("scripts/deploy.sh", 3, "SC2164") in found["shellcheck"]
    assert ("Dockerfile", 4, "DL3004") in found["hadolint"]
    assert (".github/workflows/triage.yml", 11, "template-injection") in found["zizmor"]


def test_a_shell_source_directive_outside_the_tree_is_not_followed(tmp_path: Path) -> None:
    # A file outside the change that does not parse: a shellcheck that followed the
    # directive would read it and say so on the directive's line (SC1094).
    outside = tmp_path / "outside.sh"
    outside.write_text("V=1\nif then\n", encoding="utf-8")
    script = f"#!/bin/bash\n# shellcheck source={outside}\nsource {outside}\necho ok\n"
    outcome = run_analyzers(
        {"run.sh": script.encode(), ".shellcheckrc": b"external-sources=true\n"},
        {"run.sh": {1, 2, 3, 4}},
        AnalyzerSettings(ruff=False, bandit=False, timeout=5),
    )
    assert [(r.status, r.message) for r in outcome.runs if r.name == "shellcheck"] == [("ok", "")]
    assert outcome.findings == []


# -- a tool that is missing, crashes or hangs: said in coverage, the others' findings stand ------


def _script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_missing_crashing_and_hanging_tools_are_said_and_ruff_stands(tmp_path: Path) -> None:
    files = {
        "app.py": b"import subprocess\nsubprocess.run(cmd, shell=True)\n",
        "a.ts": b"if (x == NaN) {}\n",
        "b.sh": b"#!/bin/sh\ncd /tmp\n",
        "Dockerfile": b"FROM ubuntu\n",
        ".github/workflows/x.yml": ADDED[".github/workflows/triage.yml"].encode(),
    }
    lines = {path: set(range(1, 20)) for path in files}
    executables = {
        "oxlint": tmp_path / "missing-oxlint",
        "shellcheck": _script(tmp_path, "crash", "echo boom >&2; exit 7"),
        "hadolint": _script(tmp_path, "hang", "sleep 30"),
        "zizmor": _script(tmp_path, "garbage", "echo 'not json'"),
    }
    outcome = run_analyzers(files, lines, AnalyzerSettings(timeout=2), executables=executables)
    runs = {run.name: run for run in outcome.runs}
    assert runs["oxlint"].status == "missing" and "not found" in runs["oxlint"].message
    assert runs["shellcheck"].status == "failed" and "code 7: boom" in runs["shellcheck"].message
    assert runs["hadolint"].status == "failed" and "timed out" in runs["hadolint"].message
    assert runs["zizmor"].status == "failed" and "unreadable" in runs["zizmor"].message
    assert runs["ruff"].status == "ok"
    assert any(f.sources == ["ruff:S602"] for f in outcome.findings)


def test_the_timeout_bounds_the_whole_job_not_each_script(tmp_path: Path) -> None:
    import time

    files = {f"s{i}.sh": b"#!/bin/sh\necho\n" for i in range(12)}
    slow = _script(tmp_path, "slow", "sleep 1; echo '{\"comments\": []}'")
    started = time.monotonic()
    outcome = run_analyzers(
        files,
        {path: {1, 2} for path in files},
        AnalyzerSettings(ruff=False, bandit=False, timeout=2.5),
        executables={"shellcheck": slow},
    )
    elapsed = time.monotonic() - started
    run = next(r for r in outcome.runs if r.name == "shellcheck")
    assert (run.status, run.message) == ("failed", "timed out after 2.5 s")
    assert elapsed < 5  # 12 scripts of 1 s each, one a process: 6 s or more without the bound


def test_a_workflow_that_does_not_parse_is_said(tmp_path: Path) -> None:
    outcome = run_analyzers(
        {".github/workflows/x.yml": b"on: push\njobs: [\n"},
        {".github/workflows/x.yml": {1, 2}},
        AnalyzerSettings(ruff=False, bandit=False),
    )
    run = next(r for r in outcome.runs if r.name == "zizmor")
    assert run.status == "partial" and "could not parse" in run.message


def test_a_file_that_is_not_utf8_is_named_and_the_others_checked() -> None:
    files = {
        "a.ts": b"const s = '\xe9\xff';\nif (x == NaN) {}\n",
        "ok.ts": b"if (x == NaN) {}\n",
        ".github/workflows/a.yml": b"\xff\xfe on: [\n",
        ".github/workflows/b.yml": ADDED[".github/workflows/triage.yml"].encode(),
    }
    outcome = run_analyzers(
        files,
        {path: set(range(1, 20)) for path in files},
        AnalyzerSettings(ruff=False, bandit=False),
    )
    runs = {run.name: run for run in outcome.runs}
    assert runs["oxlint"].status == runs["zizmor"].status == "partial"
    assert "could not read a.ts: not UTF-8" in runs["oxlint"].message
    assert "could not read .github/workflows/a.yml: not UTF-8" in runs["zizmor"].message
    files_found = {f.file for f in outcome.findings}
    assert files_found == {"ok.ts", ".github/workflows/b.yml"}


def test_many_scripts_run_side_by_side_and_each_is_checked() -> None:
    # shellcheck and hadolint are single-threaded: their files run in one process per core.
    files = {f"s{i}.sh": b"#!/bin/sh\ncd /tmp\n" for i in range(13)}
    files.update({f"d{i}/Dockerfile": b"FROM ubuntu\n" for i in range(13)})
    outcome = run_analyzers(
        files,
        {path: {1, 2} for path in files},
        AnalyzerSettings(ruff=False, bandit=False, ast_grep=False),
    )
    assert {(r.name, r.status, r.files) for r in outcome.runs} == {
        ("shellcheck", "ok", 13),
        ("hadolint", "ok", 13),
    }
    assert sorted(f.file for f in outcome.findings) == sorted(files)


# -- which files each takes (stand-in for the per-file verdict) ---------------------------------


def test_each_takes_only_its_kind() -> None:
    paths = [
        "a.ts",
        "b.tsx",
        "c.mjs",
        "types.d.ts",
        "x.py",
        "run.sh",
        "lib.bash",
        "bin/tool",
        "zsh.sh",
        "Dockerfile",
        "docker/Dockerfile.dev",
        "api.Dockerfile",
        "Containerfile",
        ".github/workflows/ci.yml",
        ".github/workflows/sub/ci.yml",
        "action.yml",
        "sub/action.yaml",
        "config.yml",
        "README.md",
    ]
    heads = {"bin/tool": b"#!/usr/bin/env bash\n", "zsh.sh": b"#!/bin/zsh\n"}
    chosen = kinds.select(paths, lambda p: heads.get(p, b""))
    assert chosen == {
        "oxlint": ["a.ts", "b.tsx", "c.mjs"],
        "shellcheck": ["run.sh", "lib.bash", "bin/tool"],
        "hadolint": ["Dockerfile", "docker/Dockerfile.dev", "api.Dockerfile", "Containerfile"],
        "zizmor": [".github/workflows/ci.yml", "action.yml", "sub/action.yaml"],
    }


_names = st.text(st.sampled_from("abcDf.-_/"), min_size=1, max_size=20)


@given(_names, st.sampled_from(["", ".py", ".md", ".json", ".txt", ".yml"]))
def test_no_file_of_another_kind_is_taken(stem: str, suffix: str) -> None:
    path = stem + suffix
    name = path.rsplit("/", 1)[-1].lower()
    chosen = kinds.select([path], lambda p: b"")
    if not name.endswith((".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts")):
        assert chosen["oxlint"] == []
    if not name.endswith((".sh", ".bash")):
        assert chosen["shellcheck"] == []  # no suffix and no `#!`: not a script
    if "dockerfile" not in name and "containerfile" not in name:
        assert chosen["hadolint"] == []
    if not name.endswith((".yml", ".yaml")):
        assert chosen["zizmor"] == []


@given(
    st.sampled_from(["sh", "bash", "dash", "ksh", "zsh", "fish", "python3", "node"]), st.booleans()
)
def test_a_shebang_decides_a_script_without_a_suffix(shell: str, via_env: bool) -> None:
    head = (f"#!/usr/bin/env {shell}" if via_env else f"#!/bin/{shell}").encode() + b"\nx\n"
    taken = kinds.select(["tools/run"], lambda p: head)["shellcheck"] == ["tools/run"]
    assert taken == (shell in ("sh", "bash", "dash", "ksh"))


# -- the language server (headless client) -----------------------------------------------------


@pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")
async def test_the_language_server_publishes_oxlint_diagnostics(tmp_path: Path) -> None:
    from lsp_support import server_env, start_session, stop_session

    repo = GitRepo(tmp_path / "r")
    repo.write("web/app.ts", BASE["web/app.ts"])
    repo.commit("base")
    repo.write("web/app.ts", BASE["web/app.ts"] + ADDED["web/app.ts"])
    s = await start_session(repo.root, "vscode", server_env(tmp_path / "cache"))
    try:
        end = await s.finished(await s.review(scope="uncommitted"), timeout=60)
        assert end["state"] == "finished", end
        diags = s.client.diagnostics.get(s.uri("web/app.ts"), [])
        # 0-based: the changed line 6 (`x == NaN`), not the base's `debugger` on line 2.
        assert [d.range.start.line for d in diags] == [5]
        assert "NaN" in diags[0].message
    finally:
        await stop_session(s)


# -- the default rule selection, measured on real commits (benchmarks/analyzer_noise.py) --------


def test_oxlint_leaves_out_chai_assertions_and_unused_caught_errors() -> None:
    # knex's last 30 commits: 32 of oxlint's 41 findings were no-unused-expressions on chai
    # assertions (`expect(x).to.be.true`) or `ok ? resolve() : reject()`, the other 9
    # no-unused-vars on a `catch (_e)` parameter; none a real problem.
    files = {
        "t.spec.js": (
            b"expect(pool.destroyed).to.be.true;\n"
            b"err ? reject(err) : resolve(rows);\n"
            b"try { f(); } catch (_e) { g(); }\n"
            b"try { f(); } catch (e) { g(); }\n"
            b"const unused = 1;\n"
            b"if (x == NaN) {}\n"
        )
    }
    outcome = run_analyzers(
        files,
        {"t.spec.js": set(range(1, 7))},
        AnalyzerSettings(ruff=False, bandit=False, ast_grep=False),
    )
    assert sorted((f.line, f.rule_id) for f in outcome.findings) == [
        (5, "eslint/no-unused-vars"),
        (6, "eslint/use-isnan"),
    ]


def test_shellcheck_leaves_out_a_source_it_cannot_follow() -> None:
    # SC1090 ("can't follow non-constant source"), like SC1091: Redline never follows a source.
    files = {"t.sh": b'#!/bin/bash\nsource "$DIR/lib.sh"\nsource <(sed -n 1p "$0")\ncd /tmp\n'}
    outcome = run_analyzers(
        files, {"t.sh": {1, 2, 3, 4}}, AnalyzerSettings(ruff=False, bandit=False, ast_grep=False)
    )
    assert sorted((f.line, f.rule_id) for f in outcome.findings) == [(4, "SC2164")]


def test_zizmor_leaves_out_the_self_repository_style_audit() -> None:
    # self-repository (`uses: ./` could be spelled `$/`): 3 of 95 zizmor findings on the
    # measured commits (aiohttp, actions/checkout), all of them the documented local form.
    workflow = (
        b"on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        b"      - uses: ./\n      - uses: foo/bar@v1\n"
        b"  b:\n    uses: ./.github/workflows/reusable.yml\n"
    )
    files = {".github/workflows/ci.yml": workflow}
    outcome = run_analyzers(
        files,
        {".github/workflows/ci.yml": set(range(1, 11))},
        AnalyzerSettings(ruff=False, bandit=False, ast_grep=False),
    )
    assert sorted((f.line, f.rule_id) for f in outcome.findings) == [(8, "unpinned-uses")]


@pytest.mark.parametrize(
    ("uses", "reported"),
    [
        ("actions/checkout@v4", False),  # GitHub's own, at a tag
        ("actions/setup-python@main", False),
        ("github/codeql-action/init@v3", False),
        ("actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", False),
        ("someone/deploy-action@v1", True),  # a third party's tag can move
        ("someone/deploy-action@main", True),
        ("someone/deploy-action@11bd71901bbe5b1630ceea73d27597364c9af683", False),
        ("docker://alpine:latest", True),
    ],
)
def test_zizmor_pinning_policy_allows_githubs_own_actions_at_a_tag(
    uses: str, reported: bool
) -> None:
    """On 11 real repositories' last 30 commits, 58 of zizmor's 95 findings were GitHub's own
    actions at a version tag (benchmarks/analyzer_noise.py; judged debatable): Redline's own
    configuration asks a hash of third-party actions only."""
    workflow = (
        "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - uses: {uses}\n"
    ).encode()
    files = {".github/workflows/ci.yml": workflow}
    outcome = run_analyzers(
        files,
        {".github/workflows/ci.yml": set(range(1, 8))},
        AnalyzerSettings(ruff=False, bandit=False, ast_grep=False),
    )
    (run,) = [r for r in outcome.runs if r.name == "zizmor"]
    assert run.status == "ok", run.message
    found = [f.rule_id for f in outcome.findings if f.line == 7]
    assert (any(r.startswith("unpinned") for r in found)) == reported, found
