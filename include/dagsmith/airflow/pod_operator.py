"""A pipeline step as Airflow's own ``KubernetesPodOperator``: the kubernetes runtime's pods, for Airflow on Kubernetes.

The pipeline DAGs make their steps this operator when they are parsed with ``DAGSMITH_RUNTIME=kubernetes``
(``airflow.pipeline_dag``). Each try is the step's as in ``airflow.step_operator`` (healing, retries, lineage): the
kubernetes runtime stages the service on the shared claim and hands the pod's definition
(:class:`~dagsmith.runtime.kubernetes.PodSpec`) to this operator, which creates the pod, streams its log into the task
log, waits for it and deletes it (killing the task deletes it too). Before the pod is deleted its end is read
(:func:`~dagsmith.runtime.kubernetes.pod_result`), so a pod's failure reaches self-healing as a container's does.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from airflow.providers.common.compat.sdk import AirflowException
from kubernetes.client import models as k8s
from kubernetes.client.exceptions import ApiException

from dagsmith.airflow.step_operator import StepTask
from dagsmith.config import Settings
from dagsmith.runtime.base import InvocationResult, Runtime
from dagsmith.runtime.docker import RUNTIME_IMAGE
from dagsmith.runtime.guard import StepGuard
from dagsmith.runtime.kubernetes import KubernetesRuntime, PodSpec, pod_result, sandbox_fields

#: How many of the pod's last log lines are kept for self-healing to read (the whole log is in the task's).
LOG_LINES = 2000
_ENDED = ("Succeeded", "Failed")


class StepPodOperator(StepTask, KubernetesPodOperator):
    """A step whose service runs as this ``KubernetesPodOperator``'s pod, under the sandbox of ``sandbox_fields``."""

    def __init__(self, *, position: int, candidate: str | None = None, **kwargs: Any):
        pods = Settings.from_env().pods
        super().__init__(image=pods.image or RUNTIME_IMAGE, namespace=pods.namespace, **sandbox_fields(), **kwargs)
        self._step(position, candidate)
        self._ended: tuple[k8s.V1Pod, str] | None = None

    def _attach(self, runtime: Runtime, context: Any) -> None:
        if isinstance(runtime, KubernetesRuntime):
            runtime.driver = lambda spec: self._run_pod(spec, context)

    def take(self, spec: PodSpec) -> None:
        """Make ``spec``'s pod this operator's next one (a try's invocation; a search's candidates share the task)."""
        for name, value in spec.operator_fields().items():
            setattr(self, name, value)
        self.pod_request_obj = self.pod = self.remote_pod = None
        self._ended = None

    def _run_pod(self, spec: PodSpec, context: Any) -> InvocationResult | None:
        """Run ``spec``'s pod as this operator's own (``KubernetesPodOperator.execute``) and return its outcome."""
        self.take(spec)
        guard = StepGuard(spec.limits, spec.output)
        started = time.monotonic()
        guard.start(self._delete_pod)
        try:
            KubernetesPodOperator.execute(self, context)
        except (AirflowException, ApiException):  # a failed service (its end read by cleanup) or a deleted pod
            if self._ended is None and not guard.exceeded and not self._killed:
                raise  # the pod never ran (unschedulable, no image): Airflow retries, as a container engine's error
        finally:
            exceeded = guard.finish()
        if self._killed:
            return None  # the try is recorded as stopped
        pod, log = self._ended or (self.remote_pod or k8s.V1Pod(), "")
        return pod_result(pod, log, limits=spec.limits, seconds=round(time.monotonic() - started, 3),
                          exceeded=exceeded, container=self.base_container_name)

    def cleanup(self, pod: k8s.V1Pod, remote_pod: k8s.V1Pod, xcom_result: dict | None = None,
                context: Any = None) -> None:
        """Read how the pod ended and its log's tail before the provider deletes it."""
        if remote_pod is not None and not self._killed and getattr(remote_pod.status, "phase", None) in _ENDED:
            self._ended = (remote_pod, self._log_tail(remote_pod))
        super().cleanup(pod, remote_pod, xcom_result=xcom_result, context=context)

    def _log_tail(self, pod: k8s.V1Pod) -> str:
        with contextlib.suppress(ApiException):
            return self.client.read_namespaced_pod_log(pod.metadata.name, pod.metadata.namespace,
                                                       container=self.base_container_name, tail_lines=LOG_LINES)
        return ""

    def _delete_pod(self) -> None:
        """Stop the running pod at once: the step went over its output caps."""
        if self.pod is not None:
            with contextlib.suppress(ApiException):  # it may end between the decision and the deletion
                self.client.delete_namespaced_pod(self.pod.metadata.name, self.pod.metadata.namespace,
                                                  grace_period_seconds=0)
