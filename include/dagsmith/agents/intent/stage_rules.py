"""The stages an intent plans: those its task cannot do without, and those this data calls for (gaps to fill,
categories to encode, copies to drop, ...), each required or optional with its reason, or left out with why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dagsmith.agents.intent.columns import CATEGORY_TYPES, NEVER_FEATURES, is_numeric
from dagsmith.agents.intent.wording import counted, percent, shortlist, stray
from dagsmith.agents.repeats import repeated_ids
from dagsmith.agents.stages import ordered
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import Constraint, ConstraintKind
from dagsmith.models.profile import ColumnProfile, DatasetProfile, SemanticType

_SUPERVISED_BASE = {
    Stage.LOADING: "reads the dataset",
    Stage.VALIDATION: "checks the table and the target before anything is learnt",
    Stage.SPLITTING: "holds out a test set so the evaluation is honest",
    Stage.MODELLING: "learns to predict the target",
    Stage.EVALUATION: "measures the model on the held-out rows",
    Stage.EXPLANATION: "names what drives the predictions, measured on the held-out rows",
}
#: The stages each task cannot do without, and why. Stages the data calls for are added by STAGE_RULES.
BASE_STAGES: dict[TaskType, dict[Stage, str]] = {
    TaskType.BINARY_CLASSIFICATION: _SUPERVISED_BASE,
    TaskType.MULTICLASS_CLASSIFICATION: _SUPERVISED_BASE,
    TaskType.REGRESSION: _SUPERVISED_BASE,
    TaskType.TIME_SERIES_FORECASTING: {
        **_SUPERVISED_BASE,
        Stage.SPLITTING: "a time-based split holds out the latest rows, so the model never sees the future",
        Stage.FEATURE_ENGINEERING: "gives the model what it knows ahead: the target's own past, a horizon back, "
                                   "and the time's calendar (month, day of week)",
    },
    TaskType.CLUSTERING: {
        Stage.LOADING: "reads the dataset",
        Stage.VALIDATION: "checks the table before grouping",
        Stage.SCALING: "distances need features on one scale",
        Stage.CLUSTERING: "groups similar rows",
        Stage.EVALUATION: "measures how well separated the groups are",
    },
    TaskType.DIMENSIONALITY_REDUCTION: {
        Stage.LOADING: "reads the dataset",
        Stage.VALIDATION: "checks the table before projecting it",
        Stage.SCALING: "components need features on one scale",
        Stage.DIMENSIONALITY_REDUCTION: "replaces the columns with a few components",
    },
    TaskType.ANOMALY_DETECTION: {
        Stage.LOADING: "reads the dataset",
        Stage.VALIDATION: "checks the table before scoring rows",
        Stage.ANOMALY_DETECTION: "scores every row and flags the unusual ones",
    },
    TaskType.EXPLORATORY_ANALYSIS: {
        Stage.LOADING: "reads the dataset",
        Stage.EDA: "describes every column: counts, gaps, distributions, correlations",
    },
}
#: Optional for every task: a picture and a written report of what was done.
_ALWAYS_OPTIONAL = {Stage.VISUALISATION: "plots of the data and the results",
                    Stage.REPORTING: "a written summary of the pipeline and its metrics"}
_EXTRA_OPTIONAL: dict[TaskType, dict[Stage, str]] = {
    TaskType.CLUSTERING: {Stage.DIMENSIONALITY_REDUCTION: "a 2-D projection makes the groups visible"},
    TaskType.ANOMALY_DETECTION: {Stage.EDA: "a description of the data puts the flagged rows in context",
                                 Stage.SCALING: "distance-based detectors need one scale"},
}

_MODEL_TASKS = set(TaskType) - {TaskType.EXPLORATORY_ANALYSIS}


@dataclass(frozen=True)
class DataView:
    """What the stage rules look at: the profile, split into the target and the features."""

    profile: DatasetProfile
    task: TaskType
    target: ColumnProfile | None
    features: list[ColumnProfile]
    constraints: list[Constraint]


#: (stage, required, reason); required None: the data was checked and the stage is left out, the reason says why.
StageDecision = tuple[Stage, bool | None, str]
StageRule = Callable[[DataView], StageDecision | None]


def _imputation(view: DataView) -> StageDecision | None:
    gaps = sorted((c for c in view.features if c.missing), key=lambda c: -c.missing_ratio)
    target_gaps = view.target.missing + view.target.not_numbers if view.target and view.task.supervised \
        else 0
    if not gaps and not target_gaps:
        return None
    parts = []
    if gaps:
        worst = shortlist([f"{c.name} {percent(c.missing_ratio)}" for c in gaps], 3)
        parts.append(f"{counted(len(gaps), 'feature column')} with missing values ({worst})")
    if target_gaps:
        why = " (missing, or not a number)" if view.target.not_numbers else ""
        parts.append(f"{counted(target_gaps, 'row')} without a target{why} must be dropped")
    return Stage.IMPUTATION, True, "; ".join(parts)


def _encoding(view: DataView) -> StageDecision | None:
    categories = [c.name for c in view.features if not is_numeric(c) and c.semantic_type in CATEGORY_TYPES]
    if not categories:
        return None
    return (Stage.ENCODING, True,
            f"{counted(len(categories), 'categorical feature')} ({shortlist(categories)}) to numbers")


def _column_filtering(view: DataView) -> StageDecision | None:
    unusable = [c.name for c in view.profile.columns if c.semantic_type in NEVER_FEATURES and c is not view.target]
    constant = [c.name for c in view.features if c.unique <= 1]
    what = [f"ids or free text ({shortlist(unusable)})"] if unusable else []
    what += [f"constant ({shortlist(constant)})"] if constant else []
    return (Stage.COLUMN_FILTERING, True, "drops columns no model can use: " + "; ".join(what)) if what else None


#: Repeated rows are copies when at least this share as many of them stand alone (no other row differs from them in
#: a single column) as of the rows that do not repeat; chance repeats rows where rows crowd, far less often alone.
COPIES_ALONE_SHARE = 0.5


def _deduplication(view: DataView) -> StageDecision | None:
    """Deduplicate records entered twice (a repeated id, or copies as alone as any other row), never rows that
    coincide by chance (survey answers, a plan price every new customer pays): those are real observations.
    A goal asking for it gets it."""
    asked = next((c for c in view.constraints if c.kind is ConstraintKind.DEDUPLICATE), None)
    evidence = _repeats(view.profile)
    if asked:
        return Stage.DEDUPLICATION, True, f"asked for: {asked.reason}" + (f"; {evidence[1]}" if evidence else "")
    if evidence is None:
        return None
    copies, why = evidence
    return Stage.DEDUPLICATION, False if copies else None, why


def _repeats(profile: DatasetProfile) -> tuple[bool, str] | None:
    """(whether the repeats are copies, why), or None when no row and no record id repeats."""
    ids = [f"{n} in '{name}'" for name, n in repeated_ids(profile).items()]
    if ids:
        return True, f"repeated record ids ({shortlist(ids)}): the same record entered more than once"
    found = profile.repeated_rows
    if found is None:
        return None
    alone, usual = found.isolated / found.rows, found.isolated_share
    copies = found.isolated > 0 and alone >= COPIES_ALONE_SHARE * usual
    what = f"{counted(found.rows, 'repeated row')} ({percent(found.rows / max(found.checked_rows, 1))})"
    shares = (f"{percent(alone) if found.isolated else 'none'} of them stand alone (no other row differs from them "
              f"in a single column), against {percent(usual)} of the other rows")
    if copies:
        return True, f"{what}: {shares}, so they are copies, not coincidences"
    return False, (f"{what}, but {shares}: they sit where rows crowd and coincide by chance, so removing them "
                   f"would drop real observations")


def _type_conversion(view: DataView) -> StageDecision | None:
    stored = [c.name for c in view.profile.columns
              if not is_numeric(c) and c.semantic_type in {SemanticType.NUMERIC, SemanticType.DATETIME}]
    if not stored:
        return None
    if view.target and view.target.name in stored and not view.task.classification:
        return (Stage.TYPE_CONVERSION, True,
                f"the target {view.target.name} is numbers stored as text{stray(view.target)}")
    return Stage.TYPE_CONVERSION, False, f"{shortlist(stored)} stored as text"


def _continuous(view: DataView) -> list[ColumnProfile]:
    return [c for c in view.features if is_numeric(c) and c.unique > 2]


def _outlier_handling(view: DataView) -> StageDecision | None:
    n = len(_continuous(view))
    return (Stage.OUTLIER_HANDLING, False, f"{counted(n, 'continuous feature')} may hold extreme values") if n else None


def _scaling(view: DataView) -> StageDecision | None:
    n = len(_continuous(view))
    if not n or not view.task.supervised:
        return None
    return Stage.SCALING, False, f"{counted(n, 'numeric feature')}: linear and distance-based models need one scale"


def _feature_selection(view: DataView) -> StageDecision | None:
    if not view.task.supervised:
        return None
    limit = next((c.value for c in view.constraints if c.kind is ConstraintKind.MAX_FEATURES), None)
    if limit is not None:
        return Stage.FEATURE_SELECTION, True, f"the goal allows at most {limit} features"
    return Stage.FEATURE_SELECTION, False, f"{len(view.features)} features; fewer can be simpler and as accurate"


def _feature_engineering(view: DataView) -> StageDecision | None:
    dates = [c.name for c in view.features if c.semantic_type is SemanticType.DATETIME]
    if not dates or not view.task.supervised or view.task is TaskType.TIME_SERIES_FORECASTING:
        return None
    return Stage.FEATURE_ENGINEERING, False, f"date columns ({shortlist(dates)}) can become year/month/day features"


def _visualisation(view: DataView) -> StageDecision | None:
    said = next((c for c in view.constraints if c.kind is ConstraintKind.VISUALISE), None)
    return (Stage.VISUALISATION, True, f"plots were asked for: {said.reason}") if said else None


#: Stages the data calls for, each rule returning (stage, required, reason) or nothing. Only model tasks run
#: them; exploration just describes the table as it is.
STAGE_RULES: tuple[StageRule, ...] = (
    _imputation, _encoding, _column_filtering, _deduplication, _type_conversion, _outlier_handling, _scaling,
    _feature_selection, _feature_engineering,
)


def plan_stages(view: DataView) -> tuple[list[Stage], list[Stage], dict[str, str]]:
    """Required and optional stages for the task and this data, each with its reason."""
    required = dict(BASE_STAGES[view.task])
    optional = {**_ALWAYS_OPTIONAL, **_EXTRA_OPTIONAL.get(view.task, {})}
    left_out: dict[Stage, str] = {}
    if view.task in _MODEL_TASKS:
        for stage, is_required, reason in filter(None, (rule(view) for rule in STAGE_RULES)):
            (left_out if is_required is None else required if is_required else optional).setdefault(stage, reason)
    chosen = _visualisation(view)
    if chosen:
        required[chosen[0]] = chosen[2]
    optional = {s: r for s, r in optional.items() if s not in required}
    reasons = {f"stage.{s.value}": r for s, r in (*required.items(), *optional.items())}
    reasons |= {f"stage.{s.value}": f"left out: {r}" for s, r in left_out.items() if f"stage.{s.value}" not in reasons}
    return ordered(set(required)), ordered(set(optional)), reasons
