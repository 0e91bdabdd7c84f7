"""Every pipeline dagsmith has built, as its own DAG (thin file: see dagsmith.airflow.pipeline_dag).

DAGs come from spec files under DAGSMITH_HOME/pipelines, so parsing never touches the database.
"""

from dagsmith.airflow.pipeline_dag import load_dags
from dagsmith.execution.specs import specs_dir
from dagsmith.config import Settings

globals().update(load_dags(specs_dir(Settings.from_env())))
