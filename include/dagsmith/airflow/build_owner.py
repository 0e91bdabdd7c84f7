"""Whose pipeline a build run builds: decided by who triggered it, never by its conf.

The login Airflow records as the run's triggering user, or, for ``on_behalf_of``, another login, which admins only
may name (and runs made in-process, ``dag.test()``, where nobody logged in, for ``on_behalf_of`` or anonymous).
Under FAB each login who may build has a build DAG of its own (``ownership.builder_dag_id``), which builds for that
login only.
"""

from __future__ import annotations

import logging

from airflow.configuration import conf
from airflow.sdk.exceptions import AirflowFailException

from dagsmith.airflow.ownership import BUILD_DAG_ID, api_login, fab, logins
from dagsmith.config import Settings

log = logging.getLogger(__name__)

#: Who owns a pipeline built where nobody logged in.
ANONYMOUS = "anonymous"


def _dag_login(dag_id_: str) -> str | None:
    """The login whose build DAG this is (None for ``dagsmith_build_pipeline``)."""
    login = dag_id_.removeprefix(f"{BUILD_DAG_ID}_for_")
    return None if login == dag_id_ else login


def _is_admin(login: str) -> bool:
    """Whether a login that triggered ``dagsmith_build_pipeline`` is an admin: under FAB only admins may trigger
    it; the simple auth manager's roles are in its configuration."""
    if fab():
        return True
    if conf.getboolean("core", "simple_auth_manager_all_admins", fallback=False):
        return True
    roles = dict(entry.strip().rpartition(":")[::2] for entry in
                 conf.get("core", "simple_auth_manager_users", fallback="").split(",") if ":" in entry)
    return roles.get(login) == "admin"


def owner_of_run(dag_id_: str, triggering_user: str | None, on_behalf_of: str | None) -> str:
    """Whose pipeline a run builds: the login its build DAG belongs to, else the login that triggered it, or another
    one an admin names in ``on_behalf_of``; a run nobody triggered through the API builds for ``on_behalf_of`` or
    anonymous. Anything else fails the run with the reason."""
    if login := _dag_login(dag_id_):  # FAB lets only this login and admins trigger it
        if on_behalf_of and on_behalf_of != login:
            raise AirflowFailException(f"{dag_id_} builds for {login} only: admins build for another login by "
                                       f"triggering that login's build DAG or {BUILD_DAG_ID} with on_behalf_of")
        return login
    if api_login(triggering_user) is None:
        return on_behalf_of or ANONYMOUS
    if on_behalf_of and on_behalf_of != triggering_user and not _is_admin(triggering_user):
        raise AirflowFailException(f"{triggering_user} may not build a pipeline for {on_behalf_of}: pipelines belong "
                                   "to the login that triggers the build; only admins set on_behalf_of")
    return on_behalf_of or triggering_user


def _check_owner(owner: str, settings: Settings) -> None:
    """Under FAB a pipeline's DAG is granted to its owner's role, which only a login made by ``fab_logins`` has:
    refuse a build for anyone else before anything is written."""
    if fab() and owner not in logins(settings):
        raise AirflowFailException(f"there is no login named {owner} on this deployment, so the pipeline's DAG could "
                                   "not be granted to its owner; add the login (python -m dagsmith.airflow.fab_logins) "
                                   "or build for an existing one")


def owner_for(params: dict, dag_run) -> str:
    """Whose pipeline the run builds, settled before anything is read; refused if the conf claims another."""
    built_for = owner_of_run(dag_run.dag_id, dag_run.triggering_user_name, params.get("on_behalf_of"))
    if (dag_run.conf or {}).get("user", built_for) != built_for:
        raise AirflowFailException("the run's 'user' does not choose whose pipeline is built: it belongs to the "
                                   "login that triggers the run (admins set on_behalf_of)")
    _check_owner(built_for, Settings.from_env())
    log.info("building a pipeline for %s, triggered by %s", built_for, dag_run.triggering_user_name or "nobody")
    return built_for
