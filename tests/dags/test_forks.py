"""What the scheduler and Celery workers load before they fork tasks (``dagsmith.airflow.forks``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, sys, threading
from dagsmith.airflow.forks import load_task_code
from dagsmith.embeddings import shipped_model
from dagsmith.runtime import warm
load_task_code()
print(json.dumps({"modules": sorted(m for m in ("dagsmith.airflow.meta_dag", "dagsmith.airflow.pipeline_dag",
                                                 "great_expectations.expectations") if m in sys.modules),
                  "model": shipped_model()._model is not None, "threads": threading.active_count(),
                  "zygote ready": warm._zygote is not None and warm._zygote.ready()}))
"""


def test_the_task_code_the_model_and_the_zygote_are_loaded_with_no_thread_of_python_to_fork():
    """A forked task finds the agents, the steps' operators, great-expectations and the model's weights loaded, and
    the zygote its steps start warm from ready; a Python thread running at the fork would be lost in the child with
    whatever lock it held."""
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "DAGSMITH_RUNTIME": "local"})
    assert probe.returncode == 0, probe.stderr[-3000:]
    loaded = json.loads(probe.stdout.strip().splitlines()[-1])
    assert loaded == {"modules": ["dagsmith.airflow.meta_dag", "dagsmith.airflow.pipeline_dag",
                                  "great_expectations.expectations"], "model": True, "threads": 1,
                      "zygote ready": True}, loaded
