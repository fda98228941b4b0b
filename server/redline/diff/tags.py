"""Tag heuristics: what kind of file a unit belongs to and what kind of change it is.

Pure functions over paths and line text. They are deliberately cheap (one compiled regex per
question, run once over a unit's joined lines) because they run on every unit of every diff.
The heuristics err on the side of *not* tagging a change as harmless: a false only_comments or
only_whitespace would lower the review depth, a missed one only costs a little context.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath
from typing import Any

from redline.model import Tag

LOCKFILES = frozenset(
    {
        "uv.lock",
        "poetry.lock",
        "pdm.lock",
        "pipfile.lock",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "cargo.lock",
        "go.sum",
        "gemfile.lock",
        "composer.lock",
        "podfile.lock",
        "mix.lock",
        "flake.lock",
    }
)
_VENDOR_DIRS = frozenset({"vendor", "vendors", "third_party", "third-party", "thirdparty"})
_VENDOR_DIRS_ANYWHERE = frozenset({"node_modules", "site-packages", "bower_components"})
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "testdata"})
_TEST_NAME = re.compile(
    r"(^test_.*\.py$|_test\.(py|go|rb|exs?)$|^conftest\.py$|\.(spec|test)\.[cm]?[jt]sx?$"
    r"|_spec\.rb$|Tests?\.(java|kt|cs|swift|php)$)"
)
_DOC_DIRS = frozenset({"docs", "doc", "documentation"})
_DOC_EXT = frozenset({".md", ".markdown", ".rst", ".adoc", ".asciidoc", ".txt", ".rdoc"})
_DOC_STEMS = frozenset({"readme", "changelog", "changes", "history", "license", "contributing"})
_NOT_DOCS = re.compile(r"^(requirements.*|constraints.*|cmakelists|robots|.*\.in)\.txt$")
_CONFIG_EXT = frozenset(
    {".toml", ".yaml", ".yml", ".ini", ".cfg", ".conf", ".json", ".jsonc", ".properties", ".env"}
)
_CONFIG_NAMES = frozenset(
    {
        "dockerfile",
        "containerfile",
        "makefile",
        "gnumakefile",
        "justfile",
        "procfile",
        ".gitignore",
        ".gitattributes",
        ".gitmodules",
        ".dockerignore",
        ".editorconfig",
        ".env",
        "docker-compose.yml",
        "requirements.txt",
        "setup.cfg",
        "tox.ini",
        "codeowners",
    }
)
_CONFIG_DIRS = frozenset({".github", ".gitlab", ".circleci", ".devcontainer", ".vscode"})
_GENERATED_NAME = re.compile(
    r"(_pb2(_grpc)?\.pyi?$|\.pb\.(go|cc|h)$|\.pb\.gw\.go$|_grpc\.pb\.go$|\.min\.(js|css)$"
    r"|\.bundle\.js$|\.map$|_generated\.\w+$|\.generated\.\w+$|\.g\.dart$|\.designer\.cs$"
    r"|^zz_generated.*\.go$)"
)
_GENERATED_DIRS = frozenset({"__generated__", "generated", "gen"})
# A generated-file marker counts only on a comment line near the top, so a source file that
# merely mentions "@generated" (like this one) is not mistaken for generated output.
_GENERATED_HEADER = re.compile(
    r"^\s*(#|//|/\*|\*|<!--|--|;).*(@generated|do not edit|code generated|auto-?generated"
    r"|automatically generated|this file (is|was) generated)",
    re.IGNORECASE,
)
GENERATED_HEADER_LINES = 10


def split_path(path: str) -> tuple[list[str], str]:
    """(directories, file name) of a repository path, as PurePosixPath would split it.

    Plain string operations: this runs for every file of every diff, and pathlib's parsing
    costs more than all the tag checks together. Paths that are not in git's normal form
    (empty, absolute, '//', '.' components, trailing '/') go through PurePosixPath so they
    keep its exact normalisation.
    """
    if (
        path
        and path[0] not in "./"
        and not path.endswith(("/", "/."))
        and "//" not in path
        and "/./" not in path
    ):
        *dirs, name = path.split("/")
        return dirs, name
    pure = PurePosixPath(path)
    return list(pure.parts[:-1]), pure.name


def suffix_and_stem(name: str) -> tuple[str, str]:
    """PurePosixPath(name).suffix and .stem: a dot that is neither first nor last splits."""
    dot = name.rfind(".")
    if 0 < dot < len(name) - 1:
        return name[dot:], name[:dot]
    return "", name


def path_tags(path: str) -> set[Tag]:
    """Tags that follow from the file's path alone (a new set: callers add to it)."""
    return set(_path_tags(path))


# The unitizer asks several times per file (context, read decision, content tags); the answer
# depends on the string only.
@functools.lru_cache(maxsize=4096)
def _path_tags(path: str) -> frozenset[Tag]:
    dir_names, name = split_path(path)
    lower = name.lower()
    dirs = [d.lower() for d in dir_names]
    tags: set[Tag] = set()
    if lower in LOCKFILES:
        tags.add(Tag.LOCKFILE)
    if (dirs and dirs[0] in _VENDOR_DIRS) or any(d in _VENDOR_DIRS_ANYWHERE for d in dirs):
        tags.add(Tag.VENDORED)
    if any(d in _TEST_DIRS for d in dirs) or _TEST_NAME.search(name):
        tags.add(Tag.TEST)
    suffix = suffix_and_stem(name)[0].lower()
    stem = suffix_and_stem(lower)[1]
    if (suffix in _DOC_EXT and not _NOT_DOCS.match(lower)) or (
        stem in _DOC_STEMS and suffix in ("", *_DOC_EXT)
    ):
        tags.add(Tag.DOCS)
    elif any(d in _DOC_DIRS for d in dirs) and suffix in (*_DOC_EXT, ".html", ".css", ".py", ""):
        tags.add(Tag.DOCS)  # doc sources (conf.py, theme files) live next to the pages
    if Tag.LOCKFILE not in tags and (
        suffix in _CONFIG_EXT
        or lower in _CONFIG_NAMES
        or lower.startswith(("dockerfile.", "docker-compose", ".env."))
        or suffix == ".mk"
        or any(d in _CONFIG_DIRS for d in dirs)
    ):
        tags.add(Tag.CONFIG)
    if _GENERATED_NAME.search(lower) or any(d in _GENERATED_DIRS for d in dirs):
        tags.add(Tag.GENERATED)
    return frozenset(tags)


def generated_header(lines: Iterable[str]) -> bool:
    """True when one of the first lines is a comment carrying a generated-file marker."""
    head = list(itertools.islice(lines, GENERATED_HEADER_LINES))
    # Every marker contains "generated" or "do not ed(it)", and the case-insensitive regex can
    # only match those letters as their ASCII upper or lower case (of the characters that
    # match ASCII letters differently, none matches these), so one C-level look at the lowered
    # lines rules out almost every file before any line is searched.
    lowered = "\n".join(head).lower()
    if "generated" not in lowered and "do not ed" not in lowered:
        return False
    return any(_GENERATED_HEADER.search(line) for line in head)


# --- security ---------------------------------------------------------------------------------
# Each entry is a reason a reviewer should look closer. The net is wide on purpose: the tag only
# deepens context and lowers rule confidence, it never raises a finding by itself.
#
# Speed matters (every changed line of every diff is scanned), and one big alternation regex is
# ~100× slower than needed in CPython's `re`. So detection is two-step: one trie-shaped regex
# finds candidate keywords (a cheap literal scan), and a keyword that is not conclusive on its
# own is confirmed by a small regex on the line it sits in.
_SECURITY_PATH = re.compile(
    r"auth(?!ors?\b)|login|logout|passw|secret|token(?!i[sz])|crypt|session|permission|acl\b"
    r"|oauth|saml|jwt|security|sanitiz|csrf|cors|credential|keystore|\.pem$|\.key$|\.env\b",
    re.IGNORECASE,
)
_FILE_ON_INPUT = (
    r"(open\s*\(|os\.path\.join|path\s*\(|readfile|filepath\.join|os\.open|send_from_directory)"
    r".*(request|params|argv|input\s*\(|query|user|upload|filename)"
)
_SQL_BUILD = (
    # a SQL statement built from strings (f-string, %, +, .format, template literal)
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b"
    r".*(%s|%\(|\+\s*\w|\{|\$\{|\.format\()"
    r"|\bf[\"'].*\b(SELECT|INSERT|UPDATE|DELETE)\b"
)
# Lower-case keyword → None if the keyword alone is enough, else a regex its line must match.
_KEYWORDS: dict[str, str | None] = {
    # credentials and secrets
    **dict.fromkeys(
        ("passw", "secret", "api_key", "apikey", "api-key", "access_key", "accesskey"),
    ),
    **dict.fromkeys(("private_key", "privatekey", "credential", "csrf", "permission", "cookie")),
    "token": r"token(?!i[sz])",
    "auth": r"auth(?!ors?\b|orship|ored)",
    "session": None,
    "cors": r"\bcors\b",
    # cryptography
    **dict.fromkeys(("hashlib", "hmac", "jwt", "bcrypt", "scrypt", "argon2", "crypto", "cipher")),
    "fernet": None,
    "ssl": r"\bssl\b",
    "tls": r"\btls\b",
    "verify": r"verify\s*=\s*false",
    "random.": r"random\.(random|randint|choice)\b",
    # command execution and code evaluation
    **dict.fromkeys(("subprocess", "os.system", "os.popen", "os.exec", "child_process")),
    **dict.fromkeys(("execsync", "exec.command", "runtime.getruntime")),
    "shell": r"shell\s*=\s*true",
    "eval": r"\beval\s*\(",
    "exec": r"\bexec\s*\(",
    "execute": r"\.execute(many)?\s*\(",
    "spawn": r"\bspawn\s*\(",
    "function": r"new\s+function\s*\(",
    # deserialization
    **dict.fromkeys(("pickle", "marshal.load", "shelve", "jsonpickle", "unserialize")),
    "yaml": r"yaml\.(unsafe_)?load\b",
    "dill": r"\bdill\b",
    # SQL through raw cursors
    "cursor": r"cursor\s*\(",
    ".raw": r"\.raw\s*\(",
    "sqlalchemy.text": None,
    # markup injection
    **dict.fromkeys(("innerhtml", "outerhtml", "document.write", "mark_safe", "autoescape")),
    "render_template_string": None,
    "safe": r"\|\s*safe\b",
    # filesystem, permissions, network
    **dict.fromkeys(("chmod", "setuid", "mktemp", "send_file", "sendfile", "ssrf")),
    "allow_origins": None,
    "777": r"\b0o?777\b",
    "unsafe": r"\bunsafe\b",
    # file access on user input: keyed on the input side, confirmed by a file operation
    **dict.fromkeys(
        ("request", "params", "argv", "input", "query", "user", "upload", "filename"),
        _FILE_ON_INPUT,
    ),
}
# Case-sensitive keywords (SQL is conventionally upper case; key formats are exact).
_CASED_KEYWORDS: dict[str, str | None] = {
    **dict.fromkeys(("SELECT", "INSERT", "UPDATE", "DELETE"), _SQL_BUILD),
    "AKIA": r"AKIA[0-9A-Z]{16}",
    "PRIVATE KEY": r"-----BEGIN [A-Z ]*PRIVATE KEY",
    **dict.fromkeys(("sk_live_", "sk_test_", "rk_live_", "rk_test_"), r"[sr]k_(live|test)_\w{10}"),
    **dict.fromkeys(("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{20}"),
    "xox": r"\bxox[abprs]-[A-Za-z0-9-]{10}",
    "AIza": r"AIza[0-9A-Za-z_-]{30}",
}


def _trie_regex(words: Iterable[str]) -> re.Pattern[str]:
    """One regex matching any of `words`, shaped as a trie so `re` scans it quickly."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return re.compile(emit(root))


def _confirmers(table: dict[str, str | None], flags: int) -> dict[str, re.Pattern[str] | None]:
    return {k: re.compile(v, flags) if v else None for k, v in table.items()}


def _spaced(table: dict[str, str | None]) -> tuple[str, ...]:
    """The keywords that contain whitespace (see _may_contain)."""
    return tuple(k for k in table if k.split() != [k])


# The literal start of each _SECURITY_PATH alternative (keep in step with it).
_SECURITY_PATH_STEMS = _trie_regex(
    (
        *("auth", "login", "logout", "passw", "secret", "token", "crypt", "session"),
        *("permission", "acl", "oauth", "saml", "jwt", "security", "sanitiz", "csrf", "cors"),
        *("credential", "keystore", ".pem", ".key", ".env"),
    )
)
_KEYWORD_SCAN = _trie_regex(_KEYWORDS)
_KEYWORD_CONFIRM = _confirmers(_KEYWORDS, re.IGNORECASE)
_KEYWORD_SPACED = _spaced(_KEYWORDS)
_CASED_SCAN = _trie_regex(_CASED_KEYWORDS)
_CASED_CONFIRM = _confirmers(_CASED_KEYWORDS, 0)
_CASED_SPACED = _spaced(_CASED_KEYWORDS)


def security_sensitive(path: str, changed_lines: Sequence[str]) -> bool:
    """The path or changed lines look security-relevant.

    Removed lines count as much as added ones: deleting a check is a security change. Lines
    may keep their "+"/"-" diff prefix; no pattern depends on what starts a line.
    """
    return security_sensitive_text(path, "\n".join(changed_lines))


# Lines and words seen to contain no keyword (no scan matches them, no spaced keyword is in
# them). Code repeats its lines and identifiers across files and units, so most of a change is
# answered by C-level set differences instead of regex scans; only what is new is scanned.
# Bounded: each is cleared when it grows past its limit, and long lines are not kept.
_CLEAN_LINES: set[str] = set()
_CLEAN_WORDS: set[str] = set()
_CLEAN_MAX = 50_000
_CLEAN_LINE_MAX_CHARS = 240


def security_sensitive_text(path: str, text: str) -> bool:
    """security_sensitive with the changed lines already joined by "\\n"."""
    if _security_path(path):
        return True
    if not text:
        return False
    # Most changes contain no keyword at all, which their distinct words answer much faster
    # than the full scan (see _may_contain). Lowering the words one by one gives the words of
    # the lowered text: case mapping never crosses whitespace. No keyword contains a newline,
    # so each occurs within one line, and a clean line (all its words clean, no spaced keyword)
    # cannot make either check true: only the other lines and their other words are asked.
    fresh_lines = set(text.split("\n")).difference(_CLEAN_LINES)
    if not fresh_lines:
        return False
    fresh_text = "\n".join(fresh_lines)
    fresh_words = set(fresh_text.split()).difference(_CLEAN_WORDS)
    words = "\n".join(fresh_words)
    may_lowered = _may_contain(words.lower(), fresh_text, _KEYWORD_SCAN, _KEYWORD_SPACED, True)
    may_cased = _may_contain(words, fresh_text, _CASED_SCAN, _CASED_SPACED)
    if not may_lowered and not may_cased:  # every fresh line and word is clean
        _remember_clean(fresh_lines, fresh_words)
        return False
    if may_lowered and _scan(text.lower(), _KEYWORD_SCAN, _KEYWORD_CONFIRM):
        return True
    return may_cased and _scan(text, _CASED_SCAN, _CASED_CONFIRM)


def _remember_clean(lines: set[str], words: set[str]) -> None:
    if len(_CLEAN_LINES) > _CLEAN_MAX:
        _CLEAN_LINES.clear()
    if len(_CLEAN_WORDS) > _CLEAN_MAX:
        _CLEAN_WORDS.clear()
    _CLEAN_LINES.update(line for line in lines if len(line) <= _CLEAN_LINE_MAX_CHARS)
    _CLEAN_WORDS.update(words)


def _security_path(path: str) -> bool:
    """_SECURITY_PATH.search(path), whose alternatives re tries one by one at every position.
    An ASCII path first has its lowered form scanned for their literal stems (one trie regex,
    see _trie_regex): a case-insensitive match of a pattern contains its stem, and in ASCII
    text that is exactly an occurrence of the stem in the lowered text."""
    if path.isascii() and _SECURITY_PATH_STEMS.search(path.lower()) is None:
        return False
    return _SECURITY_PATH.search(path) is not None


def _scan(text: str, scan: re.Pattern[str], confirm: dict[str, re.Pattern[str] | None]) -> bool:
    for match in scan.finditer(text):
        check = confirm[match.group()]
        if check is None:
            return True
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        if check.search(text, start, end if end != -1 else len(text)):
            return True
    return False


def _may_contain(
    words: str, text: str, scan: re.Pattern[str], spaced: tuple[str, ...], lower: bool = False
) -> bool:
    """Whether any keyword occurs in text (lowered first when `lower`), asked of its distinct
    words (`words`, one a line, already lowered when `lower`).

    The keyword regex costs ~25 ns per character scanned, and code repeats its words, so the
    set of its whitespace-separated words is much shorter than the text. A keyword without
    whitespace can only occur inside one word, so it occurs in the text exactly when it occurs
    in one of the words; the few keywords with a space in them are looked up in the text
    itself. A False is therefore exact; a True means the full scan, which needs each match's
    line for its confirming pattern, has to run.
    """
    if spaced:
        searched = text.lower() if lower else text
        if any(keyword in searched for keyword in spaced):
            return True
    return scan.search(words) is not None


# --- comments and whitespace ------------------------------------------------------------------
_HASH = ("#",)
_C_LIKE = ("//", "/*", "*/", "* ", "*\t")  # "* " is a block-comment continuation line
_COMMENT_PREFIXES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ("python", "ruby", "shell", "yaml", "toml", "r", "perl", "makefile", "dockerfile"), _HASH
    ),
    **dict.fromkeys(
        (
            "javascript",
            "typescript",
            "tsx",
            "go",
            "rust",
            "java",
            "kotlin",
            "scala",
            "swift",
            "c",
            "cpp",
            "csharp",
        ),
        _C_LIKE,
    ),
    "php": (*_C_LIKE, "#"),
    "css": ("/*", "*/", "* "),
    "scss": _C_LIKE,
    "sql": ("--",),
    "lua": ("--",),
    "ini": ("#", ";"),
    "html": ("<!--",),
    "xml": ("<!--",),
}
# What str.split() takes for whitespace among the ASCII characters (0x1c-0x1f included).
_ASCII_SPACE = bytes(byte for byte in range(128) if chr(byte).isspace())
# Languages where a line's indentation is syntax: re-indenting is not a whitespace-only change.
_INDENT_SENSITIVE = frozenset({"python", "yaml", "makefile"})


def only_comments(language: str | None, changed_lines: Iterable[str]) -> bool:
    """Every changed line is a comment or blank, and at least one is a comment. The lines are
    read only up to the first one that is neither."""
    prefixes = _COMMENT_PREFIXES.get(language or "")
    if not prefixes:
        return False
    seen_comment = False
    for line in changed_lines:
        stripped = line.strip()
        if not stripped:
            continue
        if not (stripped.startswith(prefixes) or stripped == "*"):
            return False
        seen_comment = True
    return seen_comment


def only_whitespace(language: str | None, removed: Sequence[str], added: Sequence[str]) -> bool:
    """The change only moves whitespace: re-indentation, trailing spaces, CRLF, blank lines.

    Runs of whitespace are collapsed rather than removed, so `a b` → `ab` (which can change
    meaning) does not count. For indentation-sensitive languages each line keeps its
    indentation, so moving a Python statement out of a block is not "whitespace only".
    """
    if not removed and not added:
        return False
    return whitespace_only_change(language, "\n".join(removed), "\n".join(added))


def whitespace_only_change(language: str | None, removed: str, added: str) -> bool:
    """only_whitespace for a change of at least one line, with the removed and the added lines
    (no prefix) each joined by "\\n". Joining by a newline changes neither check: both only
    compare the text's non-whitespace characters, or its words, and a newline is whitespace."""
    # Cheap rejection first: the non-whitespace characters must be the same. For ASCII text
    # (most code) a bytes translate deletes the whitespace without making a string per word.
    if removed.isascii() and added.isascii():
        if removed.encode("ascii").translate(None, _ASCII_SPACE) != added.encode("ascii").translate(
            None, _ASCII_SPACE
        ):
            return False
    elif "".join(removed.split()) != "".join(added.split()):
        return False
    if language in _INDENT_SENSITIVE:
        return _indented(removed.split("\n")) == _indented(added.split("\n"))
    return " ".join(removed.split()) == " ".join(added.split())


def _indented(lines: Iterable[str]) -> list[tuple[str, str]]:
    out = []
    for line in lines:
        body = line.strip()
        if body:
            out.append((line[: len(line) - len(line.lstrip())], " ".join(body.split())))
    return out
