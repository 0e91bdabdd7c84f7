"""The contract every shipped microservice keeps, checked the same way for each (in the spirit of scikit-learn's
``check_estimator``).

What a service is given comes from dagsmith's analysis of its code, not from a list kept here: its stages and task
types choose the table (a labelled table, or unlabelled for clustering, anomaly detection and reduction), its tags
and declared inputs choose the bundle (a raw source file, a table, a split, or a split scored by a model), and its
parameters with their types and defaults choose the bad values. Each check runs the real ``main.py`` as a process
of its own, forked from a server that imported the libraries once (``tests.microservices.forked``), on a table of
sixty rows.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dagsmith.catalog.analysis.code import analyze_code
from dagsmith.catalog.source import ServiceSource
from dagsmith.execution.contract import check_bundle
from dagsmith.models.catalog import Analysis, Stage, TaskType
from dagsmith_kit import Bundle
from dagsmith_kit.bundle import ARTIFACTS_DIR, MEMBERS_DIR, MODEL_INFO_FILE, PREDICTIONS_FILE, TABLE_NAMES
from dagsmith_kit.supervised import fit_and_predict
from dagsmith_kit.transforms import TRANSFORMS_DIR
from tests.microservices.forked import CATALOG, ForkedServices, Outcome

ROWS = 60
SERVICES = sorted(path.parent.name for path in CATALOG.glob("*/main.py"))
#: Files a bundle may hold (docs/bundle-format.md); anything else in an output was written outside the format.
BUNDLE_FILES = {"bundle.json", "model.joblib", "metrics.json", "search.json", "ensemble.json", "explanation.json",
                "exploration.json", "report.md", "validation_predictions.parquet", PREDICTIONS_FILE, MODEL_INFO_FILE,
                *(f"{name}.parquet" for name in TABLE_NAMES)}
BUNDLE_FOLDERS = {ARTIFACTS_DIR, MEMBERS_DIR, TRANSFORMS_DIR}
#: Metric and detail keys that measure time, which no seed makes repeatable.
TIMINGS = ("seconds",)
UNLABELLED = {Stage.CLUSTERING: "clustering", Stage.ANOMALY_DETECTION: "anomaly_detection",
              Stage.DIMENSIONALITY_REDUCTION: "dimensionality_reduction"}


@cache
def analysis_of(service: str) -> Analysis:
    folder = CATALOG / service
    return analyze_code(ServiceSource.from_files({p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()
                                                  if p.is_file()}, str(folder)))


def table(*, numeric_only: bool, target: str | None) -> pd.DataFrame:
    """Sixty rows of customers: numeric features that explain the target, a category, a date and an id."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "customer": [f"c{i // 3:02d}" for i in range(ROWS)],
        "day": pd.date_range("2024-01-01", periods=ROWS, freq="D").strftime("%Y-%m-%d"),
        "age": rng.integers(18, 80, ROWS),
        "income": rng.normal(50_000, 12_000, ROWS).round(2),
        "visits": rng.poisson(4, ROWS),
        "score": rng.uniform(0, 2, ROWS),  # non-negative, as some reducers need
    })
    if not numeric_only:
        frame["plan"] = rng.choice(["basic", "pro"], ROWS)
    signal = frame["score"] - 1 + (frame["visits"] - 4) / 2
    if target == "amount":
        frame[target] = (100 + 20 * signal + rng.normal(0, 5, ROWS)).round(2)
    elif target:
        frame[target] = np.where(signal > 0, "yes", "no")
    return frame


def score(bundle: Bundle, frame: pd.DataFrame, spec: Spec) -> None:
    """Add what a model step leaves: a fitted model and its predictions (of the clusters or anomalies for an
    unlabelled task), made with the kit as the model services make them."""
    from sklearn.linear_model import LinearRegression, LogisticRegression

    if spec.target is not None:
        if len(frame):
            model = LinearRegression() if spec.task == "regression" else LogisticRegression(max_iter=500)
            fit_and_predict(bundle, bundle, model, ["age", "income", "visits", "score"])
        return
    rows = len(bundle.table("test")) if bundle.is_split() else len(frame)
    if spec.task == "clustering":
        bundle.write_predictions(pd.DataFrame({"cluster": np.arange(rows) % 3}))
    else:
        anomaly = np.linspace(0, 1, rows)
        bundle.write_predictions(pd.DataFrame({"anomaly_score": anomaly, "is_anomaly": anomaly > 0.95,
                                               "anomaly_rank": np.arange(rows, 0, -1), "why": ""}))


@dataclass(frozen=True)
class Spec:
    """An input bundle: the task (which sets the target), whole or split, with text columns or numbers only, and
    whether a model step has left a model and predictions in it."""

    task: str
    split: bool
    numeric: bool
    scored: bool

    @property
    def target(self) -> str | None:
        return {"regression": "amount", "binary_classification": "label"}.get(self.task)


@dataclass
class Contract:
    """One service: what its analysis says, the input bundle made for it and the runs of it so far."""

    service: str
    workdir: Path
    runner: ForkedServices
    needed: dict = field(default_factory=dict)  # parameters the service cannot run without (see ``working``)
    runs: int = 0

    @cached_property
    def analysis(self) -> Analysis:
        return analysis_of(self.service)

    def declares(self, *words: str) -> bool:
        return any(word in declared for declared in self.analysis.inputs for word in words)

    @property
    def task(self) -> str:
        """The task of the input: unlabelled for clustering, anomalies and reduction (or an evaluator that names
        them and reads the whole table), a regression where the analysis names regression (or a forecast) first, else a
        binary classification."""
        primary, tasks = self.analysis.stages[0], self.analysis.task_types
        if primary in UNLABELLED:
            return UNLABELLED[primary]
        unlabelled = [t for t in tasks if t in (TaskType.CLUSTERING, TaskType.ANOMALY_DETECTION)]
        if unlabelled and (tasks[0] in unlabelled or not self.declares("train", "test")):
            return unlabelled[0].value
        numbers = (TaskType.REGRESSION, TaskType.TIME_SERIES_FORECASTING)
        return "regression" if tasks and tasks[0] in numbers else "binary_classification"

    @property
    def specs(self) -> list[Spec]:
        """The inputs to try, the analysis' reading first. Where the analysis cannot tell (no task for a plot of
        predictions, text columns a selector refuses), the service's own refusal of one leads to the next."""
        tags, task = self.analysis.tags, self.task
        labelled = task in ("regression", "binary_classification")
        scored = tags.needs_model or self.declares("predictions", "model.joblib")
        split = labelled and (tags.needs_split or scored or tags.fits_on_train or self.declares("train", "test"))
        first = Spec(task, split, tags.numeric_only, scored)
        others = [Spec(task, split, True, scored), Spec(task, True, True, True)]
        if scored or not self.analysis.task_types:
            others += [Spec(t, t in ("regression", "binary_classification"), True, True)
                       for t in ("regression", "binary_classification", "clustering", "anomaly_detection")]
        return list(dict.fromkeys([first, *others]))

    def make_bundle(self, path: Path, spec: Spec, *, empty: bool = False, without_target: bool = False) -> Bundle:
        target = spec.target
        frame = table(numeric_only=spec.numeric, target=target)
        if empty:
            frame = frame.head(0)
        roles = {"target": target, "task_type": spec.task, "id_columns": ["customer"], "time_column": "day"}
        if self.declares("source file"):
            bundle = Bundle.create(path, **roles)
            raw = path.parent / f"{path.name}-source.{'csv' if self.declares('CSV') else 'json'}"
            frame = frame.drop(columns=[target]) if without_target else frame
            frame.to_csv(raw, index=False) if raw.suffix == ".csv" else frame.to_json(raw, orient="records")
            bundle.add_source(raw)
            return bundle
        bundle = Bundle.create(path, None if spec.split else frame, **roles)
        if spec.split:
            bundle.write_table("train", frame.iloc[: ROWS // 2])  # half each: groups of the test rows to compare
            bundle.write_table("test", frame.iloc[ROWS // 2:])
        if spec.scored:
            score(bundle, frame, spec)
        if self.declares("metrics.json"):
            bundle.write_metrics({"rows": len(frame)})
        if without_target:
            for name in bundle.table_names():
                bundle.write_table(name, bundle.table(name).drop(columns=[target]))
        return bundle

    @cached_property
    def working(self) -> tuple[Spec, Bundle, Run]:
        """The first input the service works on, and its run: every check starts from it. An input it refuses
        on the way must be refused in one line. A service that asks for a parameter (the analysis marks it as
        required, or the refusal names it in quotes) is given a column of the table for it."""
        refusals = []
        for number, spec in enumerate(self.specs):
            bundle = self.make_bundle(self.workdir / f"input-{self.runs}-{number}", spec)
            self.needed = {p.name: "plan" if "column" in p.name and not spec.numeric else "visits"
                           for p in self.analysis.parameters if p.required}
            run = self.run(f"first-{number}", {}, bundle)
            asked = [p.name for p in self.analysis.parameters
                     if p.default is None and f"'{p.name}'" in run.outcome.stderr and p.name not in self.needed]
            if run.outcome.exit_code and asked:
                self.needed[asked[0]] = ["visits"]
                run = self.run(f"first-{number}-asked", {}, bundle)
            if run.outcome.exit_code == 0:
                return spec, bundle, run
            refusals.append(f"{spec}: {run.outcome.stderr.strip()[-1500:]}")
            run.explained_failure()
        raise AssertionError("no input made from the analysis works:\n" + "\n".join(refusals))

    @property
    def spec(self) -> Spec:
        return self.working[0]

    @property
    def bundle(self) -> Bundle:
        return self.working[1]

    @property
    def first(self) -> Run:
        return self.working[2]

    # ---------------------------------------------------------------- running
    def run(self, name: str, params: dict, bundle: Bundle | None = None) -> Run:
        """Run the service on ``bundle`` (by default the input made for it) into a new output bundle."""
        source = bundle or self.bundle  # first: finding the input a check starts from finds what it needs
        self.runs += 1
        folder = self.workdir / f"{self.runs:02d}-{name}"
        folder.mkdir()
        (folder / "params.json").write_text(json.dumps({**self.needed, **params}))
        workdir = folder / "cwd"
        workdir.mkdir()
        before = digest(source.path)
        outcome = self.runner.run(self.service, ["--input", str(source.path), "--output", str(folder / "out"),
                                                 "--params", str(folder / "params.json")], workdir)
        return Run(outcome, folder / "out", source, before != digest(source.path), workdir)

    def typed_parameters(self, *types: str) -> list[str]:
        return [p.name for p in self.analysis.parameters if p.type in types and not p.required]


@dataclass
class Run:
    """One run of a service: its outcome, its output folder, the input it read (and whether that changed) and the
    folder it ran in."""

    outcome: Outcome
    output: Path
    input: Bundle
    input_changed: bool
    workdir: Path

    def succeeded(self) -> Bundle:
        assert self.outcome.exit_code == 0, f"exit code {self.outcome.exit_code}:\n{self.outcome.stderr[-3000:]}"
        return Bundle.open(self.output)

    def explained_failure(self) -> str:
        """The one-line message of a failure the service explained (exit code 2, ``error: ...``, no traceback)."""
        stderr = self.outcome.stderr.strip()
        assert "Traceback" not in stderr, f"a traceback instead of a message:\n{stderr[-3000:]}"
        assert self.outcome.exit_code == 2, f"exit code {self.outcome.exit_code}, expected 2:\n{stderr[-3000:]}"
        lines = stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), f"not one 'error: ...' line:\n{stderr}"
        return lines[0]


def digest(folder: Path) -> str:
    """A hash of every file (name and content) below ``folder``."""
    hasher = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        hasher.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            hasher.update(path.read_bytes())
    return hasher.hexdigest()


def present(output: str, bundle: Bundle) -> bool:
    """Whether ``bundle`` holds what an analysis' input or output phrase names (e.g. ``model.joblib,
    predictions.parquet``, ``data or train/test tables``, ``artifacts/*.png``)."""
    phrase = output.split(" (")[0]
    if "tables" in phrase or phrase in ("data table", "data or train table"):
        return bool(bundle.table_names())
    if phrase == "a parquet":
        return any(bundle.path.glob("*.parquet"))
    if phrase.startswith("artifacts/"):
        folder = bundle.path / ARTIFACTS_DIR
        return any(any(folder.glob(pattern.removeprefix("artifacts/"))) for pattern in phrase.split(" or "))
    files = [part.strip() for part in phrase.replace(" and ", ", ").split(", ")]
    return all((bundle.path / name).exists() for name in files if "." in name)


def comparable(folder: Path) -> dict[str, object]:
    """What a seeded run must repeat: its tables and predictions, and its JSON results without timings."""

    def untimed(value):
        if isinstance(value, dict):
            return {k: untimed(v) for k, v in value.items() if not any(t in k for t in TIMINGS)}
        return [untimed(v) for v in value] if isinstance(value, list) else value

    found: dict[str, object] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix == ".parquet":
            found[path.name] = pd.read_parquet(path)
        elif path.suffix == ".json" and path.name != "bundle.json":
            found[path.name] = untimed(json.loads(path.read_text()))
    return found


# ---------------------------------------------------------------- the suite


@pytest.fixture(scope="session")
def contracts(forked_services, tmp_path_factory) -> dict[str, Contract]:
    """Per service, its contract (input and runs made once, shared by its checks)."""
    root = tmp_path_factory.mktemp("contracts")

    class Contracts(dict):
        def __missing__(self, service: str) -> Contract:
            self[service] = Contract(service, root / service, forked_services)
            self[service].workdir.mkdir()
            return self[service]

    return Contracts()


@pytest.mark.parametrize("service", SERVICES)
def test_reads_its_inputs_and_writes_its_outputs_in_a_valid_bundle(contracts, service):
    contract = contracts[service]
    missing_inputs = [i for i in contract.analysis.inputs if "files" not in i and not present(i, contract.bundle)]
    assert not missing_inputs, f"the input made from the analysis lacks {missing_inputs}"
    out = contract.first.succeeded()
    problems = check_bundle(out.path, target=out.target, expected_outputs=contract.analysis.outputs,
                            source=contract.bundle.path)
    assert not problems, problems
    missing = [o for o in contract.analysis.outputs if not present(o, out)]
    assert not missing, f"declared outputs not written: {missing}"


@pytest.mark.parametrize("service", SERVICES)
def test_writes_only_into_its_output_bundle(contracts, service):
    run = contracts[service].first
    out = run.succeeded()
    assert not run.input_changed, "the input bundle was changed"
    assert not any(run.workdir.iterdir()), f"files left in the working folder: {list(run.workdir.iterdir())}"
    strays = [p.name for p in out.path.iterdir() if not (p.name in BUNDLE_FILES or p.name in BUNDLE_FOLDERS
                                                         or p.name.startswith("source."))]
    assert not strays, f"files outside the bundle format: {strays}"


@pytest.mark.parametrize("service", SERVICES)
def test_same_outputs_from_the_same_input(contracts, service):
    contract = contracts[service]
    first, again = contract.first.succeeded(), contract.run("again", {}).succeeded()
    expected, got = comparable(first.path), comparable(again.path)
    assert expected.keys() == got.keys()
    for name, value in expected.items():
        if isinstance(value, pd.DataFrame):
            pd.testing.assert_frame_equal(got[name], value, obj=name)
        else:
            assert got[name] == value, f"{name} differs between two runs"


def _with_parameters(*types: str) -> list[str]:
    return [s for s in SERVICES if any(p.type in types and not p.required for p in analysis_of(s).parameters)]


@pytest.mark.parametrize("service", _with_parameters("int", "float", "bool", "list"))
def test_a_parameter_of_the_wrong_type_is_refused_in_one_line(contracts, service):
    contract = contracts[service]
    wrong = {"int": "many", "float": "many", "bool": "maybe", "list": "many"}
    params = {p.name: wrong[p.type] for p in contract.analysis.parameters if p.type in wrong and not p.required}
    run = contract.run("wrong-type", params)
    if run.outcome.exit_code != 0:  # exit 0: it does not read them for this input (a loader's Excel sheet)
        message = run.explained_failure()
        assert any(f"'{name}'" in message for name in params), message


@pytest.mark.parametrize("service", _with_parameters("int", "float"))
def test_a_parameter_out_of_range_is_refused_in_one_line_or_used(contracts, service):
    contract = contracts[service]
    params = dict.fromkeys(contract.typed_parameters("int", "float"), -1000)
    run = contract.run("out-of-range", params)
    if run.outcome.exit_code != 0:
        run.explained_failure()


@pytest.mark.parametrize("service", SERVICES)
def test_an_empty_table_is_refused_in_one_line(contracts, service):
    contract = contracts[service]
    empty = contract.make_bundle(contract.workdir / "empty-input", contract.spec, empty=True)
    contract.run("empty", {}, empty).explained_failure()


@pytest.mark.parametrize("service", SERVICES)
def test_a_missing_target_column_is_refused_in_one_line(contracts, service):
    contract = contracts[service]
    if contract.spec.target is None:
        pytest.skip("the input this service works on has no target")
    headless = contract.make_bundle(contract.workdir / "no-target-input", contract.spec, without_target=True)
    message = contract.run("no-target", {}, headless).explained_failure()
    assert headless.target in message, message
