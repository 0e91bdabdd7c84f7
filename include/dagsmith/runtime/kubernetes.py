"""The pod runtime: each invocation a Kubernetes pod of the runtime image, for Airflow deployed on Kubernetes.

A Kubernetes deployment of Airflow (the official Helm chart, hosted services) has no Docker socket, so there each
step is Airflow's own ``KubernetesPodOperator`` (``airflow.pod_operator``) instead of its ``DockerOperator``. The pod
keeps the container runtime's sandbox: the same image and non-root uid, a read-only root filesystem, no capabilities,
no privilege escalation, the runtime's default system-call filter, no service-account token, no service links, none
of the caller's environment, the step's CPU and memory as hard limits (its ``/tmp`` in memory, counted in them) and
its timeout as the pod's deadline. Egress is denied by the NetworkPolicy shipped in ``deploy/kubernetes/``, which
selects the pods by :data:`SANDBOX_LABEL`: a pod spec alone cannot drop a pod's network.

The worker and the pod share one PersistentVolumeClaim (``DAGSMITH_POD_CLAIM``) that the workers mount at
``DAGSMITH_POD_CLAIM_PATH``: the worker stages the service's code and params on it, and the pod mounts them, its
input bundle (all three read-only) and its output folder as sub-paths of the claim. The output caps are watched by
the worker on the same claim (``runtime.guard``), which deletes the pod when a step passes them.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagsmith.runtime.base import (INPUT_DIR, OUTPUT_DIR, PARAMS_FILE, SERVICE_DIR, HostPaths, Invocation,
                                   InvocationResult, Limits, RuntimeUnavailable, prepare_data_dirs, stage)
from dagsmith.runtime.docker import (COMMAND, ENVIRONMENT, NOT_RUN_EXIT_CODE, OUTPUT_TAIL, RUNTIME_IMAGE, SERVICE_UID,
                                     WORKING_DIR)
from dagsmith.runtime.packages import not_provided, unavailable
from dagsmith.scratch import scratch_folder

if TYPE_CHECKING:
    from kubernetes.client import models as k8s

    from dagsmith.config import PodSettings

POD_ISOLATION = "pod (no egress, read-only root and input, non-root)"
#: The label every step pod carries, and the NetworkPolicy (``deploy/kubernetes/networkpolicy.yaml``) selects.
SANDBOX_LABEL = ("dagsmith/sandbox", "step")
CLAIM_VOLUME, TMP_VOLUME = "workspace", "tmp"
#: The container's status reason when the kernel's OOM killer ended it, and the pod's when its deadline passed.
OOM_REASON, DEADLINE_REASON = "OOMKilled", "DeadlineExceeded"
STAGING_FOLDER = "scratch/pods"
_LABEL_VALUE = re.compile(r"[^A-Za-z0-9_.-]")


def _label_value(value: str) -> str:
    """``value`` as a Kubernetes label value: at most 63 of its letters, digits, ``-_.``, alphanumeric at both ends."""
    return _LABEL_VALUE.sub("-", value)[:63].strip("-_.")


def claim_sub_path(path: Path, claim_root: Path, claim: str | None) -> str:
    """Where ``path`` is on the claim mounted at ``claim_root``, as a pod's sub-path; nowhere: RuntimeUnavailable."""
    try:
        return str(path.resolve().relative_to(claim_root.resolve()))
    except ValueError:
        raise RuntimeUnavailable(f"{path} is not on the volume claim {claim} mounted at {claim_root}; put "
                                 "DAGSMITH_HOME (or the workspaces) on it") from None


def sandbox_fields() -> dict[str, Any]:
    """The ``KubernetesPodOperator`` arguments that hold every step pod, whatever it runs: the runtime image's own
    non-root uid, a read-only root, no capabilities or privilege escalation, the container runtime's default
    system-call filter, no service-account token and no service links (their variables would name the cluster's
    services to the service's code), its working folder the in-memory ``/tmp``."""
    from kubernetes.client import models as k8s  # here: the client takes a second to import, runs need it not

    return {
        "cmds": COMMAND, "arguments": [],
        "security_context": k8s.V1PodSecurityContext(
            run_as_user=SERVICE_UID, run_as_group=SERVICE_UID, run_as_non_root=True,
            seccomp_profile=k8s.V1SeccompProfile(type="RuntimeDefault")),
        "container_security_context": k8s.V1SecurityContext(
            run_as_user=SERVICE_UID, run_as_group=SERVICE_UID, run_as_non_root=True, privileged=False,
            read_only_root_filesystem=True, allow_privilege_escalation=False,
            capabilities=k8s.V1Capabilities(drop=["ALL"])),
        "automount_service_account_token": False, "hostnetwork": False,
        "full_pod_spec": k8s.V1Pod(spec=k8s.V1PodSpec(enable_service_links=False, containers=[
            k8s.V1Container(name="base", working_dir=WORKING_DIR)])),
        # each try is a new pod of its own: a restarted worker never adopts an earlier try's pod; the task waits for
        # its pod itself (deferred, the pod's end would reach the triggerer, not the try that reads it)
        "durable": False, "deferrable": False, "on_finish_action": "delete_pod", "get_logs": True,
    }


@dataclass(frozen=True)
class PodSpec:
    """Everything that defines how one invocation runs as a pod: what ``ContainerSpec`` is to a container."""

    image: str
    namespace: str | None
    claim: str
    limits: Limits
    labels: dict[str, str]
    name: str
    #: (where the service sees it, the sub-path of the claim it is, read-only)
    mounts: tuple[tuple[str, str, bool], ...]
    #: The output folder as the worker sees it, for the output caps' watch.
    output: Path

    @classmethod
    def of(cls, invocation: Invocation, host: HostPaths, pods: PodSettings, claim_root: Path) -> PodSpec:
        def on_claim(path: Path) -> str:
            return claim_sub_path(path, claim_root, pods.claim)

        mounts = ((SERVICE_DIR, on_claim(host.service_dir), True), (PARAMS_FILE, on_claim(host.params_file), True),
                  (INPUT_DIR, on_claim(invocation.input_dir), True),
                  (OUTPUT_DIR, on_claim(invocation.output_dir), False))
        labels = {**invocation.labels, "dagsmith.service": invocation.service,
                  "dagsmith.code_hash": invocation.code_hash, SANDBOX_LABEL[0]: SANDBOX_LABEL[1]}
        return cls(image=pods.image or RUNTIME_IMAGE, namespace=pods.namespace, claim=pods.claim or "",
                   limits=invocation.limits, labels={key: _label_value(value) for key, value in labels.items()},
                   name=f"dagsmith-{_label_value(invocation.service).replace('_', '-').lower()}-{uuid.uuid4().hex[:8]}",
                   mounts=mounts, output=invocation.output_dir)

    def operator_fields(self) -> dict[str, Any]:
        """The ``KubernetesPodOperator`` (providers-cncf-kubernetes 10.25) attributes that run this invocation, beside
        :func:`sandbox_fields`: CPU and memory requested and capped alike, ``/tmp`` in memory within the memory limit
        (as the container's tmpfs), the timeout as the pod's deadline."""
        from kubernetes.client import models as k8s

        memory = f"{self.limits.memory_mb}Mi"
        resources = {"cpu": str(self.limits.cpus), "memory": memory}
        return {
            "image": self.image, "namespace": self.namespace, "name": self.name, "random_name_suffix": False,
            "labels": self.labels, "env_vars": {**ENVIRONMENT, "DAGSMITH_SERVICE": self.labels["dagsmith.service"]},
            "container_resources": k8s.V1ResourceRequirements(limits=resources, requests=resources),
            "active_deadline_seconds": self.limits.timeout_seconds,
            "volumes": [
                k8s.V1Volume(name=CLAIM_VOLUME,
                             persistent_volume_claim=k8s.V1PersistentVolumeClaimVolumeSource(claim_name=self.claim)),
                k8s.V1Volume(name=TMP_VOLUME, empty_dir=k8s.V1EmptyDirVolumeSource(medium="Memory", size_limit=memory)),
            ],
            "volume_mounts": [
                *(k8s.V1VolumeMount(name=CLAIM_VOLUME, mount_path=target, sub_path=sub_path, read_only=read_only)
                  for target, sub_path, read_only in self.mounts),
                k8s.V1VolumeMount(name=TMP_VOLUME, mount_path="/tmp"),
            ],
        }


def pod_result(pod: k8s.V1Pod, log: str, *, limits: Limits, seconds: float, exceeded: str = "",
               container: str = "base") -> InvocationResult:
    """The outcome of a finished step pod, said as the container runtime says a container's (``ContainerWatch``), so
    self-healing reads a pod's failure as it reads a container's: the pod's log (a pod has one stream) is the
    service's output, or its error output when it failed; the kernel's OOM kill and the deadline set the same flags
    and add the same last line."""
    statuses = (pod.status and pod.status.container_statuses) or []
    states = [s.state.terminated for s in statuses if s.name == container and s.state]
    ended = next((state for state in states if state), None)
    timed_out = getattr(pod.status, "reason", None) == DEADLINE_REASON and not exceeded
    out_of_memory = (ended is not None and ended.reason == OOM_REASON) and not timed_out and not exceeded
    exit_code = ended.exit_code if ended else -1  # deleted before its container ended (the output caps)
    log = log[-OUTPUT_TAIL:]
    if exit_code == 0 and not timed_out and not exceeded:
        return InvocationResult(exit_code=0, stdout=log, stderr="", seconds=seconds, isolation=POD_ISOLATION)
    stderr = log
    if timed_out:
        stderr += f"\nkilled after the {limits.timeout_seconds} s timeout"
    elif exceeded:
        stderr += f"\nkilled: {exceeded}"
    elif out_of_memory:
        stderr += "\nkilled: out of memory"
    return InvocationResult(exit_code=exit_code, stdout="", stderr=stderr, seconds=seconds, timed_out=timed_out,
                            out_of_memory=out_of_memory, isolation=POD_ISOLATION, exceeded=exceeded)


#: Runs the pod ``spec`` defines and deletes it; returns its outcome (None: stopped before it ended).
PodDriver = Callable[[PodSpec], InvocationResult | None]


class KubernetesRuntime:
    """Runs invocations as pods; ``driver`` (a step's ``KubernetesPodOperator``) creates, follows and deletes them."""

    name = "kubernetes"
    isolation = POD_ISOLATION
    isolated = True

    def __init__(self, pods: PodSettings, home: Path, *, driver: PodDriver | None = None):
        self.pods, self.driver = pods, driver
        self.claim_root = pods.claim_path or home

    def check(self) -> None:
        """Raise ``RuntimeUnavailable`` unless a claim is named and mounted here (the cluster is asked by each pod)."""
        if not self.pods.claim:
            raise RuntimeUnavailable("the kubernetes runtime needs DAGSMITH_POD_CLAIM, the PersistentVolumeClaim the "
                                     "workers and the step pods share (deploy/kubernetes/values.yaml)")
        if not self.claim_root.is_dir():
            raise RuntimeUnavailable(f"the volume claim {self.pods.claim} is not mounted at {self.claim_root} "
                                     "(DAGSMITH_POD_CLAIM_PATH)")

    def remove_labelled(self, label: str, values: list[str], core: Any = None) -> int:
        """Delete the pods whose ``label`` is one of ``values`` (those of tries whose worker died: their operator
        never deleted them, and they would run to their deadline); returns how many. ``core`` is the cluster's
        ``CoreV1Api``, by default the one of Airflow's ``kubernetes_default`` connection, as the step operator's."""
        namespace = self.pods.namespace
        if core is None:
            from airflow.providers.cncf.kubernetes.hooks.kubernetes import KubernetesHook

            hook = KubernetesHook()
            core, namespace = hook.core_v1_client, namespace or hook.get_namespace()
        from kubernetes.client.exceptions import ApiException

        namespace = namespace or "default"
        found = core.list_namespaced_pod(namespace, label_selector=f"{label} in ({','.join(values)})").items
        for pod in found:
            try:
                core.delete_namespaced_pod(pod.metadata.name, namespace)
            except ApiException as exc:
                if exc.status != 404:  # gone meanwhile: its deadline passed, or a person deleted it
                    raise
        return len(found)

    def run(self, invocation: Invocation) -> InvocationResult:
        if missing := unavailable(invocation.requirements):
            return InvocationResult(exit_code=NOT_RUN_EXIT_CODE, stdout="", stderr=f"error: {not_provided(missing)}",
                                    seconds=0.0)
        self.check()
        if self.driver is None:
            raise RuntimeUnavailable("the kubernetes runtime runs steps only in the pipelines' Airflow tasks, parsed "
                                     "with DAGSMITH_RUNTIME=kubernetes; use the docker or local runtime here")
        for folder in (invocation.input_dir, invocation.output_dir):  # before anything is changed in them
            claim_sub_path(folder, self.claim_root, self.pods.claim)
        prepare_data_dirs(invocation, SERVICE_UID)
        staging = self.claim_root / STAGING_FOLDER
        with scratch_folder(f"dagsmith-{invocation.service}-", root=staging) as scratch:
            spec = PodSpec.of(invocation, stage(invocation, scratch), self.pods, self.claim_root)
            result = self.driver(spec)
        return result or InvocationResult(exit_code=-1, stdout="", stderr="the pod was stopped before it finished",
                                          seconds=0.0, isolation=POD_ISOLATION)
