"""Benchmark: catalog indexing throughput and search latency over a large synthetic catalog.

Run with ``python -m dagsmith.bench.catalog_search`` (``make bench-catalog``). It uses a fresh database on
the configured server (the embedded one by default) and drops it afterwards. Reported:

- indexing throughput of the real upload path on the shipped catalog, split into validation (scanners),
  analysis, embedding and storage;
- bulk indexing of a synthetic catalog (variations of the shipped services' analyses) into pgvector;
- search latency p50/p95/p99 over that catalog, for the database query alone (HNSW index) and end to end
  (embedding the query plus the query), and the HNSW result's recall@k against an exact scan.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
import uuid
from pathlib import Path

import numpy as np
from sqlalchemy import insert, select, text
from sqlalchemy.orm import Session

from dagsmith.catalog import repository
from dagsmith.catalog.repository import IndexedAnalysis
from dagsmith.catalog.source import ServiceSource
from dagsmith.catalog.upload import analyses_of, composite_text, service_folders
from dagsmith.store.databases import scratch_database
from dagsmith.bench.stats import percentile
from dagsmith.catalog.validation import validate
from dagsmith.embeddings import default_embedder
from dagsmith.models.catalog import AnalysisMode
from dagsmith.store import schema
from dagsmith.store.db import engine_for

DOMAINS = ["retail", "banking", "telecom", "insurance", "healthcare", "logistics", "energy", "marketing",
           "manufacturing", "gaming", "travel", "real estate", "education", "agriculture", "media"]
FLAVOURS = ["fast", "robust", "lightweight", "audited", "legacy", "experimental", "batch", "streaming-ready",
            "GPU-free", "memory-frugal", "well-tested", "minimal"]
EF_SWEEP = (40, 100, 200)
QUERY_TEMPLATES = [
    "fill in missing values in {d} records", "train a classifier to predict {d} churn",
    "detect anomalies in {d} transactions", "segment {d} customers into groups", "scale numeric {d} features",
    "one-hot encode categorical {d} columns", "evaluate a regression model for {d} prices",
    "reduce the dimensions of {d} sensor data", "plot a confusion matrix for the {d} model",
    "remove duplicate {d} rows", "split {d} data into train and test", "load a {d} Excel export",
    "compute correlations between {d} metrics", "gradient boosting for {d} demand forecasting",
    "find outliers in {d} measurements", "select the most informative {d} features",
]


def _percentiles(values: list[float]) -> dict[str, float]:
    ms = {f"p{round(q * 100)}_ms": round(percentile(values, q) * 1000, 2) for q in (0.5, 0.95, 0.99)}
    return {**ms, "mean_ms": round(statistics.fmean(values) * 1000, 2)}


def bench_real_indexing(catalog: Path, engine, embedder) -> dict:
    """The real upload path, phase by phase, on the shipped catalog."""
    timings = {"validate_s": 0.0, "analyze_s": 0.0, "embed_s": 0.0, "store_s": 0.0}
    sources = [ServiceSource.read(folder) for folder in service_folders(catalog)]
    prepared = []
    for source in sources:
        started = time.perf_counter()
        findings = validate(source)
        timings["validate_s"] += time.perf_counter() - started
        started = time.perf_counter()
        analyses = analyses_of(source, [f.message for f in findings if f.check.startswith("security")])
        timings["analyze_s"] += time.perf_counter() - started
        prepared.append((source, analyses))
    texts = [composite_text(s.manifest, a) for s, analyses in prepared for a in analyses]
    started = time.perf_counter()
    vectors = iter(embedder.embed(texts))
    timings["embed_s"] = time.perf_counter() - started
    started = time.perf_counter()
    for source, analyses in prepared:
        with Session(engine) as session, session.begin():
            repository.save(session, source, [IndexedAnalysis(a, composite_text(source.manifest, a), next(vectors))
                                              for a in analyses], embedder.name)
    timings["store_s"] = time.perf_counter() - started
    total = sum(timings.values())
    return {"services": len(sources), **{k: round(v, 2) for k, v in timings.items()},
            "total_s": round(total, 2), "services_per_s": round(len(sources) / total, 1)}


def synthetic_services(engine, size: int, seed: int) -> tuple[list[tuple], list[str]]:
    """``size`` variations of the stored services' code analyses (name, category, analysis, files), with the text
    each is embedded from."""
    rng = random.Random(seed)
    with Session(engine) as session:
        bases = session.execute(text(
            "SELECT m.category, a.result, v.files FROM microservices m "
            "JOIN microservice_versions v ON v.id = m.current_version_id "
            "JOIN analyses a ON a.version_id = v.id AND a.mode = 'code' ORDER BY m.name")).all()
    rows, texts = [], []
    for i in range(size):
        category, result, files = bases[i % len(bases)]
        domain, flavour = rng.choice(DOMAINS), rng.choice(FLAVOURS)
        name = f"{result['stages'][0]}_{domain.replace(' ', '_')}_{i:05d}"
        description = f"{result['description']} A {flavour} variant for {domain} data."
        rows.append((name, category, {**result, "description": description}, files))
        texts.append(f"{name.replace('_', ' ')}. {description} Category: {category}.")
    return rows, texts


def store_synthetic(engine, rows: list[tuple], texts: list[str], vectors, model: str) -> None:
    """Insert synthetic services with their embeddings in batches (origin 'synthetic'), then ANALYZE."""
    chunk = 1000
    with engine.begin() as connection:
        for offset in range(0, len(rows), chunk):
            part = rows[offset:offset + chunk]
            service_ids = connection.execute(insert(schema.Microservice).returning(schema.Microservice.id),
                                             [{"name": r[0], "category": r[1]} for r in part]).scalars().all()
            versions = insert(schema.MicroserviceVersion).returning(schema.MicroserviceVersion.id)
            version_ids = connection.execute(versions, [
                {"microservice_id": sid, "content_hash": uuid.uuid4().hex, "manifest": {"name": r[0]}, "files": r[3],
                 "size_bytes": 0, "origin": "synthetic"} for sid, r in zip(service_ids, part)]).scalars().all()
            analysis_ids = connection.execute(insert(schema.Analysis).returning(schema.Analysis.id), [
                {"version_id": vid, "mode": "code", "analyzer": r[2]["analyzer"],
                 "analyzer_version": r[2]["analyzer_version"], "result": r[2]}
                for vid, r in zip(version_ids, part)]).scalars().all()
            connection.execute(insert(schema.Embedding), [
                {"analysis_id": aid, "microservice_id": sid, "version_id": vid, "mode": "code", "model": model,
                 "text": texts[offset + j], "embedding": vectors[offset + j].tolist()}
                for j, (aid, sid, vid) in enumerate(zip(analysis_ids, service_ids, version_ids))])
            connection.execute(text("UPDATE microservices m SET current_version_id = v.id FROM microservice_versions v "
                                    "WHERE v.microservice_id = m.id AND m.current_version_id IS NULL"))
        connection.execute(text("ANALYZE"))


def bench_synthetic_catalog(engine, embedder, size: int, seed: int) -> dict:
    """Bulk-index ``size`` synthetic services derived from the real ones' code analyses."""
    rows, texts = synthetic_services(engine, size, seed)
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    embed_s = time.perf_counter() - started
    started = time.perf_counter()
    store_synthetic(engine, rows, texts, vectors, embedder.name)
    store_s = time.perf_counter() - started
    return {"services": size, "embed_s": round(embed_s, 2), "embed_texts_per_s": round(size / embed_s, 1),
            "store_s": round(store_s, 2), "store_services_per_s": round(size / store_s, 1)}


def bench_search(engine, embedder, queries: int, k: int, seed: int) -> dict:
    """Query latency and recall@k against an exact scan, for several HNSW ``ef_search`` settings."""
    rng = random.Random(seed)
    texts = [rng.choice(QUERY_TEMPLATES).format(d=rng.choice(DOMAINS)) for _ in range(queries)]
    embed_times, vectors = [], []
    for query in texts:
        started = time.perf_counter()
        vectors.append(embedder.embed([query])[0])
        embed_times.append(time.perf_counter() - started)
    with Session(engine) as session:
        stored = session.execute(
            select(schema.Microservice.name, schema.Embedding.embedding)
            .join(schema.Microservice, schema.Microservice.id == schema.Embedding.microservice_id)
            .where(schema.Embedding.mode == "code")).all()
    names = [name for name, _ in stored]
    matrix = np.array([np.asarray(v, dtype=np.float32) for _, v in stored])
    exact = [{names[i] for i in np.argsort(-(matrix @ vector))[:k]} for vector in vectors]
    sweep, times = {}, {}
    with Session(engine) as session:
        for _ in range(3):  # warm the cache and the plan
            repository.search(session, vectors[0], k, AnalysisMode.CODE)
        plan = "\n".join(row[0] for row in session.execute(text(
            "EXPLAIN SELECT m.name, a.result FROM embeddings e "
            "JOIN microservices m ON m.id = e.microservice_id JOIN analyses a ON a.id = e.analysis_id "
            "WHERE e.mode = 'code' ORDER BY e.embedding <=> CAST(:v AS vector) LIMIT :k"),
            {"v": str(vectors[0].tolist()), "k": k}))
        for ef_search in sorted({*EF_SWEEP, repository.EF_SEARCH}):
            times[ef_search], recalls = [], []
            for vector, truth in zip(vectors, exact):
                started = time.perf_counter()
                hits = repository.search(session, vector, k, AnalysisMode.CODE, ef_search=ef_search)
                times[ef_search].append(time.perf_counter() - started)
                recalls.append(len(truth & {h.name for h in hits}) / k)
                session.rollback()
            sweep[ef_search] = {**_percentiles(times[ef_search]), "recall": round(statistics.fmean(recalls), 4)}
    end_to_end = [a + b for a, b in zip(embed_times, times[repository.EF_SEARCH])]
    return {"queries": queries, "k": k, "catalog_size": len(names), "uses_hnsw_index": "hnsw" in plan,
            "ef_search": repository.EF_SEARCH, "database": _percentiles(times[repository.EF_SEARCH]),
            "embed_query": _percentiles(embed_times), "end_to_end": _percentiles(end_to_end),
            "recall_at_k": sweep[repository.EF_SEARCH]["recall"], "ef_search_sweep": sweep}


def run(services: int, queries: int, k: int, seed: int, catalog: Path) -> dict:
    with scratch_database() as settings:
        engine = engine_for(settings.database_url)
        embedder = default_embedder()
        started = time.perf_counter()
        embedder.embed(["warm up"])
        model_load_s = time.perf_counter() - started
        real = bench_real_indexing(catalog, engine, embedder)
        synthetic = bench_synthetic_catalog(engine, embedder, max(0, services - real["services"]), seed)
        search = bench_search(engine, embedder, queries, k, seed)
        engine.dispose()
    return {"model_load_s": round(model_load_s, 2), "real_indexing": real, "synthetic_indexing": synthetic,
            "search": search}


def _markdown(result: dict) -> str:
    real, synthetic, search = result["real_indexing"], result["synthetic_indexing"], result["search"]
    lines = [
        f"Embedding model load: {result['model_load_s']} s (once per process).",
        "",
        "| indexing | services | validate s | analyse s | embed s | store s | services/s |",
        "|---|---|---|---|---|---|---|",
        (f"| real upload path (shipped catalog) | {real['services']} | {real['validate_s']} | {real['analyze_s']} | "
         f"{real['embed_s']} | {real['store_s']} | {real['services_per_s']} |"),
        (f"| synthetic bulk index | {synthetic['services']} | - | - | {synthetic['embed_s']} | "
         f"{synthetic['store_s']} | "
         f"{round(synthetic['services'] / max(synthetic['embed_s'] + synthetic['store_s'], 1e-9), 1)} |"),
        "",
        (f"Search over {search['catalog_size']:,} microservices, {search['queries']} queries, top-{search['k']}, "
         f"HNSW index used: {search['uses_hnsw_index']}, ef_search {search['ef_search']}, "
         f"recall@{search['k']} against an exact scan: {search['recall_at_k']}"),
        "",
        "| search latency | p50 ms | p95 ms | p99 ms | mean ms |",
        "|---|---|---|---|---|",
    ]
    for label, key in (("database query (pgvector HNSW)", "database"), ("query embedding", "embed_query"),
                       ("end to end", "end_to_end")):
        p = search[key]
        lines.append(f"| {label} | {p['p50_ms']} | {p['p95_ms']} | {p['p99_ms']} | {p['mean_ms']} |")
    lines += ["", f"| hnsw.ef_search | database p50 ms | p95 ms | recall@{search['k']} |", "|---|---|---|---|"]
    for ef_search, p in search["ef_search_sweep"].items():
        lines.append(f"| {ef_search} | {p['p50_ms']} | {p['p95_ms']} | {p['recall']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--services", type=int, default=10_000, help="catalog size to search (default 10000)")
    parser.add_argument("--queries", type=int, default=300, help="number of search queries (default 300)")
    parser.add_argument("--k", type=int, default=5, help="results per query (default 5)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--catalog", type=Path, default=Path("microservices"), help="shipped catalog folder")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if not args.catalog.is_dir():
        parser.error(f"{args.catalog} is not a folder of microservices")
    print(f"indexing the shipped catalog, then {args.services:,} services, then {args.queries} queries ...", flush=True)
    result = run(args.services, args.queries, args.k, args.seed, args.catalog)
    print(_markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
