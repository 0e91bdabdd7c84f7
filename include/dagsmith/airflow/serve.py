"""dagsmith as a running Airflow on one machine: api-server (UI and REST API), scheduler, dag-processor and
triggerer as child processes, with dagsmith's DAGs and logins.

The scheduler runs tasks itself (LocalExecutor), or with ``executor="celery"`` hands them to Celery workers started
beside it (``workers`` of them, each named ``worker-N@<host>``, which each try records) through a Redis broker of its
own: Debian's ``redis-server`` on a unix socket under the deployment's root, persisted there (append-only file,
written through), so a broker that exits is restarted and loses no queued task; task results go to the metadata
database. The workers take pipeline steps from dagsmith's queue (``DAGSMITH_QUEUE``) and everything else from
Airflow's default queue, and see one shared workspace root, marked so (``execution.workers``) before they start.

Logins are the simple auth manager's (one person on their machine: every login sees every DAG) or the FAB auth
manager's, under which each pipeline's DAG is seen and triggered by its owner, everyone when it is shared, and
admins only (``dagsmith.airflow.ownership``).

Airflow's metadata lives in its own database on the embedded PostgreSQL (beside dagsmith's store, never in it),
so the LocalExecutor has a real database under it. The login, the JWT secret and the Fernet key are made once
and kept in files only the owner can read; the password is shown to the person who started the deployment and
never logged. While the deployment runs, a state file beside them (``STATE_FILE``: its address, no secret) is how
``dagsmith run`` on the same ``DAGSMITH_HOME`` finds it.

The api-server listens on this machine's loopback address unless ``host`` says otherwise, and nothing else listens:
Airflow's log servers (the scheduler's and the triggerer's, which bind every interface and have no setting for it)
are not started, since the api-server reads every task's log from its file on this machine, and neither is the
scheduler's health server (the API's health report reads the services' heartbeats from the metadata database).
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet
from sqlalchemy.engine import make_url

from dagsmith.airflow.local import DAGS_FOLDER, airflow_env
from dagsmith.airflow.ownership import AUTH_MANAGERS, LOGIN_NAME
from dagsmith.airflow.services import Broker, DeploymentError, log_tail, signal_group, spawn, stop
from dagsmith.config import RUNTIME_VARIABLE, Settings
from dagsmith.execution.workers import WORKER_VARIABLE, mark_shared
from dagsmith.runtime import check_runtime
from dagsmith.store.databases import named_database

SERVICES = ("api-server", "scheduler", "dag-processor", "triggerer")
#: Who runs the tasks the scheduler sends: the scheduler itself, or Celery workers (``workers``).
EXECUTORS = {"local": "LocalExecutor", "celery": "CeleryExecutor"}
#: Tasks one Celery worker runs at once unless Airflow's own setting says otherwise.
WORKER_CONCURRENCY = 4
#: Airflow's default queue, which the workers serve beside dagsmith's.
DEFAULT_QUEUE = "default"
#: Each service's own options: the api-server's address is added in ``start``; no log server listens.
SERVICE_OPTIONS = {"scheduler": ["--skip-serve-logs"], "triggerer": ["--skip-serve-logs"]}
#: Services started as Airflow's own command run by a module of dagsmith's, which loads the task code first.
SERVICE_MODULES = {"scheduler": ["dagsmith.airflow.scheduler"]}
#: Where the api-server listens unless told otherwise: this machine only.
LOOPBACK = "127.0.0.1"
#: Addresses that mean every interface: clients reach them at localhost.
_EVERY_INTERFACE = ("0.0.0.0", "::", "")
ADMIN = "admin"
#: Login roles, least to most rights: the simple auth manager's, or dagsmith's FAB roles named for them.
ROLES = ("viewer", "user", "op", "admin")
HEALTH_PATH = "/api/v2/monitor/health"
#: The execution API's health, asked once the services are: its first request has Airflow generate the API's
#: versioned routes (about 3 s of CPU), which the deployment's first task would otherwise wait for.
EXECUTION_HEALTH_PATH = "/execution/health"
#: Written under the deployment's root once it is healthy, removed when it stops: how ``dagsmith run`` finds it.
STATE_FILE = "deployment.json"
#: The metadata database's name on the embedded server.
METADATA_DATABASE = "airflow"
#: How often the dag-processor looks for newly built pipeline DAGs.
REFRESH_SECONDS = 10
START_TIMEOUT = 300.0
STOP_TIMEOUT = 30.0


def state_file(settings: Settings) -> Path:
    """Where a deployment of this home says it runs (``STATE_FILE``, under the folder of its logs and logins)."""
    return settings.home / "airflow-serve" / STATE_FILE


@dataclass(frozen=True)
class Login:
    user: str
    password: str


class LocalDeployment:
    """Start with ``start()`` (or ``with``), stop with ``stop()``; files under ``<home>/airflow-serve``."""

    def __init__(self, settings: Settings, *, port: int = 8080, host: str = LOOPBACK, runtime: str | None = None,
                 metadata_url: str | None = None, refresh_seconds: int = REFRESH_SECONDS,
                 users: dict[str, str] | None = None, auth: str = "simple", executor: str = "local", workers: int = 2):
        self.settings, self.port, self.host, self.refresh_seconds = settings, port, host, refresh_seconds
        if executor not in EXECUTORS:
            raise ValueError(f"--executor: unknown executor {executor}; executors are {', '.join(EXECUTORS)}")
        if workers < 1:
            raise ValueError(f"--workers: at least one worker, not {workers}")
        self.executor, self.workers = executor, workers if executor == "celery" else 0
        if auth not in AUTH_MANAGERS:
            raise ValueError(f"--auth: unknown auth manager {auth}; auth managers are {', '.join(AUTH_MANAGERS)}")
        self.auth = auth
        #: Logins by role; ``admin`` always exists.
        self.users = {ADMIN: "admin", **(users or {})}
        if unknown := {role for role in self.users.values() if role not in ROLES}:
            raise ValueError(f"--user: unknown role {', '.join(sorted(unknown))}; roles are {', '.join(ROLES)}")
        if wrong := [name for name in self.users if not LOGIN_NAME.fullmatch(name)]:
            raise ValueError(f"--user: login names are letters, digits, '.', '-' and '_': not {', '.join(wrong)}")
        self.runtime = check_runtime(runtime or settings.runtime)
        self.root = state_file(settings).parent
        self._metadata_url = metadata_url
        self._processes: dict[str, subprocess.Popen] = {}
        self.broker = Broker(self.root, self.logs) if self.executor == "celery" else None

    @property
    def url(self) -> str:
        """The address clients use: the one the api-server listens on, or localhost when it listens on every
        interface."""
        host = "localhost" if self.host in _EVERY_INTERFACE else self.host
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    @property
    def listening(self) -> str:
        """Where the api-server listens, as a person reads it."""
        where = "this machine only" if _loopback(self.host) else "every interface" if self.host in _EVERY_INTERFACE \
            else "that address"
        return f"{self.host or '0.0.0.0'}:{self.port} ({where})"

    @property
    def pids(self) -> dict[str, int]:
        """Each running service's process id (its process group's), the broker's included."""
        broker = {"redis": self.broker.process} if self.broker and self.broker.process else {}
        return {service: process.pid for service, process in {**self._processes, **broker}.items()}

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def worker_names(self) -> dict[str, str]:
        """Each Celery worker's service name and the name its tries record (its Celery hostname)."""
        host = socket.gethostname()
        return {f"worker-{number}": f"worker-{number}@{host}" for number in range(1, self.workers + 1)}

    # ------------------------------------------------------------------------------------------ secrets

    def _secrets(self) -> dict:
        """Every user's password, the JWT secret and the Fernet key: made on first need, then reused."""
        path = self.root / "secrets.json"
        if path.is_file():
            values = json.loads(path.read_text(encoding="utf-8"))
        else:
            self.root.mkdir(parents=True, exist_ok=True)
            values = {"jwt_secret": secrets.token_urlsafe(32), "fernet_key": Fernet.generate_key().decode()}
        missing_key = "secret_key" not in values  # signs FAB's login sessions
        values.setdefault("secret_key", secrets.token_urlsafe(32))
        passwords = values.setdefault("passwords", {ADMIN: values.pop("password", None) or secrets.token_urlsafe(12)})
        missing = [user for user in self.users if user not in passwords]
        passwords.update({user: secrets.token_urlsafe(12) for user in missing})
        if missing or missing_key or not path.is_file():
            _write_private(path, json.dumps(values))
        return values

    def login(self, user: str = ADMIN) -> Login:
        return Login(user, self._secrets()["passwords"][user])

    # ------------------------------------------------------------------------------------------ environment

    def metadata_url(self) -> str:
        """Airflow's metadata database: the one given (or configured for Airflow), else its own database on
        dagsmith's server."""
        configured = os.environ.get("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN")
        url = self._metadata_url or configured or named_database(self.settings, METADATA_DATABASE).database_url
        if make_url(url).drivername == "postgresql+psycopg":  # dagsmith's driver; Airflow runs on psycopg2
            url = make_url(url).set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)
        return url

    def _auth_environment(self, passwords: dict[str, str]) -> dict[str, str]:
        """The auth manager's settings; the simple one reads its logins from a file only the owner can read."""
        if self.auth == "fab":
            # a new grant reaches a logged-in user as soon as a new pipeline's DAG appears
            return {"AIRFLOW__FAB__CACHE_TTL": str(self.refresh_seconds)}
        file = self.root / "passwords.json"
        _write_private(file, json.dumps({user: passwords[user] for user in self.users}))
        return {"AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": ",".join(f"{u}:{role}" for u, role in self.users.items()),
                "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(file)}

    def environment(self) -> dict[str, str]:
        """What every Airflow service of this deployment runs with."""
        values = self._secrets()
        return {
            # A scheduler round when the last found nothing to do: every task waits for one after the task before
            # it, half as long as with Airflow's 1 s (session 24: a churn run's fixed cost 14 to 10-12 s); an
            # operator's own setting wins.
            "AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": "0.5",
            # dagsmith's DAGs and store, as for in-process runs, but not the local CLI's mark: datasets stay
            # within the data roots (dagsmith.data.roots).
            **airflow_env(self.settings),
            "AIRFLOW_HOME": str(self.root),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(DAGS_FOLDER.parent / "plugins"),
            "AIRFLOW__CORE__EXECUTOR": EXECUTORS[self.executor],
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__FERNET_KEY": values["fernet_key"],
            "AIRFLOW__CORE__AUTH_MANAGER": AUTH_MANAGERS[self.auth],
            **self._auth_environment(values["passwords"]),
            "AIRFLOW__API__SECRET_KEY": values["secret_key"],
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.url}/execution/",
            "AIRFLOW__API__HOST": self.host,
            "AIRFLOW__API__PORT": str(self.port),
            "AIRFLOW__API__BASE_URL": self.url,
            "AIRFLOW__API_AUTH__JWT_SECRET": values["jwt_secret"],
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": self.metadata_url(),
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": str(self.refresh_seconds),
            "AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK": "False",
            RUNTIME_VARIABLE: self.runtime,
            **(self._celery_environment() if self.executor == "celery" else {}),
        }

    def _celery_environment(self) -> dict[str, str]:
        """The broker (this deployment's Redis, on its unix socket) and the result backend (the metadata database)."""
        return {"AIRFLOW__CELERY__BROKER_URL": self.broker.url if self.broker else "",
                "AIRFLOW__CELERY__RESULT_BACKEND": f"db+{self.metadata_url()}",
                "AIRFLOW__CELERY__WORKER_CONCURRENCY": os.environ.get("AIRFLOW__CELERY__WORKER_CONCURRENCY")
                or str(WORKER_CONCURRENCY)}

    # ------------------------------------------------------------------------------------------ life cycle

    def start(self, progress: Callable[[str], None] = lambda _: None) -> None:
        """Migrate Airflow's metadata, start the four services (with Celery: the broker first and the workers after)
        and wait until the API reports them healthy."""
        env = self.environment()
        self.logs.mkdir(parents=True, exist_ok=True)
        progress("migrating Airflow's metadata database")
        migrate = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, capture_output=True,
                                 text=True, timeout=600)
        if migrate.returncode != 0:
            raise DeploymentError(f"Airflow's metadata database could not be migrated:\n{migrate.stderr[-2000:]}")
        if self.auth == "fab":
            progress("making the logins and their roles")
            self._make_fab_logins(env)
        try:
            if self.broker:
                progress("starting the Redis broker")
                self.broker.start()
                mark_shared(self.settings.workspaces_dir)  # the workers check for it before they start
            for service in SERVICES:
                progress(f"starting {service}")
                command = [sys.executable, "-m", *SERVICE_MODULES.get(service, ["airflow", service]),
                           *SERVICE_OPTIONS.get(service, [])]
                if service == "api-server":
                    command += ["--host", self.host, "--port", str(self.port)]
                self._processes[service] = spawn(self.logs, service, command, env)
            for service, name in self.worker_names.items():
                progress(f"starting {service}")
                command = [sys.executable, "-m", "dagsmith.airflow.worker", "--celery-hostname", name,
                           "--skip-serve-logs", "--queues", f"{self.settings.queue},{DEFAULT_QUEUE}"]
                self._processes[service] = spawn(self.logs, service, command, {**env, WORKER_VARIABLE: name})
            progress("waiting for the services to report healthy")
            self._wait_healthy()
        except DeploymentError:
            self.stop()
            raise
        extra_roots = [str(root) for root in Settings.from_env().extra_data_roots]  # the services' DAGSMITH_DATA_ROOTS
        _write_private(self.root / STATE_FILE, json.dumps({"url": self.url, "port": self.port, "pid": os.getpid(),
                                                          "extra_data_roots": extra_roots}))

    def _make_fab_logins(self, env: dict[str, str]) -> None:
        """FAB's logins and roles, made before the dag-processor parses the DAGs that name the roles."""
        logins = {user: {"role": role, "password": self.login(user).password} for user, role in self.users.items()}
        made = subprocess.run([sys.executable, "-m", "dagsmith.airflow.fab_logins"], input=json.dumps(logins), env=env,
                              capture_output=True, text=True, timeout=600)
        if made.returncode != 0:
            raise DeploymentError(f"the logins could not be made:\n{made.stderr[-2000:]}")

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        status: dict = {}
        while time.monotonic() < deadline:
            self.check_alive()
            status = self.health()
            if (status and all(part.get("status") == "healthy" for part in status.values())
                    and self._answer(EXECUTION_HEALTH_PATH, timeout=60).get("status") == "healthy"):
                return
            time.sleep(2)
        raise DeploymentError(f"the services were not healthy after {START_TIMEOUT:.0f} s: {status}")

    def health(self) -> dict:
        """The API's health report ({} while the api-server is not answering)."""
        return self._answer(HEALTH_PATH, timeout=5)

    def _answer(self, path: str, *, timeout: float) -> dict:
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError):
            return {}

    def check_alive(self, progress: Callable[[str], None] = lambda _: None) -> None:
        """Restart the broker when it has exited (its queue is on disk, so no run is lost), unless it keeps exiting;
        raise with the log's tail when any other service has exited."""
        if self.broker:
            self.broker.restart_if_exited(progress)
        for service, process in self._processes.items():
            if process.poll() is not None:
                tail = log_tail(self.logs, service)
                raise DeploymentError(f"{service} exited with code {process.returncode}:\n{tail}")

    def stop(self) -> None:
        """Stop every service (its whole process group: task runners included)."""
        (self.root / STATE_FILE).unlink(missing_ok=True)
        for process in self._processes.values():
            signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for process in self._processes.values():
            stop(process, deadline)
        self._processes.clear()
        if self.broker:  # last: the workers hand back their tasks through it as they stop
            self.broker.stop(STOP_TIMEOUT)

    def __enter__(self) -> LocalDeployment:
        self.start()
        return self

    def __exit__(self, *_) -> None:
        self.stop()


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, without a moment where it is readable by others."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)


def free_port() -> int:
    """A port nothing listens on now: for a deployment started beside others (benchmarks, tests)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
