"""2D scatter plot of the rows coloured by their predicted cluster (noise, -1, in grey). Uses the first two
``component_`` columns when a reduction step made them, else a PCA projection of the standardised numeric
features. Needs predictions.parquet with a ``cluster`` column from a clustering step.
"""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import predicted_table, save_figure
from dagsmith_kit.params import at_least


def project(inp, frame):
    components = [c for c in frame.columns if c.startswith("component_")]
    if len(components) >= 2:
        return frame[components[:2]].to_numpy(dtype=float), components[:2]
    features = inp.feature_columns(frame, numeric=True)
    if len(features) < 2:
        raise ServiceError("a 2D scatter needs at least two numeric features or component_ columns")
    if frame[features].isna().any().any():
        raise ServiceError("the numeric features have missing values; impute them before the PCA projection")
    points = PCA(n_components=2, random_state=0).fit_transform(StandardScaler().fit_transform(frame[features]))
    return points, ["PC1", "PC2"]


def plot_clusters(inp, out, params):
    point_size = at_least("point_size", float(params.get("point_size", 18)), 0)
    frame, predictions = predicted_table(inp, "cluster", "a clustering step")
    points, axes_names = project(inp, frame)
    clusters = predictions["cluster"].to_numpy()
    fig, ax = plt.subplots(figsize=(7, 6))
    for cluster in sorted(set(clusters)):
        mask = clusters == cluster
        noise = cluster == -1
        ax.scatter(points[mask, 0], points[mask, 1], s=point_size, alpha=0.5 if noise else 0.8,
                   color="lightgrey" if noise else None, label="noise" if noise else f"cluster {cluster}")
    ax.set(xlabel=axes_names[0], ylabel=axes_names[1], title=f"{len(set(clusters) - {-1})} clusters")
    ax.legend(fontsize=8, markerscale=1.5)
    save_figure(out, fig, "cluster_scatter.png")
    out.append_report(f"## Clusters\n\n{len(frame)} rows projected on {axes_names[0]} / {axes_names[1]}."
                      "\n\n![cluster scatter](artifacts/cluster_scatter.png)")


if __name__ == "__main__":
    run_service(plot_clusters)
