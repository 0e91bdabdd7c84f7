"""Replace each categorical (non-numeric) feature by an integer code learned from the training table.

Categories unseen in training get -1 (``unknown_value``); missing values stay missing.
"""

from sklearn.preprocessing import OrdinalEncoder

from dagsmith_kit import run_service
from dagsmith_kit.features import fit_replace


def encode(inp, out, params):
    encoder = OrdinalEncoder(
        handle_unknown="use_encoded_value",
        unknown_value=int(params.get("unknown_value", -1)),
        min_frequency=params.get("min_frequency", None),
        max_categories=params.get("max_categories", None),
    )
    fit_replace(inp, out, encoder, numeric=False)


if __name__ == "__main__":
    run_service(encode)
