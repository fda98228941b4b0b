"""How many threads numpy's BLAS uses for embedding, set while the process runs.

Embedding is float32 matmuls in numpy's bundled OpenBLAS, which starts one thread per core
that spin-wait on each other between calls. On a busy machine that is ruinous: 60 short texts
took 22 s and 4.9 CPU-seconds on 2 threads against 6 s and 0.8 on 1 (load average 18 on 2
cores, benchmarks/memory_embed.py). So the embedder sets 1 BLAS thread before it embeds and
runs its own worker threads instead (MiniLMEmbedder.threads, one per usable core): each is one
core's work that never spins waiting on another, and at nice 19 (the language server's
refresh process) they take only what the editor leaves idle. `OPENBLAS_NUM_THREADS` only
works before numpy is imported; this works later, through OpenBLAS's own entry points (what
threadpoolctl does, without the dependency). Process-wide: nothing else in Redline uses numpy.

Best effort: where the library or its entry point cannot be found (another BLAS, another
platform's wheel layout) nothing is changed and False is returned.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

# numpy's wheels rename OpenBLAS's symbols (scipy-openblas, 64-bit integers); a system
# OpenBLAS keeps the plain names.
_PREFIXES = ("scipy_openblas", "openblas")
_SUFFIXES = ("64_", "_64_", "")


@functools.cache
def _openblas() -> tuple[ctypes.CDLL, str] | None:
    """numpy's OpenBLAS (already loaded by numpy: opening it again yields the same copy) and
    the symbol prefix+suffix its entry points use."""
    try:
        import numpy as np

        root = Path(np.__file__).resolve().parent
        found = [
            *sorted((root.parent / "numpy.libs").glob("*openblas*")),  # Linux, Windows wheels
            *sorted((root / ".dylibs").glob("*openblas*")),  # macOS wheels
        ]
        for path in found:
            lib = ctypes.CDLL(str(path))
            for prefix in _PREFIXES:
                for suffix in _SUFFIXES:
                    if hasattr(lib, f"{prefix}_set_num_threads{suffix}") and hasattr(
                        lib, f"{prefix}_get_num_threads{suffix}"
                    ):
                        return lib, f"{prefix}_%s{suffix}"
    except (OSError, ImportError):
        return None
    return None


def blas_threads() -> int | None:
    """The number of threads numpy's OpenBLAS uses now; None when it cannot be told."""
    found = _openblas()
    if found is None:
        return None
    lib, pattern = found
    get = getattr(lib, pattern % "get_num_threads")
    get.restype = ctypes.c_int
    return int(get())


def set_blas_threads(threads: int) -> bool:
    """Make numpy's OpenBLAS use `threads` threads (process-wide); False if it cannot."""
    found = _openblas()
    if found is None:
        return False
    lib, pattern = found
    setter = getattr(lib, pattern % "set_num_threads")
    setter.argtypes = [ctypes.c_int]
    setter.restype = None
    setter(max(1, int(threads)))
    return True
