"""diff/units.py against diffs produced by real git repositories."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from redline.config_models import ReviewSettings
from redline.diff import apply_rules, build_units, review_index
from redline.diff.header_paths import unquote_path
from redline.diff.parse import parse_git_diff
from redline.model import PatchType, ReviewUnit, Tag

from gitrepo import GitRepo


def reader(repo: GitRepo) -> Callable[[str], bytes | None]:
    def read(path: str) -> bytes | None:
        target = repo.root / path
        return target.read_bytes() if target.is_file() else None

    return read


def diff(repo: GitRepo, *args: str) -> str:
    """`git diff` of the work tree against HEAD (after `git add -A`), as the scope produces it."""
    repo.git("add", "-A")
    return repo.git("-c", "core.quotePath=false", "diff", "--cached", "-M", *args)


def units_of(repo: GitRepo, **kwargs: object) -> list[ReviewUnit]:
    return build_units(diff(repo), reader(repo), **kwargs)  # type: ignore[arg-type]


def only(units: list[ReviewUnit]) -> ReviewUnit:
    assert len(units) == 1, [u.file_path for u in units]
    return units[0]


PY = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(40))


def test_modify_one_function(repo: GitRepo) -> None:
    repo.write("m.py", PY)
    repo.commit()
    repo.write("m.py", PY.replace("return x + 7\n", "y = x * 2\n    return y + 7\n"))
    u = only(units_of(repo))
    assert u.patch_type is PatchType.MODIFY
    assert u.file_path == "m.py" and u.old_path is None and u.language == "python"
    assert u.metrics.added == 2 and u.metrics.removed == 1 and u.metrics.hunks == 1
    assert u.metrics.functions == ["f7"] and u.metrics.single_function
    assert u.added_lines == [30, 31]
    start, end = u.hunk_ranges[0]
    assert start <= 30 and end >= 31
    assert u.patch.startswith("diff --git a/m.py b/m.py\n")
    assert "--- a/m.py\n+++ b/m.py\n@@ " in u.patch
    assert u.unit_id.startswith("U-") and len(u.unit_id) == 14


def test_add_delete_rename(repo: GitRepo) -> None:
    repo.write("old.py", PY)
    repo.write("gone.py", "x = 1\ny = 2\n")
    repo.commit()
    (repo.root / "old.py").rename(repo.root / "new.py")
    (repo.root / "gone.py").unlink()
    repo.write("added.py", "a = 1\nb = 2\nc = 3\n")
    by_path = {u.file_path: u for u in units_of(repo)}
    assert set(by_path) == {"new.py", "gone.py", "added.py"}
    added, gone, renamed = by_path["added.py"], by_path["gone.py"], by_path["new.py"]
    assert added.patch_type is PatchType.ADD and added.added_lines == [1, 2, 3]
    assert added.hunk_ranges == [(1, 3)]
    assert gone.patch_type is PatchType.DELETE and gone.metrics.removed == 2
    assert gone.added_lines == [] and gone.hunk_ranges == []
    assert renamed.patch_type is PatchType.RENAME and renamed.old_path == "old.py"
    assert renamed.metrics.added == 0 and renamed.metrics.removed == 0
    ruled = {u.file_path: u for u in apply_rules(list(by_path.values()))}
    assert ruled["gone.py"].skip_reason == "file deleted"
    assert ruled["new.py"].skip_reason == "renamed without content changes"
    assert ruled["added.py"].skip_reason is None


def test_rename_with_changes_and_deleted_file_is_one_unit(repo: GitRepo) -> None:
    repo.write("a.py", PY)
    repo.write("big.py", PY)
    repo.commit()
    (repo.root / "a.py").rename(repo.root / "b.py")
    repo.write("b.py", PY.replace("return x + 3\n", "return x - 3\n"))
    (repo.root / "big.py").unlink()
    by_path = {u.file_path: u for u in units_of(repo, settings=ReviewSettings(large_unit_lines=20))}
    assert by_path["b.py"].patch_type is PatchType.RENAME
    assert by_path["b.py"].old_path == "a.py" and by_path["b.py"].metrics.added == 1
    deleted = by_path["big.py"]
    assert deleted.metrics.removed == PY.count("\n") and Tag.LARGE in deleted.tags


def test_binary_file(repo: GitRepo) -> None:
    repo.write("img.png", b"\x89PNG\x00\x01\x02")
    repo.commit()
    repo.write("img.png", b"\x89PNG\x00\x01\x03")
    u = only(units_of(repo))
    assert Tag.BINARY in u.tags and u.metrics.added == 0
    assert only(apply_rules([u])).skip_reason == "binary file"
    # --binary emits a base85 payload instead of "Binary files ... differ".
    payload = only(build_units(diff(repo, "--binary")))
    assert Tag.BINARY in payload.tags and "literal" not in payload.patch


def test_crlf_content_and_line_ending_change(repo: GitRepo) -> None:
    repo.write("w.c", "int a;\r\nint b;\r\n")
    repo.write("lf.c", "int a;\nint b;\n")
    repo.commit()
    repo.write("w.c", "int a;\r\nint c;\r\nint b;\r\n")
    repo.write("lf.c", "int a;\r\nint b;\r\n")
    by_path = {u.file_path: u for u in units_of(repo)}
    assert by_path["w.c"].added_lines == [2]
    assert "+int c;\r\n" in by_path["w.c"].patch
    assert Tag.ONLY_WHITESPACE in by_path["lf.c"].tags
    assert Tag.ONLY_WHITESPACE not in by_path["w.c"].tags


def test_latin1_bytes_and_no_newline_at_eof(repo: GitRepo) -> None:
    repo.write("l.txt", "caf\xe9\nend".encode("latin-1"))
    repo.commit()
    repo.write("l.txt", "caf\xe9\nend\nna\xefve".encode("latin-1"))
    text = diff(repo)
    assert "\\ No newline at end of file" in text and "\ufffd" in text
    u = only(build_units(text, reader(repo)))
    assert u.added_lines == [2, 3]
    assert u.metrics.added == 2 and u.metrics.removed == 1  # "end" gained its newline
    assert u.patch.endswith("\\ No newline at end of file\n")


@pytest.mark.parametrize("quote_path", ["true", "false"])
def test_names_with_spaces_quotes_newline_and_unicode(repo: GitRepo, quote_path: str) -> None:
    names = ["with space.py", 'na"me with\nnewline.py', "tab\there.py", "ünï cödé.py", "b\\s.py"]
    for name in names:
        repo.write(name, "a = 1\n")
    repo.commit()
    for name in names:
        repo.write(name, "a = 1\nb = 2\n")
    (repo.root / "with space.py").rename(repo.root / "moved space.py")
    repo.git("add", "-A")
    text = repo.git("-c", f"core.quotePath={quote_path}", "diff", "--cached", "-M")
    by_path = {u.file_path: u for u in build_units(text, reader(repo))}
    assert set(by_path) == {"moved space.py", *names[1:]}
    assert by_path["moved space.py"].old_path == "with space.py"
    assert all(u.added_lines == [2] for u in by_path.values())
    assert all(u.metrics.functions == [] for u in by_path.values())  # read_new found each file


def test_unquote_path_octal_utf8() -> None:
    assert unquote_path('"\\303\\274n\\"x\\\\y\\ty" rest') == ('ün"x\\y\ty', " rest")


def test_submodule_pointer_change(repo: GitRepo, tmp_path: Path) -> None:
    sub = GitRepo(tmp_path / "sub")
    sub.write("s.txt", "one\n")
    first = sub.commit()
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.root), "dep")
    repo.commit("add submodule")
    sub.write("s.txt", "two\n")
    second = sub.commit()
    repo.git("-C", "dep", "-c", "protocol.file.allow=always", "fetch", "-q")
    repo.git("-C", "dep", "checkout", "-q", second)
    units = units_of(repo)
    u = only(units)
    assert u.file_path == "dep" and first[:7] in u.patch and second[:7] in u.patch
    assert only(apply_rules(units)).skip_reason == "submodule pointer change"
    log_style = only(build_units(diff(repo, "--submodule=log")))
    assert log_style.file_path == "dep"
    assert only(apply_rules([log_style])).skip_reason == "submodule pointer change"


def test_hunk_groups_and_stable_ids_when_lines_shift(repo: GitRepo) -> None:
    repo.write("m.py", PY)
    repo.commit()
    changed = PY.replace("return x + 12\n", "return x + 1200\n").replace(
        "return x + 35\n", "return x + 3500\n"
    )
    repo.write("m.py", changed)
    first = units_of(repo)
    assert [u.metrics.functions for u in first] == [["f12"], ["f35"]]
    # Re-review after code above both hunks grew: same hunks, new line numbers, same ids.
    repo.write("m.py", "import os\nimport sys\n\n" + changed)
    repo.git("add", "-A")
    again = [u for u in units_of(repo) if u.metrics.functions]
    assert [u.unit_id for u in again[-2:]] == [u.unit_id for u in first]
    assert again[-1].added_lines == [first[-1].added_lines[0] + 3]


def test_near_hunks_share_a_unit_and_large_limit_splits(repo: GitRepo) -> None:
    repo.write("m.py", PY)
    repo.commit()
    repo.write("m.py", PY.replace("return x + 2\n", "return 2\n").replace("+ 5\n", "- 5\n"))
    u = only(units_of(repo))
    assert u.metrics.hunks == 2 and u.metrics.functions == ["f2", "f5"]
    assert not u.metrics.single_function
    split = units_of(repo, settings=ReviewSettings(large_unit_lines=2))
    assert [x.metrics.hunks for x in split] == [1, 1]


def test_huge_hunk_is_one_large_unit(repo: GitRepo) -> None:
    repo.write("m.py", PY)
    repo.commit()
    repo.write("m.py", PY.replace("return x", "return -x"))
    units = units_of(repo, settings=ReviewSettings(large_unit_lines=10))
    assert all(Tag.LARGE in u.tags for u in units if u.metrics.added + u.metrics.removed > 10)
    assert sum(u.metrics.added for u in units) == 40


def test_file_over_max_bytes_is_large_and_not_parsed(repo: GitRepo) -> None:
    repo.write("m.py", PY)
    repo.commit()
    repo.write("m.py", PY.replace("return x + 7\n", "return 7\n"))
    u = only(units_of(repo, settings=ReviewSettings(max_file_bytes=100)))
    assert Tag.LARGE in u.tags and u.metrics.functions == []


def test_path_and_content_tags(repo: GitRepo) -> None:
    files = {
        "tests/test_x.py": "x = 1\n",
        "web/a.spec.ts": "let a = 1;\n",
        "pkg/x_test.go": "package x\n",
        "docs/guide.md": "# Guide\n",
        "README.rst": "Title\n",
        "pyproject.toml": "[x]\n",
        ".github/workflows/ci.yml": "on: push\n",
        "Dockerfile": "FROM x\n",
        "uv.lock": "version = 1\n",
        "web/package-lock.json": "{}\n",
        "go.sum": "x v1 h1:\n",
        "vendor/lib/a.go": "package a\n",
        "web/node_modules/m/i.js": "x\n",
        "api/msg_pb2.py": "x = 1\n",
        "web/app.min.js": "x\n",
        "gen/out.go": "// Code generated by tool. DO NOT EDIT.\npackage gen\n",
        "db.py": "rows = 1\n",
        "note.py": "x = 1\n",
        "indent.py": "if a:\n    b()\nc()\n",
        "spaces.js": "let a = 1;\n",
    }
    for path, text in files.items():
        repo.write(path, text)
    repo.commit()
    for path, text in files.items():
        repo.write(path, text + "more = 2\n")
    repo.write("db.py", 'rows = 1\ncur.execute("SELECT * FROM t WHERE id = %s" % uid)\n')
    repo.write("note.py", "x = 1\n# a note\n\n")
    repo.write("indent.py", "if a:\n    b()\n    c()\n")  # semantic in Python
    repo.write("spaces.js", "let a  =  1;   \n")
    tags = {u.file_path: set(u.tags) for u in units_of(repo)}
    assert {Tag.TEST} <= tags["tests/test_x.py"]
    assert Tag.TEST in tags["web/a.spec.ts"] and Tag.TEST in tags["pkg/x_test.go"]
    assert Tag.DOCS in tags["docs/guide.md"] and Tag.DOCS in tags["README.rst"]
    for config in ("pyproject.toml", ".github/workflows/ci.yml", "Dockerfile"):
        assert Tag.CONFIG in tags[config], config
    for lock in ("uv.lock", "web/package-lock.json", "go.sum"):
        assert Tag.LOCKFILE in tags[lock] and Tag.CONFIG not in tags[lock], lock
    assert Tag.VENDORED in tags["vendor/lib/a.go"]
    assert Tag.VENDORED in tags["web/node_modules/m/i.js"]
    for generated in ("api/msg_pb2.py", "web/app.min.js", "gen/out.go"):
        assert Tag.GENERATED in tags[generated], generated
    assert Tag.SECURITY_SENSITIVE in tags["db.py"]
    assert Tag.ONLY_COMMENTS in tags["note.py"]
    assert Tag.ONLY_WHITESPACE not in tags["indent.py"]
    assert Tag.ONLY_WHITESPACE in tags["spaces.js"]
    assert not tags["pyproject.toml"] & {Tag.SECURITY_SENSITIVE, Tag.ONLY_COMMENTS}


def test_generated_header_without_read_new(repo: GitRepo) -> None:
    repo.write("a.py", "# @generated by protoc\nx = 1\n")
    units = build_units(diff(repo))  # no read_new: the first hunk shows the header
    assert Tag.GENERATED in only(units).tags
    assert only(apply_rules(units)).skip_reason == "generated file"


def test_mode_change_and_empty_new_file(repo: GitRepo) -> None:
    repo.write("run.sh", "echo hi\n")
    repo.commit()
    (repo.root / "run.sh").chmod(0o755)
    repo.write("__init__.py", "")
    units = units_of(repo)
    assert {u.file_path for u in units} == {"run.sh", "__init__.py"}
    reasons = {u.file_path: u.skip_reason for u in apply_rules(units)}
    assert reasons["run.sh"] == reasons["__init__.py"]
    assert reasons["run.sh"] is not None and reasons["run.sh"].startswith("no content change")


def test_git_show_preamble_and_log_with_two_commits(repo: GitRepo) -> None:
    repo.write("a.py", "a = 1\n")
    repo.commit("first\n\ndiff --git a/fake b/fake\n@@ -1 +1 @@")
    repo.write("a.py", "a = 2\n")
    repo.commit("second")
    shown = repo.git("show", "HEAD")
    assert only(build_units(shown)).added_lines == [1]
    log = repo.git("log", "-p", "--format=commit %H%n%n    %s%n")
    assert [u.file_path for u in build_units(log)] == ["a.py", "a.py"]


def test_merge_combined_diff_is_skipped_not_lost(repo: GitRepo) -> None:
    repo.write("a.py", "a = 1\nb = 1\n")
    repo.commit()
    repo.git("checkout", "-q", "-b", "side")
    repo.write("a.py", "a = 2\nb = 1\n")
    repo.commit("side")
    repo.checkout("main")
    repo.write("a.py", "a = 3\nb = 1\n")
    repo.write("other.py", "x = 1\n")
    repo.commit("main")
    repo.git("merge", "-q", "-s", "ours", "side", "-m", "merge")
    repo.write("a.py", "a = 4\nb = 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "--amend", "-m", "evil merge")
    units = apply_rules(build_units(repo.git("show", "--cc", "HEAD")))
    assert [u.file_path for u in units] == ["a.py"]
    assert units[0].skip_reason is not None and "combined" in units[0].skip_reason


def test_malformed_section_is_skipped_and_others_kept() -> None:
    text = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,x +1 @@\n-a\n+b\n"
        "diff --git a/y.py b/y.py\n--- a/y.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n"
    )
    units = build_units(text)
    assert [u.file_path for u in units] == ["x.py", "y.py"]
    assert units[0].skip_reason is not None and "unparseable" in units[0].skip_reason
    assert units[1].skip_reason is None and units[1].added_lines == [1]


def test_truncated_and_hand_edited_hunks_do_not_crash() -> None:
    truncated = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,5 +1,6 @@\n a\n+b\n"
    assert only(build_units(truncated)).added_lines == [2]
    stripped_context = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n\n-c\n+d\n"
    assert only(build_units(stripped_context)).added_lines == [3]
    removed_looks_like_header = (
        "diff --git a/x.sql b/x.sql\n--- a/x.sql\n+++ b/x.sql\n@@ -1,2 +1,2 @@\n"
        "--- a/comment\n+++ b/comment\n"
    )
    u = only(build_units(removed_looks_like_header))
    assert u.metrics.added == 1 and u.metrics.removed == 1
    for junk in ("", "\n\n", "not a diff", "diff --git\n@@ -a +b @@\n", "@@ -1 +1 @@\n+x\n"):
        build_units(junk)


def test_identical_edits_in_one_file_get_distinct_ids(repo: GitRepo) -> None:
    body = "".join(f"x{i} = {i}\n" for i in range(80))
    repo.write("m.py", body)
    repo.commit()
    repo.write(
        "m.py",
        body.replace("x3 = 3\n", "x3 = 3\nz = 0\n").replace("x70 = 70\n", "x70 = 70\nz = 0\n"),
    )
    units = units_of(repo)
    assert len(units) == 2 and units[0].unit_id != units[1].unit_id
    assert [u.unit_id for u in units] == [u.unit_id for u in units_of(repo)]


def test_review_index_has_no_code(repo: GitRepo) -> None:
    repo.write("m.py", PY)
    repo.commit()
    repo.write("m.py", PY.replace("return x + 7\n", 'return x + len("zebra_literal_42")\n'))
    units = apply_rules(units_of(repo))
    index = review_index(units)
    text = json.dumps(index)
    assert "zebra_literal_42" not in text and "return" not in text
    entry = index[0]
    assert set(entry) == {
        "unit_id",
        "file_path",
        "old_path",
        "patch_type",
        "language",
        "tags",
        "metrics",
        "rule_context_level",
        "rule_confidence",
        "skip_reason",
    }
    assert entry["metrics"] == {
        "added": 1,
        "removed": 1,
        "hunks": 1,
        "functions": ["f7"],
        "single_function": True,
    }
    assert entry["rule_context_level"] == "function" and entry["patch_type"] == "modify"


def test_parse_reports_every_section() -> None:
    text = "diff --git a/a b/a\nnew file mode 100644\nindex 0000000..e69de29\n"
    fds = parse_git_diff(text + text.replace("a/a b/a", "a/b b/b"))
    assert [(f.path, f.is_new, f.hunks) for f in fds] == [("a", True, []), ("b", True, [])]


@pytest.mark.parametrize(
    "flags",
    [["--no-prefix"], ["-c", "diff.mnemonicPrefix=true"], ["--src-prefix=a/", "--dst-prefix=b/"]],
)
def test_prefix_styles(repo: GitRepo, flags: list[str]) -> None:
    repo.write("dir/with space.py", "a = 1\n")
    repo.commit()
    repo.write("dir/with space.py", "a = 2\n")
    config = [f for f in flags if f.startswith("diff.")]
    options = [f for f in flags if f.startswith("--")]
    text = repo.git(*(["-c", config[0]] if config else []), "diff", *options)
    u = only(build_units(text))
    assert (u.file_path, u.patch_type, u.added_lines) == (
        "dir/with space.py",
        PatchType.MODIFY,
        [1],
    )


def test_background_read_gives_the_same_units_as_reading_in_line(repo: GitRepo) -> None:
    """Without function metrics, build_units reads the new versions (prefetch) while it builds
    the units and adds the content's tags after; the units must be exactly the in-line ones."""
    repo.write("m.py", PY)
    repo.write("gen.py", "x = 1\n" * 30)
    repo.write("big.py", "y = 2\n" * 30)
    repo.write("uv.lock", "version = 1\n")
    repo.write("bin.dat", b"\0\1")
    repo.commit()
    repo.write("m.py", PY.replace("return x + 7\n", "return 7\n"))
    # The generated marker is only in the file's first lines, which the hunk does not show.
    repo.write("gen.py", "# @generated by a tool\n" + "x = 1\n" * 28 + "x = 2\n")
    repo.write("big.py", "y = 2\n" * 29 + "y = 3\n" + "z = 0\n" * 400)
    repo.write("uv.lock", "version = 2\n")
    repo.write("bin.dat", b"\0\2")
    repo.write("new.py", "import os\n")
    text = diff(repo)
    settings = ReviewSettings(max_file_bytes=2000)
    read = reader(repo)
    fetched: list[list[str]] = []
    reads: list[str] = []

    def counting_read(path: str) -> bytes | None:
        reads.append(path)
        return read(path)

    in_line = build_units(text, read, settings, functions=False)
    background = build_units(
        text, counting_read, settings, prefetch=fetched.append, functions=False
    )

    assert [u.model_dump() for u in background] == [u.model_dump() for u in in_line]
    assert fetched == [["big.py", "gen.py", "m.py", "new.py"]]
    assert sorted(reads) == ["big.py", "gen.py", "m.py", "new.py"]
    tags = {u.file_path: u.tags for u in background}
    assert Tag.GENERATED in tags["gen.py"] and Tag.LARGE in tags["big.py"]
    assert Tag.LARGE not in tags["m.py"] and Tag.GENERATED not in tags["m.py"]


def test_a_failed_read_costs_only_metrics_but_a_bug_is_reported(repo: GitRepo) -> None:
    repo.write("a.py", "def f():\n    return 1\n")
    repo.commit()
    repo.write("a.py", "def f():\n    return 2\n")
    text = diff(repo)

    def unreadable(path: str) -> bytes | None:
        raise PermissionError(13, "Permission denied", path)

    unit = only(build_units(text, unreadable))
    assert unit.skip_reason is None and unit.added_lines == [2]

    def broken(path: str) -> bytes | None:
        raise TypeError("a bug in the reader")

    unit = only(build_units(text, broken))
    assert unit.skip_reason is not None and "TypeError: a bug in the reader" in unit.skip_reason


def test_security_tag_is_looked_for_only_where_something_reads_it(tmp_path: Path) -> None:
    """The security_sensitive tag feeds the model stages and bandit_scope = "security_sensitive";
    an offline review with the default scope reads neither, so it does not scan for it (the
    units are otherwise the same)."""
    from redline.config_models import AnalyzerSettings, ModelSettings, Settings
    from redline.requests import ScopeKind, ScopeRequest
    from redline.review.pipeline import plan_review

    repo = GitRepo(tmp_path / "repo")
    repo.write("app/login.py", "def check(user):\n    return user\n")
    repo.write("app/util.py", "def add(a, b):\n    return a + b\n")
    repo.commit("base")
    repo.write("app/login.py", "def check(user, password):\n    return user and password\n")
    repo.write("app/util.py", "def add(a, b):\n    return a - b\n")
    request = ScopeRequest(ScopeKind.UNCOMMITTED)

    def tagged(settings: Settings, **kwargs: bool) -> tuple[list[str], list[str]]:
        plan = plan_review(repo.root, request, settings, **kwargs)
        ids = sorted(u.unit_id for u in plan.units)
        return ids, sorted(u.file_path for u in plan.units if Tag.SECURITY_SENSITIVE in u.tags)

    offline_ids, offline = tagged(Settings())
    assert offline == []
    read_by_bandit = Settings(analyzers=AnalyzerSettings(bandit_scope="security_sensitive"))
    for ids, files in (
        tagged(Settings(models=ModelSettings(model="openai/gpt-4o-mini"))),
        tagged(read_by_bandit),
        tagged(Settings(), function_metrics=True),  # the full plan (--estimate)
        tagged(Settings(), for_model=True),  # a debate
    ):
        assert files == ["app/login.py"]
        assert ids == offline_ids
