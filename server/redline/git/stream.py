"""The streamed diff: git's diff output handed on while git is still writing it.

DiffStream cuts the output into runs of whole file sections for a DiffConsumer (diff/units.py's
UnitBuilder), and ReadAhead reads the new versions those sections name with one
`git cat-file --batch` meanwhile. Only an optimisation of the one-shot path (the whole diff
text, then a batched read): the text, the totals and the contents read are the same.
"""

from __future__ import annotations

import os
import re
import threading
from typing import TYPE_CHECKING, Final, Protocol

from redline.errors import RedlineError
from redline.git.difftext import diff_counts, stats_from_diff
from redline.git.names import is_oid
from redline.git.process import decode
from redline.model import DiffStats

if TYPE_CHECKING:
    from pathlib import Path

    from redline.git.runner import GitRunner

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
    """Cuts git's diff output into runs of complete file sections for a DiffConsumer.

    A cut is made only before a line starting with "diff ": in git's output no other line can
    (hunk body lines start with ' ', '+', '-' or '\\'; names with a newline are C-quoted), and
    every section starts with one. So each run parses exactly as it does inside the whole text,
    and since a cut follows a newline byte it never splits a UTF-8 sequence: decoding the runs
    one by one gives the same text as decoding the whole output.
    """

    def __init__(self, consumer: DiffConsumer, read_ahead: ReadAhead | None) -> None:
        self._consumer = consumer
        self._read_ahead = read_ahead
        self._pending = bytearray()
        self._texts: list[str] = []
        # stats_from_diff's counts, summed run by run (None once a run does not start with
        # "diff --git ", which the sum does not cover; then the whole text is counted).
        self._counts: list[int] | None = [0, 0, 0]

    def take(self, chunk: bytes) -> None:
        self._pending += chunk
        cut = self._pending.rfind(b"\ndiff ")
        if cut != -1:
            self._send(bytes(self._pending[: cut + 1]))
            del self._pending[: cut + 1]

    def flush(self) -> None:
        if self._pending:
            self._send(bytes(self._pending))
            self._pending.clear()

    def _send(self, data: bytes) -> None:
        text = decode(data)
        self._texts.append(text)
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

    def text(self) -> str:
        return "".join(self._texts)

    def stats(self) -> DiffStats:
        """stats_from_diff(self.text())."""
        if self._counts is None:
            return stats_from_diff(self.text())
        files, added, removed = self._counts
        return DiffStats(files=files, added=added, removed=removed)


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


__all__ = ["CatFileStream", "DiffConsumer", "DiffStream", "ReadAhead"]
