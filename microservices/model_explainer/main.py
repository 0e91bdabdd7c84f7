"""Explain a trained classifier or regressor: which features drive its predictions on the held-out rows, and how.

Each feature's importance is the drop in the task's score (ROC AUC for a binary classifier with probabilities,
balanced accuracy for other classifiers, R² for a regressor) when that feature's test values are shuffled
(scikit-learn's permutation importance, with the shuffled copies predicted in batches). The model is called
exactly as the model step called it, so raw text columns and gaps are fine whenever the model took them. Above
sample_rows test rows a random sample is used, and the number of shuffles per feature (up to n_repeats) is cut so
the work fits in budget_seconds, judged on a warm call to the model (one call per shuffle, an upper bound now that
the shuffles are predicted together) so a slow first call does not make the same input explain differently.

Writes explanation.json (the ranked drivers with their direction), explanation.* metrics, a bar chart and a
report section naming the drivers in words; then where the model errs on the same rows: a classifier's confusion
matrix (and calibration, for two classes with probabilities), a regressor's residuals, as a chart and a sentence.
Needs a model step and a train/test split.
"""

import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.calibration import calibration_curve
from sklearn.metrics import ConfusionMatrixDisplay, brier_score_loss, confusion_matrix, get_scorer

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.explanation import Driver, held_out_model, write_explanation
from dagsmith_kit.insight import (binary_scores, classification_results, readable_number,
                                  regression_results, save_figure)
from dagsmith_kit.permutation import permutation_importance


def scoring_for(model, predicts_numbers):
    if predicts_numbers or not hasattr(model, "classes_"):
        return "r2"
    return "roc_auc" if len(model.classes_) == 2 and hasattr(model, "predict_proba") else "balanced_accuracy"


def plot(out, drivers, scoring):
    shown = drivers[:15][::-1]
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(shown) + 1.5))
    ax.barh([d.feature for d in shown], [d.importance for d in shown], xerr=[d.spread for d in shown],
            color="steelblue")
    ax.set(xlabel=f"drop in {scoring} when the feature is shuffled", title="What drives the predictions")
    save_figure(out, fig, "feature_importance.png")


def where_it_errs(inp, out):
    """A classifier's confusion matrix (and, for two classes with probabilities, its calibration), or a
    regressor's residuals, on the held-out rows: a chart, metrics and a sentence on the largest error."""
    if inp.predicts_numbers:
        y_true, predicted = regression_results(inp)
        known = y_true.notna().to_numpy()
        residual = (y_true - predicted).to_numpy()[known]
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
        left.scatter(predicted.to_numpy()[known], residual, s=8, alpha=0.6)
        left.axhline(0, color="black", lw=1)
        left.set(xlabel="predicted", ylabel="actual - predicted", title="Residuals")
        right.hist(residual, bins=30, color="steelblue")
        right.set(xlabel="actual - predicted", title="Residual distribution")
        save_figure(out, fig, "residuals.png")
        top = predicted.to_numpy()[known] >= np.quantile(predicted.to_numpy()[known], 0.9)
        out.write_metrics({"errors.mean_residual": float(residual.mean()),
                           "errors.mean_residual_top_decile": float(residual[top].mean())})
        side = "under" if residual[top].mean() > 0 else "over"
        out.append_report(f"## Where the model errs\n\nOn average the predictions are off by "
                          f"{readable_number(np.abs(residual).mean())} ({readable_number(residual.mean())} bias); "
                          f"the highest tenth of predictions {side}estimates by "
                          f"{readable_number(abs(residual[top].mean()))} on average.\n\n"
                          "![residuals](artifacts/residuals.png)")
        return
    y_true, predictions = classification_results(inp)
    predicted = predictions["prediction"].astype(str).to_numpy()
    labels = sorted(set(y_true) | set(predicted))
    matrix = confusion_matrix(y_true, predicted, labels=labels)
    panels = 2 if len(labels) == 2 and any(c.startswith("proba_") for c in predictions.columns) else 1
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4.5), squeeze=False)
    ConfusionMatrixDisplay(matrix, display_labels=labels).plot(ax=axes[0][0], colorbar=False)
    axes[0][0].set_title("Confusion matrix (held-out rows)")
    errors = matrix.copy()
    np.fill_diagonal(errors, 0)
    actual, guessed = np.unravel_index(errors.argmax(), errors.shape)
    text = (f"The most common mistake: '{labels[actual]}' predicted as '{labels[guessed]}' ({errors.max()} of "
            f"{matrix[actual].sum()} '{labels[actual]}' rows).")
    metrics = {"errors.most_common_mistake": float(errors.max())}
    if panels == 2:
        is_positive, proba, positive = binary_scores(y_true, predictions, None, "calibration")
        observed, expected = calibration_curve(is_positive, proba, n_bins=10, strategy="quantile")
        axes[0][1].plot(expected, observed, marker="o")
        axes[0][1].plot([0, 1], [0, 1], ls="--", color="grey")
        axes[0][1].set(xlabel=f"predicted probability of {positive}", ylabel="observed share",
                       title="Calibration")
        gap = float(proba.mean() - is_positive.mean())
        metrics.update({"errors.brier": float(brier_score_loss(is_positive, proba)), "errors.calibration_gap": gap})
        text += (f" Predicted probabilities of '{positive}' average {proba.mean():.0%} against {is_positive.mean():.0%}"
                 f" observed ({'too high' if gap > 0.02 else 'too low' if gap < -0.02 else 'well calibrated'}).")
    save_figure(out, fig, "confusion_matrix.png")
    out.write_metrics(metrics)
    out.append_report(f"## Where the model errs\n\n{text}\n\n![confusion matrix](artifacts/confusion_matrix.png)")


def explain(inp, out, params):
    n_repeats = int(params.get("n_repeats", 5))
    sample_rows = int(params.get("sample_rows", 2000))
    budget = float(params.get("budget_seconds", 30))
    random_state = int(params.get("random_state", 42))
    if n_repeats < 1 or sample_rows < 10 or budget <= 0:
        raise ServiceError("n_repeats must be at least 1, sample_rows at least 10 and budget_seconds positive")
    target = inp.require_target()
    if not inp.is_split():
        raise ServiceError("the model is explained on the held-out rows; run a train/test splitter first")
    model, test, features = held_out_model(inp, target)
    if len(test) > sample_rows:
        test = test.sample(sample_rows, random_state=random_state)
    rows, y = test[features], test[target]
    scoring = params.get("scoring") or scoring_for(model, inp.predicts_numbers)
    scorer = get_scorer(scoring)
    started = time.perf_counter()
    score = float(scorer(model, rows, y))
    if not np.isfinite(score):
        raise ServiceError(f"the model's {scoring} on the test rows is not a number")
    per_shuffle = (time.perf_counter() - started) * len(features)
    if per_shuffle * n_repeats > budget:  # the first call may have paid for lazy imports: time a warm one
        started = time.perf_counter()
        scorer(model, rows, y)
        per_shuffle = min(per_shuffle, (time.perf_counter() - started) * len(features))
    repeats = int(max(1, min(n_repeats, budget // max(per_shuffle, 1e-9))))
    result = permutation_importance(model, rows, y, scorer, n_repeats=repeats, random_state=random_state,
                                    baseline=score)
    drivers = [Driver(name, float(mean), float(std)) for name, mean, std in zip(features, result.means, result.spreads)]
    written = write_explanation(out, model, rows, target, drivers, scoring=scoring, score=score,
                                method=f"Permutation importance ({repeats} shuffle{'s' * (repeats > 1)} per feature)")
    if written:
        plot(out, written, scoring)
        out.append_report("![what drives the predictions](artifacts/feature_importance.png)")
    where_it_errs(inp, out)


if __name__ == "__main__":
    run_service(explain)
