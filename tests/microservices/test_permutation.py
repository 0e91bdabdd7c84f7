"""Permutation importance with the shuffled copies predicted in batches: the importances scikit-learn reports, for
any scorer, however many batches the copies take."""

import pytest
from sklearn.compose import make_column_transformer
from sklearn.inspection import permutation_importance as sklearn_permutation_importance
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import get_scorer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from dagsmith import datasets
from dagsmith_kit import permutation
from dagsmith_kit.permutation import permutation_importance


@pytest.fixture(scope="module")
def churn():
    frame = datasets.load("wa_churn").sample(600, random_state=0)
    features = ["contract", "internet_service", "payment_method", "tenure", "monthly_charges", "senior_citizen"]
    return frame[features], frame["churn"]


def churn_model(rows, y):
    encode = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["contract", "internet_service", "payment_method"]),
        remainder=StandardScaler())
    return make_pipeline(encode, LogisticRegression(max_iter=500)).fit(rows, y)


@pytest.mark.parametrize("scoring", ["roc_auc", "balanced_accuracy", "neg_log_loss"])
@pytest.mark.parametrize("batch_copies", [None, 3])  # None: as shipped; 3: three copies of the rows a call
def test_the_importances_are_scikit_learns(churn, scoring, batch_copies, monkeypatch):
    rows, y = churn[0].iloc[:500], churn[1].iloc[:500]
    if batch_copies:
        monkeypatch.setattr(permutation, "MAX_BATCH_CELLS", batch_copies * rows.size)
    model = churn_model(churn[0].iloc[100:], churn[1].iloc[100:])
    scorer = get_scorer(scoring)
    ours = permutation_importance(model, rows, y, scorer, n_repeats=4, random_state=3)
    theirs = sklearn_permutation_importance(model, rows, y, scoring=scorer, n_repeats=4, random_state=3)
    assert ours.baseline == pytest.approx(scorer(model, rows, y), abs=1e-12)
    assert ours.means == pytest.approx(theirs.importances_mean, abs=1e-12)
    assert ours.spreads == pytest.approx(theirs.importances_std, abs=1e-12)
    assert ours.means[rows.columns.get_loc("contract")] > 0.01  # a real driver, so the comparison is not of zeros


def test_a_regressor_is_called_once_per_batch(churn, monkeypatch):
    rows = churn[0][["tenure", "senior_citizen"]]
    model = Ridge().fit(rows, churn[0]["monthly_charges"])
    calls, answer = [], model.predict

    def predict(frame):
        calls.append(len(frame))
        return answer(frame)

    monkeypatch.setattr(model, "predict", predict)
    monkeypatch.setattr(permutation, "MAX_BATCH_CELLS", 3 * rows.size)
    result = permutation_importance(model, rows, churn[0]["monthly_charges"], get_scorer("r2"), n_repeats=5,
                                    random_state=0)
    assert calls == [len(rows), 3 * len(rows), 3 * len(rows), 3 * len(rows), len(rows)]  # the baseline, then 10 copies
    assert result.means.shape == result.spreads.shape == (2,)
    calls.clear()
    given = permutation_importance(model, rows, churn[0]["monthly_charges"], get_scorer("r2"), n_repeats=5,
                                   random_state=0, baseline=result.baseline)
    assert calls == [3 * len(rows), 3 * len(rows), 3 * len(rows), len(rows)]  # a baseline given is not scored again
    assert (given.means == result.means).all()


def test_a_batch_is_bounded_by_its_cells_not_its_rows(churn, monkeypatch):
    """Under one bound, a table three times as wide gets a third as many rows a call: a model that widens each row
    (one-hot columns) still fits a step however many columns the table has."""
    narrow = churn[0][["tenure", "monthly_charges", "senior_citizen"]].iloc[:400]
    wide = narrow.join(narrow.add_suffix("_again")).join(narrow.add_suffix("_more"))
    y = churn[1].iloc[:400] == "Yes"
    monkeypatch.setattr(permutation, "MAX_BATCH_CELLS", 6 * narrow.size)
    rows_a_call = {}
    for name, rows in (("narrow", narrow), ("wide", wide)):
        model, calls = Ridge().fit(rows, y), []
        answer = model.predict

        def predict(frame, answer=answer, calls=calls):
            calls.append(len(frame))
            return answer(frame)

        monkeypatch.setattr(model, "predict", predict)
        permutation_importance(model, rows, y, get_scorer("r2"), n_repeats=4, random_state=0)
        rows_a_call[name] = max(calls[1:])  # after the baseline
    assert rows_a_call == {"narrow": 6 * len(narrow), "wide": 2 * len(wide)}


def test_a_column_named_self_is_shuffled_like_any_other(churn):
    """Column names are the user's: ``self`` (a flag for the self-employed) is one, and pandas' keyword arguments
    must not meet it."""
    rows = churn[0][["tenure", "monthly_charges"]].rename(columns={"tenure": "self"})
    model = Ridge().fit(rows, churn[0]["senior_citizen"])
    result = permutation_importance(model, rows, churn[0]["senior_citizen"], get_scorer("r2"), n_repeats=2,
                                    random_state=0)
    assert result.means.shape == (2,)
    assert result.means[0] != 0  # the shuffled `self` changed the predictions
