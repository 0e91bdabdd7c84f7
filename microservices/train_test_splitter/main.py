"""Split the table into train and test sets, stratified by the target for classification tasks. Rows whose
target is missing are left out (counted in the metrics): no model can learn from them or be scored on them."""

from sklearn.model_selection import train_test_split

from dagsmith_kit import run_service
from dagsmith_kit.cleaning import rows_to_split


def split(inp, out, params):
    test_size = float(params.get("test_size", 0.2))
    random_state = int(params.get("random_state", 42))
    stratify = bool(params.get("stratify", True))
    data = rows_to_split(inp, out, test_size)
    target = inp.target
    labels = None
    if stratify and target and "classification" in (inp.task_type or ""):
        classes = data[target].astype("string")
        if classes.value_counts().min() >= 2:
            labels = classes
    train, test = train_test_split(data, test_size=test_size, random_state=random_state, stratify=labels)
    out.write_table("train", train)
    out.write_table("test", test)
    out.remove_table("data")


if __name__ == "__main__":
    run_service(split)
