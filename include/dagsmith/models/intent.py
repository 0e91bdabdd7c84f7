"""The intent detector's contract (agent A2): what the user wants, with a reason for each inference."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal, get_args, overload

from pydantic import BaseModel, Field, ValidationError, field_validator

from dagsmith.errors import InputError
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.reasoning import Provenance


class IssueLevel(StrEnum):
    ERROR = "error"  # blocks planning
    WARNING = "warning"  # planning goes on; the user should know


class IntentIssue(BaseModel):
    level: IssueLevel
    code: str = Field(description="stable identifier, e.g. target_missing, class_imbalance, leakage_suspect")
    message: str


class ConstraintKind(StrEnum):
    """What a goal can state beside its task and target; the builder obeys each one or refuses the plan."""

    TIME_BUDGET = "time_budget_seconds"  # seconds for the modelling search
    INTERPRETABLE = "interpretable"  # a model a person can read
    EXCLUDE_FAMILY = "exclude_family"  # a model family ruled out ("no neural nets")
    MODEL = "model"  # the model labels asked for ("a random forest")
    MAX_FEATURES = "max_features"
    METRIC = "metric"  # the measure to optimise ("optimise recall")
    N_CLUSTERS = "n_clusters"
    N_COMPONENTS = "n_components"
    ANOMALY_FRACTION = "anomaly_fraction"  # share of rows to flag
    ANALYSES = "analyses"  # the analyses an exploration names
    FOCUS = "focus"  # the column an exploration relates the others to
    VISUALISE = "visualise"
    DEDUPLICATE = "deduplicate"
    EXCLUDE_COLUMNS = "exclude_columns"  # columns never used as features
    ONLY_COLUMNS = "only_columns"  # the only columns used as features
    EACH_TARGET = "each_target"  # the targets a goal asks a model of each: one pipeline per target
    HORIZON = "horizon"  # how far ahead a forecast looks ("for the next 12 months")


#: The kinds of constraint by what their value is (each kind's value has one type, its model's below).
FlagKind = Literal[ConstraintKind.INTERPRETABLE, ConstraintKind.VISUALISE, ConstraintKind.DEDUPLICATE]
CountKind = Literal[ConstraintKind.TIME_BUDGET, ConstraintKind.MAX_FEATURES, ConstraintKind.N_CLUSTERS,
                    ConstraintKind.N_COMPONENTS]
ShareKind = Literal[ConstraintKind.ANOMALY_FRACTION]
NameKind = Literal[ConstraintKind.METRIC, ConstraintKind.EXCLUDE_FAMILY, ConstraintKind.FOCUS]
NamesKind = Literal[ConstraintKind.MODEL, ConstraintKind.ANALYSES, ConstraintKind.EXCLUDE_COLUMNS,
                    ConstraintKind.ONLY_COLUMNS, ConstraintKind.EACH_TARGET]


class _Constraint(BaseModel):
    """A limit the goal states, with the words that state it; stored and sent as ``{kind, value, reason}``."""

    kind: ConstraintKind
    value: Any
    reason: str


class Flag(_Constraint):
    """Something asked for: a model a person can read, plots, deduplication."""

    kind: FlagKind
    value: bool = True


class Count(_Constraint):
    """A whole number: the seconds of the time budget, the most features, the clusters or components wanted."""

    kind: CountKind
    value: int = Field(gt=0)


class Share(_Constraint):
    """The share of rows an anomaly detection flags."""

    kind: ShareKind
    value: float = Field(gt=0, le=0.5)


class Name(_Constraint):
    """One name: the metric to optimise, a model family ruled out, the column an exploration relates the others to."""

    kind: NameKind
    value: str


class Names(_Constraint):
    """Several names: the models asked for, the analyses of an exploration, the columns left out or the only ones
    used, the targets the goal asks a model of each."""

    kind: NamesKind
    value: list[str]


#: The units a forecast's horizon is counted in; a ``step`` is a row of the series.
HorizonUnit = Literal["step", "hour", "day", "week", "month", "quarter", "year"]
_GIVEN_UNITS = {None: "step", "row": "step", "period": "step"}
_GIVEN_HORIZON = re.compile(r"(\d+)(?:\s+(?:[a-z-]+\s+)?(step|row|period|hour|day|week|month|quarter|year|decade)s?)?")


class Horizon(_Constraint):
    """How far ahead a forecast looks: a count of units of time, turned into rows by the series' own step."""

    kind: Literal[ConstraintKind.HORIZON]
    value: int = Field(gt=0)
    unit: HorizonUnit = "step"

    @classmethod
    def given(cls, text: str) -> Horizon:
        """The horizon a field states: a count of rows ("30"), or of a unit of time, in any number, with a word between
        ("12 months", "30 trading days", "1 decade"); anything else is a ``ValueError`` that shows the form."""
        said = _GIVEN_HORIZON.fullmatch(text.strip().lower())
        if not said or int(said.group(1)) < 1:
            raise ValueError(f"horizon {text!r}: give a count of rows ('30') or of a unit of time ('12 months', "
                             f"'30 days'), the unit one of {', '.join(get_args(HorizonUnit))}, decade")
        value, unit = int(said.group(1)), _GIVEN_UNITS.get(said.group(2), said.group(2))
        if unit == "decade":
            value, unit = value * 10, "year"
        return cls(kind=ConstraintKind.HORIZON, value=value, unit=unit,
                   reason=f"horizon given: --horizon {text.strip()}")


#: A constraint is one of the above, told apart by its kind (a value of the wrong type for its kind is refused).
Constraint = Annotated[Flag | Count | Share | Name | Names | Horizon, Field(discriminator="kind")]


def find_constraint(constraints: Iterable[Constraint], kind: ConstraintKind) -> Constraint | None:
    return next((c for c in constraints if c.kind is kind), None)


class GivenFields(BaseModel):
    """What a person or an upstream system states as fields rather than words (``--target``, ``--task``, ... on the
    CLI; the same names are the meta-DAG's params and keys of its REST conf). A field given wins over the goal's
    reading of it; the goal's words still give the rest."""

    target: str | None = Field(None, description="the column to predict")
    task: TaskType | None = None
    metric: str | None = Field(None, description="the measure candidates are compared by")
    exclude: list[str] = Field(default_factory=list, description="columns no step uses as features")
    time_budget: int | None = Field(None, gt=0, description="seconds for the whole pipeline")
    horizon: str | None = Field(None, description="how far ahead a forecast looks: '12 months', '30 days', or a "
                                                  "count of rows")

    @field_validator("horizon")
    @classmethod
    def _horizon_reads(cls, text: str | None) -> str | None:
        if not text:
            return None
        Horizon.given(text)  # refuses what it cannot read, with the form it reads
        return text.strip()

    @classmethod
    def from_conf(cls, conf: Mapping[str, Any]) -> GivenFields:
        """The fields a run's conf (or params) states under the same names; a null states nothing. Fields that cannot
        be read are an ``InputError`` naming each."""
        try:
            return cls.model_validate({name: conf[name] for name in cls.model_fields if conf.get(name) is not None})
        except ValidationError as exc:
            raise InputError("the run's fields cannot be used: " + "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg'].removeprefix('Value error, ')}" for e in exc.errors())
            ) from None

    @property
    def settles(self) -> bool:
        """Whether the fields alone say what to do: a target to predict, or a task that predicts none."""
        return bool(self.target) or (self.task is not None and not self.task.supervised)

    def goal_for(self, goal: str | None) -> str:
        """The goal as said, or, when none is, one in words for what the fields settle (it is stored and shown)."""
        if (goal or "").strip() or not self.settles:
            return goal or ""
        task = self.task.value.replace("_", " ") if self.task else None
        return f"predict {self.target}" + (f" ({task})" if task else "") if self.target else str(task)


class Intent(BaseModel):
    goal: str
    task_type: TaskType
    target: str | None
    required_stages: list[Stage]
    optional_stages: list[Stage] = Field(default_factory=list)
    constraints: list[Constraint] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict, description="inferred field -> why")
    issues: list[IntentIssue] = Field(default_factory=list)
    confidence: float = Field(ge=0.0, le=1.0)
    provenance: Provenance = Field(default_factory=Provenance)

    @property
    def errors(self) -> list[IntentIssue]:
        return [i for i in self.issues if i.level is IssueLevel.ERROR]

    @property
    def warnings(self) -> list[IntentIssue]:
        return [i for i in self.issues if i.level is IssueLevel.WARNING]

    @overload
    def asks(self, kind: FlagKind) -> bool | None: ...
    @overload
    def asks(self, kind: CountKind) -> int | None: ...
    @overload
    def asks(self, kind: ShareKind) -> float | None: ...
    @overload
    def asks(self, kind: NameKind) -> str | None: ...
    @overload
    def asks(self, kind: NamesKind) -> list[str] | None: ...

    def asks(self, kind: ConstraintKind) -> bool | int | float | str | list[str] | None:
        """The value of the goal's constraint of this kind, or None when the goal states none."""
        found = find_constraint(self.constraints, kind)
        return found.value if found else None


class Reading(BaseModel):
    """One way to read a goal that a question offers: the task, the column to predict (none for an unsupervised
    task), and the evidence for it, so a person or a client can pick one."""

    task_type: TaskType
    target: str | None = None
    evidence: str

    @property
    def fields(self) -> GivenFields:
        """This reading as the fields that choose it."""
        return GivenFields(target=self.target, task=self.task_type)

    @property
    def options(self) -> str:
        """How to choose this reading on the command line."""
        return (f"--target {self.target} " if self.target else "") + f"--task {self.task_type.value}"


class Question(InputError, ValueError):
    """A goal that is not planned as read: the message says why, and ``candidates`` are the likeliest readings, best
    first (empty until the goal reader has ranked them)."""

    def __init__(self, message: str, candidates: list[Reading] | None = None):
        super().__init__(message)
        self.candidates = list(candidates or [])


class AmbiguousGoal(Question):
    """The goal cannot be read with confidence; the message asks the user what they mean. The CLI exits with a code
    of its own (``exit_code``), so a caller can tell a question it may answer from a request that cannot be planned."""

    exit_code = 5


class SeveralTargets(AmbiguousGoal):
    """The goal names several columns to predict: a question, unless the goal (``asked``) or the person asks for a
    model of each, when planning builds one pipeline per target."""

    def __init__(self, message: str, columns: list[str], asked: str | None):
        super().__init__(message)
        self.columns = columns  # in the order the goal names them
        self.asked = asked  # the goal's words asking for a model of each ("one model each"), if it says so


class InvalidIntent(Question):
    """The intent was read but cannot be planned (e.g. the target is absent); the message says why."""

    def __init__(self, intent: Intent):
        super().__init__(" ".join(issue.message for issue in intent.errors))
        self.intent = intent
