"""What code means: the knowledge the static analyzer uses to turn code facts into a description.

Each entry says which stage a call is evidence for, how to say what it does in a sentence, which tasks it
fits and what it demands of its input. Names are matched on the last part of a resolved symbol (a class or
function of scikit-learn, pandas, scipy, matplotlib: ``catalog.library``; or of dagsmith_kit, below) or on a method
name called on a DataFrame.
"""

from __future__ import annotations

from dagsmith.catalog.library import ANOMALY, CLUSTERING, LIBRARY_SYMBOLS, REDUCTION, REGRESSION, Meaning
from dagsmith.models.catalog import CLASSIFICATION_TASKS, Stage, TaskType

#: Classes and functions by name: the libraries' (``catalog.library``) and dagsmith_kit's helpers that carry a stage
#: of their own.
SYMBOLS: dict[str, Meaning] = {
    **LIBRARY_SYMBOLS,
    "save_figure": LIBRARY_SYMBOLS["savefig"],
    "write_loaded": Meaning(Stage.LOADING, "loads a raw dataset file into a table", 2.5),
    "impute_tables": Meaning(Stage.IMPUTATION, "fills missing values, learning on the training table", 2.5),
    "clip_tables": Meaning(Stage.OUTLIER_HANDLING, "clips extreme values to bounds learned on the training table", 2.5),
    "write_clusters": Meaning(Stage.CLUSTERING, "assigns a cluster label per row", 2.5, CLUSTERING),
    "write_anomalies": Meaning(Stage.ANOMALY_DETECTION, "scores and flags anomalous rows", 2.5, ANOMALY),
    "reduce_tables": Meaning(Stage.DIMENSIONALITY_REDUCTION, "replaces numeric features by a few components", 2.5,
                             REDUCTION),
    "without_columns": Meaning(Stage.COLUMN_FILTERING, "drops the feature columns chosen on the training table from "
                                                       "every table", 3.0),
    "drop_columns": Meaning(Stage.COLUMN_FILTERING, "drops the feature columns chosen on the training table from "
                                                    "every table", 3.0),
    "save_text_artifact": Meaning(Stage.REPORTING, "writes a results file (JSON or CSV) into artifacts/", 2.5),
    "write_explanation": Meaning(Stage.EXPLANATION, "names the features that drive the model's predictions and their "
                                 "direction, from permutation importance on held-out rows", 4.0,
                                 CLASSIFICATION_TASKS + REGRESSION),
    "write_exploration": Meaning(Stage.EDA, "describes summary statistics, distributions, missing values, correlations "
                                 "and outliers per column, and ranks how every column goes with a focus column", 4.0,
                                 (TaskType.EXPLORATORY_ANALYSIS,)),
    "strongest_pairs": Meaning(Stage.EDA, "computes correlations between columns", 2.5,
                               (TaskType.EXPLORATORY_ANALYSIS,)),
    "correlation_heatmap": Meaning(Stage.VISUALISATION, "saves a correlation heatmap as an image", 5.0),
    "distribution_grid": Meaning(Stage.VISUALISATION, "saves a histogram or bar chart of every column as an image",
                                 5.0),
}

#: Words in identifiers (function names) and in documentation that point at a stage.
STAGE_WORDS: dict[str, Meaning] = {
    "load": Meaning(Stage.LOADING, "loads data", 1.5),
    "validat": Meaning(Stage.VALIDATION, "checks that the data is usable and stops the pipeline if not", 1.5),
    "duplicate": Meaning(Stage.DEDUPLICATION, "removes duplicate rows", 1.5),
    "dedup": Meaning(Stage.DEDUPLICATION, "removes duplicate rows", 1.5),
    "impute": Meaning(Stage.IMPUTATION, "fills missing values", 1.5),
    "missing": Meaning(Stage.IMPUTATION, "handles missing values", 1.0),
    "outlier": Meaning(Stage.OUTLIER_HANDLING, "removes or limits outlier rows", 1.5),
    "split": Meaning(Stage.SPLITTING, "splits the data", 1.5),
    "encod": Meaning(Stage.ENCODING, "encodes categorical columns", 1.5),
    "scal": Meaning(Stage.SCALING, "scales numeric features", 1.5),
    "normaliz": Meaning(Stage.SCALING, "normalises numeric features", 1.0),
    "select": Meaning(Stage.FEATURE_SELECTION, "selects features", 1.0),
    "feature": Meaning(Stage.FEATURE_ENGINEERING, "creates features", 0.5),
    "classif": Meaning(Stage.MODELLING, "classification model", 1.5, CLASSIFICATION_TASKS),
    "regress": Meaning(Stage.MODELLING, "regression model", 1.5, REGRESSION),
    "cluster": Meaning(Stage.CLUSTERING, "clusters rows", 1.5, CLUSTERING),
    "anomal": Meaning(Stage.ANOMALY_DETECTION, "detects anomalies", 1.5, ANOMALY),
    "reduc": Meaning(Stage.DIMENSIONALITY_REDUCTION, "reduces dimensions", 1.0, REDUCTION),
    "evaluat": Meaning(Stage.EVALUATION, "evaluates predictions", 1.5),
    "metric": Meaning(Stage.EVALUATION, "computes metrics", 1.0),
    "correlat": Meaning(Stage.EDA, "computes correlations between columns", 1.5, (TaskType.EXPLORATORY_ANALYSIS,)),
    "statistic": Meaning(Stage.EDA, "computes descriptive statistics", 1.5, (TaskType.EXPLORATORY_ANALYSIS,)),
    "stats": Meaning(Stage.EDA, "computes descriptive statistics", 1.5, (TaskType.EXPLORATORY_ANALYSIS,)),
    "profil": Meaning(Stage.EDA, "profiles the data", 1.0, (TaskType.EXPLORATORY_ANALYSIS,)),
    "plot": Meaning(Stage.VISUALISATION, "draws charts", 1.5),
    "chart": Meaning(Stage.VISUALISATION, "draws charts", 1.5),
    "report": Meaning(Stage.REPORTING, "writes a report", 1.0),
}

#: Methods called on DataFrames and Series.
METHODS: dict[str, Meaning] = {
    "fillna": Meaning(Stage.IMPUTATION, "fills missing values", 1.5),
    "dropna": Meaning(Stage.IMPUTATION, "drops rows with missing values", 1.0),
    "interpolate": Meaning(Stage.IMPUTATION, "interpolates missing values", 2.0),
    "drop_duplicates": Meaning(Stage.DEDUPLICATION, "removes duplicate rows", 3.0),
    "duplicated": Meaning(Stage.DEDUPLICATION, "detects duplicate rows", 1.5),
    "clip": Meaning(Stage.OUTLIER_HANDLING, "clips extreme values to bounds (winsorising)", 2.0),
    "describe": Meaning(Stage.EDA, "computes descriptive statistics", 2.0, (TaskType.EXPLORATORY_ANALYSIS,)),
    "corr": Meaning(Stage.EDA, "computes correlations between columns", 2.5, (TaskType.EXPLORATORY_ANALYSIS,)),
    "skew": Meaning(Stage.EDA, "measures skewness", 1.0, (TaskType.EXPLORATORY_ANALYSIS,)),
    "quantile": Meaning(Stage.OUTLIER_HANDLING, "uses quantiles", 0.5),
    "isna": Meaning(Stage.IMPUTATION, "handles rows with missing values", 1.0),
    "notna": Meaning(Stage.IMPUTATION, "handles rows with missing values", 1.0),
    "read_parquet": Meaning(Stage.LOADING, "reads Parquet files", 1.0),
    "savefig": SYMBOLS["savefig"],
    "hist": Meaning(Stage.VISUALISATION, "draws histograms", 1.5),
    "scatter": Meaning(Stage.VISUALISATION, "draws scatter plots", 1.5),
    "imshow": Meaning(Stage.VISUALISATION, "draws heatmaps", 1.0),
    "barh": Meaning(Stage.VISUALISATION, "draws bar charts", 1.0),
    "bar": Meaning(Stage.VISUALISATION, "draws bar charts", 1.0),
    "filter": Meaning(Stage.COLUMN_FILTERING, "keeps only the named columns", 2.0),
    "shift": Meaning(Stage.FEATURE_ENGINEERING, "adds a column's earlier values as features (lags)", 3.0,
                     (TaskType.TIME_SERIES_FORECASTING,)),
    "rolling": Meaning(Stage.FEATURE_ENGINEERING, "adds statistics over a moving window of earlier rows", 2.0,
                       (TaskType.TIME_SERIES_FORECASTING,)),
}

#: What a chart shows, read from the calls and attributes around the plotting code.
PLOT_SUBJECTS: dict[str, str] = {
    "hist": "histograms of column distributions", "confusion_matrix": "a confusion matrix", "roc_curve": "a ROC curve",
    "roc_auc_score": "a ROC curve", "feature_importances_": "feature importances", "coef_": "model coefficients",
    "corr": "a correlation heatmap", "correlation_heatmap": "a correlation heatmap",
    "distribution_grid": "histograms of column distributions", "cluster": "rows coloured by cluster in a 2D scatter "
                                                                          "plot",
    "residual": "residuals", "boxplot": "box plots", "value_counts": "bar charts of category frequencies",
    "precision_recall_curve": "a precision-recall curve", "anomaly_score": "anomaly scores",
    "regression_results": "regression predictions against the actual test target",
    "explained_variance_ratio_": "the share of the variance each component keeps",
    "components_": "the features' loadings on the components",
}

#: Computations recognised by their shape in the syntax tree (see ``CodeFacts.patterns``).
PATTERNS: dict[str, Meaning] = {
    "zscore": Meaning(Stage.OUTLIER_HANDLING, "finds values more than a threshold of standard deviations from the mean "
                                              "(z-score outliers)", 2.5),
    "iqr": Meaning(Stage.OUTLIER_HANDLING, "finds values outside Tukey's interquartile-range fences (IQR outliers)",
                   2.0),
}

#: String literals that name what a step produces.
LITERALS: dict[str, Meaning] = {
    "anomaly_score": Meaning(Stage.ANOMALY_DETECTION, "writes an anomaly score per row", 3.0, ANOMALY),
    "is_anomaly": Meaning(Stage.ANOMALY_DETECTION, "flags anomalous rows", 2.0, ANOMALY),
    "cluster": Meaning(Stage.CLUSTERING, "assigns a cluster label per row", 1.0),
    "component_": Meaning(Stage.DIMENSIONALITY_REDUCTION, "writes components", 1.0),
    "dayofweek": Meaning(Stage.FEATURE_ENGINEERING, "extracts calendar features (year, month, day of week) from dates",
                         3.0),
    "day_of_week": Meaning(Stage.FEATURE_ENGINEERING, "extracts calendar features (month, day of week) from dates",
                           3.0),
}

#: The kit's functions that fit a model on ``train`` and predict ``test`` (the second also validates and tunes; the
#: third is the step of a forest service, which does both on numeric features).
FITS_AND_PREDICTS = ("fit_and_predict", "tune_fit_and_predict", "forest_step")

#: Methods of a dagsmith_kit Bundle, mapped to the bundle files they read or write.
BUNDLE_READS = {
    "table": "{arg}.parquet", "tables": "data or train/test tables", "fit_table": "data or train table",
    "load_model": "model.joblib", "predictions": "predictions.parquet", "metrics": "metrics.json",
    "source_file": "source file (raw dataset)", "transform_tables": "data or train/test tables",
    **dict.fromkeys(FITS_AND_PREDICTS, "train.parquet and test.parquet"),
    "impute_tables": "data or train/test tables", "fit_replace": "data or train/test tables",
    "clip_tables": "data or train/test tables", "drop_columns": "data or train/test tables",
    "reduce_tables": "data or train/test tables", "require_source": "source file (raw dataset)",
    "analysis_table": "data or train/test tables", "data_matrix": "data table",
    "regression_results": "test.parquet and predictions.parquet",
    "classification_results": "test.parquet and predictions.parquet",
    "binary_results": "test.parquet and predictions.parquet",
    "predicted_table": "predictions.parquet and the data or test table",
}
BUNDLE_WRITES = {
    "write_table": "{arg}.parquet", "save_model": "model.joblib", "write_predictions": "predictions.parquet",
    "write_metrics": "metrics.json", "artifact_path": "artifacts/*.png", "append_report": "report.md",
    "transform_tables": "data or train/test tables",
    **dict.fromkeys(FITS_AND_PREDICTS, "model.joblib, predictions.parquet"),
    "impute_tables": "data or train/test tables", "fit_replace": "data or train/test tables",
    "clip_tables": "data or train/test tables", "drop_columns": "data or train/test tables",
    "reduce_tables": "data or train/test tables", "write_loaded": "data.parquet",
    "write_clusters": "predictions.parquet (cluster)", "write_anomalies": "predictions.parquet (anomaly_score, "
                                                                          "is_anomaly)",
    "save_figure": "artifacts/*.png", "save_text_artifact": "artifacts/*.json or *.csv",
    "write_explanation": "explanation.json", "write_exploration": "exploration.json",
    "correlation_heatmap": "artifacts/*.png", "distribution_grid": "artifacts/*.png",
}

USE_CASES: dict[Stage, list[str]] = {
    Stage.LOADING: ["turn a raw CSV, Excel, JSON or Parquet file into a table"],
    Stage.VALIDATION: ["stop a pipeline early when the data is empty, too small or lacks the target"],
    Stage.DEDUPLICATION: ["remove repeated records before training"],
    Stage.TYPE_CONVERSION: ["fix columns read as text that hold numbers, booleans or dates"],
    Stage.COLUMN_FILTERING: ["drop constant and identifier columns that carry no signal"],
    Stage.IMPUTATION: ["prepare data with missing values for models that cannot handle them"],
    Stage.OUTLIER_HANDLING: ["limit the influence of extreme values"],
    Stage.SPLITTING: ["hold out a test set for honest evaluation"],
    Stage.ENCODING: ["turn categorical columns into numbers a model can use"],
    Stage.SCALING: ["put features on comparable scales for distance-based and linear models"],
    Stage.FEATURE_SELECTION: ["reduce the number of features to the informative ones"],
    Stage.FEATURE_ENGINEERING: ["create new features from existing columns"],
    Stage.MODELLING: ["train a predictive model and predict held-out rows"],
    Stage.CLUSTERING: ["segment rows (customers, items) into groups without labels"],
    Stage.DIMENSIONALITY_REDUCTION: ["compress many numeric features into a few components", ("visualise "
                                                                                              "high-dimensional data")],
    Stage.ANOMALY_DETECTION: ["find unusual records such as fraud or faults"],
    Stage.EVALUATION: ["measure how good a model's predictions are on held-out data"],
    Stage.EXPLANATION: ["explain which features drive a model's predictions and in which direction"],
    Stage.EDA: ["understand a dataset before modelling"],
    Stage.VISUALISATION: ["show results as charts"],
    Stage.REPORTING: ["summarise a pipeline run for people"],
}

#: dagsmith_kit helpers that refuse missing values in the columns they are given (unless allow_missing=True).
REJECTS_MISSING = {"require_complete", "numeric_features", "data_matrix", "forest_step"}
#: dagsmith_kit helpers that refuse every task but these: a service that calls one fits no other, whatever else its
#: calls could serve (a Brier score is defined for many classes, a reliability curve from ``binary_results`` is not).
ONLY_TASKS = {"binary_results": (TaskType.BINARY_CLASSIFICATION,)}
#: dagsmith_kit helpers that fit on the training table only and apply to every table.
FITS_ON_TRAIN = {"transform_tables", "impute_tables", "clip_tables", "fit_replace", "reduce_tables", "fit_table",
                 "drop_columns"}
#: dagsmith_kit helpers that write the step's report section themselves, as a call to ``append_report`` would.
WRITES_REPORT = {"forest_step", "drop_columns"}
#: Row splitters that draw rows at random, and those that do so when called with ``shuffle=True``.
SHUFFLES_ROWS = {"train_test_split", "ShuffleSplit", "StratifiedShuffleSplit", "GroupShuffleSplit", "permutation"}
SHUFFLES_WHEN_ASKED = {"KFold", "StratifiedKFold", "RepeatedKFold", "RepeatedStratifiedKFold"}
#: scikit-learn's metric functions and the metrics (``dagsmith_kit.metrics`` names) a call of each reports.
METRIC_FUNCTIONS = {
    "accuracy_score": ("accuracy",), "balanced_accuracy_score": ("balanced_accuracy",), "f1_score": ("f1",),
    "roc_auc_score": ("roc_auc",), "recall_score": ("recall",), "precision_score": ("precision",),
    "precision_recall_fscore_support": ("precision", "recall", "f1"), "log_loss": ("log_loss",),
    "r2_score": ("r2",), "mean_absolute_error": ("mae",), "mean_squared_error": ("rmse",),
    "root_mean_squared_error": ("rmse",), "mean_absolute_percentage_error": ("mape",),
}
#: Splitters that put every row of a group on the same side.
KEEPS_GROUPS = {"GroupShuffleSplit", "GroupKFold", "StratifiedGroupKFold", "LeaveOneGroupOut", "LeavePGroupsOut"}
#: dagsmith_kit helpers that put preparation steps inside the model they wrap (a model that reads raw columns).
PREPARES_INSIDE = {"with_linear_inputs": (Stage.IMPUTATION, Stage.ENCODING, Stage.SCALING)}
#: Markers of native categorical support in estimators.
NATIVE_CATEGORICAL = {"category", "from_dtype", "with_native_categories"}

#: Stages whose services do more than reshape tables: helpers inside them (a scaler inside a kNN model)
#: are capabilities rather than stages of their own.
TERMINAL_STAGES = {
    Stage.VALIDATION,
    Stage.MODELLING, Stage.CLUSTERING, Stage.ANOMALY_DETECTION, Stage.DIMENSIONALITY_REDUCTION,
    Stage.EVALUATION, Stage.EXPLANATION, Stage.VISUALISATION, Stage.EDA, Stage.REPORTING,
}

#: The analyses an exploration can ask for (the intent's ``analyses``, plus ``associations`` when the goal names a
#: focus column), by the word stem that names each in what the code is read to do.
ANALYSIS_TERMS = {"statistics": "statistic", "distributions": "distribution", "missingness": "missing",
                  "correlations": "correlat", "outliers": "outlier", "associations": "focus column"}

#: Model families a goal can rule out, by the estimator names that belong to them (prefix match).
MODEL_FAMILY_ALGORITHMS: dict[str, tuple[str, ...]] = {
    "neural_network": ("MLP",),
    "svm": ("SVC", "SVR", "LinearSVC", "OneClassSVM"),
    "gradient_boosting": ("HistGradientBoosting", "GradientBoosting", "AdaBoost", "LGBM"),
    "random_forest": ("RandomForest", "ExtraTrees"),
    "tree_ensemble": ("RandomForest", "ExtraTrees", "HistGradientBoosting", "GradientBoosting", "AdaBoost", "LGBM"),
    "knn": ("KNeighbors",),
    "naive_bayes": ("GaussianNB", "MultinomialNB"),
    "decision_tree": ("DecisionTree",),
    "linear_model": ("LogisticRegression", "LinearRegression", "Ridge", "Lasso", "ElasticNet", "SGD", "HuberRegressor",
                     "LinearDiscriminantAnalysis"),
}


def model_family(algorithms: list[str]) -> str | None:
    """The family of a service's estimators (the first that names one), for telling alike models from different
    ones: every tree ensemble (boosted, random or extremely randomised) is one family, as they err alike."""
    named = [family for family, prefixes in MODEL_FAMILY_ALGORITHMS.items()
             if any(algorithm.startswith(prefixes) for algorithm in algorithms)]
    return "tree_ensemble" if "tree_ensemble" in named else next(iter(named), None)
