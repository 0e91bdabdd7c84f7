"""The meta-DAG: dataset + goal -> profile >> intent >> recommend >> build >> execute (see dagsmith.airflow.meta_dag)."""

from dagsmith.airflow.meta_dag import build

dag = build()
