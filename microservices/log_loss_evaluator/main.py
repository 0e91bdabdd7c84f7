"""Log loss (cross-entropy) of a classifier's probabilities on the test set, beside the log loss of a
baseline that always predicts the training class frequencies, and the skill score 1 - loss / baseline
(above 0: better than the prior). Also the mean probability the model gave the true class.

Needs ``proba_`` columns with a column for every test label: models without probabilities are refused.
"""

import numpy as np
from sklearn.metrics import log_loss

from dagsmith_kit import run_service
from dagsmith_kit.insight import classification_results, finite_metrics, normalised_probabilities


def evaluate_log_loss(inp, out, params):
    y_true, predictions = classification_results(inp)
    labels, proba = normalised_probabilities(y_true, predictions)
    train_labels = inp.table("train")[inp.target].dropna().astype(str)
    prior = train_labels.value_counts(normalize=True).reindex(labels, fill_value=0.0).to_numpy()
    loss = log_loss(y_true, proba, labels=labels)
    baseline = log_loss(y_true, np.tile(prior, (len(y_true), 1)), labels=labels)
    true_class = proba[np.arange(len(y_true)), [labels.index(label) for label in y_true]]
    metrics = finite_metrics({"log_loss": loss, "baseline_log_loss": baseline,
                              "log_loss_skill": 1.0 - loss / baseline if baseline > 0 else float("nan"),
                              "mean_true_class_probability": true_class.mean()})
    out.write_metrics(metrics)
    verdict = "better" if loss < baseline else "NOT better"
    out.append_report("## Log loss\n\n" + "\n".join(f"- {k}: {v:.4f}" for k, v in metrics.items())
                      + f"\n\nThe probabilities are {verdict} than predicting the training class frequencies.")


if __name__ == "__main__":
    run_service(evaluate_log_loss)
