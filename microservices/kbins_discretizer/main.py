"""Bin continuous numeric features into `n_bins` intervals learned on the training table and replace each
value by its bin number (0 .. n_bins-1).

`strategy` is "quantile" (equal-frequency bins, default), "uniform" (equal-width) or "kmeans". Binary flags and
non-numeric columns are left alone. Refuses missing values in the binned features (impute first).
"""

from sklearn.preprocessing import KBinsDiscretizer

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import continuous_features
from dagsmith_kit.features import fit_replace, require_complete


def discretise(inp, out, params):
    n_bins = int(params.get("n_bins", 5))
    strategy = params.get("strategy", "quantile")
    if n_bins < 2:
        raise ServiceError(f"n_bins must be at least 2, got {n_bins}")
    if strategy not in ("quantile", "uniform", "kmeans"):
        raise ServiceError(f"strategy must be 'quantile', 'uniform' or 'kmeans', got {strategy!r}")
    columns = continuous_features(inp, inp.fit_table())
    if not columns:
        raise ServiceError("the table has no continuous numeric feature columns to bin")
    require_complete(inp, columns, "kbins_discretizer does not accept missing values")
    binner = KBinsDiscretizer(n_bins=n_bins, encode="ordinal", strategy=strategy, random_state=0,
                              quantile_method="averaged_inverted_cdf")
    fit_replace(inp, out, binner, numeric=True, columns=columns)
    out.append_report(f"## Binning ({strategy}, {n_bins} bins)\n\n" + "\n".join(
        f"- `{c}`: {len(edges) - 1} bins" for c, edges in zip(columns, binner.bin_edges_)))


if __name__ == "__main__":
    run_service(discretise)
