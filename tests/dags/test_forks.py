"""What the scheduler and Celery workers load before they fork tasks (``dagsmith.airflow.forks``)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys, threading
from dagsmith.airflow.forks import load_task_code
from dagsmith.embeddings import shipped_model
load_task_code()
print(json.dumps({"modules": sorted(m for m in ("dagsmith.airflow.meta_dag", "dagsmith.airflow.pipeline_dag",
                                                 "great_expectations.expectations") if m in sys.modules),
                  "model": shipped_model()._model is not None, "threads": threading.active_count()}))
"""


def test_the_task_code_and_the_model_are_loaded_with_no_thread_of_python_to_fork():
    """A forked task finds the agents, the steps' operators, great-expectations and the model's weights loaded; a
    Python thread running at the fork would be lost in the child with whatever lock it held."""
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0, probe.stderr[-3000:]
    loaded = json.loads(probe.stdout.strip().splitlines()[-1])
    assert loaded == {"modules": ["dagsmith.airflow.meta_dag", "dagsmith.airflow.pipeline_dag",
                                  "great_expectations.expectations"], "model": True, "threads": 1}, loaded
