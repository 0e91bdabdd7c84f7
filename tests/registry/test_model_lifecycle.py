"""A churn pipeline's model at work, through the CLI and real Airflow ``dag.test()`` runs: the first run's model is
the champion, `dagsmith predict` scores a new month in the sandbox (ids carried, probabilities, drift, one-line
errors with nothing written), a retrain on worse data leaves the champion in place with the reason, a retrain on
more data replaces it, and a rollback by hand brings it back; an MLflow server that is not there fails none of it.
One trained pipeline and two reruns for the module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split
from sqlalchemy import select

from dagsmith import datasets
from dagsmith.agents.planner import plan
from dagsmith.airflow.local import DAGS_FOLDER, airflow_env
from dagsmith.airflow.pipeline_shards import dag_file_name
from dagsmith.config import Settings
from dagsmith.execution.specs import score_dag_id
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.conftest import catalog_copy
from tests.execution.conftest import service_id

#: The share of the worse month's training rows whose labels are shuffled among themselves: a model trained on it still
#: beats a trivial predictor on the clean held-out rows, by far less than the champion does.
SHUFFLED = 0.7
#: An MLflow server that is not there, its token in the address: MLflow not installed or down, no run fails for it.
MLFLOW_DOWN = "http://alice:s3cret-token-42@127.0.0.1:9"


@pytest.fixture(scope="module")
def months(tmp_path_factory) -> dict[str, Path]:
    """Customers with an id: the first month to train on, a new month to score (no labels), a worse month (most of
    the labels it is trained on shuffled, its held-out rows intact) and a bigger, better one."""
    table = datasets.load("wa_churn")
    table.insert(0, "customer_id", [f"C{i:05d}" for i in range(len(table))])
    folder = tmp_path_factory.mktemp("months")
    worse = table.iloc[1500:3000].reset_index(drop=True)
    # the rows the pipeline's splitter (train_test_splitter: 20 % held out, seed 42, stratified) trains on; their
    # features are shuffled among them, as good as shuffling their labels while keeping the split the same
    learned, _ = train_test_split(np.arange(len(worse)), test_size=0.2, random_state=42,
                                  stratify=worse["churn"].astype("string"))
    rng = np.random.default_rng(0)
    rows = rng.choice(learned, int(SHUFFLED * len(learned)), replace=False)
    for column in worse.columns.drop(["customer_id", "churn"]):
        worse.loc[rows, column] = worse.loc[rng.permutation(rows), column].to_numpy()
    parts = {"first": table.iloc[:1500], "new": table.iloc[1500:2500].drop(columns=["churn"]), "worse": worse,
             "better": table.iloc[3000:]}
    for name, part in parts.items():
        part.to_csv(folder / f"{name}.csv", index=False)
    return {name: folder / f"{name}.csv" for name in parts}


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dagsmith.cli.app", *args], capture_output=True, text=True, env=env,
                          timeout=1200)


@pytest.fixture(scope="module")
def trained(server_home, catalog_template, embedder, months, tmp_path_factory):
    """The pipeline planned on the first month and run once by `dagsmith pipelines rerun` (Airflow dag.test), its
    modelling one LightGBM without a search: each run is quick and gives the same model on the same rows."""
    with catalog_copy(server_home, catalog_template, tmp_path_factory.mktemp("home")) as settings:
        planned = plan(months["first"], "predict customer churn", user="ana", settings=settings,
                       embedder=embedder).pipeline
        with session_scope(settings) as session:
            step = session.scalar(select(schema.PipelineStep).where(schema.PipelineStep.pipeline_id == planned.id,
                                                                    schema.PipelineStep.stage == "modelling"))
            step.microservice_id, step.params, step.search = service_id(session, "lightgbm_classifier"), {}, {}
        env = {**os.environ, "DAGSMITH_DATABASE_URL": settings.database_url, "DAGSMITH_HOME": str(settings.home),
               "COLUMNS": "200", "MLFLOW_TRACKING_URI": MLFLOW_DOWN}
        first = _cli(env, "pipelines", "rerun", str(planned.id), "--data", str(months["first"]))
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
        yield env, str(planned.id), first


def _statuses(env: dict, pipeline: str) -> dict[int, str]:
    listed = _cli(env, "models", "list", pipeline, "--json")
    assert listed.returncode == 0, listed.stderr
    return {row["version"]: row["status"] for row in json.loads(listed.stdout)}


def test_the_first_model_is_the_champion_and_scores_a_new_month(trained, months, tmp_path):
    env, pipeline, first = trained
    assert "The model is version 1, now the champion" in first.stdout
    assert "MLflow at http://***@127.0.0.1:9 was not told" in first.stdout, first.stdout[-3000:]
    shown = _cli(env, "models", "show", pipeline, "--json")
    assert "error" in json.loads(shown.stdout)["mlflow"] and "s3cret" not in first.stdout + first.stderr + shown.stdout
    out = tmp_path / "scored.csv"
    proc = _cli(env, "predict", pipeline, str(months["new"]), "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "scored 1,000 rows with version 1 (champion)" in proc.stdout and "no drift" in proc.stdout
    scored, given = pd.read_csv(out), pd.read_csv(months["new"])
    assert list(scored.columns) == ["customer_id", "prediction", "proba_No", "proba_Yes"]
    assert scored["customer_id"].tolist() == given["customer_id"].tolist()
    assert scored["proba_Yes"].between(0, 1).all() and set(scored["prediction"]) <= {"Yes", "No"}
    assert np.allclose(scored["proba_No"] + scored["proba_Yes"], 1)


def test_drifted_features_are_said_prominently_and_kept(trained, months, tmp_path):
    env, pipeline, _ = trained
    shifted = pd.read_csv(months["new"]).assign(monthly_charges=lambda t: t["monthly_charges"] * 3)
    shifted.to_parquet(tmp_path / "shifted.parquet", index=False)
    proc = _cli(env, "predict", pipeline, str(tmp_path / "shifted.parquet"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "DRIFT" in proc.stdout and "monthly_charges" in proc.stdout
    assert pd.read_parquet(tmp_path / "shifted.predictions.parquet")["customer_id"].is_unique
    shown = json.loads(_cli(env, "models", "show", pipeline, "--json").stdout)
    assert "monthly_charges" in shown["scoring_runs"][0]["drifted"] and shown["scoring_runs"][0]["rows"] == 1000


SCORE_DAG = """
import json, runpy, sys
from airflow.utils.session import create_session
dag = runpy.run_path(sys.argv[1])[sys.argv[2]]
run = dag.test(run_conf=json.loads(sys.argv[3]))
with create_session() as session:
    tasks = {ti.task_id: str(ti.state) for ti in run.get_task_instances(session=session)}
print("RESULT " + json.dumps({"state": str(run.state), "tasks": tasks}))
"""


def test_the_scoring_dag_scores_rows_in_the_data_roots_and_asks_for_a_retrain_on_drift(trained, months):
    env, pipeline, _ = trained
    settings = Settings(home=Path(env["DAGSMITH_HOME"]), database_url=env["DAGSMITH_DATABASE_URL"])
    rows = settings.home / "datasets" / "december.csv"  # a deployment reads and writes inside its data roots only
    rows.parent.mkdir(parents=True, exist_ok=True)
    pd.read_csv(months["new"]).assign(monthly_charges=lambda t: t["monthly_charges"] * 3).to_csv(rows, index=False)
    airflow = airflow_env(settings)
    subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=airflow, capture_output=True, timeout=300)
    proc = subprocess.run([sys.executable, "-c", SCORE_DAG, str(DAGS_FOLDER / dag_file_name(int(pipeline))),
                           score_dag_id(int(pipeline)), json.dumps({"dataset": str(rows), "runtime": "local"})],
                          env=airflow, capture_output=True, text=True, timeout=900)
    assert "RESULT " in proc.stdout, (proc.stdout + proc.stderr)[-4000:]
    result = json.loads(proc.stdout.split("RESULT ", 1)[1].splitlines()[0])
    assert result["state"] == "success" and result["tasks"] == {"score": "success", "drifted": "success",
                                                                "retrain_on_drift": "success"}, result
    scored = pd.read_csv(rows.with_name("december.predictions.csv"))
    assert len(scored) == 1000 and list(scored.columns[:2]) == ["customer_id", "prediction"]
    shown = json.loads(_cli(env, "models", "show", pipeline, "--json").stdout)
    assert shown["scoring_runs"][0]["dataset"] == str(rows) and "monthly_charges" in shown["scoring_runs"][0]["drifted"]


def test_rows_the_model_cannot_score_are_one_line_errors_with_nothing_written(trained, months, tmp_path):
    env, pipeline, _ = trained
    given = pd.read_csv(months["new"])
    broken = {"missing": (given.drop(columns=["tenure"]), "tenure"),
              "retyped": (given.assign(monthly_charges=given["monthly_charges"].astype(str) + " USD"),
                          "monthly_charges")}
    for name, (table, column) in broken.items():
        table.to_csv(tmp_path / f"{name}.csv", index=False)
        proc = _cli(env, "predict", pipeline, str(tmp_path / f"{name}.csv"))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stderr.startswith("error: ") and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert column in proc.stderr and "Traceback" not in proc.stderr
        assert not (tmp_path / f"{name}.predictions.csv").exists()
    unknown = _cli(env, "predict", pipeline, str(months["new"]), "--version", "9")
    assert unknown.returncode == 2 and "has no version 9; its versions: 1" in unknown.stderr


def test_retrains_replace_the_champion_only_when_at_least_as_good(trained, months):
    env, pipeline, _ = trained
    worse = _cli(env, "pipelines", "rerun", pipeline, "--data", str(months["worse"]), "--json")
    assert worse.returncode in (0, 4), worse.stdout[-3000:] + worse.stderr[-3000:]
    kept = json.loads(worse.stdout)
    assert "version 2, a challenger" in kept["answer"] and "the champion is kept" in kept["answer"]
    assert _statuses(env, pipeline) == {1: "champion", 2: "challenger"}
    decision = json.loads(_cli(env, "models", "show", pipeline, "2", "--json").stdout)["decision"]
    assert decision["metric"] == "roc_auc" and decision["champion_score"] > decision["challenger_score"]

    better = _cli(env, "pipelines", "rerun", pipeline, "--data", str(months["better"]), "--json")
    assert better.returncode in (0, 4), better.stdout[-3000:] + better.stderr[-3000:]
    promoted = json.loads(better.stdout)
    assert "version 3, now the champion" in promoted["answer"] and "at least as good as the champion v1" in \
        promoted["answer"]
    assert (Path(promoted["workspace"]) / "answer.md").read_text().startswith(f"# predict customer churn\n\n"
                                                                               f"{promoted['answer']}\n")
    assert _statuses(env, pipeline) == {1: "retired", 2: "challenger", 3: "champion"}

    rolled = _cli(env, "models", "rollback", pipeline, "--user", "bo", "--json")
    assert rolled.returncode == 0, rolled.stderr
    assert json.loads(rolled.stdout)["decision"]["by"] == "bo"
    assert _statuses(env, pipeline) == {1: "champion", 2: "challenger", 3: "retired"}
