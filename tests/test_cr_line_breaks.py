"""A file whose lines end in a bare CR (classic Mac OS) is reviewed like its LF twin (issue 25):
the installed CLI in real repositories, the language server through a raw JSON-RPC client, and
the re-diffing of such a file's section (git/cr_breaks.py) on generated versions."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from raw_rpc import RawClient
from redline.diff.parse import parse_git_diff
from redline.git.cr_breaks import lf_content, lf_sections, split_lines

from gitrepo import GitRepo
from lsp_support import server_env
from real_clients import REDLINE, client_env

BEFORE = ["import yaml", "", "", "def load(s):", "    return yaml.load(s)", ""]
AFTER = [*BEFORE, "", "def run(x):", "    return eval(x)", ""]


def _review(repo: GitRepo, tmp_path: Path, *scope: str) -> dict[str, Any]:
    proc = subprocess.run(
        [str(REDLINE), "review", "--repo", str(repo.root), "--format", "json", "-q", *scope],
        env=client_env(tmp_path),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def _seen(review: dict[str, Any]) -> dict[str, Any]:
    """What a user reads, line endings aside."""
    return {
        "label": review["scope_label"],
        "findings": sorted(
            (f["file"], f["line"], f["end_line"], f["title"], f["existing_code"])
            for f in review["findings"]
        ),
        "reviewed": review["coverage"]["reviewed_files"],
        "skipped": review["coverage"]["skipped"],
    }


def _twins(tmp_path: Path, name: str, lines: list[str], base: list[str] | None) -> dict[str, Any]:
    seen = {}
    for kind, sep in (("lf", "\n"), ("cr", "\r")):
        repo = GitRepo(tmp_path / f"{name}-{kind}")
        repo.write("README.md", "base\n")
        if base is not None:
            repo.write("app/tool.py", sep.join(base))
        repo.commit("base")
        repo.write("app/tool.py", sep.join(lines))
        seen[kind] = _seen(_review(repo, tmp_path))
    return seen


def test_a_new_cr_file_is_reviewed_like_its_lf_twin(tmp_path: Path) -> None:
    seen = _twins(tmp_path, "new", BEFORE, None)
    assert seen["cr"] == seen["lf"]
    assert seen["cr"]["label"].endswith("1 file, +5 −0")
    assert [f[1] for f in seen["cr"]["findings"]] == [5]  # yaml.load, line 5


def test_a_changed_cr_file_reports_the_changed_lines_only(tmp_path: Path) -> None:
    seen = _twins(tmp_path, "changed", AFTER, BEFORE)
    assert seen["cr"] == seen["lf"]
    assert seen["cr"]["label"].endswith("1 file, +4 −0")
    # eval on line 9; the unchanged yaml.load on line 5 is not part of the change.
    assert [(f[1], f[3]) for f in seen["cr"]["findings"]] == [(9, "Use of `eval`")]


def test_a_committed_cr_file_in_a_commit_scope(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "commit")
    repo.write("app/tool.py", "\r".join(BEFORE))
    repo.commit("base")
    repo.write("app/tool.py", "\r".join(AFTER))
    repo.commit("add run")
    seen = _seen(_review(repo, tmp_path, "--commit", "HEAD"))
    assert [(f[1], f[3]) for f in seen["findings"]] == [(9, "Use of `eval`")]
    assert seen["label"].endswith("1 file, +4 −0"), seen["label"]


def test_the_language_server_puts_the_finding_on_its_line(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "lsp")
    repo.write("app/tool.py", "\r".join(BEFORE))
    repo.commit("base")
    text = "\r".join(AFTER)
    repo.write("app/tool.py", text)
    uri = (repo.root / "app" / "tool.py").as_uri()
    client = RawClient(server_env(tmp_path / "cache"), repo.root)
    try:
        client.initialize(repo.root)
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        answer = client.request(
            "workspace/executeCommand",
            {"command": "redline.review", "arguments": [{"scope": "uncommitted"}]},
        )
        task_id = answer["result"]["taskId"]
        client.wait_for(
            lambda m: (
                m.get("method") == "redline/reviewState"
                and m["params"].get("taskId") == task_id
                and m["params"]["state"] == "finished"
            ),
            timeout=60,
        )
        published = client.wait_for(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"]["diagnostics"]
            )
        )
    finally:
        client.close()
    (diagnostic,) = published["params"]["diagnostics"]
    assert diagnostic["message"].startswith("Use of `eval`")
    # LSP counts "\r" as a line break: `    return eval(x)` is line 8 (0-based), from column 4.
    assert diagnostic["range"]["start"] == {"line": 8, "character": 4}
    assert diagnostic["range"]["end"]["line"] == 8


# -- the re-diffing, on generated versions ---------------------------------------------------

_LINE = st.text(alphabet=st.sampled_from(list("ab +-\\@")), max_size=6)
_VERSION = st.lists(_LINE, max_size=12)


def _git_section(old: str, new: str) -> str:
    """The section git writes for two versions that are one line each (or none)."""
    head = "diff --git a/m.py b/m.py\nindex 1111111..2222222 100644\n--- a/m.py\n+++ b/m.py\n"
    body = ""
    for tag, text in (("-", old), ("+", new)):
        if text:
            line = text[:-1] if text.endswith("\n") else text
            body += f"{tag}{line}\n" + (
                "" if text.endswith("\n") else "\\ No newline at end of file\n"
            )
    old_n, new_n = int(bool(old)), int(bool(new))
    return head + f"@@ -{old_n},{old_n} +{new_n},{new_n} @@\n" + body


def _apply(old: list[str], text: str) -> list[str]:
    """The new version's lines: `old` patched with the parsed hunks of `text`."""
    (fd,) = parse_git_diff(text)
    out: list[str] = []
    at = 0
    for hunk in fd.hunks:
        start = hunk.old_start - 1 if hunk.old_count else hunk.old_start
        out += old[at:start]
        at = start
        for line in hunk.lines:
            tag, rest = line[:1], line[1:]
            if tag == " ":
                assert old[at] == rest
                out.append(rest)
                at += 1
            elif tag == "-":
                assert old[at] == rest
                at += 1
            elif tag == "+":
                out.append(rest)
    return out + old[at:]


@given(_VERSION, _VERSION, st.booleans(), st.booleans())
def test_a_cr_section_re_diffed_patches_old_into_new(
    old: list[str], new: list[str], old_final: bool, new_final: bool
) -> None:
    old_text = "\r".join(old) + ("\r" if old and old_final else "")
    new_text = "\r".join(new) + ("\r" if new and new_final else "")
    if "\r" not in old_text + new_text or old_text == new_text:
        return  # no bare CR to read, or no change for git to show
    rewritten = lf_sections(_git_section(old_text, new_text))
    assert "\r" not in rewritten
    old_lines, new_lines = split_lines(old_text), split_lines(new_text)
    assert _apply(old_lines, rewritten) == new_lines
    # Only what changed is a change: never more removed or added lines than a line diff needs.
    (fd,) = parse_git_diff(rewritten)
    added = sum(len(h.added) for h in fd.hunks)
    removed = sum(h.removed for h in fd.hunks)
    assert added - removed == len(new_lines) - len(old_lines)
    assert added <= len(new_lines) and removed <= len(old_lines)


@given(st.binary(max_size=40))
def test_lf_content_touches_only_cr_broken_files(data: bytes) -> None:
    converted = lf_content(data)
    assert converted is not None
    if b"\r" in data and b"\n" not in data[:-1]:
        assert b"\r" not in converted
        assert split_lines(data.decode("latin-1")) == split_lines(converted.decode("latin-1"))
    else:
        assert converted == data


def test_sections_of_other_files_are_left_as_git_wrote_them() -> None:
    crlf = _git_section("", "a\r\nb\r\n").replace(
        "@@ -0,0 +1,1 @@\n+a\r\nb\r\n", "@@ -0,0 +1,2 @@\n+a\r\n+b\r\n"
    )
    assert lf_sections(crlf) == crlf
    two_hunks = (
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\rb\n+a\rc\n@@ -9 +9 @@\n-x\n+y\n"
    )
    assert lf_sections(two_hunks) == two_hunks  # not the whole file: git's numbering kept
