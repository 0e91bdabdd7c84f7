"""Uploading microservices into the real store: accepted, rejected, versioned, synced, concurrent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from sqlalchemy import create_engine, func, select

from dagsmith.catalog import repository
from dagsmith.catalog.upload import add, sync
from dagsmith.models.catalog import UploadOutcome
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.conftest import CATALOG, ROOT, UPLOADS

HOSTILE = ROOT / "tests" / "data" / "hostile"
BAD_UPLOADS = {
    "syntax_error": "syntax",
    "unpinned_requirement": "requirements",
    "oversized_file": "size",
    "eval_on_input": "security",
    "shell_injection": "security",
    "path_traversal": "security:path",
    "hardcoded_credential": "security",
    "socket_exfiltration": "security:import",
    "sql_from_strings": "security:B608",
    "missing_main": "structure",
}


def _counts(settings) -> dict[str, int]:
    engine = create_engine(settings.database_url)
    with engine.connect() as connection:
        tables = [schema.Microservice, schema.MicroserviceVersion, schema.Analysis, schema.Embedding]
        return {t.__tablename__: connection.execute(select(func.count()).select_from(t)).scalar() for t in tables}


def _copy(name, tmp_path):
    return shutil.copytree(CATALOG / name, tmp_path / name)


def test_accepted_upload_stores_files_both_analyses_and_embeddings(settings, embedder):
    result = add(CATALOG / "knn_imputer", settings, embedder)
    assert result.outcome is UploadOutcome.ADDED and not any(f.blocking for f in result.findings)
    with session_scope(settings) as session:
        detail = repository.detail(session, "knn_imputer")
    assert detail.code_analysis.stages[0] == "imputation"
    assert detail.documentation_analysis.mode == "documentation"
    assert detail.manifest.author and detail.manifest.description
    assert "scikit-learn==1.9.1" in detail.requirements
    assert _counts(settings) == {"microservices": 1, "microservice_versions": 1, "analyses": 2, "embeddings": 2}


@pytest.mark.parametrize("case", sorted(BAD_UPLOADS))
def test_bad_upload_is_rejected_with_reasons_and_stores_nothing(case, settings, embedder):
    add(CATALOG / "deduplicator", settings, embedder)
    before = _counts(settings)
    result = add(UPLOADS / case, settings, embedder)
    assert result.outcome is UploadOutcome.REJECTED
    blocking = [f for f in result.findings if f.blocking]
    assert any(f.check.startswith(BAD_UPLOADS[case]) for f in blocking), [str(f) for f in result.findings]
    assert _counts(settings) == before
    assert not list((settings.staging_dir).glob("*")), "staging must be cleaned up"


def test_pins_the_runtime_does_not_provide_are_refused_by_name(settings, embedder, tmp_path):
    """Nothing is installed for a service: a package the runtime lacks, or another version of one it has, is
    refused at upload, saying what the runtime has and how an operator adds a package."""
    add(CATALOG / "deduplicator", settings, embedder)
    before = _counts(settings)
    extra = add(HOSTILE / "extra_pin", settings, embedder)
    folder = _copy("deduplicator", tmp_path)
    requirements = folder / "requirements.txt"
    requirements.write_text(requirements.read_text().replace("pandas==3.1.1", "pandas==2.0.0"))
    older = add(folder, settings, embedder)
    for result, named, available in [(extra, "tabulate==0.9.0 (it has no tabulate)", "pandas"),
                                     (older, "pandas==2.0.0 (it has pandas==3.1.1)", "pyarrow")]:
        assert result.outcome is UploadOutcome.REJECTED
        refusals = [f.message for f in result.findings if f.blocking and f.check == "requirements"]
        assert len(refusals) == 1 and named in refusals[0], [str(f) for f in result.findings]
        assert available not in refusals[0]
        assert "runtime/requirements.txt" in refusals[0] and "make install" in refusals[0]
    assert _counts(settings) == before


def test_rejection_lists_every_reason_without_revealing_the_secret(settings, embedder):
    result = add(UPLOADS / "hardcoded_credential", settings, embedder)
    text = "\n".join(str(f) for f in result.findings)
    assert "Sup3rS3cret!2026" not in text and "AKIAIOSFODNN7EXAMPLE" not in text
    assert {f.line for f in result.findings if f.blocking} >= {4, 5}


def test_cli_rejection_exits_non_zero_and_prints_each_reason(settings):
    env = {**os.environ, "DAGSMITH_DATABASE_URL": settings.database_url, "DAGSMITH_HOME": str(settings.home)}
    proc = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "catalog", "add",
                           str(UPLOADS / "unpinned_requirement"),
                           "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert result["outcome"] == "rejected"
    messages = [f["message"] for f in result["findings"]]
    assert any("pandas>=2.0" in m for m in messages) and any("'pyarrow'" in m for m in messages)
    assert "Traceback" not in proc.stderr


def test_new_code_makes_a_new_version_and_old_one_is_kept(settings, embedder, tmp_path):
    folder = _copy("minmax_scaler", tmp_path)
    first = add(folder, settings, embedder)
    assert add(folder, settings, embedder).outcome is UploadOutcome.UNCHANGED
    main = folder / "main.py"
    main.write_text(main.read_text() + "\n# tuned\n")
    second = add(folder, settings, embedder)
    assert second.outcome is UploadOutcome.UPDATED and second.version_hash != first.version_hash
    counts = _counts(settings)
    assert counts["microservice_versions"] == 2 and counts["analyses"] == 4
    assert counts["embeddings"] == 2, "only the current version is searchable"
    with session_scope(settings) as session:
        assert repository.detail(session, "minmax_scaler").version_hash == second.version_hash


def test_sync_is_idempotent_and_reanalyses_only_changed_code(settings, embedder, tmp_path):
    root = tmp_path / "catalog"
    for name in ("deduplicator", "robust_scaler", "lof_detector", "pca_reducer"):
        shutil.copytree(CATALOG / name, root / name)
    first = sync(root, settings, embedder)
    assert [r.outcome for r in first] == [UploadOutcome.ADDED] * 4
    counts = _counts(settings)
    again = sync(root, settings, embedder)
    assert [r.outcome for r in again] == [UploadOutcome.UNCHANGED] * 4
    assert _counts(settings) == counts
    (root / "robust_scaler" / "main.py").write_text((root / "robust_scaler" / "main.py").read_text() + "\n")
    third = {r.name: r.outcome for r in sync(root, settings, embedder)}
    assert third.pop("robust_scaler") is UploadOutcome.UPDATED
    assert set(third.values()) == {UploadOutcome.UNCHANGED}


def test_sync_reports_a_rejected_folder_and_indexes_the_rest(settings, embedder, tmp_path):
    root = tmp_path / "catalog"
    shutil.copytree(CATALOG / "deduplicator", root / "deduplicator")
    shutil.copytree(UPLOADS / "eval_on_input", root / "eval_on_input")
    results = {r.name: r.outcome for r in sync(root, settings, embedder)}
    assert results == {"deduplicator": UploadOutcome.ADDED, "eval_on_input": UploadOutcome.REJECTED}


def test_concurrent_uploads_of_the_same_service_leave_one_consistent_record(settings, tmp_path):
    env = {**os.environ, "DAGSMITH_DATABASE_URL": settings.database_url, "DAGSMITH_HOME": str(settings.home)}
    folder = _copy("ordinal_encoder", tmp_path)
    processes = [subprocess.Popen([sys.executable, "-m", "dagsmith.cli.app", "catalog", "add", str(folder), "--json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                 for _ in range(3)]
    outcomes = []
    for process in processes:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
        outcomes.append(json.loads(out)["outcome"])
    assert sorted(outcomes) == ["added", "unchanged", "unchanged"]
    assert _counts(settings) == {"microservices": 1, "microservice_versions": 1, "analyses": 2, "embeddings": 2}


def test_listing_filters_by_category_and_shows_what_the_code_does(catalog_settings):
    with session_scope(catalog_settings) as session:
        evaluation = repository.listing(session, "evaluation")
        everything = repository.listing(session)
    assert {r["category"] for r in evaluation} == {"evaluation"}
    assert "classification_evaluator" in {r["name"] for r in evaluation}
    assert len(everything) == len(list(CATALOG.iterdir()))
    outlier_report = next(r for r in everything if r["name"] == "outlier_report")
    assert (outlier_report["category"], outlier_report["stage"]) == ("preprocessing", "eda")
