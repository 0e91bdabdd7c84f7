"""The data profiler (agent A1) and its reader on real datasets written to disk in every supported format."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from dagsmith import datasets
from dagsmith.agents import profiler
from dagsmith.agents.profiler import profile_dataset, profile_frame
from dagsmith.cli.profile import profile as profile_command
from dagsmith.data.readers import count_rows, read_table
from dagsmith.data.sniffing import DatasetError
from dagsmith.models.catalog import TaskType
from dagsmith.models.profile import SemanticType as S

MEASUREMENTS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


@pytest.fixture(scope="module")
def penguins() -> pd.DataFrame:
    frame = datasets.load("penguins")
    frame["island"] = frame["island"].replace({"Biscoe": "Biscoé"})  # non-ASCII, so encodings matter
    return frame


@pytest.fixture(scope="module")
def penguins_profile(penguins):
    return profile_frame(penguins, source="penguins")


def _excel(frame, path):
    frame.to_excel(path, index=False)


# name, writer, expected (format, encoding, delimiter, header, decimal)
FORMATS = {
    "plain.csv": (lambda f, p: f.to_csv(p, index=False), ("csv", "utf-8", ",", True, ".")),
    "cp1252.tsv": (
        lambda f, p: f.to_csv(p, sep="\t", index=False, encoding="cp1252"), ("tsv", "cp1252", "\t", True, ".")
    ),
    "bom-semicolon-comma.csv": (
        lambda f, p: f.to_csv(p, sep=";", decimal=",", index=False, encoding="utf-8-sig"),
        ("csv", "utf-8-sig", ";", True, ","),
    ),
    "latin1-pipe-noheader.txt": (
        lambda f, p: f.to_csv(p, sep="|", index=False, header=False, encoding="latin-1"),
        ("csv", "cp1252", "|", False, "."),  # cp1252 is a superset of latin-1 for these bytes
    ),
    "utf16.csv": (lambda f, p: f.to_csv(p, index=False, encoding="utf-16"), ("csv", "utf-16", ",", True, ".")),
    "table.parquet": (lambda f, p: f.to_parquet(p, index=False), ("parquet", None, None, True, ".")),
    "parquet-named.dat": (lambda f, p: f.to_parquet(p, index=False), ("parquet", None, None, True, ".")),
    "records.json": (lambda f, p: f.to_json(p, orient="records"), ("json", "utf-8", None, True, ".")),
    "lines.jsonl": (lambda f, p: f.to_json(p, orient="records", lines=True), ("jsonl", "utf-8", None, True, ".")),
    "lines-named.json": (lambda f, p: f.to_json(p, orient="records", lines=True), ("jsonl", "utf-8", None, True, ".")),
    "book.xlsx": (_excel, ("excel", None, None, True, ".")),
}


@pytest.mark.parametrize("name", FORMATS)
def test_reader_detects_format_encoding_delimiter_and_header(penguins, tmp_path, name):
    writer, (fmt, encoding, delimiter, header, decimal) = FORMATS[name]
    path = tmp_path / name
    writer(penguins, path)
    frame, info = read_table(path)
    assert (info.format, info.encoding, info.delimiter, info.header, info.decimal) == (
        fmt, encoding, delimiter, header, decimal
    )
    assert info.size_bytes == path.stat().st_size
    expected = penguins if header else penguins.set_axis([f"column_{i}" for i in range(1, 9)], axis=1)
    pd.testing.assert_frame_equal(frame, expected, check_dtype=False)
    assert (frame.iloc[:, 1] == "Biscoé").sum() == 168
    assert count_rows(path, info) in (len(penguins), None)


def test_reader_reads_only_the_first_rows_when_asked(penguins, tmp_path):
    for name in ("plain.csv", "table.parquet", "lines.jsonl", "book.xlsx"):
        FORMATS[name][0](penguins, tmp_path / name)
        frame, _ = read_table(tmp_path / name, max_rows=25)
        pd.testing.assert_frame_equal(frame, penguins.head(25), check_dtype=False)


def _write(path, content):
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


BAD_FILES = {
    "missing": (None, "does not exist"),
    "directory": ("dir", "is a directory"),
    "empty.csv": (b"", "is empty (0 bytes)"),
    "blank.csv": ("\n  \n", "only blank space"),
    "garbage.csv": (bytes(range(256)) * 64, "holds binary data"),
    "report.pdf": (b"%PDF-1.7\n\x00\x01\x02\x03" * 50, "holds a PDF document"),
    "notes.xyz": ("just some prose\nwithout any columns\n", "cannot tell what format"),
    "header-only.csv": ("id,name,price\n", "has a header row (3 columns) but no data rows"),
    "duplicates.csv": ("a,b,a,c,b\n1,2,3,4,5\n", "duplicate column names: the columns at positions 1 and 3; 2 and 5"),
    "ragged.csv": ("a,b\n1,2\n3,4\n5,6,7,8\n", "line 4 has 4 fields where the first has 2"),
    "broken.jsonl": ('{"a": 1}\n{"a": \n', "line 2 of"),
    "not-a-table.json": ('{"name": "x", "size": 3}', "is JSON but not a table"),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_reader_explains_each_unreadable_file(tmp_path, name):
    content, message = BAD_FILES[name]
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif content is not None:
        _write(path, content)
    with pytest.raises(DatasetError) as caught:
        read_table(path)
    assert message in str(caught.value) and str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_semantic_types_from_names_and_values():
    rng = np.random.default_rng(1)
    n = 300
    words = "the parcel arrived late and the box was damaged so I asked support for a refund twice".split()
    frame = pd.DataFrame({
        "customer_id": np.arange(1, n + 1),
        "row": np.arange(n),
        "order_ref": [f"ORD-{100_000 + i}" for i in range(n)],
        "token": [rng.bytes(16).hex() for _ in range(n)],
        "email": [f"user{i}@example{i % 7}.com" for i in range(n)],
        "phone": [f"{rng.integers(200, 999)}{rng.integers(1_000_000, 9_999_999)}" for _ in range(n)],
        "contact": [f"+44 (020) {rng.integers(1000, 9999)} {rng.integers(1000, 9999)}" for _ in range(n)],
        "homepage": [f"https://www.site{i}.org/about?ref={i}" for i in range(n)],
        "zip_code": [f"{rng.integers(0, 99_999):05d}" for _ in range(n)],
        "latitude": rng.uniform(-60, 60, n),
        "lng": rng.uniform(-170, 170, n),
        "signup_date": pd.date_range("2021-01-01", periods=n, freq="D").strftime("%Y-%m-%d"),
        "visited": [f"{d:%d/%m/%Y %H:%M}" for d in pd.date_range("2020-03-01", periods=n, freq="7h")],
        "last_seen": pd.date_range("2021-01-01", periods=n, freq="h"),
        "active": rng.choice(["Yes", "No"], n),
        "verified": rng.choice([True, False], n),
        "flag": rng.integers(0, 2, n),
        "plan": rng.choice(["basic", "pro", "enterprise"], n),
        "review": [" ".join(rng.choice(words, 12)) for _ in range(n)],
        "amount": rng.gamma(2, 50, n).round(2),
    })
    result = profile_frame(frame)
    kinds = {column.name: column.semantic_type for column in result.columns}
    assert kinds == {
        "customer_id": S.ID, "row": S.ID, "order_ref": S.ID, "token": S.ID, "email": S.EMAIL, "phone": S.PHONE,
        "contact": S.PHONE, "homepage": S.URL, "zip_code": S.POSTAL_CODE, "latitude": S.GEO, "lng": S.GEO,
        "signup_date": S.DATETIME, "visited": S.DATETIME, "last_seen": S.DATETIME, "active": S.BOOLEAN,
        "verified": S.BOOLEAN, "flag": S.BOOLEAN, "plan": S.CATEGORICAL, "review": S.TEXT, "amount": S.NUMERIC,
    }
    assert result.column("visited").min == "2020-03-01T00:00:00"  # day-first dates read as such
    assert result.column("signup_date").max == frame["signup_date"].max() + "T00:00:00"
    assert result.time_column == "signup_date"
    assert {c.column for c in result.target_candidates}.isdisjoint({"customer_id", "email", "review", "signup_date"})


def test_dates_written_year_first_are_read_without_a_warning_to_the_user(recwarn):
    """Both readings of a date (month first, day first) are tried on purpose; pandas' warning that a year-first date
    ignores one of them reached the terminal of every `dagsmith run` on such a table."""
    frame = pd.DataFrame({"Date": pd.date_range("1950-01-13", periods=15).strftime("%Y-%m-%d"), "Close": range(15)})
    assert profile_frame(frame).column("Date").semantic_type is S.DATETIME
    assert not [w for w in recwarn if "dayfirst" in str(w.message)]


def test_a_name_no_other_row_shares_labels_the_row():
    """A constituency or a contestant named once each is who the row is, never a category to one-hot encode: typed an
    identifier even with a few names missing; names that repeat are categories, and numbers written as text numbers."""
    rng = np.random.default_rng(2)
    towns = [f"{a} {b}" for a in ("Barrow", "Bath", "Bury", "Hove", "Ely") for b in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    frame = pd.DataFrame({"constituency": [*towns[:128], None, None], "county": rng.choice(towns[:20], 130),
                          "turnout": [f"{v:.4f}" for v in rng.uniform(0.5, 0.9, 130)], "swing": rng.normal(0, 3, 130)})
    kinds = {column.name: column.semantic_type for column in profile_frame(frame).columns}
    assert kinds == {"constituency": S.ID, "county": S.CATEGORICAL, "turnout": S.NUMERIC, "swing": S.NUMERIC}


def test_a_numbering_with_a_few_numbers_missing_is_an_identifier():
    """Patients numbered 1 to 3,007 over 2,982 rows (some left out of the registry) are numbered, not measured: as a
    feature the number ranked first among what predicts death, because the registry is in order of something."""
    rng = np.random.default_rng(3)
    pid = np.sort(rng.choice(np.arange(1, 3008), 2982, replace=False))
    grams = np.sort(rng.choice(np.arange(2000, 5000), 300, replace=False))  # unique, but a tenth of the range
    kinds = {c.name: c.semantic_type for c in profile_frame(pd.DataFrame({"pid": pid, "age": rng.integers(
        25, 90, 2982)})).columns}
    assert kinds == {"pid": S.ID, "age": S.NUMERIC}
    assert profile_frame(pd.DataFrame({"weight": grams, "age": rng.integers(1, 9, 300)})).column(
        "weight").semantic_type is S.NUMERIC


def visits(rng: np.random.Generator, subjects: int = 60, each: int = 5) -> pd.DataFrame:
    """Subjects numbered without a word saying so, seen ``each`` times: their height and smoking are their own, the
    concentration and the time are measured at each visit."""
    numbers = rng.choice(np.arange(1, 3 * subjects), subjects, replace=False)
    return pd.DataFrame({"Subject": np.repeat(numbers, each),
                         "Height": np.repeat(rng.integers(150, 200, subjects), each),
                         "Smoke": np.repeat(rng.choice(["yes", "no"], subjects), each),
                         "time": rng.uniform(0, 48, subjects * each).round(1),
                         "conc": rng.normal(2.5, 1, subjects * each).round(2)})


def test_a_number_the_rest_of_the_row_belongs_to_numbers_entities():
    """A column holding 1 to 180 reads as an amount by its values; that each of its values has one height and one
    smoking habit, whatever the visit, says it numbers subjects, so no model learns from it as an amount and the
    split keeps a subject's visits together."""
    from dagsmith.agents.repeats import entity_column

    frame = visits(np.random.default_rng(3))
    profile = profile_frame(frame)
    assert {c.name: c.semantic_type for c in profile.columns} == {
        "Subject": S.ID, "Height": S.NUMERIC, "Smoke": S.BOOLEAN, "time": S.NUMERIC, "conc": S.NUMERIC}
    assert entity_column(profile, "conc") == ("Subject", 5.0)
    one_visit = frame.drop_duplicates("Subject")  # nothing repeats: nothing to tell a number from an amount
    assert profile_frame(one_visit).column("Subject").semantic_type is S.NUMERIC


def test_a_measurement_with_what_it_decides_stays_a_measurement():
    """An age has its age groups (each a run of consecutive ages), an hour says whether it is night (one column is
    not an entity's own), and a store's floor area goes with its number one to one (the number counts 1 to 40; the
    areas are spread over thousands): none of these numbers entities."""
    rng = np.random.default_rng(3)
    age = rng.integers(20, 80, 400)
    ages = pd.DataFrame({"age": age, "band": np.where(age < 40, "young", np.where(age < 60, "middle", "older")),
                         "decade": age // 10 * 10, "score": rng.normal(size=400)})
    assert profile_frame(ages).column("age").semantic_type is S.NUMERIC
    hour = rng.integers(0, 24, 400)
    hours = pd.DataFrame({"hour": hour, "night": (hour < 6) | (hour > 21), "load": rng.normal(size=400)})
    assert profile_frame(hours).column("hour").semantic_type is S.NUMERIC
    area = rng.choice(np.arange(800, 9000), 40, replace=False)
    region = rng.choice(["north", "south", "east"], 40)
    stores = pd.DataFrame({"store": np.repeat(np.arange(1, 41), 10), "area": np.repeat(area, 10),
                           "region": np.repeat(region, 10), "sales": rng.normal(100, 10, 400)})
    kinds = {c.name: c.semantic_type for c in profile_frame(stores).columns}
    assert (kinds["store"], kinds["area"]) == (S.ID, S.NUMERIC)


@pytest.mark.parametrize("word", ["three", "ask the agent", "?"])
def test_numbers_with_a_stray_word_on_many_rows_are_numbers(word):
    """One word written on 50 of 450 rows is a missing value among numbers, not one class among 343."""
    rng = np.random.default_rng(3)
    prices = rng.uniform(100, 900, 400).round(1).astype(object)
    column = profile_frame(pd.DataFrame({"price": np.append(prices, [word] * 50)})).column("price")
    assert (column.semantic_type, column.not_numbers) == (S.NUMERIC, 50)


def test_a_forecast_knows_the_calendar_and_the_series_ahead_but_not_what_is_measured_with_the_time():
    rng = np.random.default_rng(3)
    days = pd.date_range("2020-01-01", periods=3 * 365, freq="D")
    sales = rng.normal(100, 10, len(days))
    daily = profile_frame(pd.DataFrame({
        "date": days.strftime("%Y-%m-%d").where(np.arange(len(days)) != 40), "weekday": days.day_name(),
        "month_no": days.month,
        "years_since_2000": days.year - 2000, "visitors": sales * 3 + rng.normal(0, 5, len(days)),
        "population": days.year.map({2020: 8.1, 2021: 8.3, 2022: 8.2}), "sales": sales}))
    assert daily.time_column == "date"
    assert {c.name: c.known_ahead for c in daily.columns} == {
        "date": None, "weekday": "day of week", "month_no": "month", "years_since_2000": "year",
        "visitors": None,  # measured on the day, as the sales are
        "population": None,  # decided by the year, but a yearly figure is not known a year ahead
        "sales": None}  # a day without its date (row 40) is read as the others are
    monthly = profile_frame(pd.DataFrame({"time": 1991 + np.arange(48) / 12, "subsidy": rng.normal(10, 1, 48),
                                          "season_no": np.arange(48) % 12 + 1}))
    assert {c.name: c.known_ahead for c in monthly.columns} == {"time": None, "subsidy": None, "season_no": "season"}
    weeks = pd.date_range("2021-01-04", periods=30, freq="W-MON").strftime("%Y-%m-%d")
    shops = (("north-1", "N"), ("south-1", "S"), ("south-2", "S"))
    stores = pd.DataFrame([{"week": week, "store": store, "region": region, "footfall": rng.integers(100, 900)}
                           for week in weeks for store, region in shops])
    stores["till"] = [f"till-{n}" for n in rng.permuted(np.tile([1, 2, 3], (len(weeks), 1)), axis=1).ravel()]
    panel = profile_frame(stores)
    assert {c.name: c.known_ahead for c in panel.columns} == {
        "week": None, "store": "series", "region": "series", "footfall": None,
        "till": "series"}  # tills tell the rows of a week apart too, but the region goes with the store alone
    yearly = profile_frame(pd.DataFrame({"year": np.arange(1950, 2000), "gdp": rng.normal(5, 1, 50)}))
    assert yearly.time_column == "year" and all(c.known_ahead is None for c in yearly.columns)


def test_a_column_named_self_is_profiled_like_any_other():
    """Column names are the user's: ``self`` (the self-employed) must not meet pandas' keyword arguments when its
    numbers stored as text are read as numbers for the correlations."""
    rng = np.random.default_rng(4)
    hours = rng.uniform(10, 60, 450).round(1)
    frame = pd.DataFrame({"self": np.append(hours[:400].astype(object), ["?"] * 50), "income": hours * 900})
    profiled = profile_frame(frame)
    assert (profiled.column("self").semantic_type, profiled.column("self").not_numbers) == (S.NUMERIC, 50)
    assert any({c.a, c.b} == {"self", "income"} for c in profiled.correlations)


def test_unusual_dtypes_profile_without_errors():
    n = 120
    frame = pd.DataFrame({
        "level": pd.Categorical(np.resize(["a", "b", "c"], n), categories=["a", "b", "c", "unused"]),
        "stamp": pd.date_range("2024-03-30", periods=n, freq="h", tz="Europe/Berlin"),
        "wait": pd.to_timedelta(np.arange(n), unit="s"),
        "mixed": pd.Series([1, "two", 3.0, None] * (n // 4), dtype=object),
        "nested": pd.Series([[1, 2], {"a": 1}, None, [3]] * (n // 4), dtype=object),
        "answer": pd.Series([True, False, None] * (n // 3), dtype=object),
        "counts": pd.array([1, None, 3] * (n // 3), dtype="Int64"),
        "empty": pd.Series([None] * n, dtype="str"),
    })
    result = profile_frame(frame)
    assert result.column("level").unique == 3 and result.column("answer").semantic_type is S.BOOLEAN
    assert result.column("stamp").min == "2024-03-30T00:00:00+01:00" and result.time_column == "stamp"
    assert result.column("nested").top_values[0].value == "[1, 2]"
    assert result.column("empty").issues == ["all missing"] and result.notes == []


def test_statistics_equal_pandas(penguins, penguins_profile):
    for name in penguins.columns:
        column, series = penguins_profile.column(name), penguins[name]
        assert (column.count, column.missing, column.unique) == (series.count(), series.isna().sum(), series.nunique())
        assert column.missing_ratio == pytest.approx(series.isna().mean())
        counts = series.value_counts().head(5)
        assert [(v.value, v.count) for v in column.top_values] == [(str(k), n) for k, n in counts.items()]
    for name in [*MEASUREMENTS, "year"]:
        column, series = penguins_profile.column(name), penguins[name]
        assert (column.mean, column.std, column.min, column.max) == pytest.approx(
            (series.mean(), series.std(), series.min(), series.max())
        )
    assert penguins_profile.column("species").mean is None


def test_column_issues_name_constant_empty_sparse_and_mixed_columns(penguins):
    frame = penguins.assign(
        source="field", notes=np.nan, sparse=[1.0] * 100 + [np.nan] * 244,
        weight_text=penguins["body_mass_g"].astype(str).where(penguins.index % 40 != 0, "unknown"),
    )
    result = profile_frame(frame)
    assert result.column("source").issues == ["constant"]
    assert result.column("notes").issues == ["all missing"]
    assert result.column("sparse").issues[-1] == "mostly missing (71%)"
    mixed = result.column("weight_text")
    assert mixed.semantic_type is S.NUMERIC and mixed.mean == pytest.approx(penguins["body_mass_g"].mean(), rel=0.01)
    assert any(issue.startswith("mixed types (9 values are not numbers, e.g. 'unknown'") for issue in mixed.issues)


def test_missing_values_lower_completeness_and_overall(penguins, penguins_profile):
    holed = penguins.copy()
    holed.loc[holed.index % 3 == 0, MEASUREMENTS] = np.nan
    result = profile_frame(holed)
    before, after = penguins_profile.quality, result.quality
    assert after.completeness < before.completeness - 0.1 and after.overall < before.overall
    missing = holed.isna().sum().sum() / holed.size
    assert after.completeness == pytest.approx(1 - missing, abs=1e-4)
    assert any("of cells missing in 5 columns" in issue for issue in after.issues)


def test_duplicates_and_copied_columns_lower_uniqueness(penguins, penguins_profile):
    doubled = pd.concat([penguins, penguins.head(100)], ignore_index=True)
    result = profile_frame(doubled)
    assert result.duplicate_rows == 100 + penguins.duplicated().sum()
    assert result.quality.uniqueness < penguins_profile.quality.uniqueness
    assert any(issue.startswith("100 duplicate rows") for issue in result.quality.issues)
    relabelled = penguins.assign(
        mass_kg=penguins["body_mass_g"] / 1000, is_male=penguins["sex"].map({"male": "yes", "female": "no"})
    )
    copied = profile_frame(relabelled)
    assert copied.near_identical_columns == [["body_mass_g", "mass_kg"], ["sex", "is_male"]]
    assert copied.quality.uniqueness == pytest.approx(1 - 2 / 10, abs=1e-3)


def test_implausible_values_lower_consistency():
    clean = datasets.load("iris").assign(age=lambda f: (f.index % 60) + 18)
    dirty = clean.copy()
    dirty.loc[::25, "petal length (cm)"] = 4_000.0  # a unit slip in 6 rows
    dirty.loc[::50, "age"] = 450
    before, after = profile_frame(clean).quality, profile_frame(dirty).quality
    assert before.consistency == 1.0 and after.consistency < 1.0 and after.overall < before.overall
    issues = profile_frame(dirty).column("age").issues
    assert issues == ["values out of plausible range (3 outside [0, 120], e.g. 450, 450, 450)"]


def test_overall_is_a_weighted_harmonic_mean_pulled_down_by_the_weak_axis(penguins):
    weak = profile_frame(pd.concat([penguins] * 3, ignore_index=True)).quality  # two thirds of the rows repeat
    weights = weak.weights
    axes = {"completeness": weak.completeness, "consistency": weak.consistency, "uniqueness": weak.uniqueness}
    arithmetic = sum(weights[a] * axes[a] for a in axes) / sum(weights.values())
    harmonic = sum(weights.values()) / sum(weights[a] / axes[a] for a in axes)
    assert weak.uniqueness == pytest.approx(1 / 3, abs=0.01)
    assert weak.overall == pytest.approx(harmonic, abs=1e-3) and weak.overall < arithmetic - 0.1


@pytest.mark.parametrize(
    ("name", "target", "rank", "task"),
    [
        ("wa_churn", "churn", 1, TaskType.BINARY_CLASSIFICATION),
        ("penguins", "species", 2, TaskType.MULTICLASS_CLASSIFICATION),
        ("diabetes", "progression", 1, TaskType.REGRESSION),
        ("credit_data", "Status", 1, TaskType.BINARY_CLASSIFICATION),
    ],
)
def test_target_candidates_find_the_real_target(name, target, rank, task):
    candidates = profile_frame(datasets.load(name)).target_candidates
    top = [candidate.column for candidate in candidates[:rank]]
    assert target in top, [(c.column, c.score) for c in candidates[:5]]
    chosen = next(candidate for candidate in candidates if candidate.column == target)
    assert chosen.suggested_task is task and chosen.reasons
    assert chosen.score == pytest.approx(0.5 * chosen.name_score + 0.35 * chosen.distribution_score
                                         + 0.15 * chosen.temporal_score, abs=1e-3)
    assert [c.score for c in candidates] == sorted((c.score for c in candidates), reverse=True)
    assert sum(c.confidence for c in candidates[:5]) == pytest.approx(1, abs=1e-3)


def test_correlations_strongest_first_with_target_associations(penguins_profile):
    values = [abs(c.value) for c in penguins_profile.correlations]
    assert values == sorted(values, reverse=True) and len(values) <= 20
    methods = {(c.a, c.b): c.method for c in penguins_profile.correlations}
    assert methods[("flipper_length_mm", "body_mass_g")] == "pearson"
    assert methods[("flipper_length_mm", "species")] == "correlation_ratio"
    assert methods[("island", "species")] == "cramers_v"


def test_large_tables_profile_the_expensive_parts_on_a_sample():
    diamonds = datasets.load("diamonds")
    result = profile_frame(diamonds, sample_rows=5_000)
    assert result.sampled and result.sample_rows == 5_000 and result.n_rows == len(diamonds)
    assert "random sample of 5,000 rows" in result.notes[0] and "cover all 53,940 rows" in result.notes[0]
    price = result.column("price")
    assert (price.count, price.mean, price.max) == (len(diamonds), pytest.approx(diamonds["price"].mean()), 18823)
    assert result.duplicate_rows == diamonds.duplicated().sum()  # narrow enough to count on all rows
    assert result.target_candidates[0].column == "price"


def test_large_csv_is_streamed_in_chunks(monkeypatch, tmp_path):
    ames = datasets.load("ames")
    path = tmp_path / "ames.csv"
    ames.to_csv(path, index=False)
    monkeypatch.setattr(profiler, "CHUNKED_BYTES", 1_000)
    monkeypatch.setattr(profiler.table, "CHUNK_ROWS", 500)
    result = profile_dataset(path, sample_rows=1_000)
    assert result.sampled and result.n_rows == len(ames) and result.notes[0].startswith("Read in chunks")
    assert 900 <= result.sample_rows <= 1_100
    for name in ("Lot_Area", "Sale_Price", "Lot_Frontage"):
        column, series = result.column(name), ames[name]
        assert (column.count, column.missing) == (series.count(), series.isna().sum())
        assert (column.mean, column.std, column.min, column.max) == pytest.approx(
            (series.mean(), series.std(), series.min(), series.max())
        )
    assert result.target_candidates[0].column == "Sale_Price"


def test_profile_dataset_reports_how_the_file_was_read(penguins, tmp_path):
    path = tmp_path / "penguins.csv"
    penguins.to_csv(path, sep=";", index=False, encoding="cp1252")
    result = profile_dataset(path)
    assert (result.format, result.encoding, result.delimiter, result.n_rows) == ("csv", "cp1252", ";", 344)
    assert not result.sampled and result.sample_rows is None and result.source == str(path)


def test_cli_prints_json_summary_and_clear_errors(penguins, tmp_path):
    app = typer.Typer()
    app.command()(profile_command)
    path = tmp_path / "penguins.parquet"
    penguins.to_parquet(path, index=False)
    runner = CliRunner()
    as_json = runner.invoke(app, [str(path), "--json"])
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout)["target_candidates"][0]["column"] == "species"
    summary = runner.invoke(app, [str(path)])
    assert summary.exit_code == 0 and "target candidates" in summary.stdout and "species" in summary.stdout
    missing = runner.invoke(app, [str(tmp_path / "nope.csv")])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
