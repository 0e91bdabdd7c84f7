"""Bar chart of a trained model's feature importances (``feature_importances_``, or |coef_| for linear
models) against the feature names. Needs model.joblib from a model step; fails for models exposing neither.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import markdown_table, save_figure


def importances_of(model):
    estimator = getattr(model, "regressor_", model)  # a model of a transformed target: the model inside
    estimator = estimator[-1] if hasattr(estimator, "steps") else estimator
    if hasattr(estimator, "feature_importances_"):
        return np.asarray(estimator.feature_importances_, dtype=float), "importance"
    if hasattr(estimator, "coef_"):
        coef = np.abs(np.atleast_2d(np.asarray(estimator.coef_, dtype=float)))
        return coef.mean(axis=0), "mean |coefficient|" if coef.shape[0] > 1 else "|coefficient|"
    raise ServiceError(f"{type(estimator).__name__} exposes neither feature_importances_ nor coef_, "
                       "so it has no feature importances to plot")


def plot_importance(inp, out, params):
    top_n = int(params.get("top_n", 20))
    model = inp.load_model()
    values, label = importances_of(model)
    names = getattr(model, "feature_names_in_", None)
    if names is None or len(names) != len(values):  # the model inside may read fewer (a forecast's change: no trend)
        names = getattr(getattr(model, "regressor_", model), "feature_names_in_", None)
    if names is None or len(names) != len(values):
        columns = inp.feature_columns(inp.fit_table())
        names = columns if len(columns) == len(values) else [f"feature_{i}" for i in range(len(values))]
    order = np.argsort(values)[::-1][:top_n]
    shown = [(str(names[i]), float(values[i])) for i in order]
    fig, ax = plt.subplots(figsize=(8, 2.5 + 0.3 * len(shown)))
    ax.barh([n for n, _ in shown][::-1], [v for _, v in shown][::-1], color="seagreen")
    ax.set_xlabel(label)
    ax.set_title(f"{type(model).__name__}: top {len(shown)} features")
    save_figure(out, fig, "feature_importance.png")
    out.append_report("## Feature importance\n\n" + markdown_table(["feature", label], [list(s) for s in shown])
                      + "\n\n![feature importance](artifacts/feature_importance.png)")


if __name__ == "__main__":
    run_service(plot_importance)
