"""What both memory stores hold alike, and how they refuse: the errors, texts without NUL or
lone surrogates, unit-length vectors, the caps' notes. sqlite_store.py and pg_store.py (and
their *_rows.py) build on this module; store.py opens them and re-exports its names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from redline.errors import RedlineError

if TYPE_CHECKING:
    from redline.config_models import MemorySettings
    from redline.memory.model import FileGraph, Vectors

MIB: Final = 1024 * 1024


class MemoryStoreError(RedlineError):
    """Project memory's store cannot be opened or used (a database down, a file not ours)."""


class MemoryFullError(MemoryStoreError):
    """A cap is reached: `put_file` refused a file. `note` is the limits_reached line."""

    def __init__(self, note: str, path: str) -> None:
        super().__init__(
            f"project memory is full: {note}; {path} was not indexed",
            hint="raise the cap in your user file ([memory] max_symbols / max_index_mb)",
        )
        self.note = note
        self.path = path


def clean_text(text: str) -> str:
    """A text as a store keeps it: NUL (PostgreSQL refuses it in text) and lone surrogates
    (not encodable as UTF-8) become U+FFFD, in both stores alike."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    return text


def size_note(mem: MemorySettings) -> str:
    return f"index size cap {mem.max_index_mb:,} MB reached (memory.max_index_mb)"


def symbol_note(mem: MemorySettings) -> str:
    return f"symbol cap {mem.max_symbols:,} reached (memory.max_symbols)"


def refused_notes(reasons: Sequence[tuple[str, int]]) -> list[str]:
    """limits_reached lines for the files a store refused: (reason, how many files)."""
    return [f"{reason}: {n:,} file{'s' if n != 1 else ''} not indexed" for reason, n in reasons]


def check_vectors(graph: FileGraph, vectors: Vectors) -> Vectors | None:
    """The vectors as a store keeps them: float32 rows, one per symbol, unit length (NaN and
    infinities as 0; a zero row stays zero), so a search needs no normalising at read time.
    None when none were given (a build with no embedder: symbols are stored without vectors).
    ValueError for a mismatch."""
    import numpy as np

    array = np.asarray(vectors, dtype=np.float32)
    if array.size == 0:
        return None
    if array.ndim != 2 or array.shape[0] != len(graph.symbols):
        raise ValueError(
            f"{graph.path}: {len(graph.symbols)} symbols but vectors of shape {array.shape}"
        )
    rows = np.nan_to_num(array, nan=0.0, posinf=0.0, neginf=0.0).astype(np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))[:, None]
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(rows / norms, dtype=np.float32)
