"""A review's results published without stalling the event loop: built off it, landed in slices.

A big review's results are 200 files and 1,200 findings, twice (the analyzers' early list, then
the final one). Done in one go on the event loop, that held every hover, code action, cancel and
shutdown for seconds. So:
- What does not depend on the open buffers is built in a worker thread (`asyncio.to_thread`,
  the loop's default executor, never pygls's thread pool, which reads stdin): each file's URI
  (resolving a path costs syscalls), the text of the files the review did not read, the
  dismissed findings (`.redline/dismissed.toml`, read once, not once per file); and, while the
  diagnostics land, the sidebar's redacted rows (`sidebar.prepare_rows`; a finding unchanged
  since the early list keeps its row).
- What depends on them — placing each file's findings in the text its buffer holds and
  publishing them — runs on the loop, a few files at a time, for at most SLICE_S, with a PAUSE_S
  pause between slices for whatever the client sent meanwhile (pygls reads a message in several
  loop turns). A slice places findings in the buffer's text of that moment (`show_file` reads
  it), so an edit made while the results land is never overwritten by a placement for an older
  version: the document's version is the one published with the diagnostics.
- The sidebar's list is held while a landing runs (`Folder.landing`: a growing whole list sent
  every 50 ms would cost far more than the landing) and sent once at its end, its JSON made in a
  worker thread (`sidebar.send_whole`): after the final findings the whole list (before the
  `finished` state); after early ones what their publishes asked for (the whole list for a
  review's first, then the changed files: a model review posts file by file).

Order: a job's landings run one after another (`ReviewJob.landing` chains them), so its final
results never land before, or interleaved with, its early ones. An early landing stops when its
job is cancelled or superseded; the final one, once begun (the folder's runs already hold the
review), lands to its end, unless the folder was cleared meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from redline.lsp import diagnostics, engine, publish, sidebar

if TYPE_CHECKING:
    from redline.lsp.folders import Folder
    from redline.lsp.language_server import RedlineServer
    from redline.model import Finding
    from redline.store.dismissals import Dismissed

log = logging.getLogger("redline.lsp")

# Work on the loop per slice, then a pause: a request that arrives meanwhile waits at most about
# one slice per loop turn pygls needs to read it and answer.
SLICE_S = 0.002
PAUSE_S = 0.002


@dataclass
class Prepared:
    """What a landing needs that no buffer changes, built in a worker thread."""

    uris: dict[str, str] = field(default_factory=dict)  # path → uri (None: outside the repo)
    texts: dict[str, str | None] = field(default_factory=dict)  # path → text on disk
    dismissed: Dismissed | None = None
    dismissed_problem: str | None = None  # why the dismissals could not be read


def prepare(root: Path, paths: Iterable[str], read: Iterable[str]) -> Prepared:
    """In a worker thread: the URIs of `paths`, the disk text of `read`, the dismissals.
    Touches no server state."""
    from redline.store.dismissals import DismissalError, DismissalStore

    out = Prepared()
    for path in paths:
        uri = publish.path_uri(root, path)
        if uri is not None:
            out.uris[path] = uri
    for path in read:
        out.texts[path] = engine.disk_text(root, path)
    try:
        out.dismissed = DismissalStore(root).dismissed()
    except DismissalError as exc:
        out.dismissed_problem = exc.message
    return out


class Slices:
    """Runs steps on the loop, pausing once a slice has taken SLICE_S."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._began = self._loop.time()

    async def step(self) -> None:
        if self._loop.time() - self._began >= SLICE_S:
            await asyncio.sleep(PAUSE_S)
            self._began = self._loop.time()


async def _prepared(
    ls: RedlineServer, root: Path, paths: list[str], read: list[str] | None = None
) -> Prepared:
    ready = await asyncio.to_thread(prepare, root, paths, read or [])
    if ready.dismissed_problem is not None:
        # Said on the loop: a log message written from a thread could split another frame.
        ls.log_message(f"Redline: {ready.dismissed_problem}", types.MessageType.Warning)
    return ready


async def _landing(
    folder: Folder, findings: list[Finding], land: Callable[[], Awaitable[None]]
) -> None:
    """`land()` with the sidebar's list held, while the rows of `findings` are made in another
    worker thread (redacting 1,200 rows takes about a second: the diagnostics do not wait for
    it); the rows are in `Folder.rows` when the list is released."""
    rows = asyncio.ensure_future(
        asyncio.to_thread(sidebar.prepare_rows, findings, dict(folder.rows))
    )
    folder.landing += 1
    try:
        await land()
        try:
            folder.rows.update(await rows)
        except Exception:  # the list then makes its rows itself (`sidebar._rows`)
            log.exception("preparing the sidebar's rows failed")
    finally:
        folder.landing -= 1


async def land_early(
    ls: RedlineServer,
    folder: Folder,
    job_current: Callable[[], bool],
    root: Path,
    by_file: dict[str, list[Finding]],
    texts: dict[str, str | None],
    others_of: Callable[[str, set[str]], list[Finding]],
) -> None:
    """A review's early findings (the analyzers'), file by file, beside the other runs'."""
    findings = [f for fs in by_file.values() for f in fs]
    ready = await _prepared(ls, root, list(by_file))

    async def land() -> None:
        slices = Slices()
        for path, found in by_file.items():
            await slices.step()
            if not job_current():
                return  # a cancelled or superseded review publishes nothing more
            uri = ready.uris.get(path)
            if uri is None:
                continue
            others = others_of(uri, {f.id for f in found})
            diagnostics.show_file(
                ls, folder, uri, [*found, *others], texts.get(path), ready.dismissed
            )

    await _landing(folder, findings, land)
    # What the files' publishes asked for: the whole list for the review's first early
    # findings, then only the files that changed (a model review posts file by file).
    await sidebar.release(ls, folder)


async def land_final(
    ls: RedlineServer,
    folder: Folder,
    root: Path,
    kept: list[Finding],
    own: set[str],
    texts: dict[str, str],
    listed_before: dict[str, list[str]],
    still_kept: Callable[[], bool],
) -> None:
    """Every kept run's findings: this run's replace its kind's previous ones, the other runs'
    stay; files left without any are cleared. `still_kept()`: the folder still holds the run
    (not cleared meanwhile)."""
    anchored = [f for f in kept if f.line is not None]  # unanchored: the sidebar only
    paths = sorted({f.file for f in anchored})
    # Another run's file this review did not read: its text from disk, off the loop.
    read = [p for p in paths if p not in own and p not in texts]
    ready = await _prepared(ls, root, paths, read)
    if not still_kept():
        return
    by_uri: dict[str, list[Finding]] = {}
    path_of: dict[str, str] = {}
    for finding in anchored:
        uri = ready.uris.get(finding.file)
        if uri is not None:
            by_uri.setdefault(uri, []).append(finding)
            path_of[uri] = finding.file

    async def land() -> None:
        slices = Slices()
        for uri, findings in by_uri.items():
            await slices.step()
            if not still_kept():
                return
            path = path_of[uri]
            if path not in own and listed_before.get(uri) == [f.id for f in findings]:
                # Only other runs' findings, unchanged: they stay where the edits moved them.
                diagnostics.publish(ls, folder, uri)
                continue
            text = texts.get(path)
            if text is None and path not in own:
                text = ready.texts.get(path)
            diagnostics.show_file(ls, folder, uri, findings, text, ready.dismissed)
        for uri in sorted((set(folder.published) | set(folder.findings)) - set(by_uri)):
            await slices.step()
            if not still_kept():
                return
            folder.findings.pop(uri, None)
            ls.tracker.remove_file(uri)
            diagnostics.publish(ls, folder, uri)

    await _landing(folder, kept, land)
    await sidebar.send_whole(ls, folder)  # before the review's `finished` state
