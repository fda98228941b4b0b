"""Property tests: random files and edits, diffed in git's format, must give sound units.

Most examples use a pure-Python generator of git-format diffs (difflib hunks under git's
headers, with "\\ No newline at end of file" markers) because starting git per example is slow;
one test runs real `git diff --no-index` on fewer examples to keep the generator honest.
"""

from __future__ import annotations

import difflib
import re
import subprocess
import tempfile
from pathlib import Path

import unidiff
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.config_models import ReviewSettings
from redline.diff import apply_rules, build_units, review_index
from redline.model import ReviewUnit

# Lines chosen to look like diff syntax, code, comments and odd whitespace.
TRICKY = [
    "",
    " ",
    "x = 1",
    "def f(a):",
    "    return a",
    "# comment",
    "--- a/x.py",
    "+++ b/x.py",
    "diff --git a/x b/x",
    "@@ -1 +1 @@",
    "\\ No newline at end of file",
    "-- sql comment",
    "++i;",
    "value\r",
    "tab\tseparated",
    "form\x0cfeed",
    "line\u2028separator",
    "naïve ünïcode",
    "\ufffd replaced",
]
line_st = st.one_of(
    st.sampled_from(TRICKY), st.text(max_size=12).map(lambda s: s.replace("\n", ""))
)
file_st = st.builds(
    lambda lines, trailing: "\n".join(lines) + ("\n" if trailing and lines else ""),
    st.lists(line_st, max_size=60),
    st.booleans(),
)


def split_keep(text: str) -> list[str]:
    """Lines as git sees them: split on "\\n" only, keeping it; the last may lack it."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def git_format_diff(path: str, old: str, new: str, context: int = 3) -> str:
    a, b = split_keep(old), split_keep(new)
    hunks = list(difflib.unified_diff(a, b, lineterm="", n=context))[2:]
    if not hunks:
        return ""
    out = [f"diff --git a/{path} b/{path}", "index 1111111..2222222 100644"]
    out += [f"--- a/{path}", f"+++ b/{path}"]
    for line in hunks:
        if line.startswith("@@"):
            out.append(line)
        elif line.endswith("\n"):
            out.append(line[:-1])
        else:
            out += [line, "\\ No newline at end of file"]
    return "\n".join(out) + "\n"


def expected_added(old: str, new: str) -> list[str]:
    a, b = split_keep(old), split_keep(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        line.rstrip("\n")
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for line in b[j1:j2]
    ]


def check_units(units: list[ReviewUnit], news: dict[str, str], diff_text: str) -> None:
    # A file git called binary (its old side) whose new side is text is reviewed as its whole
    # new text: every line added, none of them in the diff.
    retexted = [u for u in units if "(the old side was binary" in u.patch]
    for u in retexted:
        assert u.added_lines == list(range(1, len(split_keep(news[u.file_path])) + 1))
    units = [u for u in units if u not in retexted]
    plus = [
        line[1:]
        for line in diff_text.split("\n")
        if line.startswith("+") and not line.startswith("+++ b/")
    ]
    assert sum(u.metrics.added for u in units) == len(plus)
    by_file: dict[str, list[ReviewUnit]] = {}
    for u in units:
        by_file.setdefault(u.file_path, []).append(u)
    mapped: list[str] = []
    for path, file_units in by_file.items():
        new_lines = [line.rstrip("\n") for line in split_keep(news[path])]
        seen_lines: set[int] = set()
        last_end = 0
        for u in file_units:
            assert len(u.added_lines) == u.metrics.added
            for n in u.added_lines:
                assert any(start <= n <= end for start, end in u.hunk_ranges), (n, u.hunk_ranges)
                assert n not in seen_lines
                seen_lines.add(n)
                mapped.append(new_lines[n - 1])
            for start, end in u.hunk_ranges:  # units of one file never overlap
                assert start <= end and start > last_end - (1 if start == end else 0)
                last_end = end
    assert mapped == plus


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(file_st, file_st), min_size=1, max_size=3), st.integers(1, 60))
def test_units_invariants(pairs: list[tuple[str, str]], large: int) -> None:
    diff_text = "".join(git_format_diff(f"f{i}.py", old, new) for i, (old, new) in enumerate(pairs))
    news = {f"f{i}.py": new for i, (_, new) in enumerate(pairs)}

    def read(path: str) -> bytes:
        return news[path].encode("utf-8", errors="surrogatepass")

    config = ReviewSettings(large_unit_lines=large)
    units = build_units(diff_text, read, config)
    check_units(units, news, diff_text)
    again = build_units(diff_text, read, config)
    assert [u.unit_id for u in again] == [u.unit_id for u in units]
    assert len({u.unit_id for u in units}) == len(units)
    ruled = apply_rules(units, config)
    assert len(review_index(ruled)) == len(units)


@settings(max_examples=100, deadline=None)
@given(file_st, file_st)
def test_added_lines_are_the_new_files_added_text(old: str, new: str) -> None:
    units = build_units(git_format_diff("a.txt", old, new))
    new_lines = [line.rstrip("\n") for line in split_keep(new)]
    got = [new_lines[n - 1] for u in units for n in u.added_lines]
    assert got == expected_added(old, new)


simple_line = st.sampled_from(["a", "b", "c", "def f():", "    pass", "# c", ""])


@settings(max_examples=100, deadline=None)
@given(st.lists(simple_line, max_size=40), st.lists(simple_line, max_size=40))
def test_counts_agree_with_unidiff(old: list[str], new: list[str]) -> None:
    text = git_format_diff("a.py", "\n".join(old) + "\n", "\n".join(new) + "\n")
    units = build_units(text)
    reference = unidiff.PatchSet(text)
    assert sum(u.metrics.added for u in units) == sum(f.added for f in reference)
    assert sum(u.metrics.removed for u in units) == sum(f.removed for f in reference)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text_never_crashes(text: str) -> None:
    apply_rules(build_units(text))
    apply_rules(build_units("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n" + text))


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(file_st, file_st)
def test_real_git_diff_no_index(old: str, new: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a").mkdir()
        (root / "b").mkdir()
        (root / "a" / "f.py").write_bytes(old.encode("utf-8", errors="surrogatepass"))
        (root / "b" / "f.py").write_bytes(new.encode("utf-8", errors="surrogatepass"))
        out = subprocess.run(
            # --no-prefix on the paths a/f.py and b/f.py gives exactly git's usual headers.
            ["git", "diff", "--no-index", "--no-color", "--no-prefix", "a/f.py", "b/f.py"],
            cwd=root,
            capture_output=True,
            check=False,
            env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"},
        )
    assert out.returncode in (0, 1), out.stderr
    text = out.stdout.decode("utf-8", errors="replace")
    units = build_units(text, lambda _: new.encode("utf-8", errors="surrogatepass"))
    assert all(u.file_path == "f.py" for u in units)
    if units:
        check_units(units, {"f.py": new}, text)


_SECURITY_WORDS = st.sampled_from(
    [
        "token", "tokenize", "Auth", "authors", "PRIVATE KEY", "PRIVATE\tKEY", "private key",
        "SELECT * FROM t WHERE id = %s", "shell=True", "shell = true", "eval(", "ΑΣ", "İ",
        "open(request.args)", "user", "x", " ", "\n", "\u2028", "ghp_" + "a" * 20, "0o777",
        "xghp_" + "a" * 20, "a0o777", "f'", "DELETE FROM t", " + x", "select * from t {",
        "AKIA" + "A" * 16, "sk_live_" + "a" * 10, "scors", "new function(", "path (", "Eval (",
    ]
)  # fmt: skip


# The security keywords as first written: one plain regex per question, asked line by line.
_PLAIN_SECURITY = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"passw|secret|api_key|apikey|api-key|access_key|accesskey|private_key|privatekey",
        r"credential|csrf|permission|cookie|token(?!i[sz])|auth(?!ors?\b|orship|ored)|session",
        r"\bcors\b|hashlib|hmac|jwt|bcrypt|scrypt|argon2|crypto|cipher|fernet|\bssl\b|\btls\b",
        r"verify\s*=\s*false|random\.(random|randint|choice)\b|subprocess|os\.system|os\.popen",
        r"os\.exec|child_process|execsync|exec\.command|runtime\.getruntime|shell\s*=\s*true",
        r"\beval\s*\(|\bexec\s*\(|\.execute(many)?\s*\(|\bspawn\s*\(|new\s+function\s*\(",
        r"pickle|marshal\.load|shelve|jsonpickle|unserialize|yaml\.(unsafe_)?load\b|\bdill\b",
        r"cursor\s*\(|\.raw\s*\(|sqlalchemy\.text|innerhtml|outerhtml|document\.write|mark_safe",
        r"autoescape|render_template_string|\|\s*safe\b|chmod|setuid|mktemp|send_file|sendfile",
        r"ssrf|allow_origins|\b0o?777\b|\bunsafe\b",
        r"(open\s*\(|os\.path\.join|path\s*\(|readfile|filepath\.join|os\.open|send_from_directory)"
        r".*(request|params|argv|input\s*\(|query|user|upload|filename)",
    )
] + [
    re.compile(
        r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b"
        r".*(%s|%\(|\+\s*\w|\{|\$\{|\.format\()|\bf[\"'].*\b(SELECT|INSERT|UPDATE|DELETE)\b"
        r"|AKIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY|[sr]k_(live|test)_\w{10}"
        r"|\bgh[pousr]_[A-Za-z0-9]{20}|\bxox[abprs]-[A-Za-z0-9-]{10}|AIza[0-9A-Za-z_-]{30}"
    )
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_SECURITY_WORDS, max_size=6).map("".join), max_size=6))
def test_security_scan_is_the_plain_definitions(lines: list[str]) -> None:
    """The one trie-shaped pattern (over the lowered text, case-sensitive matches confirmed on
    the original) answers exactly what the plain per-line regexes answer."""
    from redline.diff import tags

    text = "\n".join(lines)
    # Case-insensitive keywords are looked for in the lowered text (as the tag always did).
    lowered = text.lower().split("\n")
    plain = any(p.search(line) for line in lowered for p in _PLAIN_SECURITY[:-1]) or any(
        _PLAIN_SECURITY[-1].search(line) for line in text.split("\n")
    )
    assert tags.security_sensitive("plain.txt", lines) == (bool(lines) and plain)


# -- the tags' fast paths against their plain definitions -------------------------------------

_TAG_TEXT = st.lists(
    st.sampled_from(
        [
            "# @generated", "// Code generated by x. DO NOT EDIT.", "/* auto-generated */",
            "-- This file was generated", "# Do Not Edıt", "# do not edİt", "# GENERATED",
            "x = 1", "", " ", "\t", "İ", "ı", "ſ", "K", "auth", "AUTH", "sessıon", "Token",
            "tokenize", "authors", "key.pem", ".ENV", "docs", "/", "a b", "\u2028", "\x1c",
        ]
    ),
    max_size=12,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_TAG_TEXT)
def test_generated_header_prefilter_never_changes_the_answer(lines: list[str]) -> None:
    from redline.diff import tags

    plain = any(tags._GENERATED_HEADER.search(line) for line in lines[:10])
    assert tags.generated_header(iter(lines)) == plain


@settings(max_examples=300, deadline=None)
@given(_TAG_TEXT)
def test_security_path_prefilter_never_changes_the_answer(parts: list[str]) -> None:
    from redline.diff import security

    path = "/".join(parts)
    assert security._security_path(path) == (security._SECURITY_PATH.search(path) is not None)


def _only_whitespace_reference(language: str | None, removed: list[str], added: list[str]) -> bool:
    """only_whitespace as first written: on the lists of lines, joined without separators."""
    from redline.diff import tags

    if not removed and not added:
        return False
    if "".join("".join(removed).split()) != "".join("".join(added).split()):
        return False
    if language in tags._INDENT_SENSITIVE:
        return tags._indented(removed) == tags._indented(added)
    return " ".join(" ".join(removed).split()) == " ".join(" ".join(added).split())


_WS_LINES = st.lists(
    st.sampled_from(
        ["a b", "ab", "  a b", "a  b ", "a\tb", "", " ", "\r", "a\x1cb", "é b", "\u2028"]
    ),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([None, "python", "go"]), _WS_LINES, _WS_LINES)
def test_only_whitespace_on_joined_text_is_the_line_by_line_answer(
    language: str | None, removed: list[str], added: list[str]
) -> None:
    from redline.diff import tags

    expected = _only_whitespace_reference(language, removed, added)
    assert tags.only_whitespace(language, removed, added) == expected
