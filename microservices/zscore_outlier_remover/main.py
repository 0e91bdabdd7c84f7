"""Remove outlier rows from the training table (or the whole table before a split): rows where any numeric
feature lies more than `threshold` standard deviations from its mean. Test rows are never removed.
Needs numeric features without missing values (impute first).
"""

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import continuous_features


def remove_outliers(inp, out, params):
    threshold = float(params.get("threshold", 3.0))
    if threshold <= 0:
        raise ServiceError(f"threshold must be positive, got {threshold}")
    name = "train" if inp.is_split() else "data"
    frame = inp.fit_table()
    columns = [c for c in continuous_features(inp, frame) if frame[c].std() > 0]
    missing = [c for c in columns if frame[c].isna().any()]
    if missing:
        raise ServiceError(f"z-scores need complete numeric features, but {', '.join(missing)} have missing values")
    values = frame[columns].astype(float)
    z = ((values - values.mean()) / values.std()).abs()
    outlier = (z > threshold).any(axis=1)
    if outlier.all():
        raise ServiceError(f"every row has a |z| above {threshold}; raise the threshold")
    out.write_table(name, frame[~outlier].reset_index(drop=True))
    out.write_metrics({"outlier_rows_removed": int(outlier.sum())})
    worst = z[outlier].max().dropna().sort_values(ascending=False).head(5)
    out.append_report(f"## Outlier removal (|z| > {threshold})\n\n{int(outlier.sum())} of {len(frame)} {name} rows "
                      "removed. Largest |z|: " + (", ".join(f"{c} {v:.1f}" for c, v in worst.items()) or "none"))


if __name__ == "__main__":
    run_service(remove_outliers)
