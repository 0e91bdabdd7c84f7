"""A pipeline step as Airflow's own ``DockerOperator``, its microservice resolved at each try (``airflow.pod_operator``
makes it a ``KubernetesPodOperator`` instead, for the kubernetes runtime).

Each try asks the execution what it runs (healing may have swapped the service since the last try) and, in the
container runtime, runs it as this operator's container: the container's output streams into the task log,
killing the task stops and removes the container, and ``DAGSMITH_DOCKER_CONN_ID`` names an Airflow connection
(type docker) whose registry the operator logs in to. Image, command, mounts, limits and labels come from the
runtime's :class:`~dagsmith.runtime.docker.ContainerSpec`, so a step runs exactly as anywhere else. A run on the
local runtime (the ``runtime`` run parameter) runs the same step in the bubblewrap sandbox instead.
"""

from __future__ import annotations

import os
from typing import Any

from docker.errors import APIError
from airflow.providers.docker.exceptions import DockerContainerFailedException
from airflow.providers.docker.operators.docker import DockerOperator
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from dagsmith.airflow.stopping import refuse_if_stopping
from dagsmith.config import Settings
from dagsmith.execution import attempts
from dagsmith.execution.attempts import Try
from dagsmith.execution.deadline import OutOfTime
from dagsmith.healing import policy as healing
from dagsmith.healing.classify import Diagnosis
from dagsmith.models.airflow import ONE_AT_A_TIME_VARIABLE
from dagsmith.runtime import runtime_named
from dagsmith.runtime.base import InvocationResult, Runtime, RuntimeUnavailable
from dagsmith.runtime.docker import (API_TIMEOUT_SECONDS, COMMAND, CONNECTION_VARIABLE, SERVICE_USER, ContainerSpec,
                                     ContainerWatch, DockerRuntime)


class StepTask:
    """What a step's task does whichever operator runs its service (a container's or a pod's): one step of a
    pipeline, or with ``candidate`` one candidate model of the step's search, or with ``candidates`` all of them, side
    by side, where the run's tasks run one at a time (``execution.search.run_candidates``).

    A step's failed try raises, so Airflow retries it (healing picks what the next try runs; with the run's
    ``self_healing`` off, the same service runs again, ``PLAIN_RETRIES`` times); a candidate's failure is final (one
    fewer model for the selection); a step with no candidate left, or a runtime that cannot run anything here,
    fails without retries.
    """

    position: int
    candidate: str | None
    candidates: tuple[str, ...]
    _tried: tuple[Try, Diagnosis | None] | None  # this task's try, for lineage (none when it ran several)

    def _step(self, position: int, candidate: str | None, candidates: tuple[str, ...] = ()) -> None:
        self.position, self.candidate, self.candidates, self._tried = position, candidate, candidates, None

    def _attach(self, runtime: Runtime, context: Any) -> None:
        """Let ``runtime`` run its service as this operator's own, when it is the operator's kind of runtime."""

    def execute(self, context: Any) -> dict:
        """The step's result as its XCom (JSON: Airflow stores it in its database)."""
        refuse_if_stopping()
        settings = Settings.from_env()
        execution_id = context["ti"].xcom_pull(task_ids="start")
        try:
            runtime = runtime_named(context["params"]["runtime"], settings)
        except ValueError as exc:
            raise AirflowFailException(str(exc)) from None
        try:
            if self.candidates:
                from dagsmith.execution.search import run_candidates

                # each candidate's own runtime, driving its container itself: this operator can drive one only
                results = run_candidates(execution_id, self.position, self.candidates, settings=settings,
                                         runtime_for=lambda: runtime_named(context["params"]["runtime"], settings))
                return {"candidates": [result.model_dump(mode="json") for result in results]}
            self._attach(runtime, context)
            if self.candidate:
                # Imported here: the search's blending loads scikit-learn, which a parse of the DAG file need not pay.
                from dagsmith.execution.search import run_candidate

                # side by side with the others, unless the run's tasks run one at a time (pods under dag.test())
                result = run_candidate(execution_id, self.position, self.candidate, runtime=runtime,
                                       settings=settings, observe=self._note,
                                       at_once=1 if os.environ.get(ONE_AT_A_TIME_VARIABLE) else None)
            else:
                result = attempts.run_step(execution_id, self.position, runtime=runtime, settings=settings,
                                           self_healing=context["params"]["self_healing"], observe=self._note)
        except attempts.StepFailed as exc:
            if self.candidate:  # one fewer model to choose from; no retry runs another
                raise AirflowFailException(str(exc)) from None
            if not context["params"]["self_healing"] and context["ti"].try_number > healing.PLAIN_RETRIES:
                raise AirflowFailException(str(exc)) from None  # the task's other retries are self-healing's
            raise
        except OutOfTime as exc:  # the goal's time budget is spent; the selection chooses among the others
            raise AirflowSkipException(str(exc)) from None
        except (healing.CandidatesExhausted, RuntimeUnavailable) as exc:  # no retry can help
            raise AirflowFailException(str(exc)) from None
        return result.model_dump(mode="json")

    def _note(self, attempt: Try, diagnosis: Diagnosis | None) -> None:
        self._tried = (attempt, diagnosis)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """The bundles this try read and wrote and the service that ran (``airflow.lineage``): called by the
        OpenLineage provider, when installed and given a transport, as the task ends."""
        if self._tried is None:  # a retry that found the step done ran nothing
            return None
        from dagsmith.airflow.lineage import try_lineage

        attempt, diagnosis = self._tried
        output = attempt.output if self.candidate else attempt.workspace.step_output(self.position)
        return try_lineage(attempt, diagnosis, output=str(output))

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        return self.get_openlineage_facets_on_complete(task_instance)


class StepOperator(StepTask, DockerOperator):
    """A step whose container is this ``DockerOperator``'s own (docker runtime); the local runtime runs in it too."""

    def __init__(self, *, position: int, candidate: str | None = None, candidates: tuple[str, ...] = (),
                 **kwargs: Any):
        runtime = DockerRuntime()
        super().__init__(image=runtime.image, command=COMMAND, docker_url=runtime.base_url,
                         docker_conn_id=os.environ.get(CONNECTION_VARIABLE) or None, user=SERVICE_USER,
                         network_mode="none", auto_remove="force", mount_tmp_dir=False, timeout=API_TIMEOUT_SECONDS,
                         **kwargs)
        self._step(position, candidate, candidates)
        self._watch: ContainerWatch | None = None
        self._killed = False

    @property
    def cli(self) -> Any:
        """The watched client while a container runs (so ``on_kill`` stops that container), else the hook's."""
        return self._watch or super().cli

    def _attach(self, runtime: Runtime, context: Any) -> None:
        if isinstance(runtime, DockerRuntime):
            runtime.driver = lambda spec: self._run_container(spec, context)

    def _run_container(self, spec: ContainerSpec, context: Any) -> InvocationResult | None:
        """Run ``spec``'s container as this operator's own (``DockerOperator.execute``) and return its outcome."""
        for name, value in spec.operator_fields().items():
            setattr(self, name, value)
        self._watch = ContainerWatch(self.hook.api_client, spec)
        try:
            DockerOperator.execute(self, context)
        except DockerContainerFailedException:  # a failed service: its outcome is in the watch
            pass
        except APIError:
            if not self._killed:
                raise
        finally:
            watch, self._watch = self._watch, None
        return watch.result  # None when the task was killed: the try is recorded as stopped

    def on_kill(self) -> None:
        self._killed = True  # the container vanishes under ``execute``, which then has no outcome to read
        super().on_kill()
