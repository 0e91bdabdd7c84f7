"""Airflow's REST API as an upstream system uses it, for the deployment tests."""

from __future__ import annotations

import json

from dagsmith.airflow.rest import AirflowClient, AirflowError
from tests.waiting import wait_until

FINISHED = {"success", "failed"}
#: A human-in-the-loop task waiting for its answer: parked (Airflow 3.3+) or deferred to the triggerer (before).
WAITING_FOR_A_PERSON = {"awaiting_input", "deferred"}


class Api(AirflowClient):
    """The REST API as an upstream system uses it, with the waits and questions the deployment tests need."""

    def state(self, dag: str, run_id: str) -> str:
        return self.run(dag, run_id)["state"]

    def wait(self, dag: str, run_id: str, timeout: float = 900) -> str:
        def finished() -> str | None:
            state = self.state(dag, run_id)
            return state if state in FINISHED else None

        return wait_until(finished, timeout=timeout, what=f"{dag} run {run_id} to finish")

    def question(self, dag: str, run_id: str, task: str, timeout: float = 600, map_index: int = -1) -> dict:
        """What ``task`` asks a person in the UI, once it asks (human-in-the-loop) and waits for the answer: the
        question is stored a moment before the task parks to wait, and an answer in that moment fails the task."""
        def asked() -> dict | None:
            waiting = self.task_instances(dag, run_id).get(task, {}).get("state") in WAITING_FOR_A_PERSON
            found = self._found("GET", self._hitl(dag, run_id, task, map_index)) if waiting else None
            if found is None and self.state(dag, run_id) in FINISHED:
                raise AssertionError(f"{task} never asked in {dag} run {run_id}: {self._states(dag, run_id)}")
            return found

        return wait_until(asked, timeout=timeout,
                          what=lambda: f"{task} to ask in {dag} run {run_id}: {self._states(dag, run_id)}")

    def _states(self, dag: str, run_id: str) -> dict[str, str]:
        return {task: found["state"] for task, found in self.task_instances(dag, run_id).items()}

    def _found(self, method: str, path: str) -> dict | None:
        """The response, or None while the API answers 404."""
        try:
            return self.call(method, path)
        except AirflowError as error:
            if error.status != 404:
                raise
            return None

    def respond(self, dag: str, run_id: str, task: str, option: str, params_input: dict, map_index: int = -1) -> None:
        self.call("PATCH", self._hitl(dag, run_id, task, map_index),
                  {"chosen_options": [option], "params_input": params_input})

    @staticmethod
    def _hitl(dag: str, run_id: str, task: str, map_index: int = -1) -> str:
        return f"/api/v2/dags/{dag}/dagRuns/{run_id}/taskInstances/{task}/{map_index}/hitlDetails"

    def wait_for_dag(self, dag: str, timeout: float = 300) -> dict:
        """The DAG, once the dag-processor has registered it."""
        return wait_until(lambda: self._found("GET", f"/api/v2/dags/{dag}"), timeout=timeout,
                          what=f"the dag-processor to register {dag}")

    def task_instances(self, dag: str, run_id: str) -> dict[str, dict]:
        """The run's task instances by task id."""
        return {t["task_id"]: t for t in self.run_tasks(dag, run_id)}

    def log_text(self, dag: str, run_id: str, task: str, try_number: int = 1) -> str:
        """One try's log: its structured events (messages, exceptions) as JSON text."""
        return json.dumps(self.task_log(dag, run_id, task, try_number), ensure_ascii=False)

    def pause(self, dag: str) -> None:
        """Stop the DAG's schedule (runs already started go on)."""
        self.call("PATCH", f"/api/v2/dags/{dag}", {"is_paused": True})

    def runs(self, dag: str) -> list[dict]:
        return self.call("GET", f"/api/v2/dags/{dag}/dagRuns?order_by=-start_date")["dag_runs"]
