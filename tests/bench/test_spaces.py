"""Comparing a model service's search space with a candidate on tables the suite never uses."""

from __future__ import annotations

import pytest

from dagsmith.bench import spaces


def test_the_shipped_space_against_itself_differs_on_no_table(tmp_path, capsys):
    """The same space searched with the same seeds finds the same model: any difference would be the harness's."""
    same = tmp_path / "same.py"
    same.write_text("from dagsmith_kit.models import forest_space as space\n")
    spaces.main(["random_forest_classifier", "--candidate", str(same), "--tables", "1", "--trials", "2",
                 "--seeds", "1", "--max-rows", "300"])
    table = capsys.readouterr().out.strip().splitlines()[-1]
    assert table.startswith("| 1 |") and table.endswith("| +0.0000 | +0.0000 | 0 / 0 |")


def test_a_service_without_a_space_or_a_candidate_without_one_is_a_clear_error(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(SystemExit, match="defines no function space"):
        spaces.main(["random_forest_classifier", "--candidate", str(empty)])
    with pytest.raises(SystemExit, match="has no search space to compare; one of: "):
        spaces.compare("csv_loader", lambda trial: {}, tables=1, trials=1, seeds=1, max_rows=100)
