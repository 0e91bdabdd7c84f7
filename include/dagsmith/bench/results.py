"""The benchmark's result files: one JSON-lines file per experiment (``<out>/results/<experiment>.jsonl``) and one per
peer (``<out>/results/peers/<peer>.jsonl``), appended to as attempts finish so that an interrupted benchmark resumes
where it stopped, and read back whole for the report."""

from __future__ import annotations

import threading
from pathlib import Path

from pydantic import BaseModel, Field

from dagsmith.bench.peers import PEERS, PeerResult
from dagsmith.models.catalog import TaskType


class TaskResult(BaseModel):
    """One attempt's outcome: what was chosen, whether it worked, how long it took, how good it was."""

    task: str
    experiment: str
    task_type: TaskType
    cohort: int
    user: str
    success: bool
    failure: str | None = None
    seconds: float = 0.0
    plan_seconds: float = 0.0
    intent_ok: bool = False
    chosen: dict[str, str] = Field(default_factory=dict, description="stage -> service the plan chose")
    selection: dict[str, bool] = Field(default_factory=dict, description="reference stage -> choice acceptable")
    cold: bool = Field(default=False, description="a chosen service had never run before this attempt")
    substitutions: int = 0
    quality: dict[str, float] = Field(default_factory=dict)
    fault: str | None = None
    fault_provoked: bool = False


class ResultStore:
    """A JSON-lines file of per-task results (the last line for a task wins); appends are serialised between
    worker threads."""

    def __init__(self, path: Path, model: type[BaseModel] = TaskResult):
        self.path, self.model = path, model
        self._lock = threading.Lock()

    def load(self) -> dict[str, BaseModel]:
        if not self.path.is_file():
            return {}
        results = (self.model.model_validate_json(line) for line in self.path.read_text().splitlines() if line)
        return {result.task: result for result in results}

    def append(self, result: BaseModel) -> None:
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as file:
                file.write(result.model_dump_json() + "\n")


def peer_store(out: Path, peer: str) -> ResultStore:
    path = out / "results" / "peers" / f"{peer}.jsonl"
    legacy = out / "results" / "peers.jsonl"  # FLAML's results, from when it was the only peer
    if peer == "flaml" and legacy.is_file() and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        legacy.rename(path)
    return ResultStore(path, PeerResult)


def load_peers(out: Path) -> list[PeerResult]:
    """Every peer's results under ``out`` (for the report)."""
    return [row for peer in PEERS for row in peer_store(out, peer).load().values()]


def load_results(out: Path) -> dict[str, list[TaskResult]]:
    """Every experiment's results under ``out`` (for the report), by experiment name."""
    peer_store(out, "flaml")  # moves a results file of the single-peer days out of the experiments' way
    results = {}
    for file in sorted((out / "results").glob("*.jsonl")):
        rows = list(ResultStore(file).load().values())
        if rows:
            results[rows[0].experiment] = rows
    return results
