"""One-hot encode the categorical (non-numeric) feature columns, with categories learned from the training table.

Categories unseen in training become all-zero rows; missing values get their own indicator column;
max_categories / min_frequency group rare categories into one "infrequent" column.
"""

from sklearn.preprocessing import OneHotEncoder

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.features import fit_replace


def encode(inp, out, params):
    max_categories = params.get("max_categories", None)
    min_frequency = params.get("min_frequency", None)
    if max_categories is not None and int(max_categories) < 2:
        raise ServiceError(f"max_categories must be at least 2, got {max_categories}")
    encoder = OneHotEncoder(
        handle_unknown="ignore",
        max_categories=int(max_categories) if max_categories is not None else None,
        min_frequency=min_frequency,
        sparse_output=False,
    )
    names = fit_replace(inp, out, encoder, numeric=False)
    out.append_report(f"## One-hot encoding\n\n{len(encoder.feature_names_in_)} categorical columns became "
                      f"{len(names)} indicator columns.")


if __name__ == "__main__":
    run_service(encode)
