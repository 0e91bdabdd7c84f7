"""Pipeline DAGs of shard 0: pipelines whose id is 0 modulo dagsmith.airflow.pipeline_shards.SHARDS (thin file)."""

from dagsmith.airflow.pipeline_dag import shard_dags

globals().update(shard_dags(0))
