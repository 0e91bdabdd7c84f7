"""What a column can be to a model, judged from its profile: numbers, classes, or no feature at all (an identifier,
free text, a contact detail). The task, stage and validation rules judge columns alike.
"""

from __future__ import annotations

import re

from dagsmith.agents.profiler.semantic import NOT_FEATURES
from dagsmith.models.profile import ColumnProfile, SemanticType

_NUMERIC_DTYPE = re.compile(r"^(u?int|float|Int|UInt|Float)\d*")
CLASS_TYPES = {SemanticType.CATEGORICAL, SemanticType.BOOLEAN, SemanticType.TEXT}
CATEGORY_TYPES = {SemanticType.CATEGORICAL, SemanticType.BOOLEAN}
#: Columns no model learns from as they are: identifiers, free text and contact details (dates are left to the
#: supervised pipeline, which reads them as features).
NEVER_FEATURES = NOT_FEATURES - {SemanticType.DATETIME}
#: Columns no model predicts: one value per row, or free-form text.
UNPREDICTABLE = NEVER_FEATURES | {SemanticType.POSTAL_CODE}
KIND_NAMES = {
    SemanticType.ID: "an identifier", SemanticType.TEXT: "free text",
    SemanticType.EMAIL: "email addresses", SemanticType.PHONE: "phone numbers", SemanticType.URL: "URLs",
    SemanticType.POSTAL_CODE: "postal codes", SemanticType.DATETIME: "dates",
}


def predictable(column: ColumnProfile) -> bool:
    """A column a model could learn to predict: of a kind that can be predicted, with more than one value."""
    return column.semantic_type not in UNPREDICTABLE and column.unique > 1


def is_numeric(column: ColumnProfile) -> bool:
    return bool(_NUMERIC_DTYPE.match(column.dtype)) and column.semantic_type is not SemanticType.DATETIME


def holds_numbers(column: ColumnProfile) -> bool:
    """Numbers, stored as such or as text with a few stray words ('n/a', 'call us'), which a pipeline reads as
    missing: a price column with three such words is still a price, not 350 classes."""
    return is_numeric(column) or (column.semantic_type is SemanticType.NUMERIC and column.mean is not None)
