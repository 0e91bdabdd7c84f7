"""Reading and writing the catalog in PostgreSQL: versions, analyses, embeddings, search.

Each write of one microservice is one transaction under an advisory lock on its name, so concurrent
uploads of the same service serialise and a failure leaves nothing half-written.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import delete, func, literal_column, select, text
from sqlalchemy.orm import Session

from dagsmith.catalog.source import ServiceSource
from dagsmith.models.catalog import Analysis, AnalysisMode, Category, Manifest, SearchHit, ServiceDetail, UploadOutcome
from dagsmith.store import schema

#: What planning or searching an empty catalog says: what to index, and where the shipped services are.
EMPTY_CATALOG = ("the microservice catalog is empty: run `dagsmith catalog sync DIR` first, DIR being a folder of "
                 "microservice folders (dagsmith's repository ships its catalog in `microservices/`)")


@dataclass(frozen=True)
class IndexedAnalysis:
    """An analysis ready to store, with the text that was embedded and its vector."""

    analysis: Analysis
    text: str
    vector: np.ndarray


def current_hashes(session: Session, analyzer: str, analyzer_version: str) -> dict[str, str]:
    """Name -> content hash of the current version, for microservices already analysed by this analyzer.

    A service analysed by an older analyzer is left out, so a sync analyses it again.
    """
    rows = session.execute(
        select(schema.Microservice.name, schema.MicroserviceVersion.content_hash)
        .join(schema.MicroserviceVersion, schema.Microservice.current_version_id == schema.MicroserviceVersion.id)
        .join(schema.Analysis, schema.Analysis.version_id == schema.MicroserviceVersion.id)
        .where(schema.Analysis.analyzer == analyzer, schema.Analysis.analyzer_version == analyzer_version)
    )
    return dict(rows.all())


def _analysis_row(session: Session, version_id: int, analysis: Analysis) -> schema.Analysis | None:
    return session.scalar(select(schema.Analysis).where(
        schema.Analysis.version_id == version_id, schema.Analysis.mode == analysis.mode.value,
        schema.Analysis.analyzer == analysis.analyzer, schema.Analysis.analyzer_version == analysis.analyzer_version,
    ))


def _category(manifest: Manifest) -> str:
    return manifest.category if manifest.category in {c.value for c in Category} else "utility"


def save(session: Session, source: ServiceSource, analyses: list[IndexedAnalysis], model: str) -> UploadOutcome:
    """Store one validated, analysed upload as the current version of its microservice."""
    manifest = source.manifest
    session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": f"microservice:{manifest.name}"})
    service = session.scalar(select(schema.Microservice).where(schema.Microservice.name == manifest.name))
    outcome = UploadOutcome.UPDATED
    if service is None:
        service = schema.Microservice(name=manifest.name, category=_category(manifest))
        session.add(service)
        session.flush()
        outcome = UploadOutcome.ADDED
    version = session.scalar(
        select(schema.MicroserviceVersion).where(
            schema.MicroserviceVersion.microservice_id == service.id,
            schema.MicroserviceVersion.content_hash == source.content_hash,
        )
    )
    if version is not None and service.current_version_id == version.id and \
            all(_analysis_row(session, version.id, item.analysis) for item in analyses):
        return UploadOutcome.UNCHANGED
    if version is None:
        version = schema.MicroserviceVersion(
            microservice_id=service.id, content_hash=source.content_hash, manifest=manifest.model_dump(),
            files=source.files, size_bytes=source.size_bytes, origin=source.origin,
        )
        session.add(version)
        session.flush()
    session.execute(delete(schema.Embedding).where(schema.Embedding.microservice_id == service.id))
    for item in analyses:
        row = _analysis_row(session, version.id, item.analysis)
        if row is None:
            row = schema.Analysis(
                version_id=version.id, mode=item.analysis.mode.value, analyzer=item.analysis.analyzer,
                analyzer_version=item.analysis.analyzer_version, analyzed_at=item.analysis.analyzed_at,
                result=item.analysis.model_dump(mode="json"),
            )
            session.add(row)
            session.flush()
        session.add(schema.Embedding(
            analysis_id=row.id, microservice_id=service.id, version_id=version.id, mode=item.analysis.mode.value,
            model=model, text=item.text, embedding=item.vector.tolist(),
        ))
    service.current_version_id = version.id
    service.category = _category(manifest)
    service.updated_at = func.now()
    return outcome


#: HNSW candidate list size: pgvector's default of 40 trades recall for speed; 100 keeps recall high on large
#: catalogs of near-duplicate services at a fraction of a millisecond more (see docs/benchmarks.md).
EF_SEARCH = 100


def search(
    session: Session, vector: np.ndarray, k: int, mode: AnalysisMode, ef_search: int = EF_SEARCH,
) -> list[SearchHit]:
    """The ``k`` current microservices nearest to ``vector`` by cosine distance, through the HNSW index."""
    session.execute(text(f"SET LOCAL hnsw.ef_search = {max(int(ef_search), 2 * int(k))}"))
    # The mode is a literal so the planner can use that mode's partial HNSW index.
    distance = schema.Embedding.embedding.cosine_distance(vector.tolist())
    rows = session.execute(
        select(schema.Microservice.name, schema.Microservice.category, (1 - distance).label("score"),
               schema.Analysis.result)
        .join(schema.Microservice, schema.Microservice.id == schema.Embedding.microservice_id)
        .join(schema.Analysis, schema.Analysis.id == schema.Embedding.analysis_id)
        .where(schema.Embedding.mode == literal_column(f"'{AnalysisMode(mode).value}'"))
        .order_by(distance)
        .limit(k)
    )
    return [
        SearchHit(name=name, category=category, score=round(float(score), 4),
                  summary=result.get("summary", ""), stages=result.get("stages", []))
        for name, category, score, result in rows
    ]


def current_sources(session: Session) -> list[tuple[ServiceSource, Analysis | None]]:
    """Every microservice's current version as stored (its files) with its newest code analysis."""
    versions = session.scalars(select(schema.MicroserviceVersion).join(
        schema.Microservice, schema.Microservice.current_version_id == schema.MicroserviceVersion.id)
        .order_by(schema.Microservice.name))
    return [(ServiceSource.from_files(v.files, v.origin or ""), latest_analysis(session, v.id, AnalysisMode.CODE))
            for v in versions]


def latest_analysis(session: Session, version_id: int, mode: AnalysisMode) -> Analysis | None:
    """The newest ``mode`` analysis of a version (a re-analysis by a newer analyzer supersedes older ones)."""
    result = session.scalar(
        select(schema.Analysis.result)
        .where(schema.Analysis.version_id == version_id, schema.Analysis.mode == mode.value)
        .order_by(schema.Analysis.analyzed_at.desc())
        .limit(1)
    )
    return Analysis.model_validate(result) if result else None


def current_service(session: Session, microservice_id: int | None) -> tuple[schema.Microservice, dict, Analysis]:
    """A service with its current version's files and code analysis: what a try of it runs and reads."""
    service = session.get(schema.Microservice, microservice_id)
    version = session.get(schema.MicroserviceVersion, service.current_version_id)
    return service, version.files, latest_analysis(session, version.id, AnalysisMode.CODE)


def detail(session: Session, name: str) -> ServiceDetail | None:
    row = session.execute(
        select(schema.Microservice, schema.MicroserviceVersion)
        .join(schema.MicroserviceVersion, schema.Microservice.current_version_id == schema.MicroserviceVersion.id)
        .where(schema.Microservice.name == name)
    ).first()
    if row is None:
        return None
    service, version = row
    source = ServiceSource(version.files, version.origin)
    return ServiceDetail(
        name=service.name, category=service.category, version_hash=version.content_hash,
        uploaded_at=version.created_at, origin=version.origin, manifest=Manifest.model_validate(version.manifest),
        code_analysis=latest_analysis(session, version.id, AnalysisMode.CODE),
        documentation_analysis=latest_analysis(session, version.id, AnalysisMode.DOCUMENTATION),
        requirements=source.requirements,
    )


def names(session: Session) -> list[str]:
    return list(session.scalars(select(schema.Microservice.name).order_by(schema.Microservice.name)))


def listing(session: Session, category: str | None = None) -> list[dict]:
    """One row per microservice: name, category, main stage, summary (from the code analysis)."""
    rows = [{"name": e.name, "category": e.category, "stage": (e.analysis.stages or ["?"])[0],
             "summary": e.analysis.summary} for e in entries(session, AnalysisMode.CODE)
            if not category or e.category == category]
    return sorted(rows, key=lambda row: (row["category"], row["name"]))


@dataclass(frozen=True)
class CatalogEntry:
    """What the recommender needs of one current microservice: its claims and one analysis of it."""

    id: int
    name: str
    category: str
    manifest: Manifest
    analysis: Analysis


def entries(session: Session, mode: AnalysisMode) -> list[CatalogEntry]:
    """Every searchable microservice with its current ``mode`` analysis."""
    rows = session.execute(
        select(schema.Microservice.id, schema.Microservice.name, schema.Microservice.category,
               schema.MicroserviceVersion.manifest, schema.Analysis.result)
        .join(schema.Embedding, schema.Embedding.microservice_id == schema.Microservice.id)
        .join(schema.Analysis, schema.Analysis.id == schema.Embedding.analysis_id)
        .join(schema.MicroserviceVersion, schema.MicroserviceVersion.id == schema.Embedding.version_id)
        .where(schema.Embedding.mode == mode.value)
        .order_by(schema.Microservice.name)
    )
    return [CatalogEntry(id_, name, category, Manifest.model_validate(manifest), Analysis.model_validate(result))
            for id_, name, category, manifest, result in rows]


def similarities(session: Session, vector: np.ndarray, mode: AnalysisMode) -> dict[int, float]:
    """Cosine similarity of ``vector`` to every current microservice's ``mode`` embedding, by id."""
    similarity = 1 - schema.Embedding.embedding.cosine_distance(vector.tolist())
    rows = session.execute(
        select(schema.Embedding.microservice_id, similarity).where(schema.Embedding.mode == mode.value))
    return {service_id: float(value) for service_id, value in rows}
