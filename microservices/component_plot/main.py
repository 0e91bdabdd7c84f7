"""Plot what a dimensionality reduction found: the rows on the first two components (left) and the share of the
variance each component keeps (right, a scree plot).

Uses the ``component_`` columns a reduction step made, with the explained variance it wrote to metrics. Without
them, the standardised numeric features are projected by PCA here, and the features that load most on the two
components are drawn as arrows, so a person can name the axes.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import analysis_table, save_figure
from dagsmith_kit.params import at_least


def reduced(inp, frame):
    """The points on two components, their names, the variance share per component (None when unknown) and, for a
    projection made here, each feature's loadings on the two."""
    components = [c for c in frame.columns if c.startswith("component_")]
    if len(components) >= 2:
        metrics = inp.metrics()
        shares = [metrics.get(f"explained_variance_ratio_{i + 1}") for i in range(len(components))]
        shares = None if any(s is None for s in shares) else np.array(shares, dtype=float)
        return frame[components[:2]].to_numpy(dtype=float), components[:2], shares, None
    features = inp.feature_columns(frame, numeric=True)
    if len(features) < 2:
        raise ServiceError("a plot of components needs component_ columns or at least two numeric features")
    if frame[features].isna().any().any():
        raise ServiceError("the numeric features have missing values; impute them before projecting them")
    pca = PCA(random_state=0)
    points = pca.fit_transform(StandardScaler().fit_transform(frame[features]))[:, :2]
    loadings = dict(zip(features, pca.components_[:2].T))
    return points, ["PC1", "PC2"], pca.explained_variance_ratio_, loadings


def plot_components(inp, out, params):
    point_size = at_least("point_size", float(params.get("point_size", 14)), 0)
    arrows = int(at_least("arrows", int(params.get("arrows", 6)), 0))
    frame = analysis_table(inp)
    if frame.empty:
        raise ServiceError("the table has no rows to plot")
    points, names, shares, loadings = reduced(inp, frame)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5.5), gridspec_kw={"width_ratios": [3, 2]})
    left.scatter(points[:, 0], points[:, 1], s=point_size, alpha=0.6)
    left.set(xlabel=names[0], ylabel=names[1], title=f"{len(frame)} rows on the first two components")
    strongest = sorted(loadings or {}, key=lambda f: -float(np.hypot(*loadings[f])))[:arrows]
    if strongest:  # the longest arrow reaches 90% of the way to the farthest point
        stretch = 0.9 * np.abs(points).max(axis=0) / max(float(np.hypot(*loadings[strongest[0]])), 1e-12)
        for feature in strongest:
            x, y = loadings[feature] * stretch
            left.annotate("", xy=(x, y), xytext=(0, 0), arrowprops={"arrowstyle": "->", "color": "darkred"})
            left.text(x, y, feature, fontsize=8, color="darkred")
    if shares is not None:
        right.bar(range(1, len(shares) + 1), shares, color="steelblue")
        right.plot(range(1, len(shares) + 1), np.cumsum(shares), color="black", marker="o", label="cumulative")
        right.set(xlabel="component", ylabel="share of the variance", ylim=(0, 1.05), title="Variance kept")
        right.set_xticks(range(1, len(shares) + 1))
        right.legend(fontsize=8)
    else:
        right.axis("off")
        right.text(0.5, 0.5, "this reduction reports no variance shares", ha="center", va="center")
    save_figure(out, fig, "components.png")
    kept = f" The first two keep {shares[:2].sum():.1%} of the variance." if shares is not None else ""
    drawn = f" Arrows: the features that load most ({', '.join(strongest)})." if strongest else ""
    out.write_metrics({"component_plot.rows": len(frame)})
    out.append_report(f"## Components\n\n{len(frame)} rows on {names[0]} / {names[1]}.{kept}{drawn}"
                      "\n\n![components](artifacts/components.png)")


if __name__ == "__main__":
    run_service(plot_components)
