"""The tools' sandbox, ToolContext: the repository a tool call may touch, the limits it runs
under, and the text hygiene its results pass through.

One context per review (or ask/debate run); the per-run caps of `ToolLimits` are counted on
it (`writes`). It is plain data plus two helpers shared by all tools: `redact` (key patterns
from agent/redact.py, plus the literal values of the repository's `.env`-style files, which no
pattern can recognise) and `clean` (control characters made visible). Tool results pass
through both before the model sees them.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import platformdirs

from redline.agent.redact import MASK, redact
from redline.errors import RepositoryError
from redline.git.runner import GitRunner
from redline.tools.names import is_env_file_name

if TYPE_CHECKING:
    from redline.config_models import Settings

# Bidi overrides, zero-width characters and C0/C1 controls (tab and newline excepted). Shown as
# `<U+202E>` instead of removed: a reviewer must be able to see a Trojan Source trick.
_INVISIBLE: Final = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
    r"\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]"
)

# `.env` values shorter than this are not masked literally (`true`, `3000`, `dev` would mask
# half the code); key patterns still apply to them.
_MIN_SECRET_VALUE: Final = 8
_ENV_LINE: Final = re.compile(r"^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*[=:]\s*(.*?)\s*$")
_MAX_ENV_FILES: Final = 20
_MAX_ENV_BYTES: Final = 64 * 1024


@dataclass(frozen=True)
class ToolLimits:
    """Per-call bounds, and per-run caps (`max_write_files`, `max_write_total_bytes`: one
    ToolContext is one run). Defaults suit an interactive review; tests shrink them."""

    max_read_bytes: int = 1_000_000  # read_file, read_function, git_show_previous
    max_lines_per_call: int = 2_000
    max_write_bytes: int = 2 * 1024 * 1024  # one write_file call
    max_write_files: int = 20  # distinct reports write_file may write per run
    max_write_total_bytes: int = 10 * 1024 * 1024  # everything write_file writes per run
    max_output_chars: int = 50_000  # what one tool result may hold (the executor caps too)
    max_git_output_bytes: int = 8 * 1024 * 1024  # the runner kills git beyond this
    git_timeout: float = 20.0
    gh_timeout: float = 30.0
    max_search_results: int = 50
    max_line_chars: int = 400  # search_callers: longer lines are cut
    default_log_count: int = 50  # `git log` without -n
    max_log_count: int = 1_000

    @classmethod
    def from_settings(cls, settings: Settings) -> ToolLimits:
        """The defaults with the user's per-run caps (`[tools]`: never from a repository)."""
        return cls(
            max_write_files=settings.tools.max_write_files,
            max_write_total_bytes=settings.tools.max_write_total_bytes,
        )


@dataclass
class WriteLedger:
    """What write_file wrote in this run, for the per-run caps; `refused` counts refusals by
    the cap that refused them, for the run's coverage notes."""

    paths: set[str] = field(default_factory=set)
    bytes_written: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def notes(self) -> list[str]:
        """One coverage line per cap that refused a write."""
        return [
            f"write_file: {cap} reached; {n} further write{'s' if n != 1 else ''} refused "
            f"({len(self.paths)} reports, {self.bytes_written:,} bytes written)"
            for cap, n in self.refused.items()
        ]


def default_report_dir(root: Path) -> Path:
    """`<user cache>/redline/reports/<hash of the repository path>/`: outside every repository."""
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return platformdirs.user_cache_path("redline") / "reports" / f"{root.name[:40]}-{digest}"


@dataclass
class ToolContext:
    """The repository a tool call may touch, how to run git in it, and where reports go.

    `old_rev` is the old side of the change under review (git_show_previous); None means HEAD.
    `extra_secrets` are literal strings always masked (e.g. the user's own API key).
    """

    root: Path
    runner: GitRunner = field(default_factory=GitRunner)
    report_dir: Path | None = None
    old_rev: str | None = None
    limits: ToolLimits = field(default_factory=ToolLimits)
    extra_secrets: tuple[str, ...] = ()
    # The user's settings, for what a run opens once (project memory: tools/memory_tools.py);
    # None: the defaults.
    settings: Settings | None = None
    writes: WriteLedger = field(default_factory=WriteLedger, init=False, repr=False)
    # Project memory as tools/memory_tools.project_memory opened it (once per run).
    memory_slot: list[object] = field(default_factory=list, init=False, repr=False)
    _secret_values: list[str] | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        # Every containment check compares against the resolved root, component by component.
        self.root = Path(os.path.realpath(self.root))
        if not stat.S_ISDIR(os.stat(self.root).st_mode):
            raise RepositoryError(f"{self.root} is not a directory")
        if self.report_dir is None:
            self.report_dir = default_report_dir(self.root)
        self.report_dir = Path(os.path.abspath(self.report_dir))
        if Path(os.path.realpath(self.report_dir)).is_relative_to(self.root):
            # Reports inside the repository could be picked up by its tooling (or committed).
            raise RepositoryError(
                f"the report directory {self.report_dir} is inside the repository under review",
                hint="choose a report directory outside the repository",
            )

    @classmethod
    def for_run(cls, root: Path, settings: Settings) -> ToolContext:
        """The context of one agent run (ask, a debate): its own git runner, the user's caps,
        and the configured API key treated as a secret wherever a tool's output shows it."""
        api_key = settings.models.api_key
        return cls(
            root,
            runner=GitRunner(),
            extra_secrets=(api_key,) if api_key else (),
            limits=ToolLimits.from_settings(settings),
            settings=settings,
        )

    @property
    def reports(self) -> Path:
        assert self.report_dir is not None  # set in __post_init__
        return self.report_dir

    # -- text hygiene ------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """Mask key patterns, `.env` values found in the repository, and extra_secrets."""
        text = redact(text)
        for value in self.secret_values():
            if value in text:
                text = text.replace(value, MASK)
        return text

    def clean(self, text: str) -> str:
        """Control/invisible characters made visible, then secrets masked: for any tool output."""
        return self.redact(make_visible(text))

    def secret_values(self) -> list[str]:
        """Literal secrets to mask: values of `.env`-style files in the work tree + extras.

        Collected once, lazily. Only regular files are read (never through a symlink), a
        bounded number and size, so a hostile repository cannot make this slow or escape.
        """
        with self._lock:
            if self._secret_values is None:
                values = {v for v in self.extra_secrets if len(v) >= _MIN_SECRET_VALUE}
                values |= _env_values(self.root)
                # Longest first, so a value containing another is masked whole.
                self._secret_values = sorted(values, key=len, reverse=True)
            return self._secret_values


def make_visible(text: str) -> str:
    """Replace control, bidi and zero-width characters with `<U+XXXX>` (tab and newline stay)."""
    text = text.replace("\r\n", "\n")
    return _INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def _env_values(root: Path) -> set[str]:
    found: set[str] = set()
    candidates: list[Path] = []
    # The repository root and one level below cover .env, config/.env, services/x/.env is rare
    # enough; a full walk of a big repository would cost seconds on every review.
    for directory in (root, *_subdirs(root)):
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        candidates += [directory / n for n in names if is_env_file_name(n)]
        if len(candidates) >= _MAX_ENV_FILES:
            break
    for path in candidates[:_MAX_ENV_FILES]:
        data = _read_regular(path, _MAX_ENV_BYTES)
        if data is None:
            continue
        for line in data.decode("utf-8", errors="replace").splitlines():
            match = _ENV_LINE.match(line)
            if not match:
                continue
            value = match.group(1)
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            if len(value) >= _MIN_SECRET_VALUE:
                found.add(value)
    return found


def _subdirs(root: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    return [
        Path(e.path)
        for e in entries
        if e.is_dir(follow_symlinks=False) and e.name not in (".git", "node_modules")
    ][:200]


def _read_regular(path: Path, limit: int) -> bytes | None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read(limit)
