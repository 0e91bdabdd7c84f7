"""Plain-language search over the catalog: the query is embedded and matched by cosine similarity."""

from __future__ import annotations

from dagsmith.catalog import repository
from dagsmith.config import Settings
from dagsmith.embeddings import Embedder, default_embedder
from dagsmith.models.catalog import AnalysisMode, SearchHit
from dagsmith.store.db import session_scope


def search(
    query: str,
    k: int = 5,
    mode: AnalysisMode = AnalysisMode.CODE,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
) -> list[SearchHit]:
    """The ``k`` microservices whose ``mode`` analysis is closest in meaning to ``query``."""
    query = query.strip()
    if not query:
        raise ValueError("the search query is empty; describe what the microservice should do")
    if not 1 <= k <= 100:
        raise ValueError(f"k must be between 1 and 100, got {k}")
    vector = (embedder or default_embedder()).embed([query])[0]
    with session_scope(settings) as session:
        return repository.search(session, vector, k, mode)
