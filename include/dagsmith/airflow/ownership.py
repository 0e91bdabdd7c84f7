"""Who may see and trigger which of dagsmith's DAGs, as Airflow's FAB auth manager enforces it.

Under FAB, a DAG's ``access_control`` grants rights on that DAG to roles, and the dag-processor writes those grants
into FAB's permissions each time it parses the DAG. dagsmith's logins hold one of its base roles (FAB's Viewer, User
or Op without the right to read or change every DAG) plus a role of their own (``owner_role``): a pipeline's DAG
grants reading and triggering to its owner's role, to the base roles when the pipeline is shared, and to no one else;
admins (FAB's Admin) see everything. So Airflow's UI and REST API show a user what dagsmith's pages show them.

Every role a DAG names must exist when the dag-processor syncs the DAG's grants, or the whole DAG file fails to
load: ``dagsmith.airflow.fab_logins`` makes them with the logins and records the logins' names and roles (no
password) in ``LOGINS_FILE``, which parses read (the database is closed to them). A pipeline whose owner is no
recorded login is granted to no owner (admins, and everyone when shared, still see it), so it never takes the other
pipelines of its DAG file down with it. The simple auth manager reads no ``access_control``: every login sees every
DAG there.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from pathlib import Path

from dagsmith.config import Settings

log = logging.getLogger(__name__)

#: The FAB auth manager, as ``[core] auth_manager`` names it.
FAB_AUTH_MANAGER = "airflow.providers.fab.auth_manager.fab_auth_manager.FabAuthManager"
SIMPLE_AUTH_MANAGER = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
AUTH_MANAGERS = {"simple": SIMPLE_AUTH_MANAGER, "fab": FAB_AUTH_MANAGER}
#: dagsmith's base role for each login role but admin, by the FAB role it is made from (``fab_logins``).
BASE_ROLES = {"viewer": ("dagsmith_viewer", "Viewer"), "user": ("dagsmith_user", "User"), "op": ("dagsmith_op", "Op")}
ADMIN_ROLE = "Admin"
#: On one DAG: reading it, and changing it, which is what triggering it needs besides creating runs (base roles).
READ = {"DAGs": {"can_read"}}
READ_AND_TRIGGER = {"DAGs": {"can_read", "can_edit"}}


#: Under ``DAGSMITH_HOME``: every login ``fab_logins`` made, by name, with its role.
LOGINS_FILE = "logins.json"
#: A login's name, as it appears in a DAG id (its build DAG's, ``meta_dag``); never ``IN_PROCESS``.
LOGIN_NAME = re.compile(r"(?!dag_test$)[A-Za-z0-9_.-]{1,64}")


#: The triggering user Airflow records for a ``dag.test()`` run: made in-process, not through the API.
IN_PROCESS = "dag_test"
#: The meta-DAG (``meta_dag``); under FAB, admins' only.
BUILD_DAG_ID = "dagsmith_build_pipeline"


def builder_dag_id(login: str) -> str:
    """The build DAG of one login under FAB, which that login and admins only may read and trigger."""
    return f"{BUILD_DAG_ID}_for_{login}"


def api_login(triggering_user: str | None) -> str | None:
    """The login that made a run through the UI or the REST API, from the run's triggering user (None for a run
    made in-process, where nobody logged in)."""
    return None if triggering_user in (None, IN_PROCESS) else triggering_user


def fab() -> bool:
    """Whether this Airflow runs the FAB auth manager, under which DAGs' ``access_control`` is enforced. Airflow's
    configuration is imported here, not with the module: importing it sets up Airflow's logging on standard output,
    and the CLI imports this module for the build DAGs' ids."""
    from airflow.configuration import conf

    return conf.get("core", "auth_manager", fallback="") == FAB_AUTH_MANAGER


def logins(settings: Settings) -> dict[str, str]:
    """The logins ``fab_logins`` has made on this deployment, each with its role ({} before it ran)."""
    try:
        return json.loads((settings.home / LOGINS_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def record_logins(settings: Settings, made: dict[str, str]) -> None:
    """Add logins (name: role) to ``LOGINS_FILE``, replaced whole so a parse never reads half of it."""
    path: Path = settings.home / LOGINS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".logins-")
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump({**logins(settings), **made}, file, sort_keys=True)
    os.chmod(temporary, 0o644)  # names and roles only: every service reads them
    os.replace(temporary, path)


def owner_role(user: str) -> str:
    """The role of one login, through which the DAGs of the pipelines it owns are granted to it."""
    return f"owner:{user}"


def everyone() -> dict[str, dict[str, set[str]]]:
    """``access_control`` for every login: viewers read, the others read and trigger."""
    return {role: READ if login == "viewer" else READ_AND_TRIGGER for login, (role, _) in BASE_ROLES.items()}


def pipeline_access(owner: str, shared: bool, known: dict[str, str] | None = None) -> dict[str, dict[str, set[str]]]:
    """``access_control`` of a pipeline's DAG: its owner, and everyone when it is shared (admins see every DAG).
    With ``known`` logins (under FAB), an owner who is none of them is left out: their role does not exist."""
    if known is not None and owner not in known:
        log.error("the owner %s of a pipeline has no login on this deployment: its DAG is granted to admins%s only",
                  owner, " and everyone" if shared else "")
        return everyone() if shared else {}
    return {owner_role(owner): READ_AND_TRIGGER, **(everyone() if shared else {})}
