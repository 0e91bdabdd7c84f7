"""A run's workspace: one folder per run, never shared, holding its input, each try's output and each step's
output (the one the next steps read)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from dagsmith.store import schema


@dataclass(frozen=True)
class Workspace:
    root: Path

    @classmethod
    def of(cls, execution: schema.Execution) -> Workspace:
        """The workspace ``start`` made for a run (every run it starts has one)."""
        if not execution.workspace:
            raise LookupError(f"execution {execution.id} has no workspace")
        return cls(Path(execution.workspace))

    @property
    def input(self) -> Path:
        return self.root / "input"

    def step_output(self, position: int) -> Path:
        return self.root / "steps" / f"{position:02d}"

    def attempt_output(self, position: int, attempt: int) -> Path:
        return self.root / "attempts" / f"{position:02d}-{attempt}"

    def step_input(self, depends_on: list[int]) -> Path:
        """The bundle a step reads: its predecessor's output, or the run's input for a first step."""
        return self.step_output(depends_on[0]) if depends_on else self.input


def promote_output(output: Path, final: Path) -> None:
    """A try's output becomes the step's output, the one the next steps read."""
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        shutil.rmtree(final)
    output.rename(final)
