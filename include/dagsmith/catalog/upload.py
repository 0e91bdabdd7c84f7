"""Uploading microservices: stage, validate, analyse (from code and from docs), embed, store.

``add`` handles one folder; ``sync`` a folder of them, re-analysing only those whose content changed.
A rejected upload stores nothing and carries every reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dagsmith.catalog import repository
from dagsmith.catalog.analysis.code import ANALYZER as CODE_ANALYZER
from dagsmith.catalog.analysis.code import ANALYZER_VERSION as CODE_ANALYZER_VERSION
from dagsmith.catalog.analysis.code import analyze_code
from dagsmith.catalog.analysis.code_llm import LLM_ANALYZER_VERSION, analyzer_name, read_code
from dagsmith.catalog.analysis.documentation import analyze_documentation
from dagsmith.catalog.repository import IndexedAnalysis
from dagsmith.catalog.source import MANIFEST, ENTRYPOINT, ManifestError, ServiceSource
from dagsmith.catalog.staging import StagingRejected, staged
from dagsmith.catalog.validation import validate
from dagsmith.config import Settings
from dagsmith.embeddings import Embedder, default_embedder
from dagsmith.models.catalog import Analysis, Finding, Manifest, UploadOutcome, UploadResult
from dagsmith.reasoning.llm import ModelReasoner, decide, model_reasoner
from dagsmith.store.db import session_scope
import contextlib

Progress = Callable[[str], None]


def composite_text(manifest: Manifest, analysis: Analysis) -> str:
    """What is embedded: name, then the analysis' description first, then category and keywords."""
    parts = [manifest.name.replace("_", " ") + ".", analysis.description]
    if manifest.category:
        parts.append(f"Category: {manifest.category}.")
    if manifest.keywords:
        parts.append("Keywords: " + ", ".join(manifest.keywords) + ".")
    return " ".join(parts)


def analyses_of(source: ServiceSource, security_notes: list[str], reasoner: ModelReasoner | None = None
                ) -> list[Analysis]:
    """Code-grounded (worded by the configured model when its reading holds up) and documentation-based."""
    static = analyze_code(source)
    static.security_notes = security_notes
    code, _ = decide(reasoner, lambda model: read_code(model, source, static), lambda: static)
    return [code, analyze_documentation(source)]


def code_analyzer(reasoner: ModelReasoner | None) -> tuple[str, str]:
    """The analyzer and version current code analyses come from; others are analysed again by a sync."""
    return (analyzer_name(reasoner), LLM_ANALYZER_VERSION) if reasoner else (CODE_ANALYZER, CODE_ANALYZER_VERSION)


@dataclass
class _Checked:
    """An upload that passed validation, waiting for its embeddings."""

    source: ServiceSource
    analyses: list[Analysis]
    findings: list[Finding] = field(default_factory=list)


def _check(path: Path, settings: Settings, reasoner: ModelReasoner | None,
           known: dict[str, str] | None = None) -> _Checked | UploadResult:
    """Stage and validate one folder; content already current in the catalog (``known``) is not re-checked."""
    name = path.name
    try:
        with staged(path, settings.staging_dir) as source:
            with contextlib.suppress(ManifestError):
                name = source.manifest.name
            if known and known.get(name) == source.content_hash:
                return UploadResult(name=name, outcome=UploadOutcome.UNCHANGED, version_hash=source.content_hash)
            findings = validate(source)
            if any(f.blocking for f in findings):
                return UploadResult(name=name, outcome=UploadOutcome.REJECTED, findings=findings)
            notes = [f.message for f in findings if f.check.startswith("security")]
            return _Checked(source, analyses_of(source, notes, reasoner), findings)
    except StagingRejected as rejected:
        return UploadResult(name=name, outcome=UploadOutcome.REJECTED, findings=rejected.findings)


def _store(checked: list[_Checked], embedder: Embedder, settings: Settings) -> list[UploadResult]:
    texts = [composite_text(c.source.manifest, a) for c in checked for a in c.analyses]
    vectors = iter(embedder.embed(texts))
    texts_iter = iter(texts)
    results = []
    for item in checked:
        indexed = [IndexedAnalysis(a, next(texts_iter), next(vectors)) for a in item.analyses]
        with session_scope(settings) as session:
            outcome = repository.save(session, item.source, indexed, embedder.name)
        results.append(UploadResult(
            name=item.source.manifest.name, outcome=outcome, version_hash=item.source.content_hash,
            findings=item.findings, analysis=item.analyses[0],
        ))
    return results


def _store_all(pending: list[_Checked], results: list[UploadResult], embedder: Embedder | None, settings: Settings,
               progress: Progress | None, what: str) -> list[UploadResult]:
    """Embed and store what was analysed (in one batch: the model loads once); every result, by name."""
    if pending:
        if progress:
            progress(f"embedding and storing {len(pending)} {what}")
        results = results + _store(pending, embedder or default_embedder(), settings)
    return sorted(results, key=lambda r: r.name)


def add(path: str | Path, settings: Settings | None = None, embedder: Embedder | None = None) -> UploadResult:
    """Upload one microservice folder."""
    settings = settings or Settings.from_env()
    checked = _check(Path(path), settings, model_reasoner(settings))
    if isinstance(checked, UploadResult):
        return checked
    return _store([checked], embedder or default_embedder(), settings)[0]


def service_folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and ((p / MANIFEST).exists() or (p / ENTRYPOINT).exists()))


def sync(
    root: str | Path,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> list[UploadResult]:
    """Index every microservice folder under ``root``; unchanged ones (same content hash) are skipped."""
    settings = settings or Settings.from_env()
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder")
    reasoner = model_reasoner(settings)
    with session_scope(settings) as session:
        known = repository.current_hashes(session, *code_analyzer(reasoner))
    results: list[UploadResult] = []
    pending: list[_Checked] = []
    folders = service_folders(root)
    for index, folder in enumerate(folders, 1):
        checked = _check(folder, settings, reasoner, known)
        if isinstance(checked, UploadResult):
            results.append(checked)
        else:
            pending.append(checked)
        if progress:
            progress(f"checked {index}/{len(folders)}: {folder.name}")
    return _store_all(pending, results, embedder, settings, progress, "new or changed microservices")


def reanalyze(settings: Settings | None = None, embedder: Embedder | None = None, progress: Progress | None = None,
              everything: bool = False) -> list[UploadResult]:
    """Analyse the stored current version of every microservice again with the configured analyzer (after the
    model changed, or to a model from none); with ``everything``, also those it analysed already."""
    settings = settings or Settings.from_env()
    reasoner = model_reasoner(settings)
    current = code_analyzer(reasoner)
    with session_scope(settings) as session:
        stored = repository.current_sources(session)
    pending, results = [], []
    for index, (source, analysis) in enumerate(stored, 1):
        if not everything and analysis and (analysis.analyzer, analysis.analyzer_version) == current:
            results.append(UploadResult(name=source.manifest.name, outcome=UploadOutcome.UNCHANGED,
                                        version_hash=source.content_hash))
            continue
        notes = analysis.security_notes if analysis else []
        pending.append(_Checked(source, analyses_of(source, notes, reasoner), []))
        if progress:
            progress(f"analysed {index}/{len(stored)}: {source.manifest.name}")
    return _store_all(pending, results, embedder, settings, progress, "re-analysed microservices")
