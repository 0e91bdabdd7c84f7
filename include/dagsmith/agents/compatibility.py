"""Whether a service fits the pipeline and the data at its stage, read from its typed tags.

One reading for two agents: the recommender turns each shortfall into a lower compatibility score with its
reason, and the builder refuses a pipeline with a blocking one. A tag change moves both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from dagsmith.agents.repeats import entity_column
from dagsmith.models.catalog import Stage, Tags, TaskType
from dagsmith.models.intent import Intent
from dagsmith.models.profile import DatasetProfile, SemanticType

#: Stages whose services leave a model or predictions behind for later steps.
PRODUCER_STAGES = frozenset({Stage.MODELLING, Stage.CLUSTERING, Stage.ANOMALY_DETECTION})
_NON_NUMERIC = {SemanticType.CATEGORICAL, SemanticType.TEXT, SemanticType.BOOLEAN, SemanticType.EMAIL,
                SemanticType.URL, SemanticType.PHONE, SemanticType.POSTAL_CODE}


@dataclass
class DataState:
    """What the data looks like when a stage runs, given the stages before it."""

    missing_features: list[str]
    categorical_features: list[str]
    n_rows: int
    format: str
    quality: float
    has_target: bool
    time_column: str | None = None
    forecasting: bool = False
    entity: tuple[str, float] | None = None  # an identifier with several rows each, and its rows per entity
    before: set[Stage] = field(default_factory=set)

    @property
    def splits_entities(self) -> bool:
        """Whether the rows are yet to be split and some share an entity that a random split would put on both sides
        (a forecast is split by time instead)."""
        return self.entity is not None and not self.forecasting and Stage.SPLITTING not in self.before

    @property
    def has_missing(self) -> bool:
        return bool(self.missing_features) and Stage.IMPUTATION not in self.before

    @property
    def has_categorical(self) -> bool:
        return bool(self.categorical_features) and Stage.ENCODING not in self.before


def data_state(profile: DatasetProfile, intent: Intent, before: set[Stage] | None = None) -> DataState:
    features = [c for c in profile.columns if c.name != intent.target and c.semantic_type is not SemanticType.ID]
    return DataState(
        missing_features=[c.name for c in features if c.missing > 0],
        categorical_features=[c.name for c in features if c.semantic_type in _NON_NUMERIC
                              and not c.dtype.startswith(("int", "float", "bool"))],
        n_rows=profile.n_rows, format=profile.format, quality=profile.quality.overall,
        has_target=bool(intent.target), time_column=profile.time_column,
        forecasting=intent.task_type is TaskType.TIME_SERIES_FORECASTING, before=set(before or ()),
        entity=entity_column(profile, intent.target),
    )


class Gap(StrEnum):
    """Something a service needs that the pipeline or the data does not give it at its stage."""

    TARGET = "target"
    MODEL = "model"
    SPLIT = "split"
    ROWS = "rows"
    FORMAT = "format"
    CATEGORICAL = "categorical"
    MISSING = "missing"
    TIME_ORDER = "time_order"
    TIME_COLUMN = "time_column"
    GROUPS = "groups"


#: Gaps a pipeline cannot run with; the others cost a service rank, because an earlier step may still close them.
BLOCKING = frozenset({Gap.TARGET, Gap.MODEL, Gap.SPLIT, Gap.ROWS})
#: Gaps that leave a pipeline running but its evaluation dishonest.
MISLEADING = frozenset({Gap.TIME_ORDER, Gap.GROUPS})


@dataclass(frozen=True)
class Shortfall:
    gap: Gap
    reason: str
    factor: float  # what it multiplies a candidate's compatibility by; 0 rules the candidate out

    @property
    def blocking(self) -> bool:
        return self.gap in BLOCKING

    @property
    def misleading(self) -> bool:
        """Whether the service would run here but its held-out rows would flatter the model: its successes on other
        data say nothing about this."""
        return self.gap in MISLEADING


def shortfalls(tags: Tags, state: DataState) -> list[Shortfall]:
    """What the service needs and does not get, with the reason a person would check."""
    found = []
    if tags.numeric_only and state.has_categorical:
        found.append(Shortfall(Gap.CATEGORICAL, f"needs numeric input but {len(state.categorical_features)} "
                                                "categorical columns are not encoded yet", 0.3))
    if tags.rejects_missing and state.has_missing:
        found.append(Shortfall(Gap.MISSING, f"refuses missing values, present in {len(state.missing_features)} "
                                            "columns", 0.3))
    if tags.needs_target and not state.has_target:
        found.append(Shortfall(Gap.TARGET, "needs a target column and the goal names none", 0.0))
    if tags.needs_model and not state.before & PRODUCER_STAGES:
        found.append(Shortfall(Gap.MODEL, "needs a model step upstream", 0.0))
    if tags.needs_split and Stage.SPLITTING not in state.before:
        found.append(Shortfall(Gap.SPLIT, "needs a train/test split upstream", 0.3))
    if tags.max_rows is not None and state.n_rows > tags.max_rows:
        found.append(Shortfall(Gap.ROWS, f"limited to {tags.max_rows:,} rows, the data has {state.n_rows:,}", 0.2))
    if tags.shuffles_rows and state.forecasting:
        found.append(Shortfall(Gap.TIME_ORDER, "picks rows at random, so a forecast would learn from times after "
                                               "those it is judged on", 0.2))
    if tags.shuffles_rows and not tags.keeps_groups and state.splits_entities:
        name, rows = state.entity
        found.append(Shortfall(Gap.GROUPS, f"picks rows at random, so the rows of one '{name}' (about {rows:.1f} "
                                           "each) would be both learned from and tested on", 0.2))
    if tags.orders_by_time and not state.time_column:
        found.append(Shortfall(Gap.TIME_COLUMN, "orders the rows by time and the table has no time column", 0.1))
    if tags.formats and not any(state.format in f.lower() for f in tags.formats):
        found.append(Shortfall(Gap.FORMAT, f"reads {', '.join(tags.formats)} only, the data is {state.format}", 0.1))
    return found


def strengths(tags: Tags, state: DataState) -> list[str]:
    """What the service does for this data that a step before it would otherwise have to."""
    found = []
    if tags.handles_missing and state.has_missing:
        found.append("handles missing values flagged by the profile")
    if tags.native_categorical and state.has_categorical:
        found.append("handles categorical columns natively")
    if tags.keeps_groups and state.splits_entities:
        found.append(f"keeps each '{state.entity[0]}' on one side, so the test is on ones it never saw")
    if tags.orders_by_time and state.forecasting and state.time_column:
        found.append(f"keeps the rows in the order of '{state.time_column}', as a forecast needs")
    return found


def prepares_itself(tags: Tags) -> set[Stage]:
    """Preparation a model does itself, so no step does it before: one-hot columns hide the categories from a model
    that splits on them natively (and one that encodes them inside would encode them twice), and filled-in values
    hide that a value was missing from one that learns where gaps go."""
    return {stage for stage, does in ((Stage.ENCODING, tags.native_categorical or tags.encodes_internally),
                                      (Stage.IMPUTATION, tags.handles_missing)) if does}
