"""Make continuous numeric features more Gaussian with a power transform learned on the training table:
Yeo-Johnson (default; any sign) or Box-Cox (strictly positive values only), then standardised to zero mean
and unit variance unless `standardize` is false.

Missing values are ignored while fitting and stay missing; binary flags and non-numeric columns are left alone.
"""

from sklearn.preprocessing import PowerTransformer

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import continuous_features
from dagsmith_kit.features import fit_replace


def transform(inp, out, params):
    method = params.get("method", "yeo-johnson")
    standardize = bool(params.get("standardize", True))
    if method not in ("yeo-johnson", "box-cox"):
        raise ServiceError(f"method must be 'yeo-johnson' or 'box-cox', got {method!r}")
    columns = continuous_features(inp, inp.fit_table())
    if not columns:
        raise ServiceError("the table has no continuous numeric feature columns to transform")
    if method == "box-cox":
        for name, frame in inp.tables().items():
            bad = [c for c in columns if (frame[c] <= 0).any()]
            if bad:
                raise ServiceError(f"box-cox needs strictly positive values, but the {name} table has values <= 0 "
                                   f"in {', '.join(bad[:5])}; use method 'yeo-johnson'")
    transformer = PowerTransformer(method=method, standardize=standardize)
    fit_replace(inp, out, transformer, numeric=True, columns=columns)
    out.append_report(f"## Power transform ({method})\n\n" + "\n".join(
        f"- `{c}`: lambda {value:.3f}" for c, value in zip(columns, transformer.lambdas_)))


if __name__ == "__main__":
    run_service(transform)
