"""The embedding model's vectors, kept on disk: a text seen before never needs the model again."""

from __future__ import annotations

import numpy as np

from dagsmith.embeddings import DIMENSIONS, CachedEmbedder, MiniLMEmbedder

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
