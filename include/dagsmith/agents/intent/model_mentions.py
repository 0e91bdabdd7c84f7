"""Models a goal names ("with a random forest", "using logistic regression", "no neural nets"): which estimators
each name covers in the catalog, which family a refusal rules out, and which task a name implies, so that the
words inside a name ("regression" in "logistic regression") never decide the task on their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dagsmith.catalog.knowledge import MODEL_FAMILY_ALGORITHMS

CLASSIFICATION, REGRESSION = "classification", "regression"


@dataclass(frozen=True)
class ModelName:
    """A way people name a model: the pattern, a readable label, the estimator classes (by name prefix) it covers,
    the broader family a refusal of it rules out, and the task it implies, if any."""

    pattern: str
    label: str
    algorithms: tuple[str, ...]
    family: str
    task: str | None = None


LINEAR = MODEL_FAMILY_ALGORITHMS["linear_model"]
NAMES: tuple[ModelName, ...] = (
    ModelName(r"logistic regressions?|logit", "logistic regression", ("LogisticRegression",), "linear_model",
              CLASSIFICATION),
    ModelName(r"linear regressions?|ordinary least squares|ols", "linear regression",
              ("LinearRegression", "Ridge", "Lasso", "ElasticNet", "HuberRegressor"), "linear_model", REGRESSION),
    ModelName(r"ridge(?: regressions?)?", "ridge regression", ("Ridge",), "linear_model"),
    ModelName(r"lasso(?: regressions?)?", "lasso", ("Lasso",), "linear_model", REGRESSION),
    ModelName(r"elastic ?nets?", "elastic net", ("ElasticNet",), "linear_model", REGRESSION),
    ModelName(r"huber(?: regressions?)?", "Huber regression", ("HuberRegressor",), "linear_model", REGRESSION),
    ModelName(r"linear discriminant(?: analysis)?", "linear discriminant analysis", ("LinearDiscriminantAnalysis",),
              "linear_model", CLASSIFICATION),
    ModelName(r"linear models?|linear classifiers?", "linear model", LINEAR, "linear_model"),
    ModelName(r"random forests?", "random forest", ("RandomForest",), "random_forest"),
    ModelName(r"extra trees|extremely randomi[sz]ed trees", "extra trees", ("ExtraTrees",), "random_forest"),
    ModelName(r"xgboost|xgb", "XGBoost", ("XGB",), "gradient_boosting"),
    ModelName(r"light ?gbm|lgbm", "LightGBM", ("LGBM",), "gradient_boosting"),
    ModelName(r"catboost", "CatBoost", ("CatBoost",), "gradient_boosting"),
    ModelName(r"ada ?boost", "AdaBoost", ("AdaBoost",), "gradient_boosting"),
    ModelName(r"gradient boost\w*|boosted (?:trees?|models?)|boosting|gbms?|gbdt", "gradient boosting",
              ("GradientBoosting", "HistGradientBoosting", "LGBM", "XGB"), "gradient_boosting"),
    ModelName(r"support vector \w+|svms?|svcs?|svrs?", "support vector machine",
              ("SVC", "SVR", "LinearSVC", "LinearSVR"),
              "svm"),
    ModelName(r"k ?nn|(?:k )?nearest neighbou?rs?", "k-nearest neighbours", ("KNeighbors",), "knn"),
    ModelName(r"naive bayes", "naive Bayes", ("GaussianNB", "MultinomialNB", "BernoulliNB", "CategoricalNB"),
              "naive_bayes", CLASSIFICATION),
    ModelName(r"decision trees?", "decision tree", ("DecisionTree",), "decision_tree"),
    ModelName(r"neural ?net\w*|deep learning|deep nets?|nns?|mlps?|multi ?layer perceptrons?|perceptrons?",
              "neural network", ("MLP",), "neural_network"),
    ModelName(r"(?:tree )?ensembles?", "tree ensemble", MODEL_FAMILY_ALGORITHMS["tree_ensemble"], "tree_ensemble"),
)
#: "classifier"/"regressor" right after a name says the task outright ("random forest regressor").
_SUFFIX = r"(?:\s+(?P<suffix>classifiers?|classification|regressors?|regression)(?:\s+models?)?)?"
_PATTERNS = [(name, re.compile(rf"\b(?:{name.pattern}){_SUFFIX}\b")) for name in NAMES]


@dataclass(frozen=True)
class Mention:
    name: ModelName
    said: str
    start: int
    end: int
    task: str | None  # the suffix's task, else the name's

    @property
    def label(self) -> str:
        return self.name.label


def mentions(text: str) -> list[Mention]:
    """Every model named in ``text`` (lower-case words joined by spaces), longest first where two overlap."""
    found: list[Mention] = []
    for name, pattern in _PATTERNS:
        for hit in pattern.finditer(text):
            suffix = hit.group("suffix") or ""
            task = CLASSIFICATION if suffix.startswith("classif") else REGRESSION if suffix else name.task
            found.append(Mention(name, hit.group(0), hit.start(), hit.end(), task))
    kept: list[Mention] = []
    for mention in sorted(found, key=lambda m: (-(m.end - m.start), m.start)):
        if all(mention.end <= other.start or mention.start >= other.end for other in kept):
            kept.append(mention)
    return sorted(kept, key=lambda m: m.start)


def by_label(label: str) -> ModelName:
    return next(name for name in NAMES if name.label == label)


def covers(label: str, algorithms: list[str]) -> bool:
    """Whether a service fitting ``algorithms`` is the model ``label`` names."""
    return any(algorithm.startswith(by_label(label).algorithms) for algorithm in algorithms)
