"""The meta-DAG: dataset + goal -> profile >> intent >> recommend >> build >> execute (see dagsmith.airflow.meta_dag),
and under the FAB auth manager each builder's own build DAG."""

from dagsmith.airflow.meta_dag import build_dags

globals().update(build_dags())
