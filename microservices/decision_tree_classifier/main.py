"""Train a single decision tree classifier, predict the test table, and write the top of the tree to the report.

Needs numeric features without missing values (encode and impute first).
"""

from sklearn.tree import DecisionTreeClassifier, export_text

from dagsmith_kit import fit_and_predict, run_service
from dagsmith_kit.models import numeric_features


def train(inp, out, params):
    model = DecisionTreeClassifier(
        max_depth=params.get("max_depth", None),
        min_samples_leaf=int(params.get("min_samples_leaf", 1)),
        random_state=int(params.get("random_state", 42)),
    )
    features = fit_and_predict(inp, out, model, numeric_features(inp), params=params)
    report_depth = int(params.get("report_depth", 3))
    tree = export_text(model, feature_names=features, max_depth=report_depth)
    out.write_metrics({"tree_depth": int(model.get_depth()), "tree_leaves": int(model.get_n_leaves())})
    out.append_report(f"## Decision tree (depth {model.get_depth()}, {model.get_n_leaves()} leaves)\n\n"
                      f"The tree down to depth {report_depth}:\n\n```\n{tree}```")


if __name__ == "__main__":
    run_service(train)
