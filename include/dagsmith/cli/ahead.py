"""A local run's ``dag.test()`` child, started before its pipeline is known so that Airflow gets ready in it while
the agents plan; for ``dagsmith run``, as the command starts.

Airflow's start-up in the child (about 3.5 s) takes longer than planning a small table, so the run waits for it:
every second the child starts sooner is a second off the run. The command's own imports take about 1.4 s, so
``dagsmith run`` starts the child before them (``start_early``, from the ``dagsmith`` entry point) when it will run
here: the command's checks come after, and a child that turns out not to be wanted (a usage error, a question back,
a deployment to submit to) is stopped as the command ends.
"""

from __future__ import annotations

import atexit
import os
from datetime import UTC, datetime

from dagsmith.airflow.local import spawn_dag_test
from dagsmith.airflow.serve import state_file
from dagsmith.config import RUNTIME_VARIABLE, URL_VARIABLE, Settings
from dagsmith.runtime import check_runtime


class RunChild:
    """A run's ``dag.test()`` child and its log file (``spawn_dag_test``), for a run whose steps run on ``runtime``
    (the child gets ready for that one: the local runtime's zygote starts only for local steps); closing it stops a
    child that was never given a pipeline."""

    def __init__(self, settings: Settings, runtime: str = "local") -> None:
        self.home, self.runtime = settings.home, runtime
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        self.log_file = settings.home / "logs" / f"run-{stamp}-{os.getpid()}.log"  # one per run, always
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        self._output = open(self.log_file, "w", encoding="utf-8")  # noqa: SIM115 (closed by ``close``)
        self.process = spawn_dag_test(settings, self._output, {RUNTIME_VARIABLE: runtime})
        self._begun = False

    def begin(self, pipeline_id: int, conf: dict) -> None:
        """Run the pipeline, its log named for it."""
        self.log_file = self.log_file.rename(self.log_file.with_name(f"pipeline-{pipeline_id}-"
                                                                     f"{self.log_file.name.removeprefix('run-')}"))
        self.process.begin(pipeline_id, conf)
        self._begun = True

    def close(self) -> None:
        if not self._begun and self.process.returncode is None:
            self.process.stop()
            self.process.wait()
            self.log_file.unlink(missing_ok=True)
        self._output.close()


_early: RunChild | None = None


def start_early(argv: list[str]) -> None:
    """Start the child of the ``dagsmith run`` that ``argv`` (the command's arguments) asks for, when it will run on
    this machine: ``--in-process``, or no deployment named (``--airflow-url``, its variable) nor running here. Help
    starts none. Anything that stops it here stops the command too, which reports it in its own words."""
    global _early
    if argv[:1] != ["run"] or {"-h", "--help"} & set(argv):
        return
    submitted = _given(argv, "--airflow-url") is not None or os.environ.get(URL_VARIABLE)
    try:
        settings = Settings.from_env()
        if "--in-process" not in argv and (submitted or state_file(settings).exists()):
            return
        child = RunChild(settings, check_runtime(_given(argv, "--runtime") or "local"))
    except Exception:  # noqa: BLE001 - the command meets the same fault and says what it is
        return
    atexit.register(child.close)  # when the command never takes it
    _early = child


def _given(argv: list[str], option: str) -> str | None:
    """The value ``argv`` gives ``option`` (``--option VALUE`` or ``--option=VALUE``), if any."""
    for at, arg in enumerate(argv):
        if arg == option:
            return argv[at + 1] if at + 1 < len(argv) else ""
        if arg.startswith(f"{option}="):
            return arg.split("=", 1)[1]
    return None


def child_for(settings: Settings, runtime: str) -> RunChild:
    """The child started early for this home and runtime, else a new one."""
    global _early
    child, _early = _early, None
    if child is not None and (child.home, child.runtime) == (settings.home, runtime):
        return child
    return RunChild(settings, runtime)  # one started for another stops at exit
