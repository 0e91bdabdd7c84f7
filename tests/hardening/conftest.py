"""The pipeline-run fixtures (a store with the shipped catalog, a churn sample) shared with the execution tests."""

from tests.execution.conftest import churn_csv, store  # noqa: F401
