"""Pipeline DAGs of shard 2: pipelines whose id is 2 modulo dagsmith.airflow.pipeline_shards.SHARDS (thin file)."""

from dagsmith.airflow.pipeline_dag import shard_dags

globals().update(shard_dags(2))
