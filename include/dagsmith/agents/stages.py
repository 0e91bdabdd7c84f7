"""Where each stage sits in a pipeline: the order data flows through, and which stages branch off the end."""

from __future__ import annotations

from dagsmith.models.catalog import Stage

#: The order stages run in. Splitting comes before the transformers so they learn from train only.
STAGE_ORDER: tuple[Stage, ...] = (
    Stage.LOADING,
    Stage.VALIDATION,
    Stage.TYPE_CONVERSION,
    Stage.DEDUPLICATION,
    Stage.COLUMN_FILTERING,
    Stage.SPLITTING,
    Stage.IMPUTATION,
    Stage.OUTLIER_HANDLING,
    Stage.FEATURE_ENGINEERING,
    Stage.ENCODING,
    Stage.SCALING,
    Stage.FEATURE_SELECTION,
    Stage.DIMENSIONALITY_REDUCTION,
    Stage.MODELLING,
    Stage.CLUSTERING,
    Stage.ANOMALY_DETECTION,
    Stage.EVALUATION,
    Stage.EXPLANATION,
    Stage.EDA,
    Stage.VISUALISATION,
    Stage.REPORTING,
)
#: Stages that read what the main chain produced and write only reports, metrics or plots: they branch
#: off the last stage of the chain instead of extending it.
BRANCH_STAGES: frozenset[Stage] = frozenset({Stage.EVALUATION, Stage.EXPLANATION, Stage.VISUALISATION,
                                             Stage.REPORTING})


def ordered(stages: list[Stage] | set[Stage]) -> list[Stage]:
    """``stages`` in pipeline order, without repeats."""
    wanted = set(stages)
    return [stage for stage in STAGE_ORDER if stage in wanted]
