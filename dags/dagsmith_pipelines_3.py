"""Pipeline DAGs of shard 3: pipelines whose id is 3 modulo dagsmith.airflow.pipeline_shards.SHARDS (thin file)."""

from dagsmith.airflow.pipeline_dag import shard_dags

globals().update(shard_dags(3))
