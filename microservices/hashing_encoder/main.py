"""Encode all categorical (non-numeric) features together into `n_features` hashed columns (hash_0 ...).

Each value is hashed as the token "column=value" (scikit-learn FeatureHasher, signed), so the width stays
fixed however many categories there are and categories unseen in training need no special care. Missing
values add no token. Nothing is learned except which columns to encode.
"""

import pandas as pd
from sklearn.feature_extraction import FeatureHasher

from dagsmith_kit import ServiceError, run_service, transform_tables
from dagsmith_kit.features import feature_subset


def tokens(frame, columns):
    values = frame[columns].astype("string")
    return [[f"{column}={value}" for column, value in zip(columns, row) if value is not pd.NA]
            for row in values.itertuples(index=False)]


def encode(inp, out, params):
    n_features = int(params.get("n_features", 32))
    alternate_sign = bool(params.get("alternate_sign", True))
    if n_features < 2:
        raise ServiceError(f"n_features must be at least 2, got {n_features}")
    hasher = FeatureHasher(n_features=n_features, input_type="string", alternate_sign=alternate_sign)
    names = [f"hash_{i}" for i in range(n_features)]

    def fit(train):
        columns = feature_subset(inp, train, numeric=False)
        clash = sorted(set(names) & set(train.columns))
        if clash:
            raise ServiceError(f"hashed columns would overwrite existing columns: {', '.join(clash[:5])}")
        return columns

    def apply(frame, columns):
        hashed = pd.DataFrame(hasher.transform(tokens(frame, columns)).toarray(), columns=names, index=frame.index)
        return pd.concat([frame.drop(columns=columns), hashed], axis=1)

    columns = transform_tables(inp, out, fit, apply)
    out.append_report(f"## Feature hashing\n\n{len(columns)} categorical columns hashed into {n_features} columns.")


if __name__ == "__main__":
    run_service(encode)
