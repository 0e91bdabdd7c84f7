"""Rescale the numeric feature columns linearly so the training table spans feature_range (default 0 to 1).

Test values outside the training range fall outside feature_range unless clip is set; missing values stay missing.
"""

from sklearn.preprocessing import MinMaxScaler

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.features import fit_replace


def scale(inp, out, params):
    low, high = (float(v) for v in params.get("feature_range", [0, 1]))
    if not low < high:
        raise ServiceError(f"feature_range must be [low, high] with low < high, got [{low}, {high}]")
    scaler = MinMaxScaler(feature_range=(low, high), clip=bool(params.get("clip", False)))
    fit_replace(inp, out, scaler, numeric=True)


if __name__ == "__main__":
    run_service(scale)
