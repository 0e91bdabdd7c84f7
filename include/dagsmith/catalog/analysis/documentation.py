"""Documentation-based analysis: what a microservice claims to do, read from its manifest and docstrings.

This is the baseline the benchmark compares code-grounded analysis against: it believes the author, so a
stale or misleading manifest leads it astray exactly as it would a person reading the docs.
"""

from __future__ import annotations

import ast
from datetime import UTC, datetime

from dagsmith.catalog.knowledge import STAGE_WORDS, USE_CASES
from dagsmith.catalog.source import ServiceSource
from dagsmith.models.catalog import Analysis, AnalysisMode, Stage, Tags, TaskType

ANALYZER = "dagsmith-docs"
ANALYZER_VERSION = "1.1"
_CATEGORY_STAGE = {
    "preprocessing": Stage.IMPUTATION, "modelling": Stage.MODELLING, "evaluation": Stage.EVALUATION,
    "visualisation": Stage.VISUALISATION, "utility": Stage.EDA,
}
#: Words of the docs, the claim a reader takes from each, and the tag it sets (none: too vague to act on).
_CLAIMS = {
    "missing": ("handles missing values", "handles_missing"),
    "categorical": ("handles categorical features", None),
    "probabilit": ("produces class probabilities", "produces_probabilities"),
    "plot": ("produces PNG plots", "produces_plots"),
    "report": ("writes a report", "writes_report"),
}


def _docstrings(code: str) -> str:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    texts = [ast.get_docstring(tree) or ""]
    texts += [ast.get_docstring(node) or "" for node in ast.walk(tree)
              if isinstance(node, ast.FunctionDef | ast.ClassDef)]
    return "\n".join(t for t in texts if t)


def analyze_documentation(source: ServiceSource) -> Analysis:
    """Analyse a microservice from its manifest and docstrings only (never its code)."""
    manifest = source.manifest
    docs = _docstrings(source.code)
    text = " ".join([manifest.name.replace("_", " "), manifest.description, " ".join(manifest.keywords), docs]).lower()
    scores: dict[Stage, float] = {}
    tasks: list[TaskType] = []
    for word, meaning in STAGE_WORDS.items():
        if word in text:
            scores[meaning.stage] = scores.get(meaning.stage, 0.0) + meaning.weight
            tasks.extend(t for t in meaning.tasks if t not in tasks)
    fallback = _CATEGORY_STAGE.get(manifest.category)
    if fallback:
        scores[fallback] = scores.get(fallback, 0.0) + 0.5
    stages = sorted(scores, key=lambda s: -scores[s])[:2] or [Stage.EDA]
    summary = manifest.description.split(". ")[0].strip().rstrip(".") or (docs.split("\n")[0].strip().rstrip("."))
    summary = (summary or f"{manifest.name.replace('_', ' ')}, no description given") + "."
    description = " ".join(p for p in [
        manifest.description or summary, docs, f"Category: {manifest.category or 'unknown'}.",
        f"Keywords: {', '.join(manifest.keywords)}." if manifest.keywords else "",
    ] if p)
    return Analysis(
        mode=AnalysisMode.DOCUMENTATION,
        summary=summary,
        description=description,
        stages=stages,
        task_types=tasks,
        capabilities=[claim for word, (claim, _) in _CLAIMS.items() if word in text],
        tags=Tags(**{tag: True for word, (_, tag) in _CLAIMS.items() if tag and word in text}),
        use_cases=[case for stage in stages for case in USE_CASES.get(stage, [])],
        analyzer=ANALYZER,
        analyzer_version=ANALYZER_VERSION,
        analyzed_at=datetime.now(UTC),
    )
