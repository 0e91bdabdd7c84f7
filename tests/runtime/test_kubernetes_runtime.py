"""The kubernetes runtime without a cluster: no Kubernetes runs here, so each step of a real pipeline DAG (built with
DAGSMITH_RUNTIME=kubernetes) stages a real invocation on the claim and renders its pod with the provider's own
``KubernetesPodOperator.build_pod_request_obj``; the pod's sandbox, its volumes, the shipped NetworkPolicy and the Helm
values are checked against it. How a pod ends is read from real Kubernetes status objects, as the cluster sends them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kubernetes.client import models as k8s

from dagsmith.airflow.pipeline_dag import build
from dagsmith.config import Settings
from dagsmith.execution.reaper import ATTEMPT_LABEL
from dagsmith.healing.classify import ErrorClass, diagnose
from dagsmith.models.plan import DagSpec, DagStep, ModelSearch
from dagsmith.runtime.base import Invocation, InvocationResult, Limits, RuntimeUnavailable
from dagsmith.runtime.docker import COMMAND, ENVIRONMENT, RUNTIME_IMAGE, SERVICE_UID
from dagsmith.runtime.kubernetes import KubernetesRuntime, pod_result
from tests.conftest import CATALOG, ROOT
from tests.runtime.test_docker_runtime import service_files

DEPLOY = ROOT / "deploy" / "kubernetes"
CLAIM = "dagsmith-workspaces"
STEPS = [("loading", "csv_loader"), ("imputation", "median_imputer"), ("encoding", "onehot_encoder"),
         ("splitting", "train_test_splitter")]


@pytest.fixture
def settings(tmp_path, monkeypatch) -> Settings:
    """A worker's settings for the kubernetes runtime: DAGSMITH_HOME on the claim, the step limits set."""
    for name, value in {"DAGSMITH_HOME": str(tmp_path), "DAGSMITH_RUNTIME": "kubernetes", "DAGSMITH_POD_CLAIM": CLAIM,
                        "DAGSMITH_POD_NAMESPACE": "airflow", "DAGSMITH_STEP_MEMORY_MB": "1536",
                        "DAGSMITH_STEP_TIMEOUT_SECONDS": "600"}.items():
        monkeypatch.setenv(name, value)
    return Settings.from_env()


def pipeline_dag(tmp_path: Path):
    """A classification pipeline's DAG as its spec is written: four steps in a row, then a two-model search."""
    steps = [DagStep(position=i, stage=stage, microservice=name, depends_on=[i - 1] if i else [])
             for i, (stage, name) in enumerate(STEPS)]
    search = ModelSearch(candidates=["logistic_regression", "random_forest_classifier"], budget_seconds=30,
                         metric="accuracy", reason="the recommender's two best")
    steps.append(DagStep(position=4, stage="modelling", microservice="logistic_regression", depends_on=[3],
                         search=search))
    return build(DagSpec(pipeline_id=3, name="churn", goal="predict churn", owner="ana",
                         dataset=str(tmp_path / "churn.csv"), steps=steps))


def render_pods(settings: Settings, tmp_path: Path) -> list[tuple[Invocation, k8s.V1Pod, Path]]:
    """Each step task's pod for one try, as its operator would create it: the runtime stages the try on the claim
    and hands the pod's definition to the task (the driver a cluster would run), whose provider code renders it."""
    step_tasks = [task for task in pipeline_dag(tmp_path).tasks if hasattr(task, "take")]
    assert len(step_tasks) == 6  # four steps and two candidates, all pods
    rendered = []
    for number, task in enumerate(step_tasks):
        service = task.candidate or task.task_id.split("__")[1]
        workspace = tmp_path / "workspaces" / "1"
        source = workspace / "steps" / f"{max(task.position - 1, 0):02d}"
        source.mkdir(parents=True, exist_ok=True)
        invocation = Invocation(service, service_files(CATALOG / service), source,
                                workspace / "attempts" / f"{task.position:02d}-{number}", {"seed": number},
                                settings.step_limits, {"dagsmith.attempt": str(100 + number)})

        def drive(spec, task=task, invocation=invocation) -> InvocationResult:
            task.take(spec)
            pod = task.build_pod_request_obj(dry_run=True)
            staged = {mount.mount_path: Path(settings.home, mount.sub_path) for mount in pod.spec.containers[0]
                      .volume_mounts if mount.sub_path}
            # what the pod would see is on the claim now: the service's code, its params, input and output
            assert (staged["/service"] / "main.py").read_text() == invocation.files["main.py"]
            assert f'"seed": {invocation.params["seed"]}' in staged["/params.json"].read_text()
            rendered.append((invocation, pod, staged["/service"]))
            return InvocationResult(exit_code=0, stdout="", stderr="", seconds=0.0)

        assert KubernetesRuntime(settings.pods, settings.home, driver=drive).run(invocation).ok
    return rendered


def test_every_step_of_a_pipeline_dag_is_a_sandboxed_pod_with_its_try_on_the_claim(settings, tmp_path):
    rendered = render_pods(settings, tmp_path)
    for invocation, pod, staged in rendered:
        spec, (container,) = pod.spec, pod.spec.containers
        assert pod.metadata.namespace == "airflow" and pod.metadata.labels["dagsmith/sandbox"] == "step"
        assert pod.metadata.labels["dagsmith.attempt"] == invocation.labels["dagsmith.attempt"]
        assert pod.metadata.labels["dagsmith.service"] == invocation.service
        # the container runtime's image, command and environment, nothing of the worker's or the cluster's
        assert container.image == RUNTIME_IMAGE and container.command == COMMAND and not container.args
        assert {env.name: env.value for env in container.env} == {**ENVIRONMENT, "DAGSMITH_SERVICE": invocation.service}
        assert not container.env_from and spec.enable_service_links is False and container.working_dir == "/tmp"
        # non-root, read-only root, no capabilities, no escalation, the runtime's system-call filter
        guard = container.security_context
        assert guard.run_as_user == guard.run_as_group == SERVICE_UID and guard.run_as_non_root
        assert guard.read_only_root_filesystem and guard.allow_privilege_escalation is False
        assert guard.capabilities.drop == ["ALL"] and not guard.capabilities.add and guard.privileged is False
        assert spec.security_context.run_as_non_root and spec.security_context.run_as_user == SERVICE_UID
        assert spec.security_context.seccomp_profile.type == "RuntimeDefault"
        # no service-account token, no host network, the step's limits from the settings, its timeout the deadline
        assert spec.automount_service_account_token is False and not spec.host_network
        assert spec.restart_policy == "Never" and spec.active_deadline_seconds == 600
        assert container.resources.limits == container.resources.requests == {"cpu": "1.0", "memory": "1536Mi"}
        # the claim and an in-memory /tmp inside the memory limit, nothing else: no host path, no secret
        claim, tmp = spec.volumes
        assert all(sum(source is not None for key, source in volume.to_dict().items() if key != "name") == 1
                   for volume in spec.volumes)  # each volume its one source
        assert claim.persistent_volume_claim.claim_name == CLAIM
        assert tmp.empty_dir.medium == "Memory" and tmp.empty_dir.size_limit == "1536Mi"
        mounts = {mount.mount_path: mount for mount in container.volume_mounts}
        assert sorted(mounts) == ["/input", "/output", "/params.json", "/service", "/tmp"]
        assert {path for path, mount in mounts.items() if mount.read_only} == {"/input", "/params.json", "/service"}
        assert {mount.name for path, mount in mounts.items() if path != "/tmp"} == {claim.name}
        assert Path(settings.home, mounts["/input"].sub_path) == invocation.input_dir.resolve()
        assert Path(settings.home, mounts["/output"].sub_path) == invocation.output_dir.resolve()
        assert not staged.exists()  # the staged code is removed once the pod is done
    assert len({pod.metadata.name for _, pod, _ in rendered}) == len(rendered)


def test_pod_steps_are_retried_and_healed_as_container_steps(settings, tmp_path, monkeypatch):
    pods = pipeline_dag(tmp_path)
    monkeypatch.setenv("DAGSMITH_RUNTIME", "docker")
    containers = pipeline_dag(tmp_path)
    assert [task.task_id for task in pods.tasks] == [task.task_id for task in containers.tasks]
    for task in pods.tasks:
        twin = containers.get_task(task.task_id)
        assert type(task).__name__ == {"StepOperator": "StepPodOperator"}.get(type(twin).__name__, type(twin).__name__)
        assert (task.retries, task.retry_delay, task.retry_exponential_backoff, task.on_retry_callback) == \
            (twin.retries, twin.retry_delay, twin.retry_exponential_backoff, twin.on_retry_callback)
        assert task.upstream_task_ids == twin.upstream_task_ids and task.trigger_rule == twin.trigger_rule
        assert getattr(task, "deferrable", False) is False  # the try itself reads its pod's end
    assert any(task.retries for task in pods.tasks)  # the steps with alternatives are retried, healed in between
    retried = next(task for task in pods.tasks if task.retries)
    # backoff doubles the wait, up to a cap: the last of 15 tries waits minutes, not a day
    assert retried.max_retry_delay == retried.retry_delay * 32


def test_the_shipped_network_policy_takes_every_network_from_the_step_pods(settings, tmp_path):
    policy = yaml.safe_load((DEPLOY / "networkpolicy.yaml").read_text())
    _, pod, _ = render_pods(settings, tmp_path)[0]
    assert policy["kind"] == "NetworkPolicy"
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= pod.metadata.labels.items()
    assert set(policy["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    assert not policy["spec"].get("egress") and not policy["spec"].get("ingress")  # no rule: nothing is allowed


def test_the_helm_values_deploy_the_image_dags_and_plugin_with_the_pod_runtime():
    values = yaml.safe_load((DEPLOY / "values.yaml").read_text())
    claim = yaml.safe_load((DEPLOY / "workspace-claim.yaml").read_text())
    env = {item["name"]: item["value"] for item in values["env"]}
    assert values["executor"] == "KubernetesExecutor" and values["allowPodLaunching"] is True
    assert values["images"]["airflow"]["repository"].endswith("/dagsmith-airflow")
    assert values["images"]["airflow"]["tag"] == values["airflowVersion"] == "3.3.2"
    assert "FROM apache/airflow:3.3.2-" in (ROOT / "Dockerfile").read_text()
    assert env["DAGSMITH_RUNTIME"] == "kubernetes" and env["DAGSMITH_POD_IMAGE"].endswith("/" + RUNTIME_IMAGE)
    # the claim of the step pods is the one every Airflow container mounts at DAGSMITH_HOME
    (volume,), (mount,) = values["volumes"], values["volumeMounts"]
    assert env["DAGSMITH_POD_CLAIM"] == volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"] and mount["name"] == volume["name"]
    assert mount["mountPath"] == env["DAGSMITH_HOME"] == env["DAGSMITH_POD_CLAIM_PATH"]
    # the DAGs and the plugin from the image (Dockerfile: COPY . /opt/dagsmith)
    assert not values["dags"]["persistence"]["enabled"] and not values["dags"]["gitSync"]["enabled"]
    core = values["config"]["core"]
    assert (ROOT / Path(core["dags_folder"]).relative_to("/opt/dagsmith") / "dagsmith_pipelines_0.py").is_file()
    assert (ROOT / Path(core["plugins_folder"]).relative_to("/opt/dagsmith") / "dagsmith_ui.py").is_file()
    assert values["secret"] == [{"envName": "DAGSMITH_DATABASE_URL", "secretName": "dagsmith-database",
                                 "secretKey": "url"}]
    assert "apache-airflow-providers-cncf-kubernetes==" in (ROOT / "requirements.txt").read_text()


def ended(exit_code: int | None, reason: str = "Error", pod_reason: str | None = None) -> k8s.V1Pod:
    """A finished pod as the API returns it: its base container's end (None: it never ended) and the pod's reason."""
    state = k8s.V1ContainerState(terminated=k8s.V1ContainerStateTerminated(exit_code=exit_code, reason=reason)
                                 if exit_code is not None else None)
    status = k8s.V1ContainerStatus(name="base", state=state, image=RUNTIME_IMAGE, image_id="", ready=False,
                                   restart_count=0)
    phase = "Succeeded" if exit_code == 0 else "Failed"
    return k8s.V1Pod(status=k8s.V1PodStatus(phase=phase, reason=pod_reason, container_statuses=[status]))


@pytest.mark.parametrize(("pod", "log", "exceeded", "expected"), [
    (ended(137, "OOMKilled"), "fitting 12 trees", "", ErrorClass.RESOURCE),
    (ended(137, pod_reason="DeadlineExceeded"), "epoch 3", "", ErrorClass.RESOURCE),
    (ended(None), "", "the step wrote more than 1024 MB into its output", ErrorClass.RESOURCE),
    (ended(1), "Traceback (most recent call last):\nKeyError: 'churn'", "", ErrorClass.MISSING_INPUT),
    (ended(1), "OSError: [Errno 30] Read-only file system: '/opt/venv/x'", "", ErrorClass.ENVIRONMENT),
])
def test_a_failed_pod_reaches_self_healing_as_a_failed_container_does(pod, log, exceeded, expected):
    limits = Limits(timeout_seconds=600)
    result = pod_result(pod, log, limits=limits, seconds=1.0, exceeded=exceeded)
    assert not result.ok and diagnose(result).error_class == expected
    container = InvocationResult(exit_code=result.exit_code, stdout="", stderr=log, seconds=1.0,
                                 timed_out=result.timed_out, out_of_memory=result.out_of_memory, exceeded=exceeded)
    assert diagnose(container).error_class == expected  # what the container runtime's outcome gives
    if result.timed_out:
        assert result.stderr.endswith("killed after the 600 s timeout")


def test_a_pod_that_ended_well_hands_its_log_on_as_output():
    result = pod_result(ended(0, "Completed"), "wrote 344 rows", limits=Limits(), seconds=2.5)
    assert result.ok and result.stdout == "wrote 344 rows" and not result.stderr and result.seconds == 2.5


def test_the_runtime_refuses_what_it_cannot_run_with_a_reason(settings, tmp_path, tmp_path_factory, monkeypatch):
    invocation = Invocation("csv_loader", service_files(CATALOG / "csv_loader"), tmp_path, tmp_path / "out")
    with pytest.raises(RuntimeUnavailable, match="only in the pipelines' Airflow tasks"):
        KubernetesRuntime(settings.pods, settings.home).run(invocation)  # no pod operator to run it
    elsewhere = tmp_path_factory.mktemp("not-on-the-claim")
    outside = Invocation("csv_loader", invocation.files, elsewhere, tmp_path / "out")
    with pytest.raises(RuntimeUnavailable, match=f"not on the volume claim {CLAIM}"):
        KubernetesRuntime(settings.pods, settings.home, driver=lambda spec: None).run(outside)
    assert not (tmp_path / "out").exists()  # refused before anything was made
    monkeypatch.delenv("DAGSMITH_POD_CLAIM")
    with pytest.raises(RuntimeUnavailable, match="needs DAGSMITH_POD_CLAIM"):
        KubernetesRuntime(Settings.from_env().pods, settings.home).check()


class _Cluster:
    """A stand-in for a cluster's CoreV1Api (none runs here): the pods it holds, listed by label selector as the
    API server selects them, and deleted by name."""

    def __init__(self, pods: dict[str, dict[str, str]]):
        self.pods, self.selectors = pods, []

    def list_namespaced_pod(self, namespace: str, label_selector: str) -> k8s.V1PodList:
        self.selectors.append((namespace, label_selector))
        key, _, values = label_selector.partition(" in ")
        wanted = values.strip("()").split(",")
        return k8s.V1PodList(items=[k8s.V1Pod(metadata=k8s.V1ObjectMeta(name=name, labels=labels))
                                    for name, labels in self.pods.items() if labels.get(key) in wanted])

    def delete_namespaced_pod(self, name: str, namespace: str) -> None:
        del self.pods[name]


def test_the_pods_of_lost_tries_are_deleted_and_no_other(settings):
    cluster = _Cluster({"lost-1": {ATTEMPT_LABEL: "7"}, "lost-2": {ATTEMPT_LABEL: "9"},
                        "alive": {ATTEMPT_LABEL: "8"}, "unrelated": {"app": "web"}})
    runtime = KubernetesRuntime(settings.pods, settings.home)
    assert runtime.remove_labelled(ATTEMPT_LABEL, ["7", "9"], core=cluster) == 2
    assert set(cluster.pods) == {"alive", "unrelated"}
    assert cluster.selectors == [("airflow", f"{ATTEMPT_LABEL} in (7,9)")]  # the step pods' namespace
