"""Fill missing values: numeric columns with the training median, other columns with the most frequent value."""

from sklearn.impute import SimpleImputer

from dagsmith_kit import run_service, transform_tables


def impute(inp, out, params):
    numeric_strategy = params.get("strategy", "median")

    def fit(train):
        fitted = {}
        numeric = [c for c in inp.feature_columns(train, numeric=True) if train[c].notna().any()]
        other = [c for c in inp.feature_columns(train, numeric=False) if train[c].notna().any()]
        if numeric:
            fitted["numeric"] = (numeric, SimpleImputer(strategy=numeric_strategy).fit(train[numeric]))
        if other:
            fitted["other"] = (other, SimpleImputer(strategy="most_frequent").fit(train[other].astype(object)))
        return fitted

    def apply(frame, fitted):
        frame = frame.copy()
        for columns, imputer in fitted.values():
            values = imputer.transform(frame[columns].astype(object) if imputer.strategy == "most_frequent"
                                       else frame[columns])
            for i, column in enumerate(columns):
                frame[column] = values[:, i]
        if "numeric" in fitted:
            columns = fitted["numeric"][0]
            frame[columns] = frame[columns].astype(float)
        return frame

    transform_tables(inp, out, fit, apply)


if __name__ == "__main__":
    run_service(impute)
