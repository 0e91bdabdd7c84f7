"""Plain-language search over the catalog: the query is embedded and matched by cosine similarity, then the
nearest services are re-ranked with a small bonus for the query's words found in their name and summary.

The bonus settles near-ties the embedding alone gets wrong ("fill gaps from the most similar rows" is closer
in meaning to a most-frequent imputer than to the KNN imputer whose summary says exactly that).
"""

from __future__ import annotations

from dagsmith.catalog import repository
from dagsmith.config import Settings
from dagsmith.embeddings import Embedder, default_embedder
from dagsmith.models.catalog import AnalysisMode, SearchHit
from dagsmith.store.db import session_scope
from dagsmith.text import stem, words

#: How many nearest services per requested hit are re-ranked, and the weight of the word overlap.
RERANK_FACTOR = 3
LEXICAL_WEIGHT = 0.1
#: Query words shorter than this carry no meaning worth matching ("the", "to", "a").
MIN_WORD = 4


def _stems(text: str) -> set[str]:
    return {stem(word) for word in words(text) if len(word) >= MIN_WORD}


def word_overlap(query: str, hit: SearchHit) -> float:
    """Share of the query's words (stemmed) that the service's name or summary contains, prefixes included."""
    wanted, found = _stems(query), _stems(f"{hit.name} {hit.summary}")
    if not wanted:
        return 0.0
    return sum(any(f.startswith(w) or w.startswith(f) for f in found) for w in wanted) / len(wanted)


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
        nearest = repository.search(session, vector, min(100, k * RERANK_FACTOR), mode)
    scored = [hit.model_copy(update={"score": round(hit.score + LEXICAL_WEIGHT * word_overlap(query, hit), 4)})
              for hit in nearest]
    return sorted(scored, key=lambda hit: hit.score, reverse=True)[:k]
