"""`dagsmith bench` on a smoke subset of the real suite, and the pieces its protocols rest on."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import psutil
import pytest
import yaml
from sklearn.decomposition import PCA
from sklearn.metrics import f1_score, roc_auc_score

from dagsmith.bench.degrade import degraded_catalog
from dagsmith.bench.experiments import CONFIGURATIONS, FAULTS, Degradation
from dagsmith.bench.faults import EVERY, Fault, fault_for
from dagsmith import datasets
from dagsmith.bench.quality import eda_quality, reconstruction_r2
from dagsmith.execution.quality import BASELINE_OF, classification_quality, regression_quality
from dagsmith.bench.peers import PeerResult
from dagsmith.bench.report import markdown, summarise
from dagsmith.bench.results import TaskResult, load_peers, load_results
from dagsmith.bench.runner import Bench, execution_failure, run_experiment, schedule
from dagsmith.bench.suite import load_suite
from tests.conftest import CATALOG, ROOT

SMALL = {"iris", "wine", "breast_cancer", "diabetes", "penguins"}


def _smallest(task_type: str):
    return next(t for t in load_suite() if t.task_type.value == task_type and t.dataset in SMALL)


def test_quality_figures_agree_with_scikit_learn():
    rng = np.random.default_rng(0)
    truth = pd.Series(rng.choice(["no", "yes"], 200, p=[0.7, 0.3]))
    score = np.clip((truth == "yes") * 0.4 + rng.random(200) * 0.6, 0, 1)
    proba = pd.DataFrame({"proba_no": 1 - score, "proba_yes": score})
    predicted = pd.Series(np.where(score > 0.5, "yes", "no"))
    quality = classification_quality(truth, predicted, proba, truth)
    assert quality.metrics["roc_auc"] == pytest.approx(roc_auc_score(truth == "yes", score))
    assert quality.metrics["f1"] == pytest.approx(f1_score(truth, predicted, average="macro"))
    assert quality.valid
    assert not classification_quality(truth, pd.Series(["no"] * 200), None, truth).valid  # the trivial predictor
    # rare "yes": every label is the majority's, but the probabilities rank the rows, which is what is judged
    rare = pd.Series(np.where(np.arange(200) < 12, "yes", "no"))
    ranked = pd.DataFrame({"proba_no": 1 - np.linspace(0.4, 0.0, 200), "proba_yes": np.linspace(0.4, 0.0, 200)})
    labelled = classification_quality(rare, pd.Series(["no"] * 200), ranked, rare)
    assert labelled.valid and labelled.metrics["f1"] == labelled.metrics["trivial_f1"]
    even = pd.DataFrame({"proba_no": np.full(200, 0.6), "proba_yes": np.full(200, 0.4)})
    assert classification_quality(rare, pd.Series(["no"] * 200), even, rare).problem == (
        "no better than predicting the majority class on the held-out rows (ROC AUC 0.5000, the majority class scores "
        "0.5000)")

    y = pd.Series(rng.normal(10, 2, 300))
    good = regression_quality(y, y + rng.normal(0, 0.5, 300), y)
    assert good.valid and good.metrics["nrmse"] == pytest.approx(good.metrics["rmse"] / np.std(y))
    assert not regression_quality(y, pd.Series(np.full(300, y.mean() + 3)), y).valid


def test_a_lead_over_the_trivial_predictor_that_chance_explains_needs_review():
    """68 held-out rows a model predicts a shade closer than the training mean (RMSE 0.984 against 0.987 for the
    concentrations of patients it never saw): it completes, doubted; the same lead on 4,000 rows, or a real one on 68,
    is an answer. Likewise a ROC AUC of 0.61 on 60 rows, and not one of 0.55 on 6,000."""
    def shaded(rows: int, signal: float):
        rng = np.random.default_rng(4)
        y = pd.Series(rng.normal(0, 1, rows))
        return regression_quality(y, pd.Series(signal * y + rng.normal(0, 0.1, rows)), pd.Series([0.0, 0.0]))

    weak = shaded(68, 0.01)
    assert weak.valid and weak.metrics["rmse"] < weak.metrics["baseline_rmse"]
    assert weak.review.startswith("the model is ahead of the training mean by less than chance explains on 68 "
                                  "held-out rows (RMSE")
    assert shaded(4_000, 0.01).review is None and shaded(68, 0.5).review is None

    def ranked(rows: int, auc: float):
        rng = np.random.default_rng(4)
        truth = pd.Series(np.tile(["no", "yes"], rows // 2))
        score = np.where(truth == "yes", rng.random(rows), rng.random(rows) * (1 / (2 * auc)))
        score = np.clip(score, 0, 1)
        return classification_quality(truth, pd.Series(["no"] * rows),
                                      pd.DataFrame({"proba_no": 1 - score, "proba_yes": score}), truth)

    small = ranked(60, 0.56)
    assert small.valid and 0.5 < small.metrics["roc_auc"] < 0.65 and "ahead of the majority class" in small.review
    assert ranked(6_000, 0.56).review is None


def test_the_report_shows_quality_beside_the_trivial_predictor_and_per_task_differences_with_each_peer():
    ours = [TaskResult(task=f"t{i}", experiment="full", task_type=kind, cohort=0, user="ana", success=True,
                       seconds=10, quality={metric: value, BASELINE_OF[metric]: 0.5 if metric == "roc_auc" else 0.0},
                       intent_ok=i < 3)  # t3 modelled another column than the task's: no answer to compare
            for i, (kind, metric, value) in enumerate([("binary_classification", "roc_auc", 0.80),
                                                       ("binary_classification", "roc_auc", 0.90),
                                                       ("regression", "r2", 0.70), ("regression", "r2", 0.99)])]
    flaml = [PeerResult(task=f"t{i}", budget_seconds=10, seconds=10, success=True, quality={metric: value})
             for i, (metric, value) in enumerate([("roc_auc", 0.85), ("roc_auc", 0.88), ("r2", 0.60), ("r2", 0.5)])]
    autogluon = [PeerResult(task=f"t{i}", peer="autogluon", budget_seconds=10, seconds=20, success=i != 1,
                            quality={metric: value})
                 for i, (metric, value) in enumerate([("roc_auc", 0.82), ("roc_auc", 0.95), ("r2", 0.75)])]
    summary = summarise({"full": ours}, flaml + autogluon)
    compared = summary["peers"]["flaml"]
    assert compared["auc_difference"] == pytest.approx(-0.015) and compared["r2_difference"] == pytest.approx(0.1)
    assert [(w["task"], w["difference"]) for w in compared["worst"]] == [("t0", -0.05), ("t1", 0.02), ("t2", 0.1)]
    gluon = summary["peers"]["autogluon"]  # failed on t1, never ran t3
    assert gluon["paired"] == 2 and gluon["tasks"] == 3 and gluon["auc_difference"] == pytest.approx(-0.02)
    assert gluon["time_ratio"] == pytest.approx(0.5)
    report = markdown(summary)
    assert "| roc_auc | 0.850 (2, trivial 0.500) |" in report
    assert "| figure | flaml | autogluon |" in report and "| tasks completed by both | 3 | 2 |" in report
    assert "| peer succeeded on | 100.0% of 4 | 66.7% of 3 |" in report
    assert "Largest shortfalls against flaml: t0 -0.050 roc_auc." in report
    assert "Largest shortfalls against autogluon: t2 -0.050 r2, t0 -0.020 roc_auc." in report
    assert "1 runs of ours that modelled another column than the task's are left out." in report
    # task by task, one column per peer; a peer's failure or absence is a dash
    assert "| task | metric | ours | flaml | autogluon | ours s | flaml s | autogluon s |" in report
    assert "| t1 | roc_auc | 0.900 | 0.880 | – | 10 | 10 | 20 |" in report
    assert "| t3 | r2 | – | 0.500 | – | 10 | 10 | – |" in report

    unavailable = summarise({"full": ours}, flaml, {"autogluon": "AutoGluon's environment could not be built"})
    report = markdown(unavailable)
    assert "| figure | flaml |" in report and "autogluon not run: AutoGluon's environment could not be built" in report


def test_eda_statistics_are_checked_against_pandas_within_1e_6():
    frame = pd.DataFrame({"a": [1.0, 2.0, 4.0, np.nan], "b": [3, 3, 5, 9]})
    right = {"stat.a.mean": 7 / 3, "stat.a.std": float(frame["a"].std()), "stat.b.max": 9.0}
    assert eda_quality(right, frame).valid
    wrong = {**right, "stat.b.max": 9.001}
    assert not eda_quality(wrong, frame).valid


def test_reconstruction_r2_is_the_variance_pca_components_explain():
    frame = datasets.load("wine").drop(columns=["target"], errors="ignore").select_dtypes("number")
    standardised = (frame - frame.mean()) / frame.std(ddof=0)
    pca = PCA(n_components=2).fit(standardised)
    assert reconstruction_r2(pca.transform(standardised), frame) == pytest.approx(pca.explained_variance_ratio_.sum())
    noise = np.random.default_rng(0).normal(size=(len(frame), 2))
    assert reconstruction_r2(noise, frame) < 0.1  # noise explains nothing
    assert reconstruction_r2(pca.transform(standardised)[:10], frame) is None  # rows that do not line up


def test_eda_correlations_and_outlier_counts_are_checked_too_dotted_names_included():
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    frame = pd.DataFrame({"crl.tot": x, "y": 2 * x + rng.normal(size=200), "z": np.r_[np.zeros(199), 50.0]})
    pearson = float(np.corrcoef(frame["crl.tot"], frame["y"])[0, 1])
    figures = {"corr.crl.tot.y": pearson, "outliers.z.zscore": 1, "outliers.total_iqr": 123, "rows": 200}
    checked = eda_quality(figures, frame)
    assert checked.valid and checked.metrics["statistics_checked"] == 2  # totals and other figures are not checked
    assert not eda_quality({**figures, "corr.crl.tot.y": pearson + 1e-3}, frame).valid
    assert not eda_quality({**figures, "outliers.z.zscore": 2}, frame).valid
    assert eda_quality({"rows": 200}, frame).problem.startswith("no statistics")


def test_a_run_that_failed_says_which_step_or_why_every_step_ran_in_vain():
    step = {"position": 4, "stage": "modelling", "status": "failed",
            "attempts": [{"error_class": "data", "error": "ValueError: could not convert 'x'"}]}
    assert execution_failure({"steps": [step]}, "step 4 failed") == (
        "execution: step 4 (modelling) did not complete: data: ValueError: could not convert 'x'")
    assert execution_failure({"steps": [{**step, "status": "completed"}]},
                             "every step ran, but the model is no better than the trivial predictor") == (
        "execution: every step ran, but the model is no better than the trivial predictor")


def test_faults_go_into_every_fifth_run_with_the_kinds_taking_turns():
    faults = [fault_for(i) for i in range(100)]
    injected = [f for f in faults if f]
    assert len(injected) == 100 // EVERY
    assert {kind: injected.count(kind) for kind in Fault} == dict.fromkeys(Fault, 5)


def test_degraded_documentation_leaves_the_code_unchanged(tmp_path):
    copy = degraded_catalog(CATALOG, Degradation.SEVERE, tmp_path / "severe")
    for name in ("standard_scaler", "random_forest_classifier", "markdown_report"):
        manifest = yaml.safe_load((copy / name / "manifest.yaml").read_text())
        assert set(manifest) <= {"name", "category"}
        original = ast.parse((CATALOG / name / "main.py").read_text())
        degraded = ast.parse((copy / name / "main.py").read_text())
        assert ast.get_docstring(degraded) is None
        assert _without_docstrings(original) == ast.dump(degraded)
    mild = degraded_catalog(CATALOG, Degradation.MILD, tmp_path / "mild")
    description = yaml.safe_load((mild / "standard_scaler" / "manifest.yaml").read_text())["description"]
    assert description.count(".") == 1


def _without_docstrings(tree: ast.Module) -> str:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            body.pop(0)
            if not body:
                body.append(ast.Pass())
    return ast.dump(tree)


def test_injected_faults_are_recovered_by_self_healing_but_not_by_retries(server_home, settings, embedder, tmp_path):
    suite = load_suite()
    chosen = next(s for s in schedule(suite) if s.task.dataset in SMALL and fault_for(s.index) is not None
                  and s.task.target and fault_for(s.index) is not Fault.RESOURCE)
    bench = Bench(out=tmp_path / "bench", catalog=CATALOG, settings=settings, embedder=embedder,
                  retry_delay_seconds=0.1)  # retry-only retries the step as often as self-healing could
    healed = run_experiment(FAULTS["faults/self-healing"], [chosen], bench)[0]
    retried = run_experiment(FAULTS["faults/retry-only"], [chosen], bench)[0]
    assert healed.fault == retried.fault == fault_for(chosen.index).value
    assert healed.fault_provoked and retried.fault_provoked
    assert healed.success and healed.substitutions >= 1, healed.failure
    assert not retried.success and retried.substitutions == 0
    again = run_experiment(FAULTS["faults/self-healing"], [chosen], bench)  # resumes: nothing new to run
    assert again == [healed]


def test_a_goal_that_cannot_be_planned_stops_the_run_started_ahead_of_it(server_home, settings, embedder, tmp_path):
    """The Airflow child starts before planning; a goal planning refuses must not leave it behind."""
    scheduled = next(s for s in schedule(load_suite()) if s.task.dataset in SMALL and fault_for(s.index) is None)
    unclear = dataclasses.replace(scheduled, task=scheduled.task.model_copy(update={"goal": "hmm"}))
    bench = Bench(out=tmp_path / "bench", catalog=CATALOG, settings=settings, embedder=embedder)
    result = run_experiment(CONFIGURATIONS["full"], [unclear], bench)[0]
    assert result.failure.startswith("planning: ") and not result.success, result.failure
    children = [" ".join(p.cmdline()) for p in psutil.Process().children(recursive=True)]
    assert not [c for c in children if "dagsmith.airflow.run_child" in c], children


def test_bench_command_runs_a_smoke_subset_and_reports_beside_the_published_figures(server_home, tmp_path):
    tasks = [_smallest("binary_classification"), _smallest("regression"), _smallest("exploratory_analysis")]
    (tmp_path / "a-file").write_text("")  # AutoGluon's environment cannot be built here: FLAML still runs
    env = {**os.environ, "DAGSMITH_HOME": str(server_home), "COLUMNS": "200",
           "DAGSMITH_AUTOGLUON_VENV": str(tmp_path / "a-file" / "autogluon")}
    command = [sys.executable, "-m", "dagsmith.cli.app", "bench", "--config", "full", "--workers", "2",
               "--out", str(tmp_path / "out"),
               "--json"] + [arg for task in tasks for arg in ("--tasks", task.id)]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    full = summary["configurations"]["full"]
    assert full["tasks"] == 3 and 0 <= full["success_rate"] <= 1 and summary["success_rate"] == full["success_rate"]
    assert full["median_seconds"] > 0 and summary["published"]["full"]["success_rate"] == 0.847
    assert summary["peers"]["flaml"]["tasks"] == 2  # the two supervised tasks also went through FLAML
    assert summary["peers_unavailable"]["autogluon"].startswith("AutoGluon's environment could not be built at ")
    assert [line for line in proc.stderr.splitlines() if "autogluon not run" in line] == [
        f"autogluon not run: {summary['peers_unavailable']['autogluon']}"]
    report = (tmp_path / "out" / "report" / "report.md").read_text()
    assert "| full |" in report and "84.7%" in report
    assert full["quality"]["statistics_match"] == {"mean": 1.0, "tasks": 1}  # the EDA task's figures match pandas
    assert "| statistics_match | 1.000 (1) |" in report
    assert (tmp_path / "out" / "report" / "learning-curve.png").stat().st_size > 1000
    lines = (tmp_path / "out" / "results" / "full.jsonl").read_text().splitlines()
    planned = [row["task"] for row in map(json.loads, lines) if not (row["failure"] or "").startswith("planning")]
    assert planned
    for task_id in planned:  # each pipeline ran as its Airflow DAG, as `dagsmith run` runs it
        assert "DagRun Finished: dag_id=dagsmith_pipeline_" in (tmp_path / "out" / "logs" / "full" /
                                                                f"{task_id}.log").read_text()
    rerun = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert rerun.returncode == 0 and (tmp_path / "out" / "results" / "full.jsonl").read_text().splitlines() == lines


def test_unknown_task_and_configuration_are_clear_errors(tmp_path):
    for args, message in ((["--tasks", "no-such-task"], "unknown task"),
                          (["--config", "best"], "unknown configuration"),
                          (["--peer", "h2o"], "unknown peer(s): h2o; use flaml or autogluon")):
        proc = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "bench", "--out", str(tmp_path), *args],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_flaml_results_saved_before_there_were_two_peers_are_still_reported(tmp_path):
    legacy = PeerResult(task="iris-species", budget_seconds=10, seconds=11, success=True, quality={"roc_auc": 0.99})
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "peers.jsonl").write_text(legacy.model_dump_json() + "\n")
    assert load_results(tmp_path) == {}  # not taken for an experiment's results
    assert load_peers(tmp_path) == [legacy]


def test_the_scale_tables_customers_are_all_distinct_and_their_churn_has_causes():
    """Nothing for deduplication to remove at any size, and a target a model can learn but no column decides."""
    from dagsmith.bench.scale import TARGET, customers

    table = customers(20_000)
    assert not table.drop(columns="customer_id").duplicated().any()
    churned = table[TARGET].eq("yes")
    assert 0.2 < churned.mean() < 0.6
    by_contract = churned.groupby(table["contract"]).mean()
    assert by_contract["month-to-month"] > by_contract["two year"] + 0.2
    assert roc_auc_score(churned, -table["tenure_months"]) < 0.8


def test_the_scale_curve_counts_copies_by_what_a_step_grew_beyond_its_smallest_run():
    from dagsmith.bench.scale import markdown as curve

    def run(rows, table_mb, model_s, model_mb):
        return {"rows": rows, "table_mb": table_mb, "status": "completed", "seconds": model_s + 5,
                "steps": [{"position": 0, "stage": "loading", "service": "loader", "status": "completed",
                           "peak_mb": 70, "start": 0.5, "seconds": 2},
                          {"position": 1, "stage": "modelling", "service": "model", "status": "completed",
                           "peak_mb": model_mb, "start": 3, "seconds": model_s}]}

    lines = curve([run(1_000, 0.5, 3, 150), run(1_000_000, 200.5, 90, 950)]).splitlines()
    assert lines[2] == "| 1,000 | 0.5 | completed | 8 | 3.0 | 2.0 | 3.0 | model | 150 | — |"
    assert lines[3] == "| 1,000,000 | 200.5 | completed | 95 | 90.0 | 2.0 | 3.0 | model | 950 | 4.0 (model) |"
    assert "| 1. modelling: model | 3 s, 150 MB | 90 s, 950 MB |" in lines


def test_the_scale_curve_times_a_search_by_its_span_and_shows_the_candidates_not_handed_on():
    """Candidates side by side overlap: their seconds do not add up, and the one that lost spent its time all the
    same (it is no time outside the steps)."""
    from dagsmith.bench.scale import markdown as curve

    tries = [("loading", "loader", "completed", 0.0, 1.0), ("modelling", "booster", "skipped", 2.0, 30.0),
             ("modelling", "linear", "completed", 2.0, 10.0), ("modelling", "forest", "skipped", 12.0, 15.0),
             ("evaluation", "evaluator", "completed", 33.0, 1.0)]
    run = {"rows": 1_000, "table_mb": 0.5, "status": "completed", "seconds": 40.0,
           "steps": [{"position": position, "stage": stage, "service": service, "status": status, "peak_mb": 100,
                      "start": start, "seconds": seconds}
                     for position, (stage, service, status, start, seconds) in enumerate(tries)]}
    lines = curve([run]).splitlines()
    assert lines[2].startswith("| 1,000 | 0.5 | completed | 40.0 | 30.0 | 2.0 | 8.0 |")
    assert "| 1. modelling: booster | 30.0 s, 100 MB (skipped) |" in lines
