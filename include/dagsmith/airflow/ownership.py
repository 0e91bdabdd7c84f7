"""Who may see and trigger which of dagsmith's DAGs, as Airflow's FAB auth manager enforces it.

Under FAB, a DAG's ``access_control`` grants rights on that DAG to roles, and the dag-processor writes those grants
into FAB's permissions each time it parses the DAG. dagsmith's logins hold one of its base roles (FAB's Viewer, User
or Op without the right to read or change every DAG) plus a role of their own (``owner_role``): a pipeline's DAG
grants reading and triggering to its owner's role, to the base roles when the pipeline is shared, and to no one else;
admins (FAB's Admin) see everything. So Airflow's UI and REST API show a user what dagsmith's pages show them.

Every role a DAG names must exist before the DAG is parsed: ``dagsmith.airflow.fab_logins`` makes them with the
logins. The simple auth manager reads no ``access_control``: every login sees every DAG there.
"""

from __future__ import annotations

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


def owner_role(user: str) -> str:
    """The role of one login, through which the DAGs of the pipelines it owns are granted to it."""
    return f"owner:{user}"


def everyone() -> dict[str, dict[str, set[str]]]:
    """``access_control`` for every login: viewers read, the others read and trigger."""
    return {role: READ if login == "viewer" else READ_AND_TRIGGER for login, (role, _) in BASE_ROLES.items()}


def pipeline_access(owner: str, shared: bool) -> dict[str, dict[str, set[str]]]:
    """``access_control`` of a pipeline's DAG: its owner, and everyone when it is shared (admins see every DAG)."""
    return {owner_role(owner): READ_AND_TRIGGER, **(everyone() if shared else {})}
