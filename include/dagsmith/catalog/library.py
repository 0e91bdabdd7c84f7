"""What library calls mean: scikit-learn's, pandas', scipy's and matplotlib's classes and functions, by name, each
with the stage it is evidence for, how to say what it does in a sentence, which tasks it fits and what it demands
of its input (``catalog.knowledge`` adds dagsmith_kit's helpers and the words the analyzer reads)."""

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


CLUSTERING = (TaskType.CLUSTERING,)
ANOMALY = (TaskType.ANOMALY_DETECTION,)
REDUCTION = (TaskType.DIMENSIONALITY_REDUCTION,)

#: Classes and functions, by name (scikit-learn unless said otherwise).
LIBRARY_SYMBOLS: dict[str, Meaning] = {
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
                      CLUSTERING, True),
    "MiniBatchKMeans": Meaning(Stage.CLUSTERING, "mini-batch k-means clustering for large tables", 4.0, CLUSTERING,
                               True),
    "DBSCAN": Meaning(Stage.CLUSTERING, "density-based clustering that finds clusters of any shape and marks noise "
                                        "points (DBSCAN)", 4.0, CLUSTERING, True),
    "HDBSCAN": Meaning(Stage.CLUSTERING, "hierarchical density-based clustering (HDBSCAN)", 4.0, CLUSTERING, True),
    "OPTICS": Meaning(Stage.CLUSTERING, "density-based OPTICS clustering", 4.0, CLUSTERING, True),
    "AgglomerativeClustering": Meaning(Stage.CLUSTERING, "hierarchical agglomerative clustering that merges the "
                                                         "closest groups", 4.0, CLUSTERING, True),
    "GaussianMixture": Meaning(Stage.CLUSTERING, "probabilistic clustering with a Gaussian mixture model (soft cluster "
                                                 "membership)", 4.0, CLUSTERING, True),
    "SpectralClustering": Meaning(Stage.CLUSTERING, "spectral clustering", 4.0, CLUSTERING, True),
    "Birch": Meaning(Stage.CLUSTERING, "BIRCH clustering", 4.0, CLUSTERING, True),
    # dimensionality reduction
    "PCA": Meaning(Stage.DIMENSIONALITY_REDUCTION, "projects numeric features onto principal components (PCA)", 3.0,
                   REDUCTION, True),
    "TruncatedSVD": Meaning(Stage.DIMENSIONALITY_REDUCTION, "reduces dimensions with truncated singular value "
                            "decomposition (works on uncentred or sparse data)", 3.0, REDUCTION, True),
    "TSNE": Meaning(Stage.DIMENSIONALITY_REDUCTION, "embeds rows in two dimensions with t-SNE for visual exploration",
                    4.0, REDUCTION, True),
    "Isomap": Meaning(Stage.DIMENSIONALITY_REDUCTION, "non-linear dimensionality reduction with Isomap", 4.0,
                      REDUCTION, True),
    "UMAP": Meaning(Stage.DIMENSIONALITY_REDUCTION, "non-linear dimensionality reduction with UMAP", 4.0, REDUCTION,
                    True),
    "NMF": Meaning(Stage.DIMENSIONALITY_REDUCTION, "non-negative matrix factorisation", 3.0, REDUCTION, True),
    "FactorAnalysis": Meaning(Stage.DIMENSIONALITY_REDUCTION, "factor analysis", 3.0, REDUCTION, True),
    # anomaly detection
    "IsolationForest": Meaning(Stage.ANOMALY_DETECTION, "scores how anomalous each row is with an isolation forest",
                               4.0, ANOMALY, True),
    "LocalOutlierFactor": Meaning(Stage.ANOMALY_DETECTION, "flags rows whose local density is much lower than their "
                                                           "neighbours' (local outlier factor)", 4.0, ANOMALY, True),
    "OneClassSVM": Meaning(Stage.ANOMALY_DETECTION, "one-class SVM novelty detection", 4.0, ANOMALY, True),
    "EllipticEnvelope": Meaning(Stage.ANOMALY_DETECTION, "robust covariance outlier detection", 4.0, ANOMALY, True),
    "median_abs_deviation": Meaning(Stage.ANOMALY_DETECTION, "uses the median absolute deviation", 1.0, ANOMALY),
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
    "silhouette_score": _metric("silhouette score", CLUSTERING),
    "calinski_harabasz_score": _metric("Calinski-Harabasz index", CLUSTERING),
    "davies_bouldin_score": _metric("Davies-Bouldin index", CLUSTERING),
    "adjusted_rand_score": _metric("adjusted Rand index", CLUSTERING),
    "normalized_mutual_info_score": _metric("normalised mutual information", CLUSTERING),
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
