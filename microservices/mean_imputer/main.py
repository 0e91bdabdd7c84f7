"""Fill missing feature values: numeric columns with the training mean, other columns with the most
frequent training value. The target and id columns are left as they are.
"""

from sklearn.impute import SimpleImputer

from dagsmith_kit import run_service
from dagsmith_kit.cleaning import impute_tables


def impute(inp, out, params):
    impute_tables(inp, out, SimpleImputer(strategy="mean"), fill_others=bool(params.get("fill_categorical", True)))


if __name__ == "__main__":
    run_service(impute)
