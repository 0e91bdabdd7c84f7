"""Drop feature columns that are mostly empty: more than `max_missing_fraction` (default 0.5) of their training
values missing. Decided on the training table, applied to every table; the target and id columns stay.
Refuses when every feature column would go.
"""

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import drop_columns


def drop_sparse_columns(inp, out, params):
    max_missing_fraction = float(params.get("max_missing_fraction", 0.5))
    if not 0.0 <= max_missing_fraction < 1.0:
        raise ServiceError(f"max_missing_fraction must be in [0, 1), got {max_missing_fraction}")

    def sparse(train):
        shares = train[inp.feature_columns(train)].isna().mean()
        return {column: f"{share:.0%} missing" for column, share in shares.items() if share > max_missing_fraction}

    drop_columns(inp, out, sparse, f"more than {max_missing_fraction:.0%} missing",
                 f"Columns more than {max_missing_fraction:.0%} missing")


if __name__ == "__main__":
    run_service(drop_sparse_columns)
