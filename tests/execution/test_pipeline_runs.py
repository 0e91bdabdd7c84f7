"""Pipelines run as their own Airflow DAGs (dag.test) on real data, with self-healing and learning."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import select

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.airflow.pipeline_shards import SHARDS
from dagsmith.execution.doubt import origins
from dagsmith.execution.history import execution_summary
from dagsmith.execution.quality import SUBSTANTIAL_SILHOUETTE
from dagsmith.execution.specs import spec_file, specs_dir
from dagsmith.learning.patterns import load_history
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from dagsmith_kit import Bundle
from tests.agents.test_each_target import houses
from tests.execution.conftest import NUMERIC_PREPARATION, run_dag, service_id
from tests.reasoning.chat_server import Reply, chat_server


def _break_modelling(settings, planned, *, keep_alternatives: bool) -> list[dict]:
    """Make the modelling step run an SVM capped at 50 training rows: a real failure on 1,500 rows."""
    modelling = next(s for s in planned.steps if s.stage == "modelling")
    with session_scope(settings) as session:
        step = session.scalar(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == planned.id,
                                                                schema.PipelineStep.position == modelling.position))
        step.microservice_id = service_id(session, "svm_classifier")
        step.params, step.search = {"max_rows": 50}, {}  # one model, no search: the step healing repairs
        step.alternatives = [a for a in step.alternatives if a["name"] != "svm_classifier"] if keep_alternatives else []
        return step.alternatives


def _metrics(workspace: Path) -> dict:
    metrics = {}
    for file in sorted(workspace.glob("steps/*/metrics.json")):
        metrics.update(json.loads(file.read_text()))
    return metrics


def test_classification_runs_end_to_end_and_feeds_history(store, embedder, churn_csv, tmp_path):
    planned = plan(churn_csv, "predict customer churn", user="ana", settings=store, embedder=embedder).pipeline
    outcome = run_dag(store, planned.id, churn_csv)
    assert outcome["state"] == "success" and outcome["status"] == "completed", outcome["error"]
    metrics = _metrics(outcome["workspace"])
    assert metrics["roc_auc"] > 0.6 and 0 < metrics["accuracy"] <= 1
    assert list(outcome["workspace"].glob("steps/*/artifacts/*.png")), "the plot step made a PNG"
    modelling = next(s for s in planned.steps if s.stage == "modelling")
    search = outcome["trace"]["search"][str(modelling.position)]
    assert [c["name"] for c in search["candidates"]] == modelling.search.candidates and len(search["candidates"]) > 1
    assert all(c["validation_score"] > c["validation_baseline"] for c in search["candidates"])
    assert search["winner"] == max(search["candidates"], key=lambda c: c["validation_score"])["name"]
    report = (outcome["workspace"] / "steps" / f"{modelling.position:02d}" / "report.md").read_text()
    assert "## Model search" in report and f"| {search['winner']} |" in report
    assert outcome["trace"]["quality"]["valid"] and outcome["trace"]["quality"]["metrics"]["trivial_roc_auc"] == 0.5
    assert outcome["trace"]["quality"]["review"] is None, "a plain answer is not doubted"
    # The answer: the model, its held-out quality beside the trivial predictor's and what drives it, then every plot
    answer = outcome["trace"]["answer"]
    assert answer.startswith(f"Predicts churn (binary classification) with {search['model']}. On ")
    assert re.search(r"ROC AUC 0\.\d{3} and macro F1 0\.\d{3}, against 0\.500 and 0\.\d{3} for the majority class",
                     answer)
    explained = json.loads(next(outcome["workspace"].glob("steps/*/explanation.json")).read_text())
    assert f"What drives the predictions most: {explained['drivers'][0]['feature']}" in answer
    document = (outcome["workspace"] / "answer.md").read_text()
    assert document.startswith(f"# predict customer churn\n\n{answer}\n")
    assert all(f"]({plot.relative_to(outcome['workspace']).as_posix()})" in document
               for plot in outcome["workspace"].glob("steps/*/artifacts/*.png"))
    assert "## How the pipeline was chosen" in document and document.count("# ") - document.count("## ") == 1
    spec = json.loads(spec_file(specs_dir(store), planned.id).read_text())  # the DAG's docs open with the answer
    assert spec["explanation"].startswith("**Latest answer** (run ") and spec["retry_delay_seconds"] == 0.1
    with session_scope(store) as session:
        history = load_history(session, "ana")
        winners = set(search["blend"] or [search["winner"]])  # a blend's members all won
        losers = [c["name"] for c in search["candidates"] if c["name"] not in winners]
        for winner in winners:
            assert history.counts("modelling", service_id(session, winner)).successes == 1, "history credits winners"
            assert history.signal("modelling", service_id(session, winner)) > 0
        assert all(history.counts("modelling", service_id(session, name)).successes == 0 for name in losers)
        transitions = session.scalars(select(schema.Pattern).where(schema.Pattern.kind == "transition")).all()
        assert len(transitions) >= 2 * (len(planned.steps) - 1) - 2  # global and per user


@pytest.mark.parametrize("runtime", ["local", "docker"])
def test_failing_service_is_substituted_and_the_run_succeeds(store, embedder, churn_csv, tmp_path, runtime,
                                                             monkeypatch):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                   choices=NUMERIC_PREPARATION).pipeline
    alternatives = _break_modelling(store, planned, keep_alternatives=True)
    expected_substitute = alternatives[0]["name"]
    events = tmp_path / "openlineage"
    monkeypatch.setenv("AIRFLOW__OPENLINEAGE__TRANSPORT", json.dumps({"type": "file", "log_file_path": str(events)}))
    outcome = run_dag(store, planned.id, churn_csv, runtime=runtime)
    assert outcome["status"] == "completed", outcome["error"]
    if runtime == "docker":  # each try is the step operator's own container, its output in the task's log
        log = outcome["log"].read_text()
        assert re.search(r"would be too slow.*\[airflow\.task\.operators\.dagsmith\.airflow\.step_operator", log), \
            log[-3000:]
    attempts = next(s for s in outcome["trace"]["steps"] if s["stage"] == "modelling")["attempts"]
    assert [a["status"] for a in attempts] == ["failed", "completed"]
    assert attempts[0]["error_class"] == "resource_exhaustion"  # "an SVM on 1,125 rows would be too slow"
    decision = attempts[0]["decision"]
    assert decision["action"] == "substitute" and decision["to_name"] == expected_substitute
    assert "max_rows" not in decision["params"] or expected_substitute == "svm_classifier"
    with session_scope(store) as session:
        run = session.scalar(select(schema.Execution).where(schema.Execution.pipeline_id == planned.id))
        [swap] = execution_summary(session, run).substitutions  # as `dagsmith run` and the run page show it
        assert (swap["stage"], swap["from"], swap["to"]) == ("modelling", "svm_classifier", expected_substitute)
        assert swap["reason"] == decision["reason"]
        history = load_history(session, None)
        assert history.counts("modelling", service_id(session, "svm_classifier")).failures == 1
        substitute = session.get(schema.Microservice, service_id(session, expected_substitute))
        version = session.get(schema.MicroserviceVersion, substitute.current_version_id).content_hash

    modelling = next(s for s in planned.steps if s.stage == "modelling").position
    lineage = _lineage_events(events, f"step_{modelling:02d}_modelling__svm_classifier")
    failed, completed = lineage["FAIL"]["run"]["facets"], lineage["COMPLETE"]["run"]["facets"]
    assert (failed["dagsmith_step"]["microservice"], failed["dagsmith_step"]["errorClass"]) == (
        "svm_classifier", "resource_exhaustion")
    step = completed["dagsmith_step"]
    assert (step["microservice"], step["codeVersion"], step["attempt"], step["substitutedFor"]) == (
        expected_substitute, version, 2, "svm_classifier")
    assert step["substitutionReason"] == decision["reason"]
    workspace = outcome["workspace"]
    assert [d["name"] for d in lineage["COMPLETE"]["inputs"]] == [str(workspace / "steps" / f"{modelling - 1:02d}")]
    assert [d["name"] for d in lineage["COMPLETE"]["outputs"]] == [str(workspace / "steps" / f"{modelling:02d}")]


def _lineage_events(transport: Path, task_id: str) -> dict[str, dict]:
    """The last OpenLineage event of each type the task emitted, from the file transport's files."""
    events = {}
    for path in sorted(transport.parent.glob(f"{transport.name}*")):
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if event["job"]["name"].endswith(f".{task_id}"):
                events[event["eventType"]] = event
    assert events, f"no OpenLineage event of {task_id}"
    return events


def test_a_configured_model_reads_the_failure_and_chooses_the_substitute(store, embedder, churn_csv, tmp_path,
                                                                         monkeypatch):
    """With a model configured (a scripted stand-in for a hosted one), its choice among the untried candidates is
    the one run, and the decision records who made it and at what cost."""
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                   choices=NUMERIC_PREPARATION).pipeline
    alternatives = _break_modelling(store, planned, keep_alternatives=True)
    pick = alternatives[1]["name"]  # not the best-ranked: the rules alone would not choose it
    answer = {"error_class": "resource_exhaustion", "action": "substitute", "substitute": pick,
              "reason": f"the SVM refuses more rows; {pick} scales to this table"}
    with chat_server(Reply(answer)) as model:
        for name, value in {"DAGSMITH_REASONER": "openai", "DAGSMITH_LLM_MODEL": "scripted-model",
                            "OPENAI_BASE_URL": model.url, "OPENAI_API_KEY": "sk-canary-run"}.items():
            monkeypatch.setenv(name, value)
        outcome = run_dag(store, planned.id, churn_csv)
    assert outcome["status"] == "completed", outcome["error"]
    decision = next(s for s in outcome["trace"]["steps"] if s["stage"] == "modelling")["attempts"][0]["decision"]
    assert decision["to_name"] == pick and decision["reason"].startswith("the SVM refuses more rows")
    assert decision["provenance"]["reasoner"] == "scripted-model" and decision["provenance"]["prompt_tokens"] > 0
    assert "Traceback" in model.prompt() or "max_rows" in model.prompt()  # it read the step's error output
    assert "sk-canary-run" not in outcome["log"].read_text() + json.dumps(outcome["trace"])


def test_when_every_candidate_fails_the_pipeline_fails_with_diagnostics(store, embedder, churn_csv, tmp_path):
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder,
                   choices=NUMERIC_PREPARATION).pipeline
    modelling = next(s for s in planned.steps if s.stage == "modelling")
    _break_modelling(store, planned, keep_alternatives=False)
    outcome = run_dag(store, planned.id, churn_csv)
    assert outcome["state"] == "failed" and outcome["status"] == "failed"
    assert "modelling" in outcome["error"]
    failed = next(s for s in outcome["trace"]["steps"] if s["stage"] == "modelling")
    assert failed["status"] == "failed" and failed["attempts"][-1]["decision"]["action"] == "give_up"
    logs = list(outcome["workspace"].glob(f"logs/{modelling.position:02d}-*.log"))
    assert logs and "max_rows" in logs[0].read_text() or "rows" in logs[0].read_text()


def test_rerun_on_new_data_through_the_dataset_parameter(store, embedder, churn_csv, tmp_path):
    """A run on a newer file named by the DAG's parameter, its workspace under the configured root (a shared volume
    on a deployment), each try recording the worker that ran it and the most memory it held."""
    shared = tmp_path / "shared-workspaces"
    store = dataclasses.replace(store, workspace_root=shared)
    planned = plan(churn_csv, "predict customer churn", settings=store, embedder=embedder).pipeline
    newer = tmp_path / "churn-next-month.csv"
    datasets.load("wa_churn").iloc[3000:4500].to_csv(newer, index=False)
    others = [spec_file(specs_dir(store), planned.id + n * SHARDS) for n in range(1, 4)]  # in the run's DAG file
    for other in others:
        other.parent.mkdir(parents=True, exist_ok=True)
        other.write_text("not json")  # reading one would log it, skipped
    outcome = run_dag(store, planned.id, newer)
    assert outcome["status"] == "completed", outcome["error"]
    assert "skipping pipeline spec" not in outcome["log"].read_text(), "a run parses its own pipeline's spec alone"
    with session_scope(store) as session:
        execution = session.scalar(select(schema.Execution).where(schema.Execution.pipeline_id == planned.id))
        assert execution.dataset == str(newer)
        tries = session.execute(select(schema.StepAttempt.worker, schema.StepAttempt.peak_mb)
                                .where(schema.StepAttempt.execution_id == execution.id)).all()
    assert outcome["workspace"].parent == shared
    assert {worker for worker, _ in tries} == {socket.gethostname()}
    assert all(peak and 0 < peak < store.step_limits.memory_mb for _, peak in tries), tries


def _cli_env(settings) -> dict:
    return {**os.environ, "DAGSMITH_DATABASE_URL": settings.database_url, "DAGSMITH_HOME": str(settings.home),
            "COLUMNS": "200"}


def test_cli_run_shows_progress_and_results(store, churn_csv):
    env = {**_cli_env(store), "COLUMNS": "60"}  # narrower than the paths it prints
    # the command as a user runs it: its entry point starts the run's child before the CLI's imports (``cli.ahead``)
    command = Path(sys.executable).with_name("dagsmith")
    proc = subprocess.run([str(command), "run", str(churn_csv), "predict customer churn", "--user", "ana",
                           "--time-budget", "5"], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "✓" in proc.stdout and "modelling" in proc.stdout and "completed in" in proc.stdout
    said = re.search(r"This run took (\d+) s, over the time budget of 5 s: the model search took (\d+) s of it",
                     " ".join(proc.stdout.split()))  # no run of seven steps fits 5 s here: it says so
    assert said and int(said[2]) < int(said[1]), proc.stdout
    assert "roc_auc" in proc.stdout
    [report] = [line.split("report ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("  report ")]
    assert Path(report).name == "answer.md" and Path(report).is_file(), "a path is printed whole, on one line"
    listed = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "pipelines", "list", "--owner", "ana", "--json"],
                            capture_output=True, text=True, env=env, timeout=120)
    [row] = json.loads(listed.stdout)
    assert row["runs"] == 1 and row["last_run"]["status"] == "completed" and row["target"] == "churn"
    shown = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "pipelines", "show", str(row["id"]), "--json"],
                           capture_output=True, text=True, env=env, timeout=120)
    detail = json.loads(shown.stdout)
    assert [run["status"] for run in detail["runs"]] == ["completed"] and detail["steps"][0]["position"] == 0
    with session_scope(store) as session:  # recorded by the run's start task, with its Airflow run's id
        [recorded] = session.scalars(select(schema.Execution).where(schema.Execution.pipeline_id == row["id"])).all()
        assert recorded.airflow_run_id and recorded.airflow_run_id.startswith("manual__")



def test_an_answer_one_column_decides_is_doubted_naming_that_column(store, tmp_path):
    """``has_contract`` is derived from ``tenure_band``: the held-out score is perfect, and the run (asked for by its
    fields, no goal) completes marked for review, naming the column, with its own exit code: not a plain success."""
    rng = np.random.default_rng(11)
    band = rng.choice(["new", "regular", "loyal"], 800, p=[0.4, 0.35, 0.25])
    customers = pd.DataFrame({"age": rng.integers(18, 80, 800), "monthly_charges": rng.normal(60, 15, 800).round(2),
                              "support_calls": rng.poisson(2, 800), "region": rng.choice(["north", "south"], 800),
                              "tenure_band": band, "has_contract": np.where(band == "new", "no", "yes")})
    path = tmp_path / "contracts.csv"
    customers.to_csv(path, index=False)
    proc = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "run", str(path), "--target", "has_contract",
                           "--time-budget", "30", "--exclude", "region"], capture_output=True, text=True,
                          env=_cli_env(store), timeout=900)
    assert proc.returncode == 4, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = " ".join(proc.stdout.split())  # as printed, wrapped at the terminal's width
    assert "runtime local columns given to leave out: --exclude region ✓" in out, out[:600]  # before the steps
    assert "completed, needs review in" in out
    assert "Needs review: `tenure_band` alone decides `has_contract` (balanced accuracy 1.000 " in out
    with session_scope(store) as session:
        execution = session.scalar(select(schema.Execution).order_by(schema.Execution.id.desc()).limit(1))
        assert execution.status == "completed"
        assert execution.trace["quality"]["review"].startswith("`tenure_band` alone decides `has_contract`")
        assert execution.trace["answer"].startswith("Needs review: ")


def test_encoded_features_are_traced_to_the_column_they_were_made_from():
    """A column one-hot encoded (or split into date parts) is judged alone as one column, named as loaded."""
    grouped = origins(["tenure_band_new", "tenure_band_loyal", "tenure", "signup_date_year", "bias"],
                      ["tenure", "tenure_band", "signup_date", "has_contract"])
    assert grouped == {"tenure_band": ["tenure_band_new", "tenure_band_loyal"], "tenure": ["tenure"],
                       "signup_date": ["signup_date_year"], "bias": ["bias"]}


def test_cli_run_with_a_model_of_each_target_runs_them_one_after_another(store, tmp_path):
    path = tmp_path / "houses.csv"
    houses().to_csv(path, index=False)
    env = _cli_env(store)
    proc = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "run", str(path),
                           "predict the price and also the number of rooms", "--each-target", "--user", "ana"],
                          capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert "regression of 'price'" in out and "regression of 'rooms'" in out
    assert out.index("of 'price'") < out.index("completed in") < out.index("of 'rooms'")
    assert out.count("completed in") == 2 and out.count("rmse") >= 2
    listed = subprocess.run([sys.executable, "-m", "dagsmith.cli.app", "pipelines", "list", "--owner", "ana", "--json"],
                            capture_output=True, text=True, env=env, timeout=120)
    rows = json.loads(listed.stdout)
    assert sorted(row["target"] for row in rows) == ["price", "rooms"]
    assert all(row["runs"] == 1 and row["last_run"]["status"] == "completed" for row in rows)

TASKS = {
    "regression": ("diabetes", None, "predict disease progression", "rmse"),
    "clustering": ("iris", ["species"], "group the flowers into clusters", "silhouette"),
    "dimensionality_reduction": ("wine", None, "reduce the wine measurements to a few components",
                                 "explained_variance_ratio"),
    "exploratory_analysis": ("penguins", None, "explore this dataset and describe it", "stat.rows"),
}


def test_an_anomaly_run_flags_about_the_planted_share_and_says_why(store, embedder, tmp_path):
    """2,000 card payments, 3% planted: a tenfold amount, or a rare channel with many items. The run flags a few
    percent of the rows, most of them planted, each with the values that make it unusual."""
    rng = np.random.default_rng(3)
    payments = pd.DataFrame({"amount": rng.lognormal(4, 0.3, 2000), "items": rng.poisson(3, 2000),
                             "hour": rng.integers(8, 20, 2000), "channel": rng.choice(["web", "store"], 2000)})
    planted = rng.choice(2000, 60, replace=False)
    payments.loc[planted[:40], "amount"] *= 10
    payments.loc[planted[40:], "channel"] = "phone"
    payments.loc[planted[40:], "items"] = rng.integers(25, 40, 20)
    path = tmp_path / "payments.csv"
    payments.to_csv(path, index=False)
    planned = plan(path, "find anomalous payments", settings=store, embedder=embedder).pipeline
    assert planned.task_type == "anomaly_detection" and planned.valid
    outcome = run_dag(store, planned.id, path)
    assert outcome["status"] == "completed", (outcome["error"], outcome["log"].read_text()[-3000:])
    predictions = pd.read_parquet(next(f for f in sorted(outcome["workspace"].glob("steps/*/predictions.parquet"))
                                       if "anomaly_score" in pd.read_parquet(f).columns))
    flagged = predictions["is_anomaly"].to_numpy()
    assert len(predictions) == 2000 and 0.01 <= flagged.mean() <= 0.05
    assert flagged[planted].mean() > 0.7
    assert predictions.loc[flagged, "why"].str.len().gt(0).all()
    assert any(predictions.at[row, "why"].startswith("amount = ") for row in planted[:40])
    assert outcome["trace"]["answer"].startswith(f"Flagged {flagged.sum()} of 2,000 rows ")
    first = re.search(r"The most unusual: row ([\d,]+) ", outcome["trace"]["answer"])
    assert first, outcome["trace"]["answer"]
    row = int(first.group(1).replace(",", "")) - 1  # counted from 1, as a person counts the file's rows
    assert predictions.at[row, "anomaly_rank"] == 1 and row in planted


@pytest.mark.parametrize("runtime, task", [(r, t) for t in TASKS for r in ("local",)] + [("docker", "regression")])
def test_every_task_type_runs_end_to_end(store, embedder, tmp_path, runtime, task):
    name, drop, goal, metric = TASKS[task]
    path = tmp_path / f"{name}.csv"
    datasets.load(name).drop(columns=drop or []).to_csv(path, index=False)
    planned = plan(path, goal, settings=store, embedder=embedder).pipeline
    assert planned.task_type == task and planned.valid
    outcome = run_dag(store, planned.id, path, runtime=runtime)
    assert outcome["status"] == "completed", (outcome["error"], outcome["log"].read_text()[-3000:])
    metrics = _metrics(outcome["workspace"])
    assert metric in metrics and all(isinstance(v, (int, float)) for v in metrics.values())
    if task == "regression":
        assert metrics["rmse"] < metrics["baseline_rmse"], "better than predicting the mean"
    if task == "dimensionality_reduction":  # each component named by what it moves with
        assert " moves with " in outcome["trace"]["answer"], outcome["trace"]["answer"]
    if task == "clustering":  # the setosa flowers stand apart: groups that separate, no doubt raised
        quality = outcome["trace"]["quality"]
        assert quality["review"] is None and quality["metrics"]["silhouette"] > SUBSTANTIAL_SILHOUETTE, quality


def test_an_exploration_answers_the_analyses_it_was_asked_for(store, embedder, tmp_path):
    """Weekly hours follow overtime and the role; two salaries are typed with extra zeros. Asked for correlations,
    outliers and what drives the hours, the run lists the typos with their rows and ranks overtime and role first."""
    rng = np.random.default_rng(5)
    role = rng.choice(["engineer", "nurse", "clerk"], 600)
    overtime = rng.uniform(0, 20, 600)
    salary = rng.normal(50_000, 8_000, 600)
    salary[[41, 388]] = [5_200_000, 4_900_000]
    staff = pd.DataFrame({"role": role, "overtime_pay": overtime, "shoe_size": rng.normal(42, 2, 600),
                          "salary": salary, "weekly_hours": 35 + 0.8 * overtime + 5.0 * (role == "nurse")
                          + rng.normal(0, 1.5, 600)})
    path = tmp_path / "staff.csv"
    staff.to_csv(path, index=False)
    planned = plan(path, "show correlations and outliers, and what drives weekly hours?", settings=store,
                   embedder=embedder).pipeline
    eda = next(s for s in planned.steps if s.stage == "eda")
    assert planned.task_type == "exploratory_analysis" and eda.microservice == "exploratory_analysis"
    assert eda.params == {"focus": "weekly_hours", "analyses": ["correlations", "outliers"]}
    outcome = run_dag(store, planned.id, path)
    assert outcome["status"] == "completed", (outcome["error"], outcome["log"].read_text()[-3000:])
    answer = outcome["trace"]["answer"]
    assert answer.startswith("Explored 600 rows and 5 columns. What goes most with weekly_hours: overtime_pay "), answer
    assert "; role (correlation ratio eta" in answer and re.search(r"; outliers in .*salary \(\d+, ", answer), answer
    report = (outcome["workspace"] / "answer.md").read_text(encoding="utf-8")
    assert "5,200,000 (row 42)" in report and "#### Spearman correlations (with weekly_hours)" in report
    assert report.count("associations.png") == 1  # a plot passed on by later steps is shown once


def test_the_requested_model_is_fitted_without_the_columns_ruled_out(store, embedder, churn_csv, tmp_path):
    planned = plan(churn_csv, "use a random forest to predict churn, without the tenure column", settings=store,
                   embedder=embedder).pipeline
    modelling = next(s for s in planned.steps if s.stage == "modelling")
    assert modelling.search.candidates == ["random_forest_classifier"]
    outcome = run_dag(store, planned.id, churn_csv)
    assert outcome["status"] == "completed", (outcome["error"], outcome["log"].read_text()[-3000:])
    fitted = Bundle.open(outcome["workspace"] / "steps" / f"{modelling.position:02d}")
    assert type(fitted.load_model()).__name__ == "RandomForestClassifier"
    assert fitted.excluded_columns == ["tenure"] and "tenure" in fitted.table("test").columns
    assert "tenure" not in fitted.feature_columns(fitted.table("test"))
    assert list(fitted.load_model().feature_names_in_) == fitted.feature_columns(fitted.table("test"))
    assert "tenure" not in outcome["trace"]["answer"]
