"""Settings read from the environment, with embedded defaults for one machine."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dagsmith.errors import InputError
from dagsmith.runtime import check_runtime
from dagsmith.runtime.base import Limits
from dagsmith.runtime.sandbox import UNSANDBOXED_VARIABLE
from dagsmith.runtime.warm import COLD_VARIABLE

REASONERS = ("deterministic", "openai")
#: How the endpoint is asked for structured output: OpenAI's ``json_schema`` (OpenAI, Azure, vLLM, Ollama) or
#: ``json_object`` with the schema alongside (llama.cpp's server).
RESPONSE_FORMATS = ("json_schema", "json_object")
#: Folders besides ``DAGSMITH_HOME/datasets`` that datasets named from outside the local CLI may be read from.
DATA_ROOTS_VARIABLE = "DAGSMITH_DATA_ROOTS"
#: Set to ``1`` only in the environment the local CLI gives its own Airflow runs (``airflow.local.airflow_env``).
LOCAL_CLI_VARIABLE = "DAGSMITH_LOCAL_CLI"
#: The model search's budget for pipelines built from now on (``agents.model_search``); unset: sized to the table.
SEARCH_SECONDS_VARIABLE = "DAGSMITH_SEARCH_SECONDS"
#: How many of a model search's candidates a run whose tasks run one at a time fits side by side (``execution.search``).
CANDIDATES_AT_ONCE_VARIABLE = "DAGSMITH_CANDIDATES_AT_ONCE"
#: Where the versions of pipelines' models are kept (``registry``); unset: ``DAGSMITH_HOME/models``.
MODEL_ROOT_VARIABLE = "DAGSMITH_MODEL_ROOT"
#: Where runs' workspaces are made (``execution.workspace``); unset: ``DAGSMITH_HOME/workspaces``.
WORKSPACE_ROOT_VARIABLE = "DAGSMITH_WORKSPACE_ROOT"
#: The Celery queue pipeline steps are sent to (``airflow.pipeline_dag``).
QUEUE_VARIABLE = "DAGSMITH_QUEUE"
#: The drift score of a feature above which scoring says prominently that the new rows differ from the training's.
DRIFT_THRESHOLD_VARIABLE = "DAGSMITH_DRIFT_THRESHOLD"
#: MLflow's own variable: where each model version is also logged and registered (``registry.mlflow``).
MLFLOW_VARIABLE = "MLFLOW_TRACKING_URI"
#: The Airflow deployment `dagsmith run` submits to (`--airflow-url`).
URL_VARIABLE = "DAGSMITH_AIRFLOW_URL"
#: Where pipeline steps run unless a run says otherwise (``Settings.runtime``).
RUNTIME_VARIABLE = "DAGSMITH_RUNTIME"


class ConfigurationError(InputError, ValueError):
    """An environment variable holds a value dagsmith cannot use; the message names it."""


@dataclass(frozen=True)
class Variable:
    """An environment variable a setting is read from. The documentation's settings reference is generated from
    these (``docs/hooks/reference.py``), so what a variable means is written once, beside the field it sets."""

    name: str
    meaning: str
    #: the attribute of the field's value it sets (``temperature`` of ``llm``), when the field holds several
    attribute: str | None = None
    #: what leaving it unset means, when the field's default value does not say it
    unset: str | None = None


def read_from(*variables: Variable) -> dict[str, tuple[Variable, ...]]:
    """The metadata of a ``Settings`` field read from these environment variables."""
    return {"variables": variables}


_LLM_NUMBERS = (Variable("DAGSMITH_LLM_TEMPERATURE", "the sampling temperature", "temperature"),
                Variable("DAGSMITH_LLM_TIMEOUT_SECONDS", "seconds one request may take", "timeout_seconds"),
                Variable("DAGSMITH_LLM_MAX_TOKENS", "the longest answer, in tokens", "max_tokens"),
                Variable("DAGSMITH_LLM_MAX_RETRIES", "retries with backoff on rate limits, timeouts and server errors "
                                                     "(the SDK's own)", "max_retries"))
_LLM_VARIABLES = (
    Variable("DAGSMITH_REASONER", "who reads goals and failures: the rules (`deterministic`) or the model configured "
                                  "below (`openai`, any OpenAI-compatible endpoint)", "reasoner"),
    Variable("DAGSMITH_LLM_MODEL", "the model name the endpoint serves", "model",
             unset="none (required with `openai`)"),
    Variable("DAGSMITH_LLM_RESPONSE_FORMAT", "`json_object` for servers that take the schema that way (llama.cpp)",
             "response_format"),
    *_LLM_NUMBERS,
)


@dataclass(frozen=True)
class LLMConfig:
    """``DAGSMITH_REASONER`` (``deterministic``, the default, or ``openai``), ``DAGSMITH_LLM_MODEL``, the SDK's own
    ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` (read by the SDK; the key is never stored or logged), and the
    ``DAGSMITH_LLM_*`` numbers below."""

    reasoner: Literal["deterministic", "openai"] = "deterministic"
    model: str | None = None
    temperature: float = 0.3
    timeout_seconds: float = 60.0
    max_tokens: int = 800
    max_retries: int = 2
    response_format: Literal["json_schema", "json_object"] = "json_schema"

    @classmethod
    def from_env(cls) -> LLMConfig:
        env = os.environ
        reasoner = env.get("DAGSMITH_REASONER") or "deterministic"
        if reasoner not in REASONERS:
            raise ConfigurationError(f"DAGSMITH_REASONER must be one of {', '.join(REASONERS)}, not '{reasoner}'")
        model = env.get("DAGSMITH_LLM_MODEL") or None
        if reasoner == "openai" and not model:
            raise ConfigurationError("DAGSMITH_REASONER=openai needs DAGSMITH_LLM_MODEL, the name of the model the "
                                     "endpoint serves")
        response_format = env.get("DAGSMITH_LLM_RESPONSE_FORMAT") or "json_schema"
        if response_format not in RESPONSE_FORMATS:
            raise ConfigurationError(f"DAGSMITH_LLM_RESPONSE_FORMAT must be one of {', '.join(RESPONSE_FORMATS)}")
        numbers, defaults = {}, cls()
        for variable in _LLM_NUMBERS:
            if value := env.get(variable.name):
                kind = type(getattr(defaults, variable.attribute))  # int or float, as the field's default
                try:
                    numbers[variable.attribute] = kind(value)
                except ValueError:
                    raise ConfigurationError(f"{variable.name} must be a number, not '{value}'") from None
        return cls(reasoner=reasoner, model=model, response_format=response_format, **numbers)


_POD_VARIABLES = (
    Variable("DAGSMITH_POD_CLAIM", "the PersistentVolumeClaim (ReadWriteMany) the Airflow workers and the `kubernetes` "
                                   "runtime's step pods share: workspaces, staged code and params", "claim",
             unset="none (required by the `kubernetes` runtime)"),
    Variable("DAGSMITH_POD_CLAIM_PATH", "where the workers mount that claim; what a step reads and writes must be "
                                        "under it", "claim_path", unset="`DAGSMITH_HOME`"),
    Variable("DAGSMITH_POD_NAMESPACE", "the namespace step pods run in (the NetworkPolicy's)", "namespace",
             unset="the worker's own namespace"),
    Variable("DAGSMITH_POD_IMAGE", "the runtime image as the cluster pulls it (a registry's reference to "
                                   "`dagsmith-runtime:py311`)", "image", unset="`dagsmith-runtime:py311`"),
)


@dataclass(frozen=True)
class PodSettings:
    """How the ``kubernetes`` runtime runs steps as pods (``runtime.kubernetes``): the ``DAGSMITH_POD_*`` variables."""

    claim: str | None = None
    claim_path: Path | None = None
    namespace: str | None = None
    image: str | None = None

    @classmethod
    def from_env(cls) -> PodSettings:
        env = os.environ
        path = env.get("DAGSMITH_POD_CLAIM_PATH")
        return cls(claim=env.get("DAGSMITH_POD_CLAIM") or None,
                   claim_path=Path(path).expanduser().resolve() if path else None,
                   namespace=env.get("DAGSMITH_POD_NAMESPACE") or None, image=env.get("DAGSMITH_POD_IMAGE") or None)


def _positive_seconds(variable: str, default: str | None) -> float | None:
    value = os.environ.get(variable) or default
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise ConfigurationError(f"{variable} must be a positive number of seconds, not '{value}'")
    return seconds


def _heartbeat_seconds() -> float:
    return _positive_seconds("DAGSMITH_HEARTBEAT_SECONDS", "10")


#: The limits every pipeline step runs under, by environment variable (the runtime's defaults when unset).
_STEP_LIMITS = (
    Variable("DAGSMITH_STEP_TIMEOUT_SECONDS", "how long one try of a pipeline step may run before it is killed (a "
                                              "resource failure self-healing handles)", "timeout_seconds"),
    Variable("DAGSMITH_STEP_MEMORY_MB", "the memory one try of a step may use, all its processes and its `/tmp` "
                                        "together (the container's limit, or locally a cgroup of its own)",
             "memory_mb"),
    Variable("DAGSMITH_STEP_OUTPUT_MB", "what one try may write into its output folder in all; a try past it is "
                                        "killed (a resource failure self-healing handles)", "output_mb"),
    Variable("DAGSMITH_STEP_OUTPUT_FILES", "how many files one try may write into its output folder", "output_files"),
    Variable("DAGSMITH_STEP_FILE_MB", "the largest file one try may write", "file_mb"),
)


def _step_limits() -> Limits:
    values = {variable.attribute: _positive_whole(variable.name) for variable in _STEP_LIMITS}
    return Limits(**{attribute: value for attribute, value in values.items() if value is not None})


def _positive_whole(variable: str) -> int | None:
    """``variable``'s whole number, None when it is unset; anything but a positive whole number is refused."""
    value = os.environ.get(variable)
    if not value:
        return None
    if not value.isdigit() or int(value) == 0:
        raise ConfigurationError(f"{variable} must be a positive whole number, not '{value}'")
    return int(value)


def _search_seconds() -> float | None:
    return _positive_seconds(SEARCH_SECONDS_VARIABLE, None)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system has one, else the machine's)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _candidates_at_once() -> int:
    """``CANDIDATES_AT_ONCE_VARIABLE``, else as many as this process has CPUs: each candidate fits on one."""
    return _positive_whole(CANDIDATES_AT_ONCE_VARIABLE) or usable_cpus()


def _not_opted_out(variable: str, meaning: str) -> bool:
    """False when ``variable`` opts out (1, true, yes), True when it is unset or says no; ``meaning`` is what 1
    does, for the error."""
    value = (os.environ.get(variable) or "").strip().lower()
    if value in ("", "0", "false", "no"):
        return True
    if value in ("1", "true", "yes"):
        return False
    raise ConfigurationError(f"{variable} must be 1 ({meaning}) or unset, not '{value}'")


def _drift_threshold() -> float:
    value = os.environ.get(DRIFT_THRESHOLD_VARIABLE) or "0.2"
    try:
        threshold = float(value)
    except ValueError:
        threshold = -1.0
    if not threshold > 0:
        raise ConfigurationError(f"{DRIFT_THRESHOLD_VARIABLE} must be a positive number, not '{value}'")
    return threshold


def _extra_data_roots() -> tuple[Path, ...]:
    folders = os.environ.get(DATA_ROOTS_VARIABLE, "").split(os.pathsep)
    return tuple(Path(folder).expanduser().resolve() for folder in folders if folder.strip())


@dataclass(frozen=True)
class Settings:
    """Where dagsmith keeps its state, which database it talks to and how pipeline steps run, each field read from
    the environment variables its metadata names (``Variable``: what each means and what unset means).

    ``DAGSMITH_LOCAL_CLI=1`` marks an Airflow process that runs DAGs for the local CLI's user, whose datasets may be
    any file that user can read: the CLI sets it in its own ``dag.test()`` runs' environment, where no trigger's conf
    can reach, and every other Airflow environment dagsmith makes (``dagsmith serve``) drops it.
    """

    home: Path = field(metadata=read_from(Variable(
        "DAGSMITH_HOME", "where dagsmith keeps its state: the embedded database, staged uploads, datasets, pipeline "
                         "specs, workspaces, runs' scratch folders, the embedded Airflow and cached embeddings",
        unset="`.dagsmith/` in the working directory")))
    database_url: str | None = field(metadata=read_from(Variable(
        "DAGSMITH_DATABASE_URL", "any PostgreSQL with pgvector, e.g. `postgresql://user:pass@host:5432/dagsmith`",
        unset="the embedded server under `DAGSMITH_HOME/postgres`")))
    runtime: str = field(default="local", metadata=read_from(Variable(
        RUNTIME_VARIABLE, "where pipeline steps run unless a run says otherwise: `local` (bubblewrap-sandboxed "
                            "subprocesses), `docker` (containers) or `kubernetes` (pods: where the DAGs are parsed, "
                            "it makes each step a `KubernetesPodOperator`); the default of the DAGs' `runtime` "
                            "parameter")))
    llm: LLMConfig = field(default=LLMConfig(), metadata=read_from(*_LLM_VARIABLES))
    heartbeat_seconds: float = field(default=10.0, metadata=read_from(Variable(
        "DAGSMITH_HEARTBEAT_SECONDS", "how often a running step's worker stamps its try; a try silent for six beats is "
                                      "taken for one whose worker died (`execution.reaper`), so set it alike on every "
                                      "machine")))
    step_limits: Limits = field(default=Limits(), metadata=read_from(*_STEP_LIMITS))
    sandboxed: bool = field(default=True, metadata=read_from(Variable(
        UNSANDBOXED_VARIABLE, "`1` runs the local runtime's services without the bubblewrap sandbox: for trusted "
                              "catalogs only, and said in `dagsmith serve`'s banner, each try's log and each run's "
                              "trace", unset="sandboxed")))
    warm_steps: bool = field(default=True, metadata=read_from(Variable(
        COLD_VARIABLE, "`1` starts each of the local runtime's sandboxed steps in a fresh interpreter, which imports "
                       "numpy, pandas and scikit-learn anew (1.5 to 3 s a step), instead of forking it into its "
                       "sandbox from one that imported them once (`runtime.zygote`)", unset="warm starts")))
    extra_data_roots: tuple[Path, ...] = field(default=(), metadata=read_from(Variable(
        DATA_ROOTS_VARIABLE, "folders (separated by `:`) besides `DAGSMITH_HOME/datasets` that datasets named by a "
                             "DAG trigger or the UI may be read from (`dagsmith.data.roots`)", unset="none")))
    local_cli: bool = field(default=False, metadata=read_from(Variable(
        LOCAL_CLI_VARIABLE, "set to `1` by the CLI in its own Airflow runs only, exempting them from the data roots; "
                            "never set it on a deployment (`dagsmith serve` drops it)", unset="off")))
    search_seconds: float | None = field(default_factory=_search_seconds, metadata=read_from(Variable(
        SEARCH_SECONDS_VARIABLE, "the whole model search's budget in seconds, shared by its candidates, for pipelines "
                                 "built from now on (a goal's own time budget wins)", unset="sized to the table")))
    candidates_at_once: int = field(default_factory=_candidates_at_once, metadata=read_from(Variable(
        CANDIDATES_AT_ONCE_VARIABLE, "how many of a model search's candidates a local run (`dagsmith run`, whose "
                                     "`dag.test()` runs one task at a time) fits side by side, the best-ranked first; "
                                     "on a deployment the executor runs them as it runs any tasks",
        unset="as many as the CPUs this process may use")))
    model_root: Path | None = field(default=None, metadata=read_from(Variable(
        MODEL_ROOT_VARIABLE, "where the frozen versions of pipelines' models live, one folder per pipeline "
                             "(`dagsmith.registry`)", unset="`DAGSMITH_HOME/models`")))
    drift_threshold: float = field(default=0.2, metadata=read_from(Variable(
        DRIFT_THRESHOLD_VARIABLE, "the population stability index of a feature from which `dagsmith predict` reports "
                                  "it as drifted (from 0.2 a shift is usually taken as real)")))
    pods: PodSettings = field(default=PodSettings(), metadata=read_from(*_POD_VARIABLES))
    #: Not in ``repr``: the address may hold a token.
    mlflow_tracking_uri: str | None = field(default=None, repr=False, metadata=read_from(Variable(
        MLFLOW_VARIABLE, "MLflow's tracking server: each model version is also logged there as a run and registered "
                         "as `dagsmith-pipeline-<id>`, its champion under the alias `champion` (needs the `mlflow` "
                         "extra; a failure never fails a run, it is recorded on the version)", unset="off")))

    workspace_root: Path | None = field(default=None, metadata=read_from(Variable(
        WORKSPACE_ROOT_VARIABLE, "where runs' workspaces are made, one folder per run; with Celery workers, a volume "
                                 "every worker mounts at this path (`dagsmith serve` and the compose file mark it, "
                                 "and a worker whose root lacks the mark refuses to start)",
        unset="`DAGSMITH_HOME/workspaces`")))
    queue: str = field(default="dagsmith", metadata=read_from(Variable(
        QUEUE_VARIABLE, "the Celery queue pipeline steps and model candidates are sent to, so a team can give them "
                        "workers of their own (read when the DAGs are parsed; other tasks use Airflow's default "
                        "queue)")))

    @classmethod
    def from_env(cls) -> Settings:
        home = Path(os.environ.get("DAGSMITH_HOME") or Path.cwd() / ".dagsmith").expanduser().resolve()
        try:
            runtime = check_runtime(os.environ.get(RUNTIME_VARIABLE) or "local")
        except ValueError as exc:
            raise ConfigurationError(f"DAGSMITH_RUNTIME: {exc}") from None
        return cls(home=home, database_url=os.environ.get("DAGSMITH_DATABASE_URL") or None, runtime=runtime,
                   llm=LLMConfig.from_env(), heartbeat_seconds=_heartbeat_seconds(), step_limits=_step_limits(),
                   sandboxed=_not_opted_out(UNSANDBOXED_VARIABLE, "run services without a sandbox, trusted "
                                                                 "catalogs only"),
                   warm_steps=_not_opted_out(COLD_VARIABLE, "start every step in a fresh interpreter"),
                   extra_data_roots=_extra_data_roots(),
                   local_cli=os.environ.get(LOCAL_CLI_VARIABLE) == "1",
                   model_root=Path(os.environ[MODEL_ROOT_VARIABLE]).expanduser().resolve()
                   if os.environ.get(MODEL_ROOT_VARIABLE) else None, drift_threshold=_drift_threshold(),
                   pods=PodSettings.from_env(), mlflow_tracking_uri=os.environ.get(MLFLOW_VARIABLE) or None,
                   workspace_root=Path(os.environ[WORKSPACE_ROOT_VARIABLE]).expanduser().resolve()
                   if os.environ.get(WORKSPACE_ROOT_VARIABLE) else None,
                   queue=os.environ.get(QUEUE_VARIABLE) or "dagsmith")

    @property
    def staging_dir(self) -> Path:
        return self.home / "staging"

    @property
    def models_dir(self) -> Path:
        """Where model versions are frozen: ``DAGSMITH_MODEL_ROOT``, else ``DAGSMITH_HOME/models``."""
        return self.model_root or self.home / "models"

    @property
    def workspaces_dir(self) -> Path:
        """Where runs' workspaces are made: ``DAGSMITH_WORKSPACE_ROOT``, else ``DAGSMITH_HOME/workspaces``."""
        return self.workspace_root or self.home / "workspaces"
