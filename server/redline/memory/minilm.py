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
# level of float32 rounding (tests/test_memory_embed.py checks it against math.erf on a dense
# grid). numpy has no erf; np.vectorize(math.erf) is ~100x slower than these few array
# operations, and the tanh approximation of GELU is not what BERT computes.
_AS_P = np.float32(0.3275911)
_AS_A = tuple(
    np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


def erf(x: F32) -> F32:
    """erf of a float32 array, elementwise (max absolute error 1.5e-7)."""
    a = np.abs(x)
    t = np.float32(1.0) / (np.float32(1.0) + _AS_P * a)
    a1, a2, a3, a4, a5 = _AS_A
    poly = ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t
    y = np.float32(1.0) - poly * np.exp(-(a * a))
    return np.copysign(y, x).astype(np.float32, copy=False)


def gelu(x: F32) -> F32:
    """BERT's exact GELU, x * Φ(x) = x/2 * (1 + erf(x/√2)), computed in place on `x`."""
    # In place, with few temporaries: x is the (tokens, 1536) intermediate, the largest array
    # of the forward pass, and elementwise work here is memory-bound.
    a = x * _INV_SQRT2
    np.abs(a, out=a)
    t = _AS_P * a
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    a1, a2, a3, a4, a5 = _AS_A
    poly = a5 * t
    poly += a4
    poly *= t
    poly += a3
    poly *= t
    poly += a2
    poly *= t
    poly += a1
    poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # 1 - erf(|x|/√2)
    # x * Φ(x) = x * (1 + sign(x) * (1 - poly)) / 2: for x >= 0 that is x * (1 - poly/2), for
    # x < 0 it is x * poly/2.
    poly *= np.float32(0.5)
    np.subtract(np.float32(1.0), poly, out=poly, where=x >= 0)
    x *= poly
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
        x = self.word[ids]
        x += self.position[:s]
        x += self.token_type0
        x = _layer_norm(x.reshape(b * s, -1), self.emb_ln_g, self.emb_ln_b, self.eps)
        # Padding is excluded as a key: a large negative added to its scores before the softmax
        # (transformers adds finfo(float32).min the same way), so a padded text's vectors equal
        # the unpadded text's.
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min)
        bias = bias.astype(np.float32)
        for layer in self.layers:
            x = self._layer(layer, x, b, s, bias)
        # Mean pooling over the real tokens (sentence-transformers clamps the count at 1e-9),
        # then L2 normalisation (torch's F.normalize: eps 1e-12).
        m = mask.astype(np.float32)[:, :, None]
        summed = (x.reshape(b, s, -1) * m).sum(axis=1)
        mean = summed / np.maximum(m.sum(axis=1), np.float32(1e-9))
        norm = np.linalg.norm(mean, axis=1, keepdims=True)
        out: F32 = (mean / np.maximum(norm, np.float32(1e-12))).astype(np.float32)
        return out

    def _layer(self, w: Layer, x: F32, b: int, s: int, bias: F32) -> F32:
        h = self.hidden
        d = h // self.heads
        qkv = x @ w.qkv_w
        qkv += w.qkv_b
        # (b, s, 3, heads, d) → three (b, heads, s, d) views
        qkv4 = qkv.reshape(b, s, 3, self.heads, d).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv4[0], qkv4[1], qkv4[2]
        scores = q @ k.transpose(0, 1, 3, 2)
        scores *= np.float32(1.0 / math.sqrt(d))
        scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * s, h)
        attn = ctx @ w.out_w
        attn += w.out_b
        attn += x
        x = _layer_norm(attn, w.ln1_g, w.ln1_b, self.eps)
        inter = x @ w.inter_w
        inter += w.inter_b
        gelu(inter)
        out = np.matmul(inter, w.ffn_w)
        out += w.ffn_b
        out += x
        return _layer_norm(out, w.ln2_g, w.ln2_b, self.eps)


def _layer_norm(x: F32, g: F32, b: F32, eps: float) -> F32:
    mean = x.mean(axis=-1, keepdims=True)
    x = x - mean
    var = np.mean(np.square(x), axis=-1, keepdims=True)
    x *= 1.0 / np.sqrt(var + np.float32(eps))
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
        qkv_w = np.concatenate(
            [get(p + f"attention.self.{n}.weight", sq).T for n in ("query", "key", "value")], axis=1
        )
        qkv_b = np.concatenate(
            [get(p + f"attention.self.{n}.bias", vec) for n in ("query", "key", "value")]
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
