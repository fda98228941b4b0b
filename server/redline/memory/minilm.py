"""The all-MiniLM-L6-v2 forward pass in numpy: token ids in, unit sentence vectors out.

It computes what sentence-transformers computes for this model (modules.json: Transformer,
mean Pooling, Normalize) with no torch: a 6-layer BERT encoder (word + position + token-type
embeddings, LayerNorm, 12-head self-attention under the padding mask, exact erf GELU), the mean
of the last hidden states over the attention mask, then L2 normalisation. Inference only (no
dropout), float32 throughout like the reference on a CPU.

The weights come from a `model.safetensors` read with `safetensors.numpy` (embed.py loads and
checks them); this module is pure arithmetic on arrays.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

# erf by Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7 on the whole real line, i.e. at the
# level of float32 rounding (tests/test_memory_embed.py checks erf and gelu against math.erf on
# dense grids). numpy has no erf; np.vectorize(math.erf) is ~100x slower than these few array
# operations, and the tanh approximation of GELU is not what BERT computes.
_AS_P = np.float32(0.3275911)
_AS_A = tuple(
    np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))
# Rows of the feed-forward block's GELU computed together (see MiniLM._layer).
FFN_ROWS = 128


def erf(x: F32) -> F32:
    """erf of a float32 array, elementwise: the approximation's 1.5e-7 plus float32 rounding
    (at most 6e-7 in all; gelu() below uses the same formula without its cancellation)."""
    a = np.abs(x)
    t = np.float32(1.0) / (np.float32(1.0) + _AS_P * a)
    a1, a2, a3, a4, a5 = _AS_A
    poly = ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t
    y = np.float32(1.0) - poly * np.exp(-(a * a))
    return np.copysign(y, x).astype(np.float32, copy=False)


# The same coefficients halved: gelu() wants 0.5 * erfc, and folding the half in saves a pass.
_AS_A_HALF = tuple(np.float32(0.5 * float(a)) for a in _AS_A)


def gelu(x: F32) -> F32:
    """BERT's exact GELU, x * Φ(x) = x/2 * (1 + erf(x/√2)), computed in place on `x`."""
    # x is the (tokens, 1536) intermediate, the largest array of the forward pass; every
    # numpy operation is one pass over it, so this is written as few passes as possible, all
    # in place (each ~1 ms per 3M floats here; a `where=` ufunc, tried first, cost 16 ms).
    # With h = erfc(|x|/√2) / 2, the upper tail: Φ(x) = 1 - h for x >= 0 and h for x < 0.
    a = np.abs(x)
    a *= _INV_SQRT2
    t = _AS_P * a
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    a1, a2, a3, a4, a5 = _AS_A_HALF
    h = a5 * t
    h += a4
    h *= t
    h += a3
    h *= t
    h += a2
    h *= t
    h += a1
    h *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    h *= a  # h = erfc(|x|/√2) / 2
    # Φ = h + [x >= 0] * (1 - 2h): exact in both branches (no 1 - (1 - h) cancellation).
    np.multiply(h, np.float32(-2.0), out=a)
    a += np.float32(1.0)
    a *= x >= 0
    h += a
    x *= h
    return x


@dataclass(frozen=True)
class Layer:
    """One encoder layer's weights, transposed for `x @ w` and with Q, K, V fused."""

    qkv_w: F32  # (hidden, 3 * hidden)
    qkv_b: F32
    out_w: F32  # (hidden, hidden)
    out_b: F32
    ln1_g: F32
    ln1_b: F32
    inter_w: F32  # (hidden, intermediate)
    inter_b: F32
    ffn_w: F32  # (intermediate, hidden)
    ffn_b: F32
    ln2_g: F32
    ln2_b: F32


@dataclass(frozen=True)
class MiniLM:
    """The encoder's weights and shape; `encode` runs it."""

    word: F32  # (vocab, hidden)
    position: F32  # (max_positions, hidden)
    token_type0: F32  # (hidden,): every token is of segment 0 for a single text
    emb_ln_g: F32
    emb_ln_b: F32
    layers: tuple[Layer, ...]
    heads: int
    eps: float

    @property
    def hidden(self) -> int:
        return int(self.word.shape[1])

    @property
    def max_positions(self) -> int:
        return int(self.position.shape[0])

    def encode(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> F32:
        """Unit sentence vectors (batch, hidden) for right-padded ids (batch, seq) and their
        attention mask (1 = token, 0 = padding)."""
        b, s = ids.shape
        # Padding is packed out: every position-wise step (embeddings, the matmuls, GELU,
        # LayerNorm: ~90% of the work) runs on the real tokens only, as rows of one (tokens,
        # hidden) matrix; only attention sees the padded (batch, seq) layout. A caller's small
        # call of texts of mixed lengths (the build embeds 64 at a time) was 17% padding.
        lengths = mask.sum(axis=1)
        packed: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | None = None
        flat_ids = ids.reshape(-1)
        positions = np.tile(np.arange(s), b)
        if not mask.all():
            flat_mask = mask.reshape(-1)
            packed = (np.flatnonzero(flat_mask), np.flatnonzero(flat_mask == 0))
            flat_ids = flat_ids[packed[0]]
            positions = positions[packed[0]]
        x = self.word[flat_ids]
        x += self.position[positions]
        x += self.token_type0
        x = _layer_norm(x, self.emb_ln_g, self.emb_ln_b, self.eps)
        # Padding is excluded as a key: a large negative added to its scores before the softmax
        # (transformers adds finfo(float32).min the same way), so a padded text's vectors equal
        # the unpadded text's.
        # A batch without padding (texts of one length: common, they are sorted by length)
        # skips that pass.
        bias: F32 | None = None
        if packed is not None:
            bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min)
            bias = bias.astype(np.float32)
        for layer in self.layers:
            x = self._layer(layer, x, b, s, bias, packed)
        # Mean pooling over the real tokens (sentence-transformers clamps the count at 1e-9),
        # then L2 normalisation (torch's F.normalize: eps 1e-12). A text's rows are
        # consecutive in x: sums by segment.
        summed = np.zeros((b, self.hidden), dtype=np.float32)
        present = lengths > 0
        if present.any():
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            summed[present] = np.add.reduceat(x, starts[present], axis=0)
        mean = summed / np.maximum(lengths.astype(np.float32), np.float32(1e-9))[:, None]
        norm = np.linalg.norm(mean, axis=1, keepdims=True)
        out: F32 = (mean / np.maximum(norm, np.float32(1e-12))).astype(np.float32)
        return out

    def _layer(
        self,
        w: Layer,
        x: F32,
        b: int,
        s: int,
        bias: F32 | None,
        packed: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]] | None,
    ) -> F32:
        """One encoder layer on the packed token rows `x`; `packed`: where each row sits in the
        padded (b * s) layout, and where the padding is (None: no padding, the layouts are the
        same)."""
        h = self.hidden
        d = h // self.heads
        qkv = x @ w.qkv_w
        qkv += w.qkv_b
        if packed is not None:  # into the padded layout for attention
            full = np.empty((b * s, 3 * h), dtype=np.float32)
            full[packed[0]] = qkv
            full[packed[1]] = 0.0  # finite: masked keys' scores and values must not be NaN
            qkv = full
        # Q and V as (b, heads, s, d) and K as (b, heads, d, s), each made contiguous: numpy
        # hands stacked matmuls of strided views to a slow generic loop (measured 3-20x slower
        # here), contiguous ones to BLAS.
        qkv5 = qkv.reshape(b, s, 3, self.heads, d)
        q = np.ascontiguousarray(qkv5[:, :, 0].transpose(0, 2, 1, 3))
        k_t = np.ascontiguousarray(qkv5[:, :, 1].transpose(0, 2, 3, 1))
        v = np.ascontiguousarray(qkv5[:, :, 2].transpose(0, 2, 1, 3))
        scores = np.matmul(q, k_t)  # already scaled by 1/√d: from_tensors folds it into Q
        if bias is not None:
            scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        # The softmax's division is applied to the context (b, heads, s, d) rather than to the
        # scores (b, heads, s, s): the same products up to float rounding, on fewer floats.
        total = scores.sum(axis=-1, keepdims=True)
        ctx = scores @ v
        ctx /= total
        ctx2 = ctx.transpose(0, 2, 1, 3).reshape(b * s, h)
        if packed is not None:  # back to the real tokens' rows
            ctx2 = ctx2[packed[0]]
        attn = ctx2 @ w.out_w
        attn += w.out_b
        attn += x
        x = _layer_norm(attn, w.ln1_g, w.ln1_b, self.eps)
        # The feed-forward block: both matmuls over the whole batch (the intermediate's rows
        # at once run ~15% faster in BLAS than blocks of 128 rows), the GELU by blocks of rows
        # so that each block stays in the CPU's cache through its dozen passes (GELU over the
        # whole (tokens, 1536) array at once measured 2-3x slower: every pass went to memory).
        inter = x @ w.inter_w
        inter += w.inter_b
        for i in range(0, len(inter), FFN_ROWS):
            gelu(inter[i : i + FFN_ROWS])
        out: F32 = np.matmul(inter, w.ffn_w)
        out += w.ffn_b
        out += x
        return _layer_norm(out, w.ln2_g, w.ln2_b, self.eps)


def _layer_norm(x: F32, g: F32, b: F32, eps: float) -> F32:
    """LayerNorm over the last axis of the 2-d `x`, in place (callers pass a temporary)."""
    h = x.shape[-1]
    x -= x.mean(axis=-1, keepdims=True)
    # The variance as each row's dot product with itself: no squared copy of x.
    var = np.vecdot(x, x)[:, None]
    var *= np.float32(1.0 / h)
    var += np.float32(eps)
    np.sqrt(var, out=var)
    np.reciprocal(var, out=var)
    x *= var
    x *= g
    x += b
    return x


def from_tensors(
    t: Mapping[str, npt.NDArray[np.generic]], *, layers: int, heads: int, eps: float
) -> MiniLM:
    """The encoder from a BertModel state dict (names as in its model.safetensors).

    Raises KeyError for a missing tensor and ValueError for a tensor of the wrong shape."""

    def get(name: str, shape: tuple[int, ...] | None = None) -> F32:
        arr = t[name]
        if shape is not None and arr.shape != shape:
            raise ValueError(f"tensor {name} has shape {arr.shape}, expected {shape}")
        return np.ascontiguousarray(arr, dtype=np.float32)

    word = get("embeddings.word_embeddings.weight")
    if word.ndim != 2:
        raise ValueError(f"tensor embeddings.word_embeddings.weight has shape {word.shape}")
    hidden = word.shape[1]
    if hidden % heads:
        raise ValueError(f"hidden size {hidden} is not a multiple of {heads} heads")
    position = get("embeddings.position_embeddings.weight")
    if position.ndim != 2 or position.shape[1] != hidden:
        raise ValueError(f"tensor embeddings.position_embeddings.weight has shape {position.shape}")
    token_type = get("embeddings.token_type_embeddings.weight")
    if token_type.ndim != 2 or token_type.shape[1] != hidden:
        raise ValueError(
            f"tensor embeddings.token_type_embeddings.weight has shape {token_type.shape}"
        )
    vec = (hidden,)
    built = []
    for i in range(layers):
        p = f"encoder.layer.{i}."
        sq = (hidden, hidden)
        # Q's weights and bias carry the attention's 1/√(head size): one pass fewer over the
        # (batch, heads, seq, seq) scores, the same products up to float rounding.
        scale = np.float32(1.0 / math.sqrt(hidden // heads))
        qkv_w = np.concatenate(
            [
                get(p + "attention.self.query.weight", sq).T * scale,
                get(p + "attention.self.key.weight", sq).T,
                get(p + "attention.self.value.weight", sq).T,
            ],
            axis=1,
        )
        qkv_b = np.concatenate(
            [
                get(p + "attention.self.query.bias", vec) * scale,
                get(p + "attention.self.key.bias", vec),
                get(p + "attention.self.value.bias", vec),
            ]
        )
        inter_w = get(p + "intermediate.dense.weight")
        if inter_w.ndim != 2 or inter_w.shape[1] != hidden:
            raise ValueError(f"tensor {p}intermediate.dense.weight has shape {inter_w.shape}")
        inner = inter_w.shape[0]
        built.append(
            Layer(
                qkv_w=np.ascontiguousarray(qkv_w),
                qkv_b=qkv_b,
                out_w=np.ascontiguousarray(get(p + "attention.output.dense.weight", sq).T),
                out_b=get(p + "attention.output.dense.bias", vec),
                ln1_g=get(p + "attention.output.LayerNorm.weight", vec),
                ln1_b=get(p + "attention.output.LayerNorm.bias", vec),
                inter_w=np.ascontiguousarray(inter_w.T),
                inter_b=get(p + "intermediate.dense.bias", (inner,)),
                ffn_w=np.ascontiguousarray(get(p + "output.dense.weight", (hidden, inner)).T),
                ffn_b=get(p + "output.dense.bias", vec),
                ln2_g=get(p + "output.LayerNorm.weight", vec),
                ln2_b=get(p + "output.LayerNorm.bias", vec),
            )
        )
    return MiniLM(
        word=word,
        position=position,
        token_type0=np.ascontiguousarray(token_type[0]),
        emb_ln_g=get("embeddings.LayerNorm.weight", vec),
        emb_ln_b=get("embeddings.LayerNorm.bias", vec),
        layers=tuple(built),
        heads=heads,
        eps=eps,
    )
