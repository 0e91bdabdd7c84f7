"""Split the table into train and test by group: every row of a group (a customer, patient, store, site...)
lands on the same side, so the model is tested on groups it has never seen.

`group_column` names the groups (default: the bundle's first id column); about `test_size` of the groups go
to the test set. The group column becomes an id column (never a feature: test groups are unseen) and the bundle's
`group_column`, by which a model search validates on groups it did not learn from.
Refuses a bundle already split, a missing group column, missing group values and fewer than two groups.
Rows without a target value are left out (counted in the metrics).
"""

from sklearn.model_selection import GroupShuffleSplit

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import rows_to_split


def split(inp, out, params):
    test_size = float(params.get("test_size", 0.2))
    random_state = int(params.get("random_state", 42))
    column = params.get("group_column", None) or (inp.id_columns[0] if inp.id_columns else None)
    data = rows_to_split(inp, out, test_size, ("group", column))
    groups = data[column]
    if groups.isna().any():
        raise ServiceError(f"the group column '{column}' has {int(groups.isna().sum())} missing values")
    if groups.nunique() < 2:
        raise ServiceError(f"the group column '{column}' has fewer than two groups; nothing to split by")
    splitter = GroupShuffleSplit(n_splits=1, test_size=test_size, random_state=random_state)
    train_rows, test_rows = next(splitter.split(data, groups=groups))
    train, test = data.iloc[train_rows], data.iloc[test_rows]
    out.write_table("train", train)
    out.write_table("test", test)
    out.remove_table("data")
    if column not in inp.id_columns:
        out.meta["id_columns"] = [*inp.id_columns, column]
    out.meta["group_column"] = column  # a model search's folds keep the groups apart too
    out.write_metrics({"train_rows": len(train), "test_rows": len(test),
                       "train_groups": train[column].nunique(), "test_groups": test[column].nunique()})
    out.append_report(f"## Group split by `{column}`\n\nTrain: {len(train)} rows in {train[column].nunique()} groups; "
                      f"test: {len(test)} rows in {test[column].nunique()} groups (no group in both).")


if __name__ == "__main__":
    run_service(split)
