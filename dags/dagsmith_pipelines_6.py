"""Pipeline DAGs of shard 6: pipelines whose id is 6 modulo dagsmith.airflow.pipeline_shards.SHARDS (thin file)."""

from dagsmith.airflow.pipeline_dag import shard_dags

globals().update(shard_dags(6))
