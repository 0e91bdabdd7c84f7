"""Plot the anomaly scores of an anomaly detection step: a histogram of the scores with the flagged rows
(``is_anomaly``) stacked in red and the lowest flagged score marked, and the scores sorted from most to least
anomalous. The ``top_n`` most anomalous rows (position, id columns, score) go to the report.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import markdown_table, predicted_table, save_figure
from dagsmith_kit.params import at_least


def plot_scores(inp, out, params):
    bins = at_least("bins", int(params.get("bins", 40)), 1)
    top_n = at_least("top_n", int(params.get("top_n", 10)), 0)
    frame, predictions = predicted_table(inp, "anomaly_score", "an anomaly detection step")
    scores = predictions["anomaly_score"].to_numpy(dtype=float)
    if not np.isfinite(scores).all():
        raise ServiceError("the anomaly scores hold missing or infinite values")
    flags = (predictions["is_anomaly"].to_numpy(dtype=bool) if "is_anomaly" in predictions
             else np.zeros(len(scores), dtype=bool))
    threshold = float(scores[flags].min()) if flags.any() else None
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    left.hist([scores[~flags], scores[flags]], bins=bins, stacked=True, color=["steelblue", "crimson"],
              label=[f"normal ({(~flags).sum()})", f"flagged ({flags.sum()})"])
    order = np.argsort(-scores, kind="stable")
    right.scatter(np.arange(1, len(scores) + 1), scores[order], s=8, c=np.where(flags[order], "crimson", "steelblue"))
    if threshold is not None:
        left.axvline(threshold, ls="--", color="black", label=f"lowest flagged score {threshold:.3g}")
        right.axhline(threshold, ls="--", color="black")
    left.set(xlabel="anomaly score (higher is more anomalous)", ylabel="rows", title="Anomaly score distribution")
    left.legend(fontsize=8)
    right.set(xlabel="rank", ylabel="anomaly score", xscale="log", title="Scores from most to least anomalous")
    save_figure(out, fig, "anomaly_scores.png")
    metrics = {"anomaly_plot.n_flagged": int(flags.sum()), "anomaly_plot.max_score": float(scores.max()),
               "anomaly_plot.median_score": float(np.median(scores))}
    if threshold is not None:
        metrics["anomaly_plot.threshold"] = threshold
    out.write_metrics(metrics)
    ids = [c for c in inp.id_columns if c in frame.columns]
    rows = [[int(i), *frame.iloc[i][ids].tolist(), float(scores[i]), bool(flags[i])] for i in order[:top_n]]
    out.append_report(f"## Anomaly scores\n\nTop {len(rows)} most anomalous rows:\n\n"
                      + markdown_table(["row", *ids, "score", "flagged"], rows)
                      + "\n\n![anomaly scores](artifacts/anomaly_scores.png)")


if __name__ == "__main__":
    run_service(plot_scores)
