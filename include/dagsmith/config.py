"""Settings read from the environment, with embedded defaults for one machine."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dagsmith.runtime import check_runtime


@dataclass(frozen=True)
class Settings:
    """Where dagsmith keeps its state and which database it talks to.

    ``DAGSMITH_HOME`` (default ``.dagsmith`` in the working directory) holds the embedded database,
    staged uploads and workspaces. ``DAGSMITH_DATABASE_URL``, when set, points at any PostgreSQL with
    pgvector instead of the embedded server. ``DAGSMITH_RUNTIME`` (``local`` or ``docker``) is where pipeline
    steps run unless a run says otherwise: the default of the DAGs' ``runtime`` parameter.
    """

    home: Path
    database_url: str | None
    runtime: str = "local"

    @classmethod
    def from_env(cls) -> Settings:
        home = Path(os.environ.get("DAGSMITH_HOME") or Path.cwd() / ".dagsmith").expanduser().resolve()
        try:
            runtime = check_runtime(os.environ.get("DAGSMITH_RUNTIME") or "local")
        except ValueError as exc:
            raise ValueError(f"DAGSMITH_RUNTIME: {exc}") from None
        return cls(home=home, database_url=os.environ.get("DAGSMITH_DATABASE_URL") or None, runtime=runtime)

    @property
    def staging_dir(self) -> Path:
        return self.home / "staging"
