"""Code-grounded analysis: what the analyzer reads from real microservice code, and where docs mislead."""

from __future__ import annotations

import textwrap

import pytest

from dagsmith.catalog.analysis.code import analyze_code
from dagsmith.catalog.analysis.documentation import analyze_documentation
from dagsmith.catalog.facts import extract_facts
from dagsmith.catalog.source import ServiceSource
from tests.conftest import CATALOG


def analysis(name: str):
    return analyze_code(ServiceSource.read(CATALOG / name))


def param(result, name: str):
    return next(p for p in result.parameters if p.name == name)


@pytest.mark.parametrize("name, stage", [
    ("tabular_loader", "loading"), ("schema_validator", "validation"), ("deduplicator", "deduplication"),
    ("type_fixer", "type_conversion"), ("constant_column_dropper", "column_filtering"),
    ("knn_imputer", "imputation"), ("iqr_outlier_clipper", "outlier_handling"),
    ("zscore_outlier_remover", "outlier_handling"), ("train_test_splitter", "splitting"),
    ("time_series_splitter", "splitting"), ("frequency_encoder", "encoding"), ("robust_scaler", "scaling"),
    ("kbest_selector", "feature_selection"), ("datetime_feature_extractor", "feature_engineering"),
    ("svm_classifier", "modelling"), ("ridge_regression", "modelling"), ("dbscan_clustering", "clustering"),
    ("truncated_svd_reducer", "dimensionality_reduction"), ("robust_zscore_detector", "anomaly_detection"),
    ("regression_evaluator", "evaluation"), ("outlier_report", "eda"), ("roc_curve_plot", "visualisation"),
    ("markdown_report", "reporting"),
    ("json_loader", "loading"), ("target_validator", "validation"), ("fuzzy_deduplicator", "deduplication"),
    ("locale_number_parser", "type_conversion"), ("high_missing_column_dropper", "column_filtering"),
    ("high_cardinality_column_dropper", "column_filtering"), ("correlated_feature_dropper", "column_filtering"),
    ("most_frequent_imputer", "imputation"), ("missing_indicator_adder", "feature_engineering"),
    ("winsorizer", "outlier_handling"), ("group_splitter", "splitting"), ("woe_encoder", "encoding"),
    ("hashing_encoder", "encoding"), ("log_transformer", "scaling"), ("power_transformer", "scaling"),
    ("kbins_discretizer", "feature_engineering"), ("rfe_selector", "feature_selection"),
    ("l1_selector", "feature_selection"),
    ("extra_trees_classifier", "modelling"), ("extra_trees_regressor", "modelling"),
    ("lightgbm_classifier", "modelling"), ("lightgbm_regressor", "modelling"), ("adaboost_classifier", "modelling"),
    ("sgd_classifier", "modelling"), ("mlp_classifier", "modelling"), ("linear_discriminant_analysis", "modelling"),
    ("lasso_regression", "modelling"), ("elasticnet_regression", "modelling"), ("huber_regressor", "modelling"),
    ("decision_tree_regressor", "modelling"), ("minibatch_kmeans", "clustering"),
    ("spectral_clustering", "clustering"), ("one_class_svm_detector", "anomaly_detection"),
    ("elliptic_envelope_detector", "anomaly_detection"), ("nmf_reducer", "dimensionality_reduction"),
    ("factor_analysis_reducer", "dimensionality_reduction"),
    ("precision_recall_curve_plot", "visualisation"), ("multiclass_roc_plot", "visualisation"),
    ("residual_plot", "visualisation"), ("prediction_vs_actual_plot", "visualisation"),
    ("missing_values_heatmap", "visualisation"), ("anomaly_score_plot", "visualisation"),
    ("json_report_writer", "reporting"), ("column_selector", "column_filtering"),
    ("predictions_csv_exporter", "reporting"), ("data_dictionary_writer", "eda"),
    ("model_card_writer", "reporting"),
    ("binary_threshold_optimizer", "evaluation"), ("calibration_evaluator", "evaluation"),
    ("binary_calibration_evaluator", "evaluation"), ("precision_recall_evaluator", "evaluation"),
    ("lift_gain_evaluator", "evaluation"), ("classification_report_evaluator", "evaluation"),
    ("kappa_mcc_evaluator", "evaluation"), ("log_loss_evaluator", "evaluation"),
    ("residual_analysis_evaluator", "evaluation"), ("regression_error_evaluator", "evaluation"),
    ("explained_variance_evaluator", "evaluation"), ("bootstrap_metric_ci", "evaluation"),
    ("baseline_comparison_evaluator", "evaluation"), ("permutation_importance_evaluator", "evaluation"),
    ("cross_validation_evaluator", "evaluation"), ("anomaly_evaluator", "evaluation"),
    ("cluster_stability_evaluator", "evaluation"), ("fairness_group_evaluator", "evaluation"),
])
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


def test_capabilities_and_requirements_distinguish_near_duplicates():
    strict, tolerant = analysis("standard_scaler_strict"), analysis("standard_scaler")
    assert any("refuses input with missing values" in r for r in strict.requirements_on_input)
    assert "handles missing values" in tolerant.capabilities
    boosting, logistic = analysis("gradient_boosting_classifier"), analysis("logistic_regression")
    assert {"handles missing values", "handles categorical features natively"} <= set(boosting.capabilities)
    assert any("numeric features only" in r for r in logistic.requirements_on_input)
    assert set(logistic.task_types) == {"binary_classification", "multiclass_classification"}
    assert analysis("csv_loader").inputs.count("CSV/TSV files") == 1
    assert "Excel files" in analysis("tabular_loader").inputs and "Excel files" not in analysis("csv_loader").inputs


def test_io_is_read_from_bundle_calls():
    evaluator = analysis("classification_evaluator")
    assert "predictions.parquet" in evaluator.inputs and "metrics.json" in evaluator.outputs
    assert "a train/test split" in evaluator.requirements_on_input


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
