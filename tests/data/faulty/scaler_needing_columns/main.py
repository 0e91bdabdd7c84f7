"""Standardise the numeric columns the caller names; written for a pipeline that always passed ``columns``."""

from sklearn.preprocessing import StandardScaler

from dagsmith_kit import run_service, transform_tables


def scale(inp, out, params):
    columns = params["columns"]

    def apply(frame, scaler):
        frame = frame.copy()
        frame[columns] = scaler.transform(frame[columns])
        return frame

    transform_tables(inp, out, lambda frame: StandardScaler().fit(frame[columns]), apply)


if __name__ == "__main__":
    run_service(scale)
