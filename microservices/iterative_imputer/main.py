"""Fill missing numeric features by modelling each one from the others (IterativeImputer, fitted on the
training table). Only numeric columns are imputed: missing text or categorical values are left as they are.
"""

from sklearn.experimental import enable_iterative_imputer  # noqa: F401  (makes IterativeImputer importable)
from sklearn.impute import IterativeImputer

from dagsmith_kit import run_service
from dagsmith_kit.cleaning import impute_tables


def impute(inp, out, params):
    imputer = IterativeImputer(
        max_iter=int(params.get("max_iter", 10)),
        initial_strategy=params.get("initial_strategy", "mean"),
        sample_posterior=bool(params.get("sample_posterior", False)),
        random_state=int(params.get("random_state", 0)),
    )
    impute_tables(inp, out, imputer, fill_others=False)


if __name__ == "__main__":
    run_service(impute)
