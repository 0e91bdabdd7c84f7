"""Fixtures for exercising shipped microservices through their real command line on real datasets."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dagsmith import datasets
from dagsmith_kit import Bundle, scoring, transforms
from tests.microservices.forked import ForkedServices

CATALOG = Path(__file__).resolve().parents[2] / "microservices"
# One thread per service process: the tests already run services in parallel on a 2-core machine.
SERVICE_ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass
class Result:
    """The outcome of one microservice invocation."""

    returncode: int
    stderr: str
    output: Bundle | None


class ServiceRunner:
    """Runs ``microservices/<name>/main.py`` exactly as the contract says, in a temporary folder: each run a process
    of its own, forked from a server that imported the services' libraries once (``forked``)."""

    def __init__(self, workdir: Path, services: ForkedServices):
        self.workdir, self.services = workdir, services
        self.count = 0

    def __call__(self, name: str, bundle: Bundle, params: dict | None = None, *, ok: bool = True) -> Result:
        self.count += 1
        out_dir = self.workdir / f"out-{self.count}-{name}"
        params_file = self.workdir / f"params-{self.count}.json"
        params_file.write_text(json.dumps(params or {}))
        ran = self.services.run(name, ["--input", str(bundle.path), "--output", str(out_dir), "--params",
                                       str(params_file)], self.workdir)
        output = Bundle.open(out_dir) if ran.exit_code == 0 else None
        if ok:
            assert ran.exit_code == 0, f"{name} failed:\n{ran.stderr[-3000:]}"
            assert_replays(bundle, output)
        else:
            assert ran.exit_code != 0, f"{name} was expected to fail but succeeded"
        return Result(ran.exit_code, ran.stderr, output)

    def chain(self, bundle: Bundle, *steps: str | tuple[str, dict]) -> Bundle:
        """Run several services one after another, each on the previous output."""
        for step in steps:
            name, params = (step, {}) if isinstance(step, str) else step
            bundle = self(name, bundle, params).output
        return bundle


#: Shipped services whose change to the tables cannot be applied to new rows: t-SNE embeds only its own rows.
CANNOT_REPLAY = {"tsne_embedding"}


def assert_replays(before: Bundle, after: Bundle) -> list[dict]:
    """What a step recorded of its table changes (``dagsmith_kit.transforms``) remakes the table it wrote from the
    one it was given, with the target and without it (as new rows arrive), and no step but those of
    ``CANNOT_REPLAY`` changed the tables unrecorded: checked on every service run, so each service test also checks
    that its service can prepare new rows. The table is ``test`` after a split (``train``
    may be encoded out-of-fold) and ``data`` before one. Returns the entries the step recorded."""
    recorded = transforms.steps(after.path)[len(transforms.steps(before.path)):]
    unreplayable = {entry["service"] for entry in recorded if entry["kind"] == transforms.UNREPLAYABLE}
    assert unreplayable <= CANNOT_REPLAY, f"changed the tables without recording how: {recorded}"
    if not any(entry["kind"] == transforms.REPLAY for entry in recorded):
        return recorded
    name = "test" if before.is_split() else "data"
    given, wrote = before.table(name), after.table(name)
    loaded = transforms.load(after.path, after_step=len(before.meta.get("lineage") or []))
    pd.testing.assert_frame_equal(scoring.prepare(given, loaded, before.target), wrote, check_dtype=False,
                                  check_index_type=False, rtol=1e-6)
    if before.target in given.columns:
        unlabelled = scoring.prepare(given.drop(columns=[before.target]), loaded, before.target)
        pd.testing.assert_frame_equal(unlabelled, wrote.drop(columns=[before.target]), check_dtype=False,
                                      check_index_type=False, rtol=1e-6)
    return recorded


@pytest.fixture(scope="session")
def forked_services() -> Iterator[ForkedServices]:
    """The server the services' runs are forked from, one per test process."""
    services = ForkedServices()
    yield services
    services.close()


@pytest.fixture
def run(tmp_path, forked_services) -> ServiceRunner:
    return ServiceRunner(tmp_path, forked_services)


@pytest.fixture(scope="module")
def module_run(tmp_path_factory, forked_services) -> ServiceRunner:
    """A runner whose outputs a whole module shares: for a pipeline run once and examined by several tests."""
    return ServiceRunner(tmp_path_factory.mktemp("module-run"), forked_services)


def _real(doc: str, load: Callable[[], pd.DataFrame], **roles):
    """A fixture, documented by ``doc``: a bundle, in a folder named after it, of the real data ``load`` returns."""

    def bundle(tmp_path, request) -> Bundle:
        return Bundle.create(tmp_path / request.fixturename, load(), **roles)

    bundle.__doc__ = doc
    return pytest.fixture(bundle)


penguins = _real("Multiclass, numeric + categorical features, missing values (real data).",
                 lambda: datasets.load("penguins"), target="species", task_type="multiclass_classification")
churn = _real("Binary classification, mostly categorical features, missing values in total_charges (first 1,500 rows).",
              lambda: datasets.load("wa_churn").head(1500), target="churn", task_type="binary_classification")
cancer = _real("Binary classification, 30 numeric features, no missing values.",
               lambda: datasets.load("breast_cancer"), target="diagnosis", task_type="binary_classification")
diabetes = _real("Regression, numeric features.",
                 lambda: datasets.load("diabetes"), target="progression", task_type="regression")
iris_unlabelled = _real("Numeric measurements without the species column, for clustering, reduction and anomaly "
                        "detection.", lambda: datasets.load("iris").drop(columns=["species"]), task_type="clustering")


def split_of(run: ServiceRunner, bundle: Bundle) -> Bundle:
    """``bundle`` after the shipped splitter (25% test, stratified for classification, fixed seed)."""
    return run("train_test_splitter", bundle, {"test_size": 0.25, "random_state": 0}).output


@pytest.fixture
def splitter(run) -> Callable[[Bundle], Bundle]:
    """How the split fixtures below split their bundle: the shipped splitter; a module may override it."""
    return lambda bundle: split_of(run, bundle)


def _split(unsplit: str):
    """A fixture: the bundle of the fixture named ``unsplit``, after ``splitter``."""

    def split(splitter, request) -> Bundle:
        return splitter(request.getfixturevalue(unsplit))

    split.__doc__ = f"The {unsplit} bundle after ``splitter``."
    return pytest.fixture(split)


split = _split("cancer")
regression_split = _split("diabetes")
churn_split = _split("churn")
penguins_split = _split("penguins")


@pytest.fixture
def raw_csv(tmp_path) -> Bundle:
    """A bundle holding only a raw CSV source file (penguins), as dagsmith creates it."""
    csv = tmp_path / "penguins.csv"
    datasets.load("penguins").to_csv(csv, index=False)
    bundle = Bundle.create(tmp_path / "raw", target="species", task_type="multiclass_classification")
    bundle.add_source(csv)
    return bundle


def assert_finite(values) -> None:
    assert np.all(np.isfinite(np.asarray(values, dtype=float))), "non-finite values"


def split_bundle(path, frame: pd.DataFrame, target: str, task_type: str, test_size: float = 0.3) -> Bundle:
    """A bundle already split (stratified for classification, as train_test_splitter leaves it), built
    in-process to save a service call."""
    from sklearn.model_selection import train_test_split

    stratify = frame[target] if "classification" in task_type else None
    train, test = train_test_split(frame, test_size=test_size, random_state=0, stratify=stratify)
    bundle = Bundle.create(path, target=target, task_type=task_type)
    bundle.write_table("train", train)
    bundle.write_table("test", test)
    return bundle


def patient_visits(patients: int, visits: int, seed: int) -> pd.DataFrame:
    """Each patient seen ``visits`` times: their ``height`` (one per patient, unrelated to the rest), a ``dose`` per
    visit, their own ``baseline`` and the visit's ``level`` (baseline + 4 x dose + noise). A model that remembers
    patients by their height scores well on visits of patients it learnt from and not at all on new patients."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"patient": np.repeat(np.arange(1, patients + 1), visits),
                          "height": np.repeat(rng.normal(170, 10, patients).round(1), visits),
                          "dose": rng.uniform(0, 1, patients * visits),
                          "baseline": np.repeat(rng.normal(0, 3, patients), visits)})
    return frame.assign(level=frame["baseline"] + 4 * frame["dose"] + rng.normal(0, 0.3, len(frame)))


def assert_outlier_found(out: Bundle, n_rows: int) -> pd.DataFrame:
    """The planted outlier (the last row) has the top score and is flagged; flags are the top scores."""
    predictions = out.predictions()
    assert len(predictions) == n_rows and predictions["is_anomaly"].dtype == bool
    assert_finite(predictions["anomaly_score"])
    assert predictions["anomaly_score"].idxmax() == n_rows - 1 and predictions["is_anomaly"].iloc[-1]
    flagged = predictions["is_anomaly"]
    assert predictions["anomaly_score"][flagged].min() >= predictions["anomaly_score"][~flagged].max()
    return predictions
