"""How one microservice invocation runs: in a container (docker API), a Kubernetes pod or as a local subprocess."""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dagsmith.config import Settings
    from dagsmith.runtime.base import Runtime
    from dagsmith.runtime.local import LocalRuntime
    from dagsmith.runtime.warm import Zygote

RUNTIMES = ("local", "docker", "kubernetes")
#: ``module:function`` that wraps every runtime a process makes, to provoke failures on purpose: the benchmark's
#: injected faults (``bench.faults``) and fault tests reach the steps of a real Airflow run this way.
WRAPPER_VARIABLE = "DAGSMITH_RUNTIME_WRAPPER"


def check_runtime(name: str) -> str:
    """``name`` when it names a runtime; a ValueError listing them otherwise."""
    if name not in RUNTIMES:
        raise ValueError(f"unknown runtime '{name}'; use one of {', '.join(RUNTIMES)}")
    return name


def runtime_named(name: str, settings: Settings) -> Runtime:
    """The runtime called ``name``; the local one sandboxed unless the settings opt out. ``WRAPPER_VARIABLE``, when
    set, wraps it."""
    runtime = _runtime_named(name, settings)
    if wrapper := os.environ.get(WRAPPER_VARIABLE):
        module, _, function = wrapper.partition(":")
        return getattr(importlib.import_module(module), function)(runtime)
    return runtime


def prestart(settings: Settings) -> Zygote | None:
    """Start ahead what the configured runtime's steps start faster with: the local runtime's zygote (None when
    its steps start cold)."""
    return _local(settings).prestart() if settings.runtime == "local" else None


def _runtime_named(name: str, settings: Settings) -> Runtime:
    if check_runtime(name) == "docker":
        from dagsmith.runtime.docker import DockerRuntime

        return DockerRuntime()
    if name == "kubernetes":
        from dagsmith.runtime.kubernetes import KubernetesRuntime

        return KubernetesRuntime(settings.pods, settings.home)
    return _local(settings)


def _local(settings: Settings) -> LocalRuntime:
    from dagsmith.runtime.local import LocalRuntime

    return LocalRuntime(sandboxed=settings.sandboxed, warm=settings.warm_steps)
