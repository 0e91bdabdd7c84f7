"""Replace each category of the categorical (non-numeric) features by its frequency in the training table.

Missing values count as a category of their own; categories unseen in training get 0.
"""

from dagsmith_kit import run_service, transform_tables
from dagsmith_kit.features import feature_subset


def encode(inp, out, params):
    normalize = bool(params.get("normalize", True))

    def fit(train):
        columns = feature_subset(inp, train, numeric=False)
        return {c: train[c].value_counts(normalize=normalize, dropna=False) for c in columns}

    def apply(frame, frequencies):
        frame = frame.copy()
        for column, counts in frequencies.items():
            frame[column] = frame[column].map(counts).fillna(0).astype(float)
        return frame

    transform_tables(inp, out, fit, apply)


if __name__ == "__main__":
    run_service(encode)
