"""Agent A2, the intent detector: what the user wants, read from a goal in plain language and the data profile.

This is the deterministic reasoner. Weighted word rules over the goal pick a task family; the profile then
settles what words cannot: the target's type decides classification against regression, its classes binary
against multiclass, and a time column whether forecasting is possible at all. Every inferred field gets a
reason a person can check. A goal it cannot read with confidence raises ``AmbiguousGoal`` with a question
instead of a guess. The goal is only ever data: it is split into words and compared, never executed.

Modules: lexicon (the words the rules know), reading (the goal and column names as the rules see them), mentions
(where the goal names a column), target (which column to predict), task (which task the goal asks for), constraints
(limits the goal states), stage_rules (the stages the task and data call for), validation (whether an intent makes
sense for the data), given (fields stated instead of words, which win over them); columns and wording hold how the
rules judge and describe a column; column_requests (columns the goal rules in or out), column_meaning (a column
named by what it means), model_mentions (models the goal names); detect composes the parts. understanding is A2's
entry point: the configured model's reading when it holds up, else these rules.
"""

from __future__ import annotations

from dagsmith.agents.intent.detect import compose_intent, detect_intent
from dagsmith.agents.intent.given import apply_fields, fields_intent
from dagsmith.agents.intent.mentions import absent_column_names, explicit_target
from dagsmith.agents.intent.reading import read_goal
from dagsmith.agents.intent.task import supervised_type
from dagsmith.agents.intent.validation import missing_column_message, validate_intent

__all__ = ["absent_column_names", "apply_fields", "compose_intent", "detect_intent", "explicit_target", "fields_intent",
           "missing_column_message", "read_goal", "supervised_type", "validate_intent"]
