"""The churn sample shared with the execution tests."""

from tests.execution.conftest import churn_csv  # noqa: F401
