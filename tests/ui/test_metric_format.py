"""How the run page writes a metric."""

from __future__ import annotations

import pytest

from dagsmith.ui.pages import metric


@pytest.mark.parametrize("value, shown", [(3.0, "3"), (12, "12"), (0.876543, "0.8765"), (-1.5, "-1.5000"),
                                          (1234.56789, "1234.5679"), (float("inf"), "inf")])
def test_counts_are_whole_and_scores_have_four_decimals(value, shown):
    assert metric(value) == shown
