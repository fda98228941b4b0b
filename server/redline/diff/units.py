"""A git diff → ReviewUnits: one per file per group of nearby hunks, with tags and metrics.

The streaming builder and the public entry points. One file's units are built by file_units.py
(grouping, tags from the changed lines, unit ids); what its new version decides (whether it is
read at all, and the large, generated, vendored and minified tags) by new_side.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

from redline.config_models import ReviewSettings
from redline.diff.file_diff import FileDiff
from redline.diff.file_units import units_or_fallback
from redline.diff.new_side import ReadNew, add_content_tags, will_read
from redline.diff.parse import parse_git_diff
from redline.model import ReviewUnit


def build_units(
    diff_text: str,
    read_new: ReadNew | None = None,
    settings: ReviewSettings | None = None,
    *,
    prefetch: Callable[[list[str]], None] | None = None,
    functions: bool = True,
    security: bool = True,
) -> list[ReviewUnit]:
    """Review units for every file of a git unified diff. Never raises on diff content.

    `read_new(path)` returns the new version of a file (None if unavailable); it is called at
    most once per file, and not at all for deleted, binary, submodule, lockfile or vendored files.
    Its content gives the size check (`large`), the generated-header check and the enclosing
    functions. `metrics.functions` stays empty (and `single_function` False) when they are not
    computed: no `read_new`, no grammar for the language, a file over `max_file_bytes`, a new
    file (its depth is full_file whatever its functions), a file that will be skipped, or
    `functions=False` — the offline review passes that, because only the model stages use
    function metrics and tree-sitter parsing costs more than everything else here together.
    """
    builder = UnitBuilder(settings, functions=functions, security=security)
    return builder.finish(diff_text, read_new, prefetch)


class UnitBuilder:
    """build_units, able to start while the diff is still arriving (a git.stream.DiffConsumer).

    `feed` parses each run of complete file sections as git writes it and returns the paths
    whose new version will be read, so the caller can read them meanwhile; `digest`, called
    once those reads are asked for, builds the run's units without function metrics: a file's
    units then do not depend on its new content, only its `large` and `generated` tags do, and
    `finish` adds those. `finish` gives exactly the units build_units gives for the whole text.
    """

    def __init__(
        self,
        settings: ReviewSettings | None = None,
        *,
        functions: bool = True,
        security: bool = True,
    ):
        self.settings = settings or ReviewSettings()
        self.functions = functions
        # The security_sensitive tag only matters to a reader of the units (a model's stages,
        # bandit_scope = "security_sensitive"); scanning every changed line for it is a fifth
        # of building an offline review's units of real code, so it can be left out.
        self.security = security
        self._reset()

    def _reset(self) -> None:
        # What was fed, as its length and a digest: finish compares them with the whole text
        # without a copy of it (keeping the pieces would hold the diff twice).
        self._fed = _Fingerprint()
        # The length of each run fed: finish parses the text again run by run, as fed, when
        # the units wait for the new versions, instead of every file's parsed hunks being held
        # until then (several times the diff: issue 23, "keep memory within a few times it").
        self._runs: list[int] = []
        self._files: list[FileDiff] = []
        self._undrafted: list[FileDiff] = []  # fed, units not built yet (see digest)
        self._wanted: list[str] = []  # paths whose new version finish will read
        # Units built without the new content: (file, its units, built normally).
        self._drafts: list[tuple[FileDiff, list[ReviewUnit], bool]] = []
        self._seen: dict[str, int] = {}

    def feed(self, text: str) -> list[tuple[str, str]]:
        """Take complete file sections; return (path, new blob id) of the files to read. Only
        parses them: their units are built by digest (or finish), once the reads are asked for.
        """
        self._fed.add(text)
        self._runs.append(len(text))
        files = parse_git_diff(text)
        if not self.functions:
            self._files += files
            self._undrafted += files
        reads = [fd for fd in files if will_read(fd)]
        self._wanted += [fd.path for fd in reads]
        return [(fd.path, blob) for fd in reads if (blob := fd.new_blob) is not None]

    def digest(self) -> None:
        """Build the units of the files fed since the last call (without function metrics; with
        them, the units wait for the new versions, in finish)."""
        files, self._undrafted = self._undrafted, []
        if not self.functions:
            self._draft(files)

    def _draft(self, files: list[FileDiff]) -> None:
        for fd in files:
            file_units, built = units_or_fallback(
                fd, None, self.settings, self._seen, content=False, security=self.security
            )
            self._drafts.append((fd, file_units, built))

    def finish(
        self,
        diff_text: str,
        read_new: ReadNew | None = None,
        prefetch: Callable[[list[str]], None] | None = None,
    ) -> list[ReviewUnit]:
        """The units of diff_text. What was fed is used when it is the whole text; a diff that
        did not come through feed (GitHub's PR diff, a direct build_units call) is parsed here,
        and its new versions are read (prefetch) in the background while its units are built.
        """
        fed = self._fed.matches(diff_text)
        if fed and self.functions:
            files: Iterable[FileDiff] = _reparsed(diff_text, self._runs)
        else:
            if not fed:
                self._reset()
                self._files = parse_git_diff(diff_text)
                self._wanted = [fd.path for fd in self._files if will_read(fd)]
            files = self._files
        wanted = self._wanted if read_new is not None else []
        if prefetch is None or not wanted or self.functions:
            if prefetch is not None and wanted:
                # One batched read of every file file_units.py will ask for, instead of one git
                # round trip per file (milliseconds against seconds on a large branch).
                prefetch(wanted)
            seen: dict[str, int] = {}
            return [
                unit
                for fd in files
                for unit in units_or_fallback(
                    fd,
                    read_new,
                    self.settings,
                    seen,
                    functions=self.functions,
                    security=self.security,
                )[0]
            ]
        if fed:
            self.digest()  # the last sections fed, if the feeder did not
            prefetch(wanted)  # joins the read done while the diff arrived (or reads now)
        else:
            # The units do not depend on the new content (see the class docstring), so they are
            # built while git reads it in its own process: the two overlap.
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="redline-prefetch") as pool:
                reading = pool.submit(prefetch, wanted)
                self._draft(self._files)
                reading.result()  # a failed read fails the review, as the direct call would
        units: list[ReviewUnit] = []
        for fd, file_units, built in self._drafts:
            if built and fd.binary and will_read(fd):
                # Only the new side can say whether a "binary" file is text: build it again.
                file_units = units_or_fallback(
                    fd, read_new, self.settings, self._seen, security=self.security
                )[0]
            elif built and will_read(fd):
                add_content_tags(file_units, fd, read_new, self.settings)
            units += file_units
        return units


def _reparsed(text: str, runs: list[int]) -> Iterator[FileDiff]:
    """The file sections of text parsed run by run, in the runs it was fed in (the same
    FileDiffs feed parsed): one run's parse held at a time."""
    start = 0
    for length in runs:
        yield from parse_git_diff(text[start : start + length])
        start += length


class _Fingerprint:
    """The length and BLAKE2 digest of texts added in turn: whether a text is their
    concatenation, told without keeping them."""

    _SLICE = 1 << 20  # characters encoded at a time when a whole text is checked

    def __init__(self) -> None:
        self._length = 0
        self._hash = hashlib.blake2b(digest_size=16)

    def add(self, text: str) -> None:
        self._length += len(text)
        self._hash.update(text.encode("utf-8", errors="surrogatepass"))

    def matches(self, text: str) -> bool:
        if len(text) != self._length:
            return False
        whole = hashlib.blake2b(digest_size=16)
        for start in range(0, len(text), self._SLICE):
            piece = text[start : start + self._SLICE]
            whole.update(piece.encode("utf-8", errors="surrogatepass"))
        return whole.digest() == self._hash.digest()
