"""Fill missing feature values with the most frequent training value of each column, numeric or not.

Suits discrete numbers (counts, codes, ratings) where a mean or median would invent values that never occur.
Refuses feature columns missing more than `max_missing_fraction` (default 0.5) of their training values:
imputing them would make up most of the column (drop them first).
"""

from sklearn.impute import SimpleImputer

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import impute_tables


def impute(inp, out, params):
    max_missing_fraction = float(params.get("max_missing_fraction", 0.5))
    train = inp.fit_table()
    shares = train[inp.feature_columns(train)].isna().mean()
    sparse = shares[shares > max_missing_fraction]
    if len(sparse):
        listed = ", ".join(f"{column} ({share:.0%})" for column, share in sparse.head(5).items())
        raise ServiceError(f"most_frequent_imputer refuses columns missing more than {max_missing_fraction:.0%} of "
                           f"their training values: {listed}; drop them first (high_missing_column_dropper)")
    counts = impute_tables(inp, out, SimpleImputer(strategy="most_frequent"))
    out.append_report("## Most-frequent imputation\n\n" + ", ".join(
        f"{name}: {count} values filled" for name, count in counts.items()))


if __name__ == "__main__":
    run_service(impute)
