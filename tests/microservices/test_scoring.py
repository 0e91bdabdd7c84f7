"""Scoring new rows with a model version: recorded transforms, freezing a run's bundle, the scorer, drift."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from dagsmith import datasets
from dagsmith.runtime.base import Invocation
from dagsmith.runtime.local import LocalRuntime
from dagsmith_kit import Bundle, BundleError, drift, run_service, transform_tables, transforms
from dagsmith_kit.freeze import SCHEMA_FILE, freeze
from tests.microservices.conftest import SERVICE_ENV

TARGET, ID = "churn", "customer"
SCORER = [sys.executable, "-m", "dagsmith_kit.scoring"]


def score(version: Path, rows: pd.DataFrame, out: Path, *extra: str) -> subprocess.CompletedProcess:
    """``python -m dagsmith_kit.scoring`` on ``rows``, as a process (the way the sandbox runs it)."""
    source = out.parent / f"{out.name}-rows.parquet"
    rows.to_parquet(source, index=False)
    return subprocess.run([*SCORER, "--model", str(version), "--input", str(source), "--output", str(out), *extra],
                          capture_output=True, text=True, timeout=120, env=SERVICE_ENV)


# ------------------------------------------------------------------ a real chain, frozen once for the module
@pytest.fixture(scope="module")
def churn_run(module_run, tmp_path_factory) -> tuple[Bundle, Bundle]:
    """Churn customers with an id, split, imputed, one-hot encoded, scaled and modelled by the shipped services:
    the splitter's output (the raw train and test rows) and the final bundle."""
    frame = datasets.load("wa_churn").head(1200)
    frame.insert(0, ID, [f"c{i:05d}" for i in range(len(frame))])
    raw = Bundle.create(tmp_path_factory.mktemp("churn") / "raw", frame, target=TARGET,
                        task_type="binary_classification", id_columns=[ID])
    split = module_run("train_test_splitter", raw, {"test_size": 0.25, "random_state": 0}).output
    final = module_run.chain(split, "median_imputer", "onehot_encoder", "standard_scaler", "logistic_regression")
    return split, final


@pytest.fixture(scope="module")
def churn_version(churn_run, tmp_path_factory) -> Path:
    split, final = churn_run
    return freeze(final.path, split.table("train"), tmp_path_factory.mktemp("versions") / "v1", id_columns=[ID],
                  target=TARGET, task_type="binary_classification")


def test_the_chain_records_each_step_in_order(churn_run):
    entries = transforms.steps(churn_run[1].path)
    assert [(e["service"], e["kind"]) for e in entries] == [
        ("train_test_splitter", "training_only"), ("median_imputer", "replay"), ("onehot_encoder", "replay"),
        ("standard_scaler", "replay")]
    assert [e.get("file") for e in entries] == [None, "02-median_imputer.pkl", "03-onehot_encoder.pkl",
                                                "04-standard_scaler.pkl"]


def test_new_rows_get_the_predictions_the_run_made_for_its_test_rows(churn_run, churn_version, tmp_path):
    split, final = churn_run
    new = split.table("test").drop(columns=[TARGET])  # new rows come without the target
    done = score(churn_version, new, tmp_path / "scored", "--chunk-rows", "64")
    assert done.returncode == 0, done.stderr
    predicted = pd.read_parquet(tmp_path / "scored" / "predictions.parquet")
    expected = final.predictions()
    assert list(predicted.columns) == [ID, "prediction", "proba_No", "proba_Yes"]
    assert predicted[ID].tolist() == new[ID].tolist()
    assert predicted["prediction"].tolist() == expected["prediction"].tolist()
    np.testing.assert_allclose(predicted[["proba_No", "proba_Yes"]], expected[["proba_No", "proba_Yes"]], rtol=1e-9)
    summary = json.loads((tmp_path / "scored" / "scoring.json").read_text())
    assert summary["rows_scored"] == len(new) and summary["chunks"] == -(-len(new) // 64)
    assert summary["extra_columns"] == [] and sum(summary["unseen_categories"].values()) == 0
    assert summary["drift"]["drifted"] == []


def test_the_version_folder_holds_what_scoring_needs(churn_version):
    assert sorted(p.name for p in churn_version.iterdir()) == [
        "model.joblib", "model.json", "reference.json", "schema.json", "transforms"]
    schema = json.loads((churn_version / SCHEMA_FILE).read_text())
    kinds = {f["name"]: f for f in schema["features"]}
    assert ID not in kinds and TARGET not in kinds and schema["id_columns"] == [ID]
    assert kinds["tenure"]["kind"] == "numeric" and kinds["tenure"]["min"] >= 0
    assert kinds["contract"]["categories"] == ["Month-to-month", "One year", "Two year"]
    assert schema["model"] == {"kind": "classifier", "classes": ["No", "Yes"], "file": "model.joblib"}
    assert not list(churn_version.parent.glob(".*")), "the staging folder was left behind"


def test_unusual_values_are_counted_and_a_shift_is_flagged_as_drift(churn_run, churn_version, tmp_path):
    new = churn_run[0].table("test").drop(columns=[TARGET]).assign(note="extra")
    new.loc[new.index[:7], "contract"] = "Three year"  # a category never seen in training
    new["monthly_charges"] = new["monthly_charges"] + 60  # every row shifted
    done = score(churn_version, new, tmp_path / "shifted")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "shifted" / "scoring.json").read_text())
    assert summary["extra_columns"] == ["note"]
    assert summary["unseen_categories"]["contract"] == 7
    assert summary["out_of_range"]["monthly_charges"] > len(new) / 4
    assert "monthly_charges" in summary["drift"]["drifted"] and "tenure" not in summary["drift"]["drifted"]
    assert len(pd.read_parquet(tmp_path / "shifted" / "predictions.parquet")) == len(new)


@pytest.mark.parametrize("change, says", [
    (lambda rows: rows.drop(columns=["tenure"]), "the new rows have no column tenure: the model needs it"),
    (lambda rows: rows.assign(monthly_charges=rows["monthly_charges"].map(lambda v: f"{v:.2f} EUR")),
     ("column monthly_charges held numbers in training but holds text now (e.g. '24.90 EUR', '89.55 EUR', "
      "'85.15 EUR')")),
])
def test_rows_that_do_not_fit_the_schema_are_refused_in_one_line(churn_run, churn_version, tmp_path, change, says):
    done = score(churn_version, change(churn_run[0].table("test")), tmp_path / "refused")
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {says}") and done.stderr.count("\n") == 1
    assert not (tmp_path / "refused").exists()


def test_scoring_runs_inside_the_sandbox(churn_run, churn_version, tmp_path):
    """The scorer unpickles what services made, so it runs where they run: the bubblewrap sandbox."""
    staged = tmp_path / "in"
    staged.mkdir()
    shutil.copytree(churn_version, staged / "model")  # the sandbox sees /input only: no links out of it
    churn_run[0].table("test").head(50).drop(columns=[TARGET]).to_parquet(staged / "rows.parquet", index=False)
    code = ("from dagsmith_kit.scoring import main\n"
            "main(['--model', '/input/model', '--input', '/input/rows.parquet', '--output', '/output'])\n")
    result = LocalRuntime().run(Invocation("scorer", {"main.py": code}, staged, tmp_path / "out"))
    assert result.ok, result.stderr
    assert result.isolation == "bubblewrap sandbox"
    assert len(pd.read_parquet(tmp_path / "out" / "predictions.parquet")) == 50


def test_a_runs_held_out_rows_are_scored_after_its_split_and_raw_rows_from_the_start(module_run, tmp_path):
    """The champion is compared on a later run's held-out rows, which went through the steps before the split
    (here a constant column dropped): replaying those steps again would ask for a column they no longer have."""
    frame = datasets.load("wa_churn").head(600).assign(region="EU")
    raw = Bundle.create(tmp_path / "raw", frame, target=TARGET, task_type="binary_classification")
    dropped = module_run("constant_column_dropper", raw).output
    split = module_run("train_test_splitter", dropped, {"test_size": 0.25, "random_state": 0}).output
    final = module_run.chain(split, "median_imputer", "onehot_encoder", "logistic_regression")
    version = freeze(final.path, frame, tmp_path / "v1", id_columns=[], target=TARGET,
                     task_type="binary_classification")
    held_out = split.table("test").drop(columns=[TARGET])
    assert "region" not in held_out.columns

    refused = score(version, held_out, tmp_path / "as-raw")
    assert refused.returncode == 2 and "no column region" in refused.stderr
    done = score(version, held_out, tmp_path / "held-out", "--after-step", str(len(split.meta["lineage"])))
    assert done.returncode == 0, done.stderr
    predicted = pd.read_parquet(tmp_path / "held-out" / "predictions.parquet")
    assert predicted["prediction"].tolist() == final.predictions()["prediction"].tolist()
    assert json.loads((tmp_path / "held-out" / "scoring.json").read_text())["drift"] is None
    raw_rows = score(version, frame.drop(columns=[TARGET]).head(40), tmp_path / "raw-rows")
    assert raw_rows.returncode == 0, raw_rows.stderr


# ------------------------------------------------------------------ unsupervised models
def test_an_anomaly_version_flags_new_rows_by_the_training_threshold(module_run, iris_unlabelled, tmp_path):
    detected = module_run("isolation_forest_detector", iris_unlabelled).output
    data = iris_unlabelled.table("data")
    version = freeze(detected.path, data, tmp_path / "v", id_columns=[], target=None, task_type="anomaly_detection")
    done = score(version, data, tmp_path / "scored", "--chunk-rows", "40")
    assert done.returncode == 0, done.stderr
    predicted, trained = pd.read_parquet(tmp_path / "scored" / "predictions.parquet"), detected.predictions()
    np.testing.assert_allclose(predicted["anomaly_score"], trained["anomaly_score"])
    assert predicted["is_anomaly"].tolist() == trained["is_anomaly"].tolist()  # chunks of 40 rows, one threshold
    assert (predicted["why"][predicted["is_anomaly"]] != "").all()


def test_a_clustering_that_labels_only_its_own_rows_cannot_score(module_run, iris_unlabelled, tmp_path):
    clustered = module_run("dbscan_clustering", iris_unlabelled).output
    data = iris_unlabelled.table("data")
    version = freeze(clustered.path, data, tmp_path / "v", id_columns=[], target=None, task_type="clustering")
    assert json.loads((version / SCHEMA_FILE).read_text())["model"]["can_score"] is False
    done = score(version, data, tmp_path / "scored")
    assert done.returncode == 2 and done.stderr == (
        "error: this model cannot score new rows: dbscan_clustering labels only the rows it was fitted on; "
        "run it again on the new rows\n")


# ------------------------------------------------------------------ the record, in-process
def _step(tmp_path: Path, step, frame: pd.DataFrame) -> Bundle:
    """``step`` run through ``run_service`` on a split bundle of ``frame``; returns the output bundle."""
    given = Bundle.create(tmp_path / "in", target="y", task_type="regression")
    given.write_table("train", frame.iloc[:20])
    given.write_table("test", frame.iloc[20:])
    run_service(step, ["--input", str(given.path), "--output", str(tmp_path / "out")])
    return Bundle.open(tmp_path / "out")


FRAME = pd.DataFrame({"x": np.arange(30.0), "y": np.arange(30.0) * 2})


def test_a_step_that_only_drops_rows_is_training_only(tmp_path):
    def drop(inp, out, params):
        out.write_table("train", inp.table("train").iloc[5:])

    assert [e["kind"] for e in transforms.steps(_step(tmp_path, drop, FRAME).path)] == ["training_only"]


def test_a_step_that_changes_values_unrecorded_is_unreplayable(tmp_path):
    def double(inp, out, params):
        for name, frame in inp.tables().items():
            out.write_table(name, frame.assign(x=frame["x"] * 2))

    [entry] = transforms.steps(_step(tmp_path, double, FRAME).path)
    assert entry["kind"] == "unreplayable" and "without recording how" in entry["reason"]
    with pytest.raises(ValueError, match="cannot be applied to new rows"):
        transforms.load(tmp_path / "out")


def test_transform_tables_records_a_closure_that_replays(tmp_path):
    def center(inp, out, params):
        transform_tables(inp, out, lambda train: train["x"].mean(), lambda frame, mean: frame.assign(x=frame.x - mean))

    out = _step(tmp_path, center, FRAME)
    [entry] = transforms.steps(out.path)
    assert entry["kind"] == "replay" and (out.path / "transforms" / entry["file"]).is_file()
    replayed = transforms.replay(pd.DataFrame({"x": [9.5, 0.0]}), transforms.load(out.path))
    assert replayed["x"].tolist() == [0.0, -9.5]


# ------------------------------------------------------------------ freezing, in-process
@pytest.fixture
def modelled(tmp_path) -> tuple[Bundle, pd.DataFrame]:
    frame = pd.DataFrame({"age": np.arange(80.0), "plan": ["a", "b"] * 40, "paid": [True, False] * 40,
                          "joined": pd.date_range("2024-01-01", periods=80), "note": [f"n{i}" for i in range(80)],
                          "y": [0, 1] * 40})
    bundle = Bundle.create(tmp_path / "final", frame, target="y", task_type="binary_classification")
    bundle.save_model(LogisticRegression().fit(frame[["age"]], frame["y"]), {"kind": "classifier"})
    return bundle, frame


def test_freeze_describes_each_raw_column(modelled, tmp_path):
    bundle, frame = modelled
    version = freeze(bundle.path, frame, tmp_path / "v", id_columns=[], target="y", task_type="binary_classification")
    kinds = {f["name"]: f["kind"] for f in json.loads((version / SCHEMA_FILE).read_text())["features"]}
    assert kinds == {"age": "numeric", "plan": "categorical", "paid": "boolean", "joined": "datetime", "note": "text"}
    assert json.loads((version / "model.json").read_text())["classes"] == [0, 1]


def test_rows_the_model_cannot_take_are_refused_in_one_line_and_nothing_is_left(modelled, tmp_path):
    bundle, frame = modelled
    version = freeze(bundle.path, frame, tmp_path / "v", id_columns=[], target="y", task_type="binary_classification")
    rows = frame.drop(columns=["y"]).assign(age=[1.0] * 70 + [np.nan] * 10)  # training had no missing age
    done = score(version, rows, tmp_path / "scored", "--chunk-rows", "50")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: rows 50 to 79 could not be scored: Input X contains NaN")
    assert done.stderr.count("\n") == 1 and not (tmp_path / "scored").exists()


def test_a_blend_of_models_is_frozen_and_scored(modelled, tmp_path):
    bundle, frame = modelled
    (bundle.path / "members").mkdir()
    members = []
    for name, C in (("tight", 0.01), ("loose", 100.0)):
        joblib.dump(LogisticRegression(C=C).fit(frame[["age"]], frame["y"]), bundle.path / "members" / f"{name}.joblib")
        members.append({"name": name, "model": f"members/{name}.joblib", "features": ["age"], "weight": 0.5})
    (bundle.path / "ensemble.json").write_text(json.dumps({"kind": "classifier", "metric": "roc_auc", "score": 0.5,
                                                           "members": members}))
    version = freeze(bundle.path, frame, tmp_path / "v", id_columns=[], target="y", task_type="binary_classification")
    assert sorted(p.name for p in (version / "members").iterdir()) == ["loose.joblib", "tight.joblib"]
    assert not (version / "model.joblib").exists()
    done = score(version, frame.drop(columns=["y"]), tmp_path / "scored")
    assert done.returncode == 0, done.stderr
    expected = bundle.load_model().predict_proba(frame[["age"]])[:, 1]
    np.testing.assert_allclose(pd.read_parquet(tmp_path / "scored" / "predictions.parquet")["proba_1"], expected)


def test_freeze_refuses_a_linked_file_and_leaves_nothing(modelled, tmp_path):
    bundle, frame = modelled
    secret = tmp_path / "secret"
    secret.write_text("host file")
    (bundle.path / "model.joblib").unlink()
    (bundle.path / "model.joblib").symlink_to(secret)
    with pytest.raises(BundleError, match="not a regular file"):
        freeze(bundle.path, frame, tmp_path / "versions" / "v", id_columns=[], target="y", task_type="regression")
    assert list((tmp_path / "versions").iterdir()) == []


def test_freeze_never_overwrites_a_version(modelled, tmp_path):
    bundle, frame = modelled
    (tmp_path / "v").mkdir()
    with pytest.raises(BundleError, match="never overwritten"):
        freeze(bundle.path, frame, tmp_path / "v", id_columns=[], target="y", task_type="regression")


# ------------------------------------------------------------------ drift
def test_drift_flags_a_shifted_copy_and_not_a_resample():
    rng = np.random.default_rng(0)
    train = pd.DataFrame({"amount": rng.lognormal(3, 1, 5000), "plan": rng.choice(["a", "b", "c"], 5000),
                          "age": rng.normal(40, 10, 5000)})
    train.loc[train.sample(frac=0.05, random_state=0).index, "age"] = np.nan
    reference = json.loads(json.dumps(drift.reference(train, list(train.columns))))  # it must survive JSON
    resample = train.sample(2000, replace=True, random_state=1)
    assert drift.compare(reference, resample)["drifted"] == []
    shifted = resample.assign(amount=resample["amount"] * 2, plan=resample["plan"].replace({"c": "d"}),
                              age=resample["age"].fillna(resample["age"].mean()))
    compared = drift.compare(reference, shifted)
    assert compared["drifted"] == ["amount", "plan"]
    assert compared["columns"]["plan"]["unseen_share"] == pytest.approx((shifted["plan"] == "d").mean())
    assert compared["columns"]["age"]["missing_change"] == pytest.approx(-0.05, abs=0.01)
    halves = drift.add(drift.counts(reference, shifted.iloc[:900]), drift.counts(reference, shifted.iloc[900:]))
    assert drift.judge(reference, halves) == compared  # counted in chunks, judged as one
