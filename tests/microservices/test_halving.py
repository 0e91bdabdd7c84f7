"""Successive halving between a search's candidates: a candidate checks itself at its rungs against the candidates
that finished before it, each judged by the best score it had reached after as many seconds."""

import json
import math

import pytest

from dagsmith_kit.halving import RIVALS_FILE, Rival, Rungs, rivals_of


def test_a_rival_is_judged_by_what_it_had_reached_at_the_same_time():
    rival = Rival("lightgbm", ((0.5, 0.80), (3.0, 0.85), (9.0, 0.86)))
    assert rival.best_at(0.1) == -math.inf and rival.best_at(2.9) == 0.80 and rival.best_at(60) == 0.86


def test_nothing_is_checked_before_the_first_rung_or_without_rivals():
    leader = (Rival("lightgbm", ((0.1, 0.9),)),)
    assert Rungs(20, leader).behind(4.9, 0.5, "roc_auc") is None, "the first rung is a quarter of the budget"
    assert Rungs(20, ()).behind(19, 0.5, "roc_auc") is None, "a candidate that races nobody keeps its share"


def test_a_candidate_behind_its_only_rival_stops_at_the_rung_saying_why():
    rungs = Rungs(20, (Rival("lightgbm", ((0.8, 0.849), (12.0, 0.851))),))
    reason = rungs.behind(5.2, 0.845, "roc_auc")
    assert reason == ("successive halving: 5.2 s in, its best roc_auc (0.8450) trailed lightgbm's at the same "
                      "point (0.8490), so the rest of its budget was not spent")


def test_a_candidate_ahead_goes_on_and_is_checked_again_at_the_next_rung_only():
    rungs = Rungs(20, (Rival("lightgbm", ((0.8, 0.80), (8.0, 0.90))),))
    assert rungs.behind(5.0, 0.85, "r2") is None and rungs.passed == 1
    assert rungs.behind(7.0, 0.10, "r2") is None, "between rungs nothing is checked"
    assert rungs.behind(10.0, 0.85, "r2").startswith("successive halving: 10.0 s in")
    assert rungs.behind(19.0, 0.10, "r2") is None, "after the last rung the candidate runs out its budget"


def test_a_candidate_late_past_both_rungs_is_checked_once_where_it_stands():
    rungs = Rungs(4, (Rival("ridge", ((0.2, 0.9),)),))
    assert rungs.behind(3.0, 0.95, "r2") is None and rungs.passed == 2


@pytest.mark.parametrize("mine, stops", [(0.70, True), (0.82, True), (0.95, False)])
def test_among_three_only_the_leader_goes_on(mine, stops):
    rivals = (Rival("a", ((1.0, 0.90),)), Rival("b", ((1.0, 0.80),)))
    assert (Rungs(8, rivals).behind(2.0, mine, "roc_auc") is not None) is stops


def test_among_more_the_first_rung_keeps_a_third_and_the_second_a_ninth():
    """The runner-up of four passes the first rung and stops at the second, where only the leader goes on."""
    rungs = Rungs(8, (Rival("a", ((1.0, 0.90),)), Rival("b", ((1.0, 0.80),)), Rival("c", ((1.0, 0.70),))))
    assert rungs.behind(2.0, 0.82, "roc_auc") is None
    assert rungs.behind(4.0, 0.85, "roc_auc").startswith("successive halving: 4.0 s in, its best roc_auc (0.8500) "
                                                         "trailed a's")
    assert Rungs(8, rungs.rivals, passed=1).behind(4.0, 0.95, "roc_auc") is None, "the leader goes on"


def test_a_rival_that_does_not_hold_up_is_left_out():
    raw = [{"name": "ok", "progress": [[1, 0.7], [0.5, 0.6], ["x", 1], [1, float("nan")], [-1, 0.9], [2, True]]},
           {"name": "empty", "progress": []}, {"name": "no progress"}, "junk", {"progress": [[0, 0.5]]}]
    assert rivals_of(raw) == (Rival("ok", ((0.5, 0.6), (1.0, 0.7))), Rival("another model", ((0.0, 0.5),)))
    assert rivals_of("junk") == ()


def test_rivals_handed_over_while_the_search_runs_join_at_the_next_check(tmp_path):
    """Side by side, a candidate starts with no rival; the pipeline writes the progress of the one beside it into
    this one's output folder as it grows, which the next check reads (and reads again only when it changes)."""
    handed = tmp_path / RIVALS_FILE
    rungs = Rungs(40, (), handed)
    assert rungs.behind(5.5, 0.70, "roc_auc") is None and rungs.passed == 0, "nothing handed over yet"
    handed.write_text(json.dumps([{"name": "logistic_regression", "progress": [[0.4, 0.64]]}]))
    assert rungs.behind(10.5, 0.70, "roc_auc") is None and rungs.passed == 1, "ahead of it at the first rung"
    handed.write_text(json.dumps([{"name": "logistic_regression", "progress": [[0.4, 0.64], [15.0, 0.85]]}]))
    assert rungs.behind(20.5, 0.70, "roc_auc").startswith("successive halving: 20.5 s in, its best roc_auc (0.7000) "
                                                          "trailed logistic_regression's at the same point (0.8500)")
    assert rungs.rivals == (Rival("logistic_regression", ((0.4, 0.64), (15.0, 0.85))),), "replaced as it grew"


def test_a_handed_over_file_that_does_not_hold_up_changes_nothing(tmp_path):
    given = (Rival("ridge", ((0.2, 0.9),)),)
    for junk in ("{not json", json.dumps({"name": "x"}), json.dumps([{"name": "ridge", "progress": [[0.1, 0.2]]}])):
        (tmp_path / RIVALS_FILE).write_text(junk)
        rungs = Rungs(20, given, tmp_path / RIVALS_FILE)
        rungs.behind(1.0, 0.5, "r2")
        assert rungs.rivals == given, "a rival already given is not replaced by what the folder says of it"
    (tmp_path / RIVALS_FILE).unlink()
    (tmp_path / RIVALS_FILE).mkdir()
    assert Rungs(20, given, tmp_path / RIVALS_FILE).behind(6.0, 0.95, "r2") is None
