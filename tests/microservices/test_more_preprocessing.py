"""The second wave of preprocessing services, run through their real command line on real datasets."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from dagsmith import datasets
from dagsmith_kit import Bundle
from tests.microservices.conftest import CATALOG, assert_finite

SERVICES = [
    "json_loader", "target_validator", "fuzzy_deduplicator", "locale_number_parser", "high_missing_column_dropper",
    "high_cardinality_column_dropper", "correlated_feature_dropper", "most_frequent_imputer",
    "missing_indicator_adder", "winsorizer", "group_splitter", "woe_encoder", "hashing_encoder", "log_transformer",
    "power_transformer", "kbins_discretizer", "rfe_selector", "l1_selector",
]


def make(tmp_path, name, frame, **roles) -> Bundle:
    return Bundle.create(tmp_path / name, frame.reset_index(drop=True), **roles)


def split_tables(tmp_path, name, frame, *, seed=0, test_share=0.25, **roles) -> Bundle:
    """A bundle already split into train and test (a seeded random split, independent of the splitters)."""
    test = frame.sample(frac=test_share, random_state=seed)
    bundle = Bundle.create(tmp_path / name, **roles)
    bundle.write_table("train", frame.drop(index=test.index).reset_index(drop=True))
    bundle.write_table("test", test.reset_index(drop=True))
    return bundle


@pytest.fixture
def credit(tmp_path) -> Bundle:
    """credit_data (first 1,500 rows): binary target Status, gaps in Income, Assets, Debt, Home, Marital, Job."""
    return split_tables(tmp_path, "credit", datasets.load("credit_data").head(1500),
                        target="Status", task_type="binary_classification")


@pytest.fixture
def ames(tmp_path) -> Bundle:
    """ames (600 rows): regression on Sale_Price, two mostly-empty columns, 28 neighbourhoods."""
    return split_tables(tmp_path, "ames", datasets.load("ames").sample(600, random_state=1),
                        target="Sale_Price", task_type="regression")


@pytest.fixture
def splitter(tmp_path):
    """The shared split fixtures, split in-process (no splitter subprocess), to keep the module fast."""
    return lambda bundle: split_tables(tmp_path, f"{bundle.path.name}-split", bundle.table("data"),
                                       target=bundle.target, task_type=bundle.task_type)


@pytest.fixture
def concrete(tmp_path) -> Bundle:
    return split_tables(tmp_path, "concrete", datasets.load("concrete"),
                        target="compressive_strength", task_type="regression")


def test_every_service_folder_is_complete_and_declares_preprocessing():
    for name in SERVICES:
        folder = CATALOG / name
        assert sorted(p.name for p in folder.iterdir() if p.name != "__pycache__") == [
            "main.py", "manifest.yaml", "requirements.txt"], name
        requirements = (folder / "requirements.txt").read_text().split()
        assert "dagsmith-kit==0.1.0" in requirements and "pyarrow==26.0.1" in requirements
        assert all("==" in line for line in requirements)
        manifest = yaml.safe_load((folder / "manifest.yaml").read_text())
        assert manifest["name"] == name and manifest["category"] == "preprocessing"


# ------------------------------------------------------------------ loading and validation
def test_json_loader_flattens_nested_records(run, tmp_path):
    penguins = datasets.load("penguins")
    records = [{"species": row.species, "island": row.island,
                "bill": {"length_mm": row.bill_length_mm, "depth_mm": row.bill_depth_mm},
                "body": {"mass_g": row.body_mass_g, "flipper": {"length_mm": row.flipper_length_mm}},
                "tags": [row.year, row.sex]} for row in penguins.itertuples()]
    source = tmp_path / "penguins.json"
    source.write_text(json.dumps({"meta": {"source": "palmer"}, "data": records}), encoding="utf-8")
    raw = Bundle.create(tmp_path / "raw-json", target="species", task_type="multiclass_classification")
    raw.add_source(source)
    out = run("json_loader", raw).output
    data = out.table("data")
    assert {"bill.length_mm", "bill.depth_mm", "body.mass_g", "body.flipper.length_mm"} <= set(data.columns)
    assert len(data) == len(penguins)
    assert np.allclose(data["body.mass_g"], penguins["body_mass_g"], equal_nan=True)
    assert json.loads(data["tags"][0]) == [penguins["year"][0], penguins["sex"][0]]  # lists kept as JSON text
    assert out.metrics()["nested_columns_as_text"] == 1 and out.metrics()["n_rows"] == len(penguins)

    lines = tmp_path / "penguins.jsonl"
    lines.write_text("\n".join(json.dumps(r) for r in records[:50]), encoding="utf-8")
    raw_lines = Bundle.create(tmp_path / "raw-jsonl", target="species", task_type="multiclass_classification")
    raw_lines.add_source(lines)
    shallow = run("json_loader", raw_lines, {"sep": "_", "max_level": 1}).output.table("data")
    assert "bill_length_mm" in shallow.columns and "body_flipper" in shallow.columns  # deeper levels stay JSON text
    assert json.loads(shallow["body_flipper"][0]) == {"length_mm": penguins["flipper_length_mm"][0]}

    lines.write_text("\n".join([json.dumps(records[0]), json.dumps(records[1]), "{not json"]), encoding="utf-8")
    broken = Bundle.create(tmp_path / "raw-broken", target="species", task_type="multiclass_classification")
    broken.add_source(lines)
    assert "line 3 of the JSON-lines file is not valid JSON" in run("json_loader", broken, ok=False).stderr


def test_json_loader_refuses_other_formats(run, raw_csv):
    result = run("json_loader", raw_csv, ok=False)
    assert "reads JSON and JSON-lines files only" in result.stderr


def test_target_validator_passes_good_targets_and_stops_bad_ones(run, penguins, diabetes, tmp_path):
    out = run("target_validator", penguins).output
    metrics = out.metrics()
    assert metrics["n_classes"] == 3 and metrics["target_missing"] == 0
    assert metrics["imbalance_ratio"] == pytest.approx(152 / 68)
    assert out.table("data").equals(penguins.table("data"))  # the data passes unchanged
    assert "| at least two classes | pass |" in (out.path / "report.md").read_text()
    assert run("target_validator", diabetes).output.metrics()["target_distinct_values"] > 200

    strict = run("target_validator", penguins, {"min_class_rows": 100}, ok=False)
    assert "target validation failed: every class has at least 100 rows (Chinstrap: 68 rows)" in strict.stderr
    frame = datasets.load("penguins")
    frame.loc[:9, "species"] = None
    gaps = make(tmp_path, "gaps", frame, target="species", task_type="multiclass_classification")
    assert "no missing target values (10 missing)" in run("target_validator", gaps, ok=False).stderr
    text_target = make(tmp_path, "text", frame.dropna(subset=["species"]), target="species", task_type="regression")
    assert "target is numeric" in run("target_validator", text_target, ok=False).stderr
    unsupervised = make(tmp_path, "clusters", frame, task_type="clustering")
    assert "needs a classification or regression task" in run("target_validator", unsupervised, ok=False).stderr


# ------------------------------------------------------------------ deduplication and types
def test_fuzzy_deduplicator_catches_what_exact_deduplication_misses(run, tmp_path):
    penguins = datasets.load("penguins")
    variants = penguins.head(20).copy()
    variants["species"] = "  " + variants["species"].str.upper() + " "
    variants["bill_length_mm"] = variants["bill_length_mm"] + 1e-9
    frame = pd.concat([penguins, variants], ignore_index=True)
    bundle = make(tmp_path, "variants", frame, target="species", task_type="multiclass_classification")
    assert len(run("deduplicator", bundle).output.table("data")) == len(frame)  # exact matching misses them
    out = run("fuzzy_deduplicator", bundle, {"decimals": 6}).output
    data = out.table("data")
    assert len(data) == len(penguins) and out.metrics()["duplicates_removed_data"] == 20
    assert data.equals(penguins)  # the first spelling of each row is kept, untouched

    train = penguins.iloc[:250]
    test = pd.concat([penguins.iloc[250:], train.head(15)], ignore_index=True)
    leaky = Bundle.create(tmp_path / "leaky", target="species", task_type="multiclass_classification")
    leaky.write_table("train", train)
    leaky.write_table("test", test)
    out = run("fuzzy_deduplicator", leaky).output
    assert len(out.table("test")) == len(penguins) - 250 and len(out.table("train")) == 250
    assert out.metrics()["duplicates_removed_test"] == 15
    assert "subset names columns" in run("fuzzy_deduplicator", leaky, {"subset": ["nope"]}, ok=False).stderr


def test_fuzzy_deduplicator_never_merges_different_records_or_measurements(run, tmp_path):
    """Rounding to 0 places would make 39.1 mm and 39.3 mm bills one penguin; ids differing only in case are two
    records. Only the re-typed copies (case, spaces, float noise) go."""
    penguins = datasets.load("penguins").dropna().reset_index(drop=True)
    frame = penguins.assign(tag=[f"P{i}" for i in range(len(penguins))])
    frame.loc[1, "tag"] = "p0"  # another bird whose tag differs from P0's in case only
    retyped = frame.head(10).assign(island=lambda f: f["island"].str.lower() + "  ",
                                    body_mass_g=lambda f: f["body_mass_g"] + 1e-9)
    bundle = make(tmp_path, "tags", pd.concat([frame, retyped], ignore_index=True), target="species",
                  task_type="multiclass_classification", id_columns=["tag"])
    out = run("fuzzy_deduplicator", bundle, {"decimals": 0})
    assert out.output.table("data").equals(frame)
    assert out.output.metrics()["duplicates_removed_data"] == 10
    report = (out.output.path / "report.md").read_text()
    assert "bill_length_mm compared at 1 places: 0 would merge different values" in report
    twins = penguins.head(2).assign(bill_length_mm=[39.1, 39.3])
    twins.loc[1, penguins.columns.drop("bill_length_mm")] = twins.loc[0, penguins.columns.drop("bill_length_mm")]
    bundle = make(tmp_path, "twins", twins, target="species", task_type="multiclass_classification")
    assert len(run("fuzzy_deduplicator", bundle, {"decimals": 0}).output.table("data")) == 2
    assert "decimals must be 0 or more" in run("fuzzy_deduplicator", bundle, {"decimals": -1}, ok=False).stderr


def test_locale_number_parser_reads_european_numbers(run, tmp_path):
    churn = datasets.load("wa_churn").head(400)
    frame = churn.copy()
    frame["monthly_charges"] = churn["monthly_charges"].map(lambda v: f"{v:,.2f} €".replace(",", " ").replace(".", ","))
    frame["total_charges"] = churn["total_charges"].map(
        lambda v: None if pd.isna(v) else f"{v:,.2f}".replace(",", "X").replace(".", ",").replace("X", "."))
    frame.loc[3, "total_charges"] = "n/a"
    bundle = make(tmp_path, "euro", frame, target="churn", task_type="binary_classification")
    out = run("locale_number_parser", bundle, {"thousands": " "}).output.table("data")
    assert np.allclose(out["monthly_charges"], churn["monthly_charges"])
    assert pd.api.types.is_float_dtype(out["monthly_charges"])
    assert list(out["contract"]) == list(frame["contract"])  # words are not numbers: left alone
    out = run("locale_number_parser", bundle, {"thousands": "."})
    data = out.output.table("data")
    expected = churn["total_charges"].copy()
    expected[3] = np.nan
    assert np.allclose(data["total_charges"], expected, equal_nan=True)
    assert out.output.metrics()["values_unparsed"] == 1
    assert "separators must differ" in run("locale_number_parser", bundle, {"thousands": ","}, ok=False).stderr


# ------------------------------------------------------------------ column filters
def test_high_missing_column_dropper_on_ames(run, ames, tmp_path):
    out = run("high_missing_column_dropper", ames).output
    train = ames.table("train")
    shares = train.isna().mean()
    expected = set(shares[shares > 0.5].index)
    assert expected == {"Misc_Feature", "Mas_Vnr_Type"}
    for name in ("train", "test"):
        assert set(out.table(name).columns) == set(train.columns) - expected
    assert out.metrics()["columns_dropped"] == 2
    sparse = make(tmp_path, "sparse", datasets.load("ames")[["Misc_Feature", "Mas_Vnr_Type", "Sale_Price"]],
                  target="Sale_Price", task_type="regression")
    assert "every feature column is more than 50% missing" in run("high_missing_column_dropper", sparse,
                                                                    ok=False).stderr


def test_high_cardinality_column_dropper(run, ames, penguins_split):
    out = run("high_cardinality_column_dropper", ames, {"max_categories": 20}).output
    train_in = ames.table("train")
    text = list(ames.feature_columns(train_in, numeric=False))
    expected = {c for c in text if train_in[c].nunique() > 20}
    assert "Neighborhood" in expected
    assert set(out.table("test").columns) == set(train_in.columns) - expected
    assert out.table("train")["Lot_Area"].equals(train_in["Lot_Area"])

    tagged = Bundle.create(penguins_split.path.parent / "tagged", target="species",
                           task_type="multiclass_classification")
    for name in ("train", "test"):
        frame = penguins_split.table(name)
        tagged.write_table(name, frame.assign(note=[f"bird {name} {i}" for i in range(len(frame))]))
    out = run("high_cardinality_column_dropper", tagged).output
    assert "note" not in out.table("train") and {"island", "sex", "species"} <= set(out.table("test").columns)
    assert "max_categories must be at least 2" in run("high_cardinality_column_dropper", tagged,
                                                       {"max_categories": 1}, ok=False).stderr


def test_correlated_feature_dropper_on_breast_cancer(run, split):
    out = run("correlated_feature_dropper", split).output
    train_in, train = split.table("train"), out.table("train")
    assert "mean radius" in train and "mean perimeter" not in train and "mean area" not in train
    kept = out.feature_columns(train)
    correlation = train_in[kept].corr().abs().to_numpy()
    assert (correlation[np.triu_indices(len(kept), k=1)] <= 0.95).all()
    assert list(out.table("test").columns) == list(train.columns) and "diagnosis" in train
    assert out.metrics()["columns_dropped"] == 30 - len(kept)
    spearman = run("correlated_feature_dropper", split, {"method": "spearman", "threshold": 0.9}).output
    assert len(spearman.feature_columns(spearman.table("train"))) < 30
    assert "method must be" in run("correlated_feature_dropper", split, {"method": "kendall"}, ok=False).stderr


# ------------------------------------------------------------------ missing values
def test_most_frequent_imputer_on_credit(run, credit, ames):
    out = run("most_frequent_imputer", credit).output
    train_in = credit.table("train")
    for name in ("train", "test"):
        table, before = out.table(name), credit.table(name)
        assert not table.isna().any().any()
        gaps = before["Income"].isna()
        assert (table.loc[gaps, "Income"] == train_in["Income"].mode()[0]).all()
        assert (table.loc[before["Home"].isna(), "Home"] == train_in["Home"].mode()[0]).all()
        assert table.loc[~gaps, "Income"].equals(before.loc[~gaps, "Income"])
    result = run("most_frequent_imputer", ames, ok=False)
    assert "refuses columns missing more than 50%" in result.stderr and "Misc_Feature" in result.stderr


def test_missing_indicator_adder_keeps_missingness_through_imputation(run, credit):
    flagged = run("missing_indicator_adder", credit).output
    train_in = credit.table("train")
    gappy = [c for c in credit.feature_columns(train_in) if train_in[c].isna().any()]
    for name in ("train", "test"):
        table, before = flagged.table(name), credit.table(name)
        assert sorted(c for c in table.columns if c.endswith("_missing")) == sorted(f"{c}_missing" for c in gappy)
        for column in gappy:
            assert table[f"{column}_missing"].equals(before[column].isna().astype(int))
    assert "Seniority_missing" not in flagged.table("train")
    imputed = run("median_imputer", flagged).output.table("test")
    assert not imputed["Income"].isna().any() and imputed["Income_missing"].sum() == credit.table(
        "test")["Income"].isna().sum()


# ------------------------------------------------------------------ outliers and splitting
def test_winsorizer_clips_to_training_percentiles(run, concrete):
    out = run("winsorizer", concrete, {"lower_quantile": 0.05, "upper_quantile": 0.95}).output
    train_in = concrete.table("train")
    bounds = train_in.drop(columns="compressive_strength").quantile([0.05, 0.95])
    for name in ("train", "test"):
        table, before = out.table(name), concrete.table(name)
        assert len(table) == len(before)
        for column in bounds.columns:
            assert table[column].min() >= bounds.loc[0.05, column] - 1e-9
            assert table[column].max() <= bounds.loc[0.95, column] + 1e-9
        assert table["compressive_strength"].equals(before["compressive_strength"])  # never the target
    assert out.metrics()["values_clipped"] > 0
    assert "lower_quantile < upper_quantile" in run("winsorizer", concrete, {"lower_quantile": 0.9,
                                                                             "upper_quantile": 0.1}, ok=False).stderr


def test_group_splitter_keeps_areas_apart(run, tmp_path):
    olive = make(tmp_path, "olive", datasets.load("olive"), target="region", task_type="multiclass_classification")
    out = run("group_splitter", olive, {"group_column": "area", "test_size": 0.3, "random_state": 3}).output
    train, test = out.table("train"), out.table("test")
    assert not (set(train["area"]) & set(test["area"])) and len(train) + len(test) == 572
    assert set(train["area"]) | set(test["area"]) == set(datasets.load("olive")["area"])
    assert not (out.path / "data.parquet").exists() and "area" in out.id_columns
    assert "area" not in out.feature_columns(train)
    assert out.metrics()["test_groups"] == test["area"].nunique() >= 1
    assert "no group column" in run("group_splitter", olive, ok=False).stderr
    assert "already split" in run("group_splitter", out, {"group_column": "area"}, ok=False).stderr


# ------------------------------------------------------------------ encoders
def test_woe_encoder_on_credit(run, credit, penguins_split):
    out = run("woe_encoder", credit).output
    train_in, train = credit.table("train"), out.table("train")
    assert out.feature_columns(train, numeric=False) == [] and set(train["Status"]) == {"good", "bad"}
    # positive class "good" (the second label sorted); check one category by hand
    labels = train_in["Status"] == "good"
    counts = labels.groupby(train_in["Home"], dropna=False).agg(["sum", "count"])
    pos, neg = counts["sum"] + 0.5, counts["count"] - counts["sum"] + 0.5
    woe = np.log((pos / pos.sum()) / (neg / neg.sum()))
    assert np.allclose(train.loc[train_in["Home"] == "owner", "Home"], woe["owner"])
    assert train.loc[train_in["Home"] == "owner", "Home"].iloc[0] > 0 > train.loc[
        train_in["Home"] == "rent", "Home"].iloc[0]  # owners repay more often
    metrics = out.metrics()
    assert metrics["iv_Records"] > metrics["iv_Marital"] > 0
    assert_finite(out.table("test")[["Home", "Marital", "Records", "Job"]])
    assert "needs a binary classification target" in run("woe_encoder", penguins_split, ok=False).stderr


def test_hashing_encoder_on_churn(run, churn_split, split):
    out = run("hashing_encoder", churn_split, {"n_features": 16}).output
    train_in, train, test = churn_split.table("train"), out.table("train"), out.table("test")
    hashed = [f"hash_{i}" for i in range(16)]
    assert out.feature_columns(train, numeric=False) == [] and hashed == [c for c in train if c.startswith("hash_")]
    text = churn_split.feature_columns(train_in, numeric=False)
    # rows with the same categories get the same hashed values, whichever table they are in
    key_train = train_in[text].astype(str).agg("|".join, axis=1)
    key_test = churn_split.table("test")[text].astype(str).agg("|".join, axis=1)
    shared = key_test[key_test.isin(set(key_train))].index[0]
    twin = key_train[key_train == key_test[shared]].index[0]
    assert np.allclose(test.loc[shared, hashed], train.loc[twin, hashed])
    assert (train[hashed].abs().sum(axis=1) > 0).all() and train["tenure"].equals(train_in["tenure"])
    assert "no categorical (non-numeric) feature columns" in run("hashing_encoder", split, ok=False).stderr


# ------------------------------------------------------------------ transforms
def test_log_transformer_takes_logs_of_skewed_non_negative_features(run, concrete, regression_split):
    out = run("log_transformer", concrete).output
    train_in = concrete.table("train")
    skew = train_in.drop(columns="compressive_strength").skew()
    skewed = set(skew[skew > 0.75].index)
    assert {"age", "superplasticizer"} <= skewed
    for name in ("train", "test"):
        table, before = out.table(name), concrete.table(name)
        for column in before.columns:
            expected = np.log1p(before[column]) if column in skewed else before[column]
            assert np.allclose(table[column], expected), column
    assert out.table("train")["age"].skew() < skew["age"]
    assert out.metrics()["columns_log_transformed"] == len(skewed)
    result = run("log_transformer", regression_split, ok=False)  # diabetes features are centred: negatives
    assert "refuses negative values" in result.stderr and "power_transformer" in result.stderr


def test_power_transformer_gaussianises_and_refuses_box_cox_on_negatives(run, concrete, regression_split, credit):
    out = run("power_transformer", concrete).output
    train = out.table("train")
    features = [c for c in train.columns if c != "compressive_strength"]
    assert np.allclose(train[features].mean(), 0, atol=1e-6) and np.allclose(train[features].std(ddof=0), 1)
    assert abs(train["age"].skew()) < abs(concrete.table("train")["age"].skew())
    gaps = run("power_transformer", credit, {"method": "yeo-johnson"}).output.table("test")
    assert gaps["Income"].isna().equals(credit.table("test")["Income"].isna())  # gaps stay gaps
    result = run("power_transformer", regression_split, {"method": "box-cox"}, ok=False)
    assert "box-cox needs strictly positive values" in result.stderr


def test_kbins_discretizer_makes_equal_frequency_bins(run, split, penguins_split):
    out = run("kbins_discretizer", split, {"n_bins": 4}).output
    train, test = out.table("train"), out.table("test")
    features = out.feature_columns(train)
    assert set(np.unique(train[features])) <= {0.0, 1.0, 2.0, 3.0}
    assert set(np.unique(test[features])) <= {0.0, 1.0, 2.0, 3.0}
    shares = train["mean radius"].value_counts(normalize=True)
    assert len(shares) == 4 and shares.min() > 0.2  # quantile bins hold about a quarter of the rows each
    assert (train["mean radius"].groupby(train["mean radius"]).size().index == [0, 1, 2, 3]).all()
    assert "does not accept missing values" in run("kbins_discretizer", penguins_split, ok=False).stderr


# ------------------------------------------------------------------ selectors
def test_rfe_selector_keeps_n_features(run, split, regression_split, penguins_split):
    out = run("rfe_selector", split, {"n_features": 5}).output
    train = out.table("train")
    assert len(out.feature_columns(train)) == 5 and "diagnosis" in train
    assert list(out.table("test").columns) == list(train.columns)
    regression = run("rfe_selector", regression_split, {"n_features": 4}).output
    kept = regression.feature_columns(regression.table("train"))
    assert len(kept) == 4 and {"bmi", "s5"} <= set(kept)
    assert "encode these columns first" in run("rfe_selector", penguins_split, ok=False).stderr


def test_l1_selector_keeps_non_zero_coefficients(run, split, regression_split):
    out = run("l1_selector", split, {"C": 0.1}).output
    kept = out.feature_columns(out.table("train"))
    assert 1 <= len(kept) < 30 and out.metrics()["features_kept"] == len(kept)
    assert len(run("l1_selector", split, {"C": 0.1, "max_features": 3}).output.table("test").columns) == 4
    regression = run("l1_selector", regression_split).output
    assert {"bmi", "s5"} <= set(regression.feature_columns(regression.table("train")))
    assert "removed every feature" in run("l1_selector", split, {"C": 0.0001}, ok=False).stderr
