"""What library calls mean: the knowledge the static analyzer uses to turn code facts into a description.

Each entry says which stage a call is evidence for, how to say what it does in a sentence, which tasks it
fits and what it demands of its input. Names are matched on the last part of a resolved symbol (a class or
function of scikit-learn, pandas, scipy, matplotlib) or on a method name called on a DataFrame.
"""

from __future__ import annotations

from dataclasses import dataclass

from dagsmith.models.catalog import CLASSIFICATION_TASKS, Stage, TaskType

REGRESSION = (TaskType.REGRESSION,)


@dataclass(frozen=True)
class Meaning:
    stage: Stage
    phrase: str
    weight: float = 3.0
    tasks: tuple[TaskType, ...] = ()
    numeric_only: bool = False  # the estimator fails on text columns
    handles_missing: bool = False  # the estimator accepts NaN
    handles_categorical: bool = False
    strength: float | None = None  # a model's usual accuracy on tabular data, relative to the best family (1.0)


def _model(phrase: str, tasks, *, strength: float, missing: bool = False, categorical: bool = False) -> Meaning:
    return Meaning(Stage.MODELLING, phrase, 4.0, tuple(tasks), numeric_only=not categorical,
                   handles_missing=missing, handles_categorical=categorical, strength=strength)


def _clf(phrase: str, **kw) -> Meaning:
    return _model(phrase, CLASSIFICATION_TASKS, **kw)


def _reg(phrase: str, **kw) -> Meaning:
    return _model(phrase, REGRESSION, **kw)


def _twins(family: str, phrase: str, **kw) -> dict[str, Meaning]:
    """A family's classifier and regressor, alike but for the task: ``{}`` in ``phrase`` says which."""
    return {f"{family}Classifier": _clf(phrase.format("classifier"), **kw),
            f"{family}Regressor": _reg(phrase.format("regressor"), **kw)}


def _metric(phrase: str, tasks) -> Meaning:
    return Meaning(Stage.EVALUATION, phrase, 2.0, tuple(tasks))


_CLUSTERING = (TaskType.CLUSTERING,)
_ANOMALY = (TaskType.ANOMALY_DETECTION,)
_REDUCTION = (TaskType.DIMENSIONALITY_REDUCTION,)

#: Classes and functions, by name (scikit-learn unless said otherwise).
SYMBOLS: dict[str, Meaning] = {
    # imputation
    "SimpleImputer": Meaning(Stage.IMPUTATION, "fills missing values with a per-column statistic (mean, median or most "
                                               "frequent value)"),
    "KNNImputer": Meaning(Stage.IMPUTATION, "fills missing values (gaps) from the most similar rows, its k nearest "
                                            "neighbours (KNN imputation)"),
    "IterativeImputer": Meaning(Stage.IMPUTATION, "fills missing values by modelling each column from the others "
                                                  "(iterative, multivariate imputation)"),
    # splitting
    "train_test_split": Meaning(Stage.SPLITTING, "splits the rows into a training set and a held-out test set"),
    "TimeSeriesSplit": Meaning(Stage.SPLITTING, "splits rows in time order"),
    "GroupShuffleSplit": Meaning(Stage.SPLITTING, "splits rows into train and test by group, so no group appears in "
                                                  "both"),
    # encoding
    "OneHotEncoder": Meaning(Stage.ENCODING, "one-hot encodes categorical columns into binary indicator columns"),
    "OrdinalEncoder": Meaning(Stage.ENCODING, "encodes categorical columns as integer codes (ordinal encoding)"),
    "TargetEncoder": Meaning(Stage.ENCODING, "replaces each category by the average target value seen for that "
                                             "category (target encoding)"),
    "LabelEncoder": Meaning(Stage.ENCODING, "encodes labels as integers", 2.0),
    "get_dummies": Meaning(Stage.ENCODING, "one-hot encodes categorical columns (dummy variables)"),
    # scaling
    "StandardScaler": Meaning(Stage.SCALING, "standardises numeric features to zero mean and unit variance (z-score "
                                             "scaling)", handles_missing=True),
    "MinMaxScaler": Meaning(Stage.SCALING, "rescales numeric features to a fixed range such as 0 to 1 (min-max "
                                           "normalisation)", handles_missing=True),
    "RobustScaler": Meaning(Stage.SCALING, "scales numeric features by median and interquartile range, robust to "
                                           "outliers", handles_missing=True),
    "MaxAbsScaler": Meaning(Stage.SCALING, "scales numeric features by their maximum absolute value",
                            handles_missing=True),
    "QuantileTransformer": Meaning(Stage.SCALING, "maps numeric features to a uniform or normal distribution"),
    "PowerTransformer": Meaning(Stage.SCALING, "makes numeric features more Gaussian (Yeo-Johnson or Box-Cox)"),
    # feature selection and creation
    "VarianceThreshold": Meaning(Stage.FEATURE_SELECTION, "removes low-variance features"),
    "SelectKBest": Meaning(Stage.FEATURE_SELECTION, "keeps the k features most related to the target (univariate "
                                                    "feature selection)"),
    "SelectPercentile": Meaning(Stage.FEATURE_SELECTION, "keeps the top percentile of features by a univariate score"),
    "RFE": Meaning(Stage.FEATURE_SELECTION, "recursively eliminates the weakest features"),
    "SelectFromModel": Meaning(Stage.FEATURE_SELECTION, "keeps the features a model finds important"),
    "mutual_info_classif": Meaning(Stage.FEATURE_SELECTION, "scores features by mutual information with the target",
                                   1.0),
    "f_classif": Meaning(Stage.FEATURE_SELECTION, "scores features with ANOVA F-tests", 1.0),
    "f_regression": Meaning(Stage.FEATURE_SELECTION, "scores features with univariate regression F-tests", 1.0),
    "PolynomialFeatures": Meaning(Stage.FEATURE_ENGINEERING, "creates polynomial and interaction features from numeric "
                                                             "columns"),
    "SplineTransformer": Meaning(Stage.FEATURE_ENGINEERING, "creates spline basis features"),
    "KBinsDiscretizer": Meaning(Stage.FEATURE_ENGINEERING, "bins numeric features into intervals"),
    "MissingIndicator": Meaning(Stage.FEATURE_ENGINEERING, "adds indicator columns flagging where values are missing"),
    "FeatureHasher": Meaning(Stage.ENCODING, "hashes categorical values into a fixed number of numeric columns "
                                             "(hashing trick)"),
    "log1p": Meaning(Stage.SCALING, "log-transforms skewed non-negative features (log1p)"),
    # type conversion and loading (pandas)
    "to_numeric": Meaning(Stage.TYPE_CONVERSION, "converts numeric-looking text columns to numbers", 2.0),
    "to_datetime": Meaning(Stage.TYPE_CONVERSION, "parses date and time values", 1.5),
    "read_csv": Meaning(Stage.LOADING, "reads CSV and other delimited text files", 2.0),
    "read_excel": Meaning(Stage.LOADING, "reads Excel workbooks", 2.0),
    "read_json": Meaning(Stage.LOADING, "reads JSON and JSON-lines files", 2.0),
    "json_normalize": Meaning(Stage.LOADING, "flattens nested JSON records into columns", 2.0),
    "zscore": Meaning(Stage.OUTLIER_HANDLING, "computes z-scores", 1.0),
    # classification models
    "LogisticRegression": _clf("logistic regression classifier: an interpretable linear model giving class "
                               "probabilities for yes/no or multi-class outcomes", strength=0.85),
    "RandomForestClassifier": _clf("random forest classifier (ensemble of decision trees)", missing=True,
                                   strength=0.95),
    "SVC": _clf("support vector machine classifier (kernel SVM)", strength=0.85),
    "LinearSVC": _clf("linear support vector classifier", strength=0.8),
    "GaussianNB": _clf("Gaussian naive Bayes classifier", strength=0.7),
    "MultinomialNB": _clf("multinomial naive Bayes classifier", strength=0.7),
    "DecisionTreeClassifier": _clf("decision tree classifier (readable rules)", missing=True, strength=0.7),
    "AdaBoostClassifier": _clf("AdaBoost classifier", strength=0.85),
    "SGDClassifier": _clf("linear classifier trained with stochastic gradient descent", strength=0.8),
    "RidgeClassifier": _clf("ridge classifier", strength=0.8),
    "LinearDiscriminantAnalysis": _clf("linear discriminant analysis classifier (shared-covariance Gaussian classes, "
                                       "linear boundaries)", strength=0.8),
    # regression models
    "LinearRegression": _reg("ordinary least squares linear regression predicting a numeric target", strength=0.8),
    "Ridge": _reg("ridge regression (L2-regularised linear regression)", strength=0.8),
    "Lasso": _reg("lasso regression (L1-regularised linear regression)", strength=0.8),
    "ElasticNet": _reg("elastic net regression", strength=0.8),
    "RandomForestRegressor": _reg("random forest regressor (ensemble of regression trees)", missing=True,
                                  strength=0.95),
    "SVR": _reg("support vector regression", strength=0.85),
    "DecisionTreeRegressor": _reg("decision tree regressor", missing=True, strength=0.7),
    "HuberRegressor": _reg("Huber regression (linear regression robust to outliers in the target)", strength=0.8),
    # model families with a classifier and a regressor alike
    **_twins("ExtraTrees", "extremely randomised trees {}", strength=0.95),
    **_twins("GradientBoosting", "gradient boosting {}", strength=1.0),
    **_twins("HistGradientBoosting",
             "gradient boosted trees {} (histogram-based gradient boosting, fast on large tables)",
             missing=True, categorical=True, strength=1.0),
    **_twins("LGBM", "LightGBM gradient boosted trees {} (leaf-wise boosting, fast on large tables)",
             missing=True, categorical=True, strength=1.0),
    **_twins("KNeighbors", "k-nearest-neighbours {}", strength=0.75),
    **_twins("MLP", "multi-layer perceptron neural network {}", strength=0.85),
    # clustering
    "KMeans": Meaning(Stage.CLUSTERING, "groups rows into k clusters around centroids (k-means clustering)", 4.0,
                      _CLUSTERING, True),
    "MiniBatchKMeans": Meaning(Stage.CLUSTERING, "mini-batch k-means clustering for large tables", 4.0, _CLUSTERING,
                               True),
    "DBSCAN": Meaning(Stage.CLUSTERING, "density-based clustering that finds clusters of any shape and marks noise "
                                        "points (DBSCAN)", 4.0, _CLUSTERING, True),
    "HDBSCAN": Meaning(Stage.CLUSTERING, "hierarchical density-based clustering (HDBSCAN)", 4.0, _CLUSTERING, True),
    "OPTICS": Meaning(Stage.CLUSTERING, "density-based OPTICS clustering", 4.0, _CLUSTERING, True),
    "AgglomerativeClustering": Meaning(Stage.CLUSTERING, "hierarchical agglomerative clustering that merges the "
                                                         "closest groups", 4.0, _CLUSTERING, True),
    "GaussianMixture": Meaning(Stage.CLUSTERING, "probabilistic clustering with a Gaussian mixture model (soft cluster "
                                                 "membership)", 4.0, _CLUSTERING, True),
    "SpectralClustering": Meaning(Stage.CLUSTERING, "spectral clustering", 4.0, _CLUSTERING, True),
    "Birch": Meaning(Stage.CLUSTERING, "BIRCH clustering", 4.0, _CLUSTERING, True),
    # dimensionality reduction
    "PCA": Meaning(Stage.DIMENSIONALITY_REDUCTION, "projects numeric features onto principal components (PCA)", 3.0,
                   _REDUCTION, True),
    "TruncatedSVD": Meaning(Stage.DIMENSIONALITY_REDUCTION, "reduces dimensions with truncated singular value "
                            "decomposition (works on uncentred or sparse data)", 3.0, _REDUCTION, True),
    "TSNE": Meaning(Stage.DIMENSIONALITY_REDUCTION, "embeds rows in two dimensions with t-SNE for visual exploration",
                    4.0, _REDUCTION, True),
    "Isomap": Meaning(Stage.DIMENSIONALITY_REDUCTION, "non-linear dimensionality reduction with Isomap", 4.0,
                      _REDUCTION, True),
    "UMAP": Meaning(Stage.DIMENSIONALITY_REDUCTION, "non-linear dimensionality reduction with UMAP", 4.0, _REDUCTION,
                    True),
    "NMF": Meaning(Stage.DIMENSIONALITY_REDUCTION, "non-negative matrix factorisation", 3.0, _REDUCTION, True),
    "FactorAnalysis": Meaning(Stage.DIMENSIONALITY_REDUCTION, "factor analysis", 3.0, _REDUCTION, True),
    # anomaly detection
    "IsolationForest": Meaning(Stage.ANOMALY_DETECTION, "scores how anomalous each row is with an isolation forest",
                               4.0, _ANOMALY, True),
    "LocalOutlierFactor": Meaning(Stage.ANOMALY_DETECTION, "flags rows whose local density is much lower than their "
                                                           "neighbours' (local outlier factor)", 4.0, _ANOMALY, True),
    "OneClassSVM": Meaning(Stage.ANOMALY_DETECTION, "one-class SVM novelty detection", 4.0, _ANOMALY, True),
    "EllipticEnvelope": Meaning(Stage.ANOMALY_DETECTION, "robust covariance outlier detection", 4.0, _ANOMALY, True),
    "median_abs_deviation": Meaning(Stage.ANOMALY_DETECTION, "uses the median absolute deviation", 1.0, _ANOMALY),
    # evaluation
    "accuracy_score": _metric("accuracy", CLASSIFICATION_TASKS),
    "balanced_accuracy_score": _metric("balanced accuracy", CLASSIFICATION_TASKS),
    "f1_score": _metric("F1 score", CLASSIFICATION_TASKS),
    "precision_score": _metric("precision", CLASSIFICATION_TASKS),
    "recall_score": _metric("recall", CLASSIFICATION_TASKS),
    "roc_auc_score": _metric("ROC AUC", CLASSIFICATION_TASKS),
    "log_loss": _metric("log loss", CLASSIFICATION_TASKS),
    "mean_squared_error": _metric("mean squared error", REGRESSION),
    "root_mean_squared_error": _metric("RMSE", REGRESSION),
    "mean_absolute_error": _metric("MAE", REGRESSION),
    "r2_score": _metric("R squared", REGRESSION),
    "silhouette_score": _metric("silhouette score", _CLUSTERING),
    "calinski_harabasz_score": _metric("Calinski-Harabasz index", _CLUSTERING),
    "davies_bouldin_score": _metric("Davies-Bouldin index", _CLUSTERING),
    "adjusted_rand_score": _metric("adjusted Rand index", _CLUSTERING),
    "normalized_mutual_info_score": _metric("normalised mutual information", _CLUSTERING),
    "confusion_matrix": Meaning(Stage.EVALUATION, "confusion matrix", 1.0, CLASSIFICATION_TASKS),
    "roc_curve": Meaning(Stage.EVALUATION, "ROC curve", 1.0, (TaskType.BINARY_CLASSIFICATION,)),
    "precision_recall_curve": Meaning(Stage.EVALUATION, "precision-recall curve", 1.0,
                                      (TaskType.BINARY_CLASSIFICATION,)),
    "average_precision_score": _metric("average precision", CLASSIFICATION_TASKS),
    "brier_score_loss": _metric("Brier score", CLASSIFICATION_TASKS),
    "calibration_curve": Meaning(Stage.EVALUATION, "calibration (reliability) curve", 1.0,
                                 (TaskType.BINARY_CLASSIFICATION,)),
    "cohen_kappa_score": _metric("Cohen's kappa", CLASSIFICATION_TASKS),
    "matthews_corrcoef": _metric("Matthews correlation coefficient", CLASSIFICATION_TASKS),
    "precision_recall_fscore_support": _metric("per-class precision, recall and F1", CLASSIFICATION_TASKS),
    "mean_absolute_percentage_error": _metric("MAPE", REGRESSION),
    "median_absolute_error": _metric("median absolute error", REGRESSION),
    "max_error": _metric("max error", REGRESSION),
    "explained_variance_score": _metric("explained variance", REGRESSION),
    "d2_absolute_error_score": _metric("D2 absolute error score", REGRESSION),
    "permutation_importance": _metric("permutation feature importance", CLASSIFICATION_TASKS + REGRESSION),
    "cross_validate": _metric("k-fold cross-validated scores", CLASSIFICATION_TASKS + REGRESSION),
    # visualisation (matplotlib, seaborn)
    "savefig": Meaning(Stage.VISUALISATION, "saves plots as images", 5.0),
    "subplots": Meaning(Stage.VISUALISATION, "draws charts", 1.0),
    "ConfusionMatrixDisplay": Meaning(Stage.VISUALISATION, "plots a confusion matrix", 3.0, CLASSIFICATION_TASKS),
    "RocCurveDisplay": Meaning(Stage.VISUALISATION, "plots a ROC curve", 3.0, (TaskType.BINARY_CLASSIFICATION,)),
}

#: Helpers of dagsmith_kit's modules that carry a stage of their own.
SYMBOLS.update({
    "save_figure": SYMBOLS["savefig"],
    "write_loaded": Meaning(Stage.LOADING, "loads a raw dataset file into a table", 2.5),
    "impute_tables": Meaning(Stage.IMPUTATION, "fills missing values, learning on the training table", 2.5),
    "write_clusters": Meaning(Stage.CLUSTERING, "assigns a cluster label per row", 2.5, _CLUSTERING),
    "write_anomalies": Meaning(Stage.ANOMALY_DETECTION, "scores and flags anomalous rows", 2.5, _ANOMALY),
    "reduce_tables": Meaning(Stage.DIMENSIONALITY_REDUCTION, "replaces numeric features by a few components", 2.5,
                             _REDUCTION),
    "without_columns": Meaning(Stage.COLUMN_FILTERING, "drops the feature columns chosen on the training table from "
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
})

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
    "cluster": Meaning(Stage.CLUSTERING, "clusters rows", 1.5, _CLUSTERING),
    "anomal": Meaning(Stage.ANOMALY_DETECTION, "detects anomalies", 1.5, _ANOMALY),
    "reduc": Meaning(Stage.DIMENSIONALITY_REDUCTION, "reduces dimensions", 1.0, _REDUCTION),
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
    "anomaly_score": Meaning(Stage.ANOMALY_DETECTION, "writes an anomaly score per row", 3.0, _ANOMALY),
    "is_anomaly": Meaning(Stage.ANOMALY_DETECTION, "flags anomalous rows", 2.0, _ANOMALY),
    "cluster": Meaning(Stage.CLUSTERING, "assigns a cluster label per row", 1.0),
    "component_": Meaning(Stage.DIMENSIONALITY_REDUCTION, "writes components", 1.0),
    "dayofweek": Meaning(Stage.FEATURE_ENGINEERING, "extracts calendar features (year, month, day of week) from dates",
                         3.0),
}

#: The kit's functions that fit a model on ``train`` and predict ``test`` (the second also validates and tunes).
FITS_AND_PREDICTS = ("fit_and_predict", "tune_fit_and_predict")

#: Methods of a dagsmith_kit Bundle, mapped to the bundle files they read or write.
BUNDLE_READS = {
    "table": "{arg}.parquet", "tables": "data or train/test tables", "fit_table": "data or train table",
    "load_model": "model.joblib", "predictions": "predictions.parquet", "metrics": "metrics.json",
    "source_file": "source file (raw dataset)", "transform_tables": "data or train/test tables",
    **dict.fromkeys(FITS_AND_PREDICTS, "train.parquet and test.parquet"),
    "impute_tables": "data or train/test tables", "fit_replace": "data or train/test tables",
    "reduce_tables": "data or train/test tables", "require_source": "source file (raw dataset)",
    "analysis_table": "data or train/test tables", "data_matrix": "data table",
    "regression_results": "test.parquet and predictions.parquet",
    "classification_results": "test.parquet and predictions.parquet",
}
BUNDLE_WRITES = {
    "write_table": "{arg}.parquet", "save_model": "model.joblib", "write_predictions": "predictions.parquet",
    "write_metrics": "metrics.json", "artifact_path": "artifacts/*.png", "append_report": "report.md",
    "transform_tables": "data or train/test tables",
    **dict.fromkeys(FITS_AND_PREDICTS, "model.joblib, predictions.parquet"),
    "impute_tables": "data or train/test tables", "fit_replace": "data or train/test tables",
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
REJECTS_MISSING = {"require_complete", "numeric_features", "data_matrix"}
#: dagsmith_kit helpers that fit on the training table only and apply to every table.
FITS_ON_TRAIN = {"transform_tables", "impute_tables", "fit_replace", "reduce_tables", "fit_table"}
#: Row splitters that draw rows at random, and those that do so when called with ``shuffle=True``.
SHUFFLES_ROWS = {"train_test_split", "ShuffleSplit", "StratifiedShuffleSplit", "GroupShuffleSplit", "permutation"}
SHUFFLES_WHEN_ASKED = {"KFold", "StratifiedKFold", "RepeatedKFold", "RepeatedStratifiedKFold"}
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
