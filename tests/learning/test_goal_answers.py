"""Answers remembered in the real store: the same words on a table of the same columns are read as chosen."""

from __future__ import annotations

import pandas as pd

from dagsmith.agents.profiler import profile_frame
from dagsmith.learning.answers import recall, remember
from dagsmith.models.catalog import TaskType
from dagsmith.store.db import session_scope

GOAL = "which customers are about to leave?"


def _customers(**extra: list) -> pd.DataFrame:
    n = 60
    return pd.DataFrame({"tenure": range(n), "churned": ["yes", "no"] * (n // 2),
                         "left_branch": ["a", "b", "c"] * (n // 3), **extra})


def test_an_answer_is_read_again_for_the_same_words_on_a_table_of_the_same_columns(settings):
    profile = profile_frame(_customers())
    with session_scope(settings) as session:
        assert recall(session, profile, GOAL, user="ana") is None
        remember(session, profile, GOAL, TaskType.BINARY_CLASSIFICATION, "churned", user="ana", how="answered")
    next_month = profile_frame(_customers().sample(frac=1.0, random_state=1))
    with session_scope(settings) as session:
        mine = recall(session, next_month, "Which customers are about to LEAVE", user="ana")
        theirs = recall(session, next_month, GOAL, user="ben")
        other_words = recall(session, next_month, "which customers will stay?", user="ana")
        other_table = recall(session, profile_frame(_customers(region=["n"] * 60)), GOAL, user="ana")
    assert (mine.task_type, mine.target, mine.own) == (TaskType.BINARY_CLASSIFICATION, "churned", True)
    assert mine.reason.startswith("you chose 'churned' for 'which customers are about to leave'")
    assert theirs.target == "churned" and not theirs.own and theirs.reason.startswith("another user chose")
    assert other_words is None and other_table is None


def test_a_persons_own_answer_comes_before_everyones(settings):
    profile = profile_frame(_customers())
    with session_scope(settings) as session:
        remember(session, profile, GOAL, TaskType.BINARY_CLASSIFICATION, "churned", user="ana", how="answered")
        remember(session, profile, GOAL, TaskType.MULTICLASS_CLASSIFICATION, "left_branch", user="ben", how="given")
    with session_scope(settings) as session:
        assert recall(session, profile, GOAL, user="ana").target == "churned"
        assert recall(session, profile, GOAL, user="ben").target == "left_branch"
        assert recall(session, profile, GOAL, user="cleo").target == "left_branch"  # everyone's: the latest choice
