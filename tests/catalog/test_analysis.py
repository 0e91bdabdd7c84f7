"""Code-grounded analysis: what the analyzer reads from real microservice code, and where docs mislead."""

from __future__ import annotations

import textwrap

import pytest

from dagsmith.catalog.analysis.code import analyze_code
from dagsmith.catalog.analysis.documentation import analyze_documentation
from dagsmith.catalog.facts import extract_facts
from dagsmith.catalog.source import ServiceSource
from dagsmith.models.catalog import TaskType
from tests.conftest import CATALOG


def analysis(name: str):
    return analyze_code(ServiceSource.read(CATALOG / name))


def param(result, name: str):
    return next(p for p in result.parameters if p.name == name)


#: Shipped services by the main stage their code shows.
MAIN_STAGES = {
    "loading": ["tabular_loader", "json_loader"],
    "validation": ["schema_validator", "target_validator"],
    "deduplication": ["deduplicator", "fuzzy_deduplicator"],
    "type_conversion": ["type_fixer", "locale_number_parser"],
    "column_filtering": ["constant_column_dropper", "high_missing_column_dropper", "high_cardinality_column_dropper",
                         "correlated_feature_dropper", "column_selector"],
    "imputation": ["knn_imputer", "most_frequent_imputer"],
    "outlier_handling": ["iqr_outlier_clipper", "zscore_outlier_remover", "winsorizer"],
    "splitting": ["train_test_splitter", "time_series_splitter", "group_splitter"],
    "encoding": ["frequency_encoder", "woe_encoder", "hashing_encoder"],
    "scaling": ["robust_scaler", "log_transformer", "power_transformer"],
    "feature_selection": ["kbest_selector", "rfe_selector", "l1_selector"],
    "feature_engineering": ["datetime_feature_extractor", "missing_indicator_adder", "kbins_discretizer"],
    "modelling": ["svm_classifier", "ridge_regression", "extra_trees_classifier", "extra_trees_regressor",
                  "lightgbm_classifier", "lightgbm_regressor", "adaboost_classifier", "sgd_classifier",
                  "mlp_classifier", "linear_discriminant_analysis", "lasso_regression", "elasticnet_regression",
                  "huber_regressor", "decision_tree_regressor"],
    "clustering": ["dbscan_clustering", "minibatch_kmeans", "spectral_clustering"],
    "dimensionality_reduction": ["truncated_svd_reducer", "nmf_reducer", "factor_analysis_reducer"],
    "anomaly_detection": ["robust_zscore_detector", "one_class_svm_detector", "elliptic_envelope_detector"],
    "evaluation": ["regression_evaluator", "binary_threshold_optimizer", "calibration_evaluator",
                   "binary_calibration_evaluator", "precision_recall_evaluator", "lift_gain_evaluator",
                   "classification_report_evaluator", "kappa_mcc_evaluator", "log_loss_evaluator",
                   "residual_analysis_evaluator", "regression_error_evaluator", "explained_variance_evaluator",
                   "bootstrap_metric_ci", "baseline_comparison_evaluator", "permutation_importance_evaluator",
                   "cross_validation_evaluator", "anomaly_evaluator", "cluster_stability_evaluator",
                   "fairness_group_evaluator"],
    "eda": ["outlier_report", "data_dictionary_writer"],
    "visualisation": ["roc_curve_plot", "precision_recall_curve_plot", "multiclass_roc_plot", "residual_plot",
                      "prediction_vs_actual_plot", "missing_values_heatmap", "anomaly_score_plot"],
    "reporting": ["markdown_report", "json_report_writer", "predictions_csv_exporter", "model_card_writer"],
}


@pytest.mark.parametrize("name, stage", [(name, stage) for stage, names in MAIN_STAGES.items() for name in names])
def test_main_stage_is_read_from_the_code(name, stage):
    assert analysis(name).stages[0] == stage


def test_every_shipped_service_gets_a_stage_summary_and_parameters_section():
    for folder in sorted(CATALOG.iterdir()):
        result = analyze_code(ServiceSource.read(folder))
        assert result.summary and result.description.startswith(result.summary), folder.name
        assert result.analyzer == "dagsmith-static" and result.analyzed_at


def test_parameters_types_and_defaults_come_from_the_code():
    result = analysis("knn_imputer")
    assert (param(result, "n_neighbors").type, param(result, "n_neighbors").default) == ("int", 5)
    assert param(result, "weights").description == "KNNImputer(weights=...)"
    forest = analysis("random_forest_classifier")
    assert (param(forest, "n_estimators").type, param(forest, "n_estimators").default) == ("int", 200)
    assert param(forest, "n_estimators").description == "RandomForestClassifier(n_estimators=...)"


def test_parameters_declared_in_one_kit_call_are_read_with_their_defaults():
    facts = extract_facts(textwrap.dedent('''
        from sklearn.cluster import KMeans
        from dagsmith_kit.params import declared

        def cluster(inp, out, params):
            return KMeans(**declared(params, n_clusters=3, init="k-means++", max_iter=None), n_init=1)
    '''))
    assert {name: (p.type, p.default) for name, p in facts.parameters.items()} == {
        "n_clusters": ("int", 3), "init": ("str", "k-means++"), "max_iter": ("any", None)}
    assert facts.parameters["n_clusters"].description == "KMeans(n_clusters=...)"


def test_capabilities_and_requirements_distinguish_near_duplicates():
    strict, tolerant = analysis("standard_scaler_strict"), analysis("standard_scaler")
    assert any("refuses input with missing values" in r for r in strict.requirements_on_input)
    assert "handles missing values" in tolerant.capabilities
    boosting, logistic, svm = (analysis(name) for name in
                               ("gradient_boosting_classifier", "logistic_regression", "svm_classifier"))
    assert {"handles missing values", "handles categorical features natively"} <= set(boosting.capabilities)
    assert any("numeric features only" in r for r in svm.requirements_on_input)
    assert {"handles missing values", "encodes categorical features itself"} <= set(logistic.capabilities)
    assert not logistic.requirements_on_input or not any("numeric" in r for r in logistic.requirements_on_input)
    assert logistic.tags.encodes_internally and not boosting.tags.encodes_internally
    assert set(logistic.task_types) == {"binary_classification", "multiclass_classification"}
    assert analysis("csv_loader").inputs.count("CSV/TSV files") == 1
    assert "Excel files" in analysis("tabular_loader").inputs and "Excel files" not in analysis("csv_loader").inputs
    grouped, random = analysis("group_splitter"), analysis("train_test_splitter")
    assert grouped.tags.keeps_groups and "keeps each group's rows on one side" in grouped.capabilities
    assert random.tags.shuffles_rows and not random.tags.keeps_groups
    # a splitter's missing-value check is on the column it splits by, an evaluator's on the predictions
    assert not grouped.tags.rejects_missing and not analysis("time_series_splitter").tags.rejects_missing
    assert not analysis("regression_evaluator").tags.rejects_missing


def test_the_metrics_an_evaluator_reports_are_read_from_its_calls():
    assert {"r2", "mae", "rmse"} <= set(analysis("regression_evaluator").tags.metrics)
    assert analysis("regression_error_evaluator").tags.metrics == ["mae", "mape"]
    assert {"roc_auc", "accuracy", "f1"} <= set(analysis("classification_evaluator").tags.metrics)
    assert analysis("train_test_splitter").tags.metrics == []


@pytest.mark.parametrize(("keep", "encodes"), [
    ('frame.select_dtypes("number")', False),  # drops the categorical columns: they need encoding before it
    ('pd.get_dummies(frame)', True),
])
def test_a_model_that_drops_categories_does_not_encode_them(keep, encodes):
    code = textwrap.dedent(f'''
        import pandas as pd
        from sklearn.linear_model import LogisticRegression

        def main(inp, out, params):
            frame = inp.table("train")
            y = frame.pop(params["target"])
            LogisticRegression().fit({keep}, y)
    ''')
    tags = analyze_code(ServiceSource({"main.py": code}, "upload")).tags
    assert tags.encodes_internally is encodes
    assert tags.numeric_only is not encodes


def test_io_is_read_from_bundle_calls():
    evaluator = analysis("classification_evaluator")
    assert "predictions.parquet" in evaluator.inputs and "metrics.json" in evaluator.outputs
    assert "a train/test split" in evaluator.requirements_on_input
    for name in ("correlated_feature_dropper", "extra_trees_regressor"):  # kit helpers that append the report
        assert "report.md" in analysis(name).outputs and analysis(name).tags.writes_report, name


def test_a_service_whose_kit_helper_refuses_many_classes_fits_two_classes_only():
    """The manifest claims multiclass; the code reads the positive class's probability through ``binary_results``,
    which refuses more classes, so a multiclass pipeline must not be offered it (nor healed onto it)."""
    source = ServiceSource.read(CATALOG / "binary_calibration_evaluator")
    assert "multiclass" in source.manifest.description
    assert analyze_code(source).task_types == [TaskType.BINARY_CLASSIFICATION]
    assert analysis("roc_curve_plot").task_types == [TaskType.BINARY_CLASSIFICATION]
    assert TaskType.MULTICLASS_CLASSIFICATION in analysis("calibration_evaluator").task_types


@pytest.mark.parametrize("name, claimed, actual", [
    ("outlier_report", "preprocessing", "eda"),  # the manifest says outliers are removed; the code only counts
    ("kbest_selector", "modelling", "feature_selection"),
    ("regression_evaluator", "visualisation", "evaluation"),
])
def test_code_analysis_corrects_a_misleading_manifest(name, claimed, actual):
    source = ServiceSource.read(CATALOG / name)
    assert source.manifest.category == claimed
    assert analyze_code(source).stages[0] == actual


def test_documentation_analysis_believes_the_manifest():
    source = ServiceSource.read(CATALOG / "standard_scaler_strict")
    assert "handles missing values" in analyze_documentation(source).capabilities
    assert "handles missing values" not in analyze_code(source).capabilities


def test_facts_resolve_aliases_argparse_and_required_params():
    facts = extract_facts(textwrap.dedent('''
        """Raw service without the kit."""
        import argparse, json
        import pandas as pd
        from sklearn.cluster import KMeans as Clusterer

        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--input"); parser.add_argument("--output"); parser.add_argument("--params")
            parser.add_argument("--n-clusters", type=int, default=4, help="how many clusters")
            args = parser.parse_args()
            params = json.load(open(args.params))
            frame = pd.read_csv(args.input + "/data.csv")
            Clusterer(n_clusters=args.n_clusters, init=params["init"]).fit(frame)
    '''))
    assert "sklearn.cluster.KMeans" in facts.symbols and "pandas.read_csv" in facts.symbols
    assert facts.parameters["n_clusters"].type == "int" and facts.parameters["n_clusters"].default == 4
    assert facts.parameters["n_clusters"].description == "how many clusters"
    assert facts.parameters["init"].required and "input" not in facts.parameters
