"""Pipeline DAGs of shard 7: pipelines whose id is 7 modulo dagsmith.airflow.pipeline_shards.SHARDS (thin file)."""

from dagsmith.airflow.pipeline_dag import shard_dags

globals().update(shard_dags(7))
