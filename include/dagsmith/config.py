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

REASONERS = ("deterministic", "openai")
#: How the endpoint is asked for structured output: OpenAI's ``json_schema`` (OpenAI, Azure, vLLM, Ollama) or
#: ``json_object`` with the schema alongside (llama.cpp's server).
RESPONSE_FORMATS = ("json_schema", "json_object")
#: Folders besides ``DAGSMITH_HOME/datasets`` that datasets named from outside the local CLI may be read from.
DATA_ROOTS_VARIABLE = "DAGSMITH_DATA_ROOTS"
#: Set to ``1`` only in the environment the local CLI gives its own Airflow runs (``airflow.local.airflow_env``).
LOCAL_CLI_VARIABLE = "DAGSMITH_LOCAL_CLI"
#: The execution the local CLI recorded before starting its Airflow run, which that run's start task takes over.
EXECUTION_VARIABLE = "DAGSMITH_EXECUTION_ID"
#: The model search's budget for pipelines built from now on (``agents.model_search``); unset: sized to the table.
SEARCH_SECONDS_VARIABLE = "DAGSMITH_SEARCH_SECONDS"
#: Where the versions of pipelines' models are kept (``registry``); unset: ``DAGSMITH_HOME/models``.
MODEL_ROOT_VARIABLE = "DAGSMITH_MODEL_ROOT"
#: The drift score of a feature above which scoring says prominently that the new rows differ from the training's.
DRIFT_THRESHOLD_VARIABLE = "DAGSMITH_DRIFT_THRESHOLD"


class ConfigurationError(InputError, ValueError):
    """An environment variable holds a value dagsmith cannot use; the message names it."""


_LLM_NUMBERS = {"temperature": ("DAGSMITH_LLM_TEMPERATURE", float),
                "timeout_seconds": ("DAGSMITH_LLM_TIMEOUT_SECONDS", float),
                "max_tokens": ("DAGSMITH_LLM_MAX_TOKENS", int),
                "max_retries": ("DAGSMITH_LLM_MAX_RETRIES", int)}


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
        numbers = {}
        for name, (variable, kind) in _LLM_NUMBERS.items():
            if env.get(variable):
                try:
                    numbers[name] = kind(env[variable])
                except ValueError:
                    raise ConfigurationError(f"{variable} must be a number, not '{env[variable]}'") from None
        return cls(reasoner=reasoner, model=model, response_format=response_format, **numbers)


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
_STEP_LIMITS = {"timeout_seconds": "DAGSMITH_STEP_TIMEOUT_SECONDS", "memory_mb": "DAGSMITH_STEP_MEMORY_MB",
                "output_mb": "DAGSMITH_STEP_OUTPUT_MB", "output_files": "DAGSMITH_STEP_OUTPUT_FILES",
                "file_mb": "DAGSMITH_STEP_FILE_MB"}


def _step_limits() -> Limits:
    values = {}
    for name, variable in _STEP_LIMITS.items():
        value = os.environ.get(variable)
        if not value:
            continue
        if not value.isdigit() or int(value) == 0:
            raise ConfigurationError(f"{variable} must be a positive whole number, not '{value}'")
        values[name] = int(value)
    return Limits(**values)


def _search_seconds() -> float | None:
    return _positive_seconds(SEARCH_SECONDS_VARIABLE, None)


def _sandboxed() -> bool:
    value = (os.environ.get(UNSANDBOXED_VARIABLE) or "").strip().lower()
    if value in ("", "0", "false", "no"):
        return True
    if value in ("1", "true", "yes"):
        return False
    raise ConfigurationError(f"{UNSANDBOXED_VARIABLE} must be 1 (run services without a sandbox, trusted catalogs "
                             f"only) or unset, not '{value}'")


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
    """Where dagsmith keeps its state and which database it talks to.

    ``DAGSMITH_HOME`` (default ``.dagsmith`` in the working directory) holds the embedded database,
    staged uploads and workspaces. ``DAGSMITH_DATABASE_URL``, when set, points at any PostgreSQL with
    pgvector instead of the embedded server. ``DAGSMITH_RUNTIME`` (``local`` or ``docker``) is where pipeline
    steps run unless a run says otherwise: the default of the DAGs' ``runtime`` parameter. ``llm`` says whether
    a language model reasons beside the deterministic reasoner (``LLMConfig``). ``DAGSMITH_HEARTBEAT_SECONDS``
    (default 10) is how often a running step's worker stamps its try; the same on every machine, since a try
    silent for six beats is taken for one whose worker died (``execution.reaper``). ``DAGSMITH_STEP_TIMEOUT_SECONDS``
    (default 900), ``DAGSMITH_STEP_MEMORY_MB`` (default 2048) and the output's ``DAGSMITH_STEP_OUTPUT_MB``,
    ``DAGSMITH_STEP_OUTPUT_FILES`` and ``DAGSMITH_STEP_FILE_MB`` (``Limits``) bound every try of a pipeline step.
    ``DAGSMITH_UNSAFE_NO_SANDBOX=1`` runs the local runtime's services without the bubblewrap sandbox: for trusted
    catalogs only, and said in ``dagsmith serve``'s banner and every run's trace. ``DAGSMITH_SEARCH_SECONDS`` sets
    the modelling search's budget for pipelines built from now on (default: sized to the table; a goal's own time
    budget wins). ``DAGSMITH_MODEL_ROOT`` (default ``DAGSMITH_HOME/models``) holds the frozen versions of pipelines'
    models (``registry``); ``DAGSMITH_DRIFT_THRESHOLD`` (default 0.2, the population stability index from which a
    shift is usually taken as significant) is the drift score of a feature that scoring reports as drifted.

    ``DAGSMITH_DATA_ROOTS`` (folders separated by ``os.pathsep``) adds to ``DAGSMITH_HOME/datasets`` the folders
    a dataset named by a DAG trigger or the UI may be read from (``dagsmith.data.roots``). ``DAGSMITH_LOCAL_CLI=1``
    marks an Airflow process that runs DAGs for the local CLI's user, whose datasets may be any file that user
    can read: the CLI sets it in its own ``dag.test()`` runs' environment, where no trigger's conf can reach, and
    every other Airflow environment dagsmith makes (``dagsmith serve``) drops it. Never set it on a deployment.
    """

    home: Path
    database_url: str | None
    runtime: str = "local"
    llm: LLMConfig = LLMConfig()
    heartbeat_seconds: float = 10.0
    step_limits: Limits = Limits()
    sandboxed: bool = True
    extra_data_roots: tuple[Path, ...] = ()
    local_cli: bool = False
    search_seconds: float | None = field(default_factory=_search_seconds)
    model_root: Path | None = None
    drift_threshold: float = 0.2

    @classmethod
    def from_env(cls) -> Settings:
        home = Path(os.environ.get("DAGSMITH_HOME") or Path.cwd() / ".dagsmith").expanduser().resolve()
        try:
            runtime = check_runtime(os.environ.get("DAGSMITH_RUNTIME") or "local")
        except ValueError as exc:
            raise ConfigurationError(f"DAGSMITH_RUNTIME: {exc}") from None
        return cls(home=home, database_url=os.environ.get("DAGSMITH_DATABASE_URL") or None, runtime=runtime,
                   llm=LLMConfig.from_env(), heartbeat_seconds=_heartbeat_seconds(), step_limits=_step_limits(),
                   sandboxed=_sandboxed(), extra_data_roots=_extra_data_roots(),
                   local_cli=os.environ.get(LOCAL_CLI_VARIABLE) == "1",
                   model_root=Path(os.environ[MODEL_ROOT_VARIABLE]).expanduser().resolve()
                   if os.environ.get(MODEL_ROOT_VARIABLE) else None, drift_threshold=_drift_threshold())

    @property
    def staging_dir(self) -> Path:
        return self.home / "staging"

    @property
    def models_dir(self) -> Path:
        """Where model versions are frozen: ``DAGSMITH_MODEL_ROOT``, else ``DAGSMITH_HOME/models``."""
        return self.model_root or self.home / "models"
