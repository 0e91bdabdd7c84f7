"""Scale the numeric feature columns by the training median and interquartile range, so outliers barely matter.

Missing values are ignored when learning and stay missing in the output.
"""

from sklearn.preprocessing import RobustScaler

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.features import fit_replace


def scale(inp, out, params):
    low, high = (float(v) for v in params.get("quantile_range", [25.0, 75.0]))
    if not 0 <= low < high <= 100:
        raise ServiceError(f"quantile_range must satisfy 0 <= low < high <= 100, got [{low}, {high}]")
    scaler = RobustScaler(
        with_centering=bool(params.get("with_centering", True)),
        with_scaling=bool(params.get("with_scaling", True)),
        quantile_range=(low, high),
        unit_variance=bool(params.get("unit_variance", False)),
    )
    fit_replace(inp, out, scaler, numeric=True)


if __name__ == "__main__":
    run_service(scale)
