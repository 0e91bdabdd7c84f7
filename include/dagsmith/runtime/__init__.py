"""How one microservice invocation runs: in a container (docker API) or as a local subprocess."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dagsmith.config import Settings
    from dagsmith.runtime.base import Runtime

RUNTIMES = ("local", "docker")


def runtime_named(name: str, settings: Settings) -> Runtime:
    """The runtime called ``name``; local environments are cached under the home's ``envs`` folder."""
    if name == "docker":
        from dagsmith.runtime.docker import DockerRuntime

        return DockerRuntime()
    if name == "local":
        from dagsmith.runtime.local import LocalRuntime

        return LocalRuntime(settings.home / "envs")
    raise ValueError(f"unknown runtime '{name}'; use one of {', '.join(RUNTIMES)}")
