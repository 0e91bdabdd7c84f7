"""Code-grounded analysis by static inspection: what a microservice does, read from its source.

Evidence from library calls, DataFrame methods, bundle reads/writes and named outputs is weighed per stage
(see ``catalog.knowledge``); the strongest stage is the service's main one. Everything in the resulting
description comes from the code, not from the manifest.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime

from dagsmith.catalog.facts import CodeFacts, extract_facts
from dagsmith.catalog.knowledge import (
    ANALYSIS_TERMS,
    BUNDLE_READS,
    BUNDLE_WRITES,
    FITS_AND_PREDICTS,
    FITS_ON_TRAIN,
    NATIVE_CATEGORICAL,
    PATTERNS,
    PREPARES_INSIDE,
    REJECTS_MISSING,
    KEEPS_GROUPS,
    METRIC_FUNCTIONS,
    ONLY_TASKS,
    SHUFFLES_ROWS,
    SHUFFLES_WHEN_ASKED,
    LITERALS,
    METHODS,
    PLOT_SUBJECTS,
    STAGE_WORDS,
    SYMBOLS,
    TERMINAL_STAGES,
    USE_CASES,
    WRITES_REPORT,
    Meaning,
)
from dagsmith.catalog.source import ServiceSource
from dagsmith.models.catalog import Analysis, AnalysisMode, Parameter, Stage, Tags, TaskType
from dagsmith_kit.metrics import label as metric_label

ANALYZER = "dagsmith-static"
ANALYZER_VERSION = "1.13"
_STAGE_WORDS = {
    Stage.LOADING: "loading", Stage.VALIDATION: "data validation", Stage.DEDUPLICATION: "deduplication",
    Stage.TYPE_CONVERSION: "type fixing", Stage.COLUMN_FILTERING: "column filtering",
    Stage.IMPUTATION: "missing-value imputation", Stage.OUTLIER_HANDLING: "outlier handling",
    Stage.SPLITTING: "train/test splitting", Stage.ENCODING: "categorical encoding", Stage.SCALING: "feature scaling",
    Stage.FEATURE_SELECTION: "feature selection", Stage.FEATURE_ENGINEERING: "feature engineering",
    Stage.MODELLING: "model training", Stage.CLUSTERING: "clustering",
    Stage.DIMENSIONALITY_REDUCTION: "dimensionality reduction", Stage.ANOMALY_DETECTION: "anomaly detection",
    Stage.EVALUATION: "evaluation", Stage.EXPLANATION: "model explanation", Stage.EDA: "exploratory data analysis",
    Stage.VISUALISATION: "visualisation", Stage.REPORTING: "reporting",
}
_CHOICE_PARAMS = {"strategy", "method", "kernel", "linkage", "metric", "covariance_type", "score_func"}
_TABLE_WRITERS = ("transform_tables", "impute_tables", "clip_tables", "fit_replace", "reduce_tables", "write_loaded",
                  "drop_columns")


class _Evidence:
    """Weighted evidence per stage, with the phrases and knowledge entries behind it."""

    def __init__(self) -> None:
        self.score: dict[Stage, float] = defaultdict(float)
        self.phrases: dict[Stage, list[tuple[float, str]]] = defaultdict(list)
        self.meanings: dict[str, Meaning] = {}

    def add(self, name: str, meaning: Meaning) -> None:
        if name in self.meanings:
            return
        self.meanings[name] = meaning
        self.score[meaning.stage] += meaning.weight
        self.phrases[meaning.stage].append((meaning.weight, meaning.phrase))

    def boost(self, stage: Stage, weight: float, phrase: str | None = None) -> None:
        self.score[stage] += weight
        if phrase:
            self.phrases[stage].append((weight, phrase))

    def forget(self, name: str) -> None:
        meaning = self.meanings.pop(name, None)
        if meaning is not None:
            self.score[meaning.stage] -= meaning.weight
            self.phrases[meaning.stage].remove((meaning.weight, meaning.phrase))
            if self.score[meaning.stage] <= 0:
                self.drop(meaning.stage)

    def drop(self, stage: Stage) -> None:
        self.score.pop(stage, None)
        self.phrases.pop(stage, None)

    def in_stage(self, stage: Stage, *, with_words: bool = True) -> list[Meaning]:
        return [m for name, m in self.meanings.items()
                if m.stage == stage and (with_words or not name.startswith("word:"))]


def _bundle_io(facts: CodeFacts, table: dict[str, str]) -> list[str]:
    found = []
    for method, pattern in table.items():
        if method not in facts.methods and not facts.uses(method):
            continue
        args = sorted(facts.method_args.get(method, ())) if "{arg}" in pattern else []
        found.extend(pattern.format(arg=arg) for arg in args) if args else found.append(pattern.replace("{arg}.", "a "))
    return sorted(set(found))


def _formats(facts: CodeFacts) -> list[str]:
    names = {"read_csv": "CSV/TSV", "read_excel": "Excel", "read_json": "JSON", "read_parquet": "Parquet"}
    return [label for fn, label in names.items() if facts.uses(fn)]


def _drop_transform_stages(evidence: _Evidence) -> None:
    """A service that writes no table cannot be a transformer: what looked like one is analysis of the data."""
    if evidence.score.get(Stage.OUTLIER_HANDLING, 0) >= 1.0:
        evidence.boost(Stage.EDA, 3.0, "counts outliers per column without changing the data")
    for stage in list(evidence.score):
        if stage not in TERMINAL_STAGES:
            evidence.drop(stage)


def _collect(facts: CodeFacts) -> _Evidence:
    evidence = _Evidence()
    for symbol in sorted(facts.symbols):  # in a fixed order: the task types are listed in the order found
        short = symbol.rsplit(".", 1)[-1]
        if short in SYMBOLS:
            evidence.add(short, SYMBOLS[short])
    for method in sorted(facts.methods):
        if method in METHODS:
            evidence.add(method, METHODS[method])
    for literal in sorted(facts.literals):
        for key, meaning in LITERALS.items():
            if literal == key or (key.endswith("_") and literal.startswith(key)):
                evidence.add(key, meaning)
    for pattern in sorted(facts.patterns):
        evidence.add(pattern, PATTERNS[pattern])
    if facts.raises_on_missing:  # missing-value checks that guard a refusal are not imputation
        for guard in ("isna", "notna", "dropna"):
            evidence.forget(guard)
    for function in facts.functions:
        for word, meaning in STAGE_WORDS.items():
            if word in function.lower():
                evidence.add(f"word:{word}", meaning)
    writes_tables = "write_table" in facts.methods or facts.uses(*_TABLE_WRITERS)
    if not writes_tables:
        _drop_transform_stages(evidence)
    predicts = (facts.uses(*FITS_AND_PREDICTS, "write_clusters", "write_anomalies")
                or "write_predictions" in facts.methods)
    if predicts:
        for stage in (Stage.MODELLING, Stage.CLUSTERING, Stage.ANOMALY_DETECTION):
            if evidence.score[stage]:
                evidence.boost(stage, 3.0)
    if facts.uses("write_explanation"):  # its charts illustrate the explanation, they are not its purpose
        evidence.boost(Stage.EXPLANATION, 6.0)
    if "predictions" in facts.methods and evidence.score[Stage.EVALUATION]:
        evidence.boost(Stage.EVALUATION, 3.0)
    if "artifact_path" in facts.methods:
        evidence.boost(Stage.VISUALISATION, 3.0)
    if "source_file" in facts.methods:
        evidence.boost(Stage.LOADING, 4.0, "converts the raw dataset file into a table")
    written = facts.method_args.get("write_table", set())
    if {"train", "test"} <= written and "data" in facts.method_args.get("remove_table", set()):
        evidence.boost(Stage.SPLITTING, 3.0, "splits the rows into a training set and a held-out test set")
    if {"nunique", "drop"} <= facts.methods and writes_tables:
        evidence.boost(Stage.COLUMN_FILTERING, 3.0, "drops constant and identifier-like columns")
    if {"value_counts", "map"} <= facts.methods and writes_tables:
        evidence.boost(Stage.ENCODING, 3.0, "replaces each category by its frequency (frequency encoding)")
    strongest = max(evidence.score.values(), default=0.0)
    if strongest < 2.5 and "append_report" in facts.methods and not writes_tables:
        if "lineage" in facts.literals and ("metrics" in facts.methods or facts.uses("metrics")):
            evidence.boost(Stage.REPORTING, 4.0, "assembles a Markdown report of the run: steps, metrics and plots")
        elif evidence.score.get(Stage.VALIDATION):
            evidence.boost(Stage.VALIDATION, 4.0, "checks that the data is usable and stops the pipeline if not")
        else:
            evidence.boost(Stage.EDA, 3.0, "summarises the data in a report")
    return evidence


def _stages(evidence: _Evidence) -> list[Stage]:
    ranked = sorted((s for s, v in evidence.score.items() if v > 0), key=lambda s: -evidence.score[s])
    if not ranked:
        return [Stage.EDA]
    primary = ranked[0]
    others = [s for s in ranked[1:] if evidence.score[s] >= 3.0 and evidence.score[s] >= evidence.score[primary] / 2]
    if primary in TERMINAL_STAGES:
        others = [s for s in others if s in TERMINAL_STAGES and s is not Stage.DIMENSIONALITY_REDUCTION]
    else:
        others = [s for s in others if s not in TERMINAL_STAGES]
    return [primary, *others]


def _task_types(stages: list[Stage], evidence: _Evidence, facts: CodeFacts) -> list[TaskType]:
    """The tasks the calls of the service's stages serve, narrowed to those a kit helper it calls allows."""
    tasks: list[TaskType] = []
    for stage in stages:
        for meaning in evidence.in_stage(stage):
            tasks.extend(t for t in meaning.tasks if t not in tasks)
    for only in (only for helper, only in ONLY_TASKS.items() if facts.uses(helper)):
        tasks = [t for t in tasks if t in only] or list(only)
    implied = {
        Stage.CLUSTERING: TaskType.CLUSTERING, Stage.ANOMALY_DETECTION: TaskType.ANOMALY_DETECTION,
        Stage.DIMENSIONALITY_REDUCTION: TaskType.DIMENSIONALITY_REDUCTION, Stage.EDA: TaskType.EXPLORATORY_ANALYSIS,
    }
    if stages[0] in implied and implied[stages[0]] not in tasks:
        tasks.insert(0, implied[stages[0]])
    return tasks


def _algorithms(facts: CodeFacts) -> list[str]:
    """The known estimators and functions the code relies on (the kit's own helpers are not algorithms)."""
    return sorted({s.rsplit(".", 1)[-1] for s in facts.symbols
                   if s.rsplit(".", 1)[-1] in SYMBOLS and not s.startswith("dagsmith_kit")})


def _tags(facts: CodeFacts, evidence: _Evidence, primary: Stage, algorithms: list[str], reads: list[str]) -> Tags:
    """What the code needs and does, read from its calls (the estimators of its main stage above all), the
    ``algorithms`` it relies on and the bundle files it ``reads``."""
    estimators = [m for m in evidence.meanings.values() if m.stage is primary and m.weight >= 3.0]
    internal = ({m.stage for m in evidence.meanings.values()}
                | {stage for helper, stages in PREPARES_INSIDE.items() if facts.uses(helper) for stage in stages}
                ) - {primary}
    predictive = primary in {Stage.MODELLING, Stage.CLUSTERING, Stage.ANOMALY_DETECTION, Stage.DIMENSIONALITY_REDUCTION}
    imputes = primary is Stage.IMPUTATION or (predictive and Stage.IMPUTATION in internal)
    encodes = Stage.ENCODING in internal
    # a splitter moves rows and an evaluator reads the target and the predictions: their checks for missing values
    # are on the column a splitter splits by, or on the predictions, not on the features
    guards = (facts.raises_on_missing and primary not in (Stage.SPLITTING, Stage.EVALUATION)) or any(
        facts.uses(name) and facts.call_keywords.get(name, {}).get("allow_missing") is not True
        for name in REJECTS_MISSING)
    handles_missing = not guards and (imputes or any(m.handles_missing for m in estimators))
    names = facts.literals | facts.methods | {s.rsplit(".", 1)[-1] for s in facts.symbols}
    native = any(m.handles_categorical for m in estimators) and bool(names & NATIVE_CATEGORICAL)
    fits = facts.uses(*FITS_AND_PREDICTS)
    classifies = any(t.classification for m in estimators for t in m.tasks)
    strengths = [SYMBOLS[a].strength for a in algorithms if SYMBOLS[a].strength is not None]
    upstream = " ".join(reads)
    read = " ".join(phrase for phrases in evidence.phrases.values() for _, phrase in phrases).lower()
    return Tags(
        needs_target="require_target" in facts.methods or fits,
        needs_split=fits or bool({"train", "test"} & facts.method_args.get("table", set())),
        needs_model="predictions" in upstream or "model.joblib" in upstream,
        rejects_missing=guards or (not handles_missing and bool(estimators) and predictive),
        handles_missing=handles_missing,
        numeric_only=not native and any(m.numeric_only for m in estimators) and not encodes
        and primary is not Stage.ENCODING,
        native_categorical=native,
        encodes_internally=predictive and encodes,
        scales_internally=Stage.SCALING in internal and primary in TERMINAL_STAGES,
        fits_on_train=facts.uses(*FITS_ON_TRAIN),
        shuffles_rows=facts.uses(*SHUFFLES_ROWS) or any(facts.uses(name) and facts.call_keywords.get(name, {})
                                                        .get("shuffle") is True for name in SHUFFLES_WHEN_ASKED),
        keeps_groups=facts.uses(*KEEPS_GROUPS),
        lags_target="shift" in facts.methods and "require_target" in facts.methods,
        metrics=sorted({metric for name, reported in METRIC_FUNCTIONS.items() if facts.uses(name)
                        for metric in reported}),
        orders_by_time=facts.uses("TimeSeriesSplit") or (
            "time_column" in facts.attributes | set(facts.parameters) and "sort_values" in facts.methods),
        produces_model=facts.uses("save_model", *FITS_AND_PREDICTS),
        produces_predictions=facts.uses(*FITS_AND_PREDICTS, "write_predictions"),
        produces_probabilities=facts.uses("predict_proba") or (fits and classifies),
        produces_metrics="write_metrics" in facts.methods,
        produces_plots="artifact_path" in facts.methods or facts.uses("savefig"),
        writes_report="append_report" in facts.methods,
        limits={name: facts.parameters[name].default for name in ("max_rows", "max_columns", "max_clusters")
                if name in facts.parameters},
        formats=_formats(facts) if primary is Stage.LOADING else [],
        analyses=[name for name, stem in ANALYSIS_TERMS.items() if stem in read] if primary is Stage.EDA else [],
        strength=max(strengths, default=None),
    )


#: The tags as sentences for people: what the code does, then what it needs.
_CAPABILITIES = {
    "handles_missing": "handles missing values",
    "native_categorical": "handles categorical features natively",
    "encodes_internally": "encodes categorical features itself",
    "scales_internally": "scales features internally",
    "fits_on_train": "learns on the training table only and applies the result to every table",
    "shuffles_rows": "picks rows at random",
    "orders_by_time": "keeps the rows in time order",
    "keeps_groups": "keeps each group's rows on one side",
    "lags_target": "adds the target's earlier values as features",
    "produces_model": "produces a trained model",
    "produces_predictions": "produces predictions",
    "produces_probabilities": "produces class probabilities when the model supports them",
    "produces_metrics": "produces metrics",
    "produces_plots": "produces PNG plots",
    "writes_report": "writes a Markdown report section",
}
_REQUIREMENTS = {
    "rejects_missing": "no missing values (refuses input with missing values; impute first)",
    "numeric_only": "numeric features only (encode categorical columns first)",
    "needs_target": "a target column",
    "needs_split": "a train/test split",
    "needs_model": "a trained model or its predictions from an earlier step",
    "orders_by_time": "a time column to order the rows by",
}


def _capabilities(tags: Tags) -> list[str]:
    limits = [f"limits its work by {name} (default {default})" for name, default in tags.limits.items()]
    metrics = [f"computes {', '.join(metric_label(name) for name in tags.metrics)}"] if tags.metrics else []
    return [sentence for tag, sentence in _CAPABILITIES.items() if getattr(tags, tag)] + metrics + limits


def _requirements(tags: Tags) -> list[str]:
    return [sentence for tag, sentence in _REQUIREMENTS.items() if getattr(tags, tag)]


def _summary(primary: Stage, evidence: _Evidence, facts: CodeFacts, tasks: list[TaskType]) -> str:
    phrases = [p for _, p in sorted(evidence.phrases.get(primary, []), key=lambda p: -p[0])]
    phrases = list(dict.fromkeys(phrases))
    formats = _formats(facts)
    if primary is Stage.LOADING and formats:
        text = f"loads a raw dataset file ({', '.join(formats)}) into a table"
    elif primary is Stage.EVALUATION:
        metrics = [m.phrase for m in evidence.in_stage(Stage.EVALUATION, with_words=False) if m.weight <= 2.0]
        kinds = sorted({t.value.split("_")[-1] for t in tasks}) or ["model"]
        held_out = " on held-out data" if set(tasks) - {TaskType.CLUSTERING} else ""
        text = f"computes {' and '.join(kinds)} metrics{held_out}: {', '.join(sorted(metrics))}"
    elif primary is Stage.VISUALISATION:
        names = facts.methods | facts.attributes | facts.literals | {s.rsplit(".", 1)[-1] for s in facts.symbols}
        subjects = list(dict.fromkeys(v for k, v in PLOT_SUBJECTS.items() if k in names))
        text = "plots " + (", ".join(subjects) if subjects else "charts") + " as PNG images"
    elif primary is Stage.EDA and not any(v > 0 for v in evidence.score.values()):
        text = "does no data work the analyzer recognises"  # no evidence at all: _stages fell back to EDA
    elif primary is Stage.EDA and phrases:
        text = ", ".join(phrases[:3])
    else:
        text = phrases[0] if phrases else f"performs {_STAGE_WORDS[primary]}"
    choices = {p.name: p.default for p in facts.parameters.values()
               if p.name in _CHOICE_PARAMS and isinstance(p.default, str)}
    for name, meaning in evidence.meanings.items():
        if meaning.stage is primary:
            fixed = facts.call_keywords.get(name, {})
            choices.update({k: v for k, v in fixed.items()
                            if k in _CHOICE_PARAMS and isinstance(v, str) and k not in choices})
    if choices:
        text += " (" + ", ".join(f"{name}: {value}" for name, value in choices.items()) + ")"
    return text[0].upper() + text[1:] + "."


def _describe_parameters(parameters: list[Parameter]) -> str:
    parts = []
    for p in parameters:
        default = "required" if p.required else f"default {p.default!r}"
        parts.append(f"{p.name} ({p.type}, {default})")
    return "Parameters: " + ", ".join(parts) + "." if parts else "No parameters."


def analyze_code(source: ServiceSource) -> Analysis:
    """Analyse a microservice from its code (``main.py``) alone."""
    facts = extract_facts(source.code)
    if facts.uses(*WRITES_REPORT):
        facts.methods.add("append_report")  # the kit helper appends the service's report section
    evidence = _collect(facts)
    stages = _stages(evidence)
    primary = stages[0]
    tasks = _task_types(stages, evidence, facts)
    algorithms = _algorithms(facts)
    reads = _bundle_io(facts, BUNDLE_READS)
    tags = _tags(facts, evidence, primary, algorithms, reads)
    capabilities, requirements = _capabilities(tags), _requirements(tags)
    parameters = list(facts.parameters.values())
    summary = _summary(primary, evidence, facts, tasks)
    inputs = reads + [f"{fmt} files" for fmt in _formats(facts)]
    outputs = _bundle_io(facts, BUNDLE_WRITES)
    sentences = [summary, f"Stage: {_STAGE_WORDS[primary]}."]
    if len(stages) > 1:
        sentences.append("Also serves: " + ", ".join(_STAGE_WORDS[s] for s in stages[1:]) + ".")
    if tasks:
        sentences.append("Fits tasks: " + ", ".join(t.value.replace("_", " ") for t in tasks) + ".")
    if capabilities:
        sentences.append("It " + "; ".join(capabilities) + ".")
    if requirements:
        sentences.append("Needs " + "; ".join(requirements) + ".")
    if algorithms:
        sentences.append("Uses " + ", ".join(algorithms) + ".")
    sentences.append(_describe_parameters(parameters))
    return Analysis(
        mode=AnalysisMode.CODE,
        summary=summary,
        description=" ".join(sentences),
        stages=stages,
        task_types=tasks,
        capabilities=capabilities,
        requirements_on_input=requirements,
        tags=tags,
        inputs=inputs,
        outputs=outputs,
        parameters=parameters,
        libraries=sorted(m for m in facts.top_modules if m not in {"__future__"}),
        algorithms=algorithms,
        use_cases=[case for stage in stages for case in USE_CASES.get(stage, [])],
        security_notes=[],
        analyzer=ANALYZER,
        analyzer_version=ANALYZER_VERSION,
        analyzed_at=datetime.now(UTC),
    )
