"""The streamed diff: git's diff output handed on while git is still writing it.

DiffStream cuts the output into runs of whole file sections for a DiffConsumer (diff/units.py's
UnitBuilder), and ReadAhead reads the new versions those sections name with one
`git cat-file --batch` meanwhile. Only an optimisation of the one-shot path (the whole diff
text, then a batched read): the text, the totals and the contents read are the same.

Every diff Redline reviews passes here (a git diff, a forge's through `capped_diff`), so this is
where Redline's own files (`files.REDLINE_STATE_FILES`: the dismissals an editor writes) leave
it: their sections are dropped before anything sees them. They are no unit, no changed file in
the totals or the label, no skipped entry, and never reach an analyzer or a model, whatever the
scope and whichever entry point (CLI, language server) asked. A file whose lines end in a bare
CR gets its hunks by lines here too (git/cr_breaks.py).
"""

from __future__ import annotations

import os
import re
import threading
from typing import TYPE_CHECKING, Final, Protocol

from redline.errors import RedlineError
from redline.files import REDLINE_STATE_FILES
from redline.git.cr_breaks import lf_sections
from redline.git.difftext import diff_counts
from redline.git.names import is_oid
from redline.git.process import decode
from redline.git.section_cap import HEADER_MAX, SectionCut
from redline.model import DiffStats

if TYPE_CHECKING:
    from pathlib import Path

    from redline.git.runner import GitRunner

# What starts every file section but the first: a cut is made after its newline.
_NEXT: Final = b"\ndiff "
# The `diff --git` line of a Redline state file's section: its names need no quoting, and
# every diff Redline reads has the a/ b/ prefixes (git: DIFF_OPTIONS; forges write them). A
# rename to or from one of them names another file too: that section stays.
_STATE_HEADERS: Final = tuple(
    f"diff --git a/{path} b/{path}\n".encode() for path in sorted(REDLINE_STATE_FILES)
)
# A blob id as a diff's `index` line may abbreviate it.
_ABBREV_RE: Final = re.compile(r"[0-9a-f]{4,64}")


class GitAccess(Protocol):
    """What a read-ahead needs of a `Repo` (which streams through this module)."""

    root: Path
    runner: GitRunner


class DiffConsumer(Protocol):
    """Takes a diff while git is still writing it (see Repo.diff)."""

    def feed(self, text: str) -> list[tuple[str, str]]:
        """Take the next complete file sections of the diff, in order. Return the files whose
        new version the consumer will read, as (path, new blob id from the `index` line), so
        they can be read while the diff goes on."""
        ...

    def digest(self) -> None:
        """Do whatever work on the sections fed so far need not come before their reads are
        requested: called right after each feed's reads are, so git reads while it runs."""
        ...


class DiffStream:
    """Cuts git's diff output into runs of complete file sections for a DiffConsumer, and
    cuts any one section over `max_section_bytes` down to its header (git/section_cap.py)
    while it streams past: such a section is never held whole.

    A cut is made only before a line starting with "diff ": in git's output no other line can
    (hunk body lines start with ' ', '+', '-' or '\\'; names with a newline are C-quoted), and
    every section starts with one. So each run parses exactly as it does inside the whole text,
    and since a cut follows a newline byte it never splits a UTF-8 sequence: decoding the runs
    one by one gives the same text as decoding the whole output.
    """

    def __init__(
        self,
        consumer: DiffConsumer | None,
        read_ahead: ReadAhead | None,
        max_section_bytes: int | None = None,
    ) -> None:
        self._consumer = consumer
        self._read_ahead = read_ahead
        self._cap = max_section_bytes
        # Past this, the section still arriving is cut as it comes (never below HEADER_MAX:
        # its header is taken from what is held).
        self._hold = None if max_section_bytes is None else max(max_section_bytes, HEADER_MAX)
        self._pending = bytearray()
        self._cutting: SectionCut | None = None  # the section being dropped as it arrives
        self._tail = b""  # while cutting: the last bytes seen, where a "\ndiff " may start
        self._texts: list[str] = []
        # stats_from_diff's counts, summed run by run (None once a run does not start with
        # "diff --git ", which the sum does not cover; then the whole text is counted).
        self._counts: list[int] | None = [0, 0, 0]
        self._cut_lines = [0, 0]  # the changed lines of the sections cut (not in the text)

    def take(self, chunk: bytes) -> None:
        if self._cutting is not None:
            chunk = self._skip(chunk)
            if not chunk:
                return
        self._pending += chunk
        cut = self._pending.rfind(b"\ndiff ")
        if cut != -1:
            self._send_run(bytes(self._pending[: cut + 1]))
            del self._pending[: cut + 1]
        if self._hold is not None and len(self._pending) > self._hold:
            # The section still arriving is over the cap: keep its header, drop the rest.
            self._cutting = SectionCut(bytes(self._pending))
            self._tail = bytes(self._pending[-(len(_NEXT) - 1) :])
            self._pending.clear()

    def _skip(self, chunk: bytes) -> bytes:
        """Drop chunk's bytes of the section being cut; return what follows it (the start of
        the next section), if it is in this chunk."""
        assert self._cutting is not None
        seen = self._tail + chunk
        end = seen.find(_NEXT)
        if end == -1:
            self._cutting.more(chunk)
            self._tail = seen[-(len(_NEXT) - 1) :]
            return b""
        start = end + 1  # of the next section, in `seen`
        own = start - len(self._tail)  # chunk's bytes that are still the cut section's
        if own >= 0:
            self._cutting.more(chunk[:own])
        else:  # the tail's last bytes, counted already, began the next section
            self._cutting.size += own
        self._end_cut()
        return seen[start:]

    def _end_cut(self) -> None:
        assert self._cutting is not None and self._cap is not None
        cutting, self._cutting, self._tail = self._cutting, None, b""
        self._cut_lines[0] += cutting.added
        self._cut_lines[1] += cutting.removed
        self._send(cutting.stub(self._cap))

    def flush(self) -> None:
        if self._cutting is not None:
            self._end_cut()
        if self._pending:
            self._send_run(bytes(self._pending))
            self._pending.clear()

    def _send_run(self, data: bytes) -> None:
        """Send a run of complete sections, each over the cap replaced by its stub."""
        if self._cap is None or len(data) <= self._cap:
            self._send(data)
            return
        parts: list[bytes] = []
        start = 0
        while start < len(data):
            end = data.find(_NEXT, start)
            end = len(data) if end == -1 else end + 1
            if end - start > self._cap:
                cutting = SectionCut(data[start:end])
                self._cut_lines[0] += cutting.added
                self._cut_lines[1] += cutting.removed
                parts.append(cutting.stub(self._cap))
            else:
                parts.append(data[start:end])
            start = end
        self._send(b"".join(parts))

    def _send(self, data: bytes) -> None:
        data = without_state_files(data)
        if not data:
            return
        text = lf_sections(decode(data))
        self._texts.append(text)
        if self._consumer is not None:
            wanted = self._consumer.feed(text)
            if wanted and self._read_ahead is not None:
                self._read_ahead.want(wanted)
            self._consumer.digest()
        # Counted now, while git is still writing, rather than all at once after it is done.
        if self._counts is not None:
            if len(self._texts) > 1 and not text.startswith("diff --git "):
                self._counts = None
            else:
                self._counts = [a + b for a, b in zip(self._counts, diff_counts(text), strict=True)]

    @property
    def held(self) -> int:
        """Bytes received and not handed on yet: with a cap, at most max(cap, HEADER_MAX)
        and one chunk, whatever a section's size."""
        return len(self._pending)

    def text(self) -> str:
        return "".join(self._texts)

    def stats(self) -> DiffStats:
        """stats_from_diff(self.text()), plus the changed lines of the sections cut."""
        if self._counts is None:
            files, added, removed = diff_counts(self.text())
        else:
            files, added, removed = self._counts
        return DiffStats(
            files=files, added=added + self._cut_lines[0], removed=removed + self._cut_lines[1]
        )


def without_state_files(data: bytes) -> bytes:
    """`data` (whole file sections) without the sections of Redline's own files."""
    if not any(data.startswith(h) or b"\n" + h in data for h in _STATE_HEADERS):
        return data
    kept: list[bytes] = []
    start = 0
    while start < len(data):
        end = data.find(_NEXT, start)
        end = len(data) if end == -1 else end + 1
        if not data.startswith(_STATE_HEADERS, start):
            kept.append(data[start:end])
        start = end
    return b"".join(kept)


def capped_diff(data: bytes, max_section_bytes: int) -> tuple[str, DiffStats]:
    """A whole diff read at once (a forge's, for a pull request): its text with every section
    over the cap cut as a streamed one is, and its totals."""
    stream = DiffStream(None, None, max_section_bytes)
    stream.take(data)
    stream.flush()
    return stream.text(), stream.stats()


class ReadAhead:
    """Reads new-side file versions while the diff that names them is still being written
    and parsed: one `git cat-file --batch` for the whole diff, fed through a pipe.

    Each file comes with its new blob's id as the diff's `index` line abbreviates it, so no
    tree lookups are needed. The consumer's thread writes the ids into the pipe as sections
    are parsed; a background thread runs cat-file (through the hardened runner: timeout and
    output cap as always) and splits its output. git does the reading in its own process, so
    it overlaps with the parsing in Python.

    Only an optimisation: anything it did not read (an id git cannot resolve or that names
    something else, an oversized blob, a failed cat-file) is simply missing from results(),
    and ScopeDiff.prefetch_new reads it the ordinary way, with the ordinary errors.
    """

    def __init__(self, repo: GitAccess, rev: str, max_bytes: int) -> None:
        self.rev = rev
        self._repo = repo
        self._requested: list[tuple[str, str]] = []  # in the order written to cat-file
        self._stream = CatFileStream(max_bytes)
        read_end, write_end = os.pipe()
        self._input: int | None = write_end
        # Not a daemon: Repo.diff always closes the input, so cat-file and the thread end.
        self._thread = threading.Thread(
            target=self._run, args=(read_end,), name="redline-read-ahead"
        )
        self._thread.start()

    def _run(self, read_end: int) -> None:
        try:
            # --buffer: cat-file writes in large blocks instead of flushing every object.
            self._repo.runner.run_git(
                self._repo.root,
                "cat-file",
                "--batch",
                "--buffer",
                stdin_fd=read_end,
                on_stdout=self._stream.take,
            )
        except RedlineError:
            pass  # timed out, over the output cap, ...: what is missing is read later
        finally:
            # Once cat-file is gone, writes to the pipe fail instead of blocking.
            os.close(read_end)

    def want(self, files: list[tuple[str, str]]) -> None:
        """(path, new blob id or an abbreviation of it) of files to read, in diff order."""
        files = [(p, oid) for p, oid in files if _ABBREV_RE.fullmatch(oid)]
        if not files or self._input is None:
            return
        data = "".join(f"{oid}\n" for _, oid in files).encode("ascii")
        try:
            while data:
                data = data[os.write(self._input, data) :]
        except OSError:  # cat-file is gone: stop asking
            self.close()
            return
        self._requested += files

    def close(self) -> None:
        """No more files: cat-file answers what it was asked and exits."""
        if self._input is not None:
            os.close(self._input)
            self._input = None

    def results(self) -> dict[str, bytes]:
        """path → content of every version read; waits for cat-file to finish."""
        self.close()
        self._thread.join()
        contents: dict[str, bytes] = {}
        # One record per request line, in order (a request cut short by a failed write gets
        # an answer that does not match its id, and is left out).
        for (path, oid), (header, content) in zip(
            self._requested, self._stream.records, strict=False
        ):
            fields = header.split()
            if (
                content is not None
                and len(fields) == 3
                and fields[1] == b"blob"
                and is_oid(decode(fields[0]))
                and decode(fields[0]).startswith(oid)
            ):
                contents.setdefault(path, content)
        return contents


class CatFileStream:
    """Splits `cat-file --batch` output into (header, content) records as it arrives.

    The content of an object over max_bytes is dropped while it streams past, never held; it
    and "<name> missing"/"ambiguous" lines give a None content.
    """

    def __init__(self, max_bytes: int) -> None:
        self.records: list[tuple[bytes, bytes | None]] = []
        self._max_bytes = max_bytes
        self._buf = bytearray()
        self._header: bytes | None = None  # of the record whose content is arriving
        self._need = 0  # its bytes still to come, with the newline that ends it
        self._keep = True
        self._parts: list[bytes] = []

    def take(self, chunk: bytes) -> None:
        buf = self._buf
        buf += chunk
        pos = 0
        while True:
            if self._header is None:
                end = buf.find(b"\n", pos)
                if end == -1:
                    break
                header = bytes(buf[pos:end])
                pos = end + 1
                fields = header.split()
                if len(fields) != 3 or not fields[2].isdigit():
                    self.records.append((header, None))
                    continue
                size = int(fields[2])
                self._header, self._need, self._parts = header, size + 1, []
                self._keep = size <= self._max_bytes
            part = min(self._need, len(buf) - pos)
            if self._keep:
                self._parts.append(bytes(buf[pos : pos + part]))
            pos += part
            self._need -= part
            if self._need:
                break
            content = b"".join(self._parts)[:-1] if self._keep else None
            self.records.append((self._header, content))
            self._header = None
        del buf[:pos]


__all__ = ["CatFileStream", "DiffConsumer", "DiffStream", "ReadAhead", "capped_diff"]
