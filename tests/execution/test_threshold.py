"""A binary classifier's line is scored at every candidate line as scikit-learn scores the labels it gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics

from dagsmith.execution.threshold import _scores, choose

SCIKIT_LEARN = {
    "f1": lambda truth, guess: metrics.f1_score(truth, guess, pos_label="yes", zero_division=0),
    "f1_macro": lambda truth, guess: metrics.f1_score(truth, guess, average="macro", zero_division=0),
    "balanced_accuracy": metrics.balanced_accuracy_score,
}


@pytest.mark.parametrize("objective", sorted(SCIKIT_LEARN))
def test_every_line_scores_what_scikit_learn_gives_its_labels(objective):
    rng = np.random.default_rng(3)
    is_rare = rng.random(600) < 0.1
    odds = np.clip(rng.normal(0.3 + 0.3 * is_rare, 0.2), 0, 1).round(2)  # rounded: many rows on a line
    # Lines inside the odds, on them, below all (every row rare) and above all (none predicted rare).
    lines = np.concatenate([np.unique(np.quantile(odds, np.linspace(0.01, 0.99, 99))), [-1.0, 0.5, 2.0]])
    truth = np.where(is_rare, "yes", "no")
    expected = [SCIKIT_LEARN[objective](truth, np.where(odds >= line, "yes", "no")) for line in lines]
    assert np.allclose(_scores(objective, is_rare, odds, lines), expected, atol=1e-12)


def test_the_line_moves_only_when_it_beats_even_odds():
    rng = np.random.default_rng(5)
    is_rare = rng.random(800) < 0.08
    odds = np.clip(rng.normal(0.15 + 0.25 * is_rare, 0.08), 0.001, 0.999)  # the rare class never reaches even odds
    y = pd.Series(np.where(is_rare, "yes", "no"))
    line = choose("roc_auc", y, pd.DataFrame({"proba_no": 1 - odds, "proba_yes": odds}))
    assert line is not None and line.rare == "yes" and line.at < 0.5 and line.score > line.even
    labelled = np.where(odds >= line.at, "yes", "no")
    assert line.score == pytest.approx(metrics.f1_score(y, labelled, average="macro"))
    assert choose("accuracy", y, pd.DataFrame({"proba_no": 1 - odds, "proba_yes": odds})) is None
    even = np.where(rng.random(800) < 0.5, 0.9, 0.1)  # already labelled right at even odds: nothing to gain
    y_even = pd.Series(np.where(even > 0.5, "yes", "no"))
    assert choose("roc_auc", y_even, pd.DataFrame({"proba_no": 1 - even, "proba_yes": even})) is None
