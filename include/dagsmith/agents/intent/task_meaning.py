"""The kind of answer a goal asks for, by meaning: the goal as a whole compared with short descriptions of each kind
of task by the embedding model.

The task words of the rules catch the usual ways of asking; a goal in other words ("pig weighings that look wrong",
"project sea ice for the coming decades") reads to them as a prediction of whatever column it names. Its meaning
still sits clearly closer to one kind of task, and a question about such a goal offers that kind. Only a clear lead
counts (``MIN_LEAD``): most prediction goals are about as close to describing the data as to predicting it, so
meaning chooses no prediction and no task where the kinds are close.
"""

from __future__ import annotations

from dataclasses import dataclass

from dagsmith.embeddings import Embedder
from dagsmith.models.catalog import TaskType

#: What each kind of task does, in a few plain descriptions each. A prediction is one kind here (``None``): which
#: type of prediction is the target's to say, never the goal's tone.
DESCRIPTIONS: dict[TaskType | None, tuple[str, ...]] = {
    TaskType.ANOMALY_DETECTION: ("find unusual or anomalous records", "detect outliers that look wrong",
                                 "flag suspicious records that do not fit"),
    TaskType.CLUSTERING: ("group similar records into clusters", "segment the records into groups"),
    TaskType.DIMENSIONALITY_REDUCTION: ("reduce the data to fewer dimensions",
                                        "project the variables onto two components to plot"),
    TaskType.EXPLORATORY_ANALYSIS: ("explore and describe the data",
                                    "show summary statistics, distributions and correlations"),
    TaskType.TIME_SERIES_FORECASTING: ("forecast future values of a series over time", "project the next years"),
    None: ("predict the value of a column", "predict whether something happens, yes or no",
           "estimate how much or how many", "classify each record into its category"),
}
#: How much closer (cosine similarity) the goal must be to one kind than to any other for its meaning to name it.
MIN_LEAD = 0.1


@dataclass(frozen=True)
class TaskMeaning:
    """The kind of task a goal's meaning names, with the description it is closest to and the lead over the next."""

    task_type: TaskType
    description: str
    lead: float

    @property
    def evidence(self) -> str:
        return (f"the goal reads closest in meaning to '{self.description}' ({self.lead:.2f} ahead of any other kind "
                "of task, by the embedding model)")


def task_by_meaning(goal: str, embedder: Embedder, min_lead: float = MIN_LEAD) -> TaskMeaning | None:
    """The kind of task other than a prediction that the goal's meaning names by ``min_lead`` at least, or None."""
    kinds = [(kind, text) for kind, texts in DESCRIPTIONS.items() for text in texts]
    vectors = embedder.embed([goal] + [text for _, text in kinds])
    similarity = vectors[1:] @ vectors[0]
    best: dict[TaskType | None, tuple[float, str]] = {}
    for (kind, text), value in zip(kinds, similarity, strict=True):
        best[kind] = max(best.get(kind, (-1.0, "")), (float(value), text))
    first, second = sorted(best.items(), key=lambda item: -item[1][0])[:2]
    lead = first[1][0] - second[1][0]
    if first[0] is None or lead < min_lead:
        return None
    return TaskMeaning(first[0], first[1][1], lead)
