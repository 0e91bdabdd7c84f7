"""Take the natural log of every numeric feature to tame skew; assumes all values are positive."""

import numpy as np

from dagsmith_kit import run_service, transform_tables


def scale(inp, out, params):
    def apply(frame, features):
        frame = frame.copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            frame[features] = np.log(frame[features].astype(float))
        return frame

    transform_tables(inp, out, lambda frame: inp.feature_columns(frame, numeric=True), apply)


if __name__ == "__main__":
    run_service(scale)
