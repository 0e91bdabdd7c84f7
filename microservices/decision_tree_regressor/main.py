"""Train a single regression tree, predict the test target, and write the top of the tree to the report.

Missing values in numeric features are handled natively by the tree (no imputation needed), but text columns
are refused (encode them first). Needs a numeric target; max_depth (default 6) keeps the tree readable.
"""

from sklearn.tree import DecisionTreeRegressor, export_text

from dagsmith_kit import fit_and_predict, run_service
from dagsmith_kit.models import numeric_features


def train(inp, out, params):
    model = DecisionTreeRegressor(
        max_depth=params.get("max_depth", 6),
        min_samples_leaf=int(params.get("min_samples_leaf", 5)),
        random_state=int(params.get("random_state", 42)),
    )
    features = numeric_features(inp, regression=True, allow_missing=True)
    features = fit_and_predict(inp, out, model, features, params=params)
    report_depth = int(params.get("report_depth", 3))
    tree = export_text(model, feature_names=features, max_depth=report_depth, decimals=3)
    out.write_metrics({"tree_depth": int(model.get_depth()), "tree_leaves": int(model.get_n_leaves())})
    out.append_report(f"## Regression tree (depth {model.get_depth()}, {model.get_n_leaves()} leaves)\n\n"
                      f"The tree down to depth {report_depth}:\n\n```\n{tree}```")


if __name__ == "__main__":
    run_service(train)
