"""Make the FAB auth manager's roles and logins a dagsmith deployment needs, before the DAGs that name them are parsed.

Run once per start, after ``airflow db migrate``, in the deployment's environment: ``python -m
dagsmith.airflow.fab_logins`` with ``{"NAME": {"role": "user", "password": "..."}}`` on standard input (passwords
never pass through the command line or a log). Safe to run again: roles are completed in place, and an existing
login gets the roles and password given. The logins' names and roles are recorded for the DAG files
(``ownership.record_logins``): each builder's own build DAG (``meta_dag``) and the pipelines' grants.
"""

from __future__ import annotations

import json
import sys

from airflow.providers.fab.auth_manager.cli_commands.utils import get_application_builder

from dagsmith.airflow.ownership import ADMIN_ROLE, BASE_ROLES, LOGIN_NAME, owner_role, record_logins
from dagsmith.config import Settings

#: Rights on every DAG, which FAB's Viewer, User and Op hold and dagsmith's base roles leave to each DAG's grants.
_EVERY_DAG = "DAGs"
_DAG_WIDE_ACTIONS = {"can_read", "can_edit", "can_delete"}
#: Airflow's menu lists dagsmith's pages from the plugins' list, which FAB shows to ops and admins only.
_PLUGINS = ("can_read", "Plugins")


def base_role_configs(fab_roles: list[dict]) -> list[dict]:
    """dagsmith's base roles: each FAB role's permissions without those on every DAG (menu entries stay), and the
    plugins' list."""
    perms = {config["role"]: config["perms"] for config in fab_roles}
    return [{"role": role, "perms": [(action, resource) for action, resource in perms[source]
                                     if not (resource == _EVERY_DAG and action in _DAG_WIDE_ACTIONS)] + [_PLUGINS]}
            for role, source in BASE_ROLES.values()]


def check_logins(logins: object) -> dict[str, dict[str, str]]:
    """The logins as given on standard input, or a ValueError saying what is wrong with them."""
    roles = ["admin", *BASE_ROLES]
    if not isinstance(logins, dict) or not all(isinstance(login, dict) and login.get("role") in roles
                                               and isinstance(login.get("password"), str) and login["password"]
                                               for login in logins.values()):
        raise ValueError('expected {"NAME": {"role": ROLE, "password": "..."}, ...} with ROLE one of '
                         + ", ".join(roles))
    if wrong := [name for name in logins if not LOGIN_NAME.fullmatch(name)]:
        raise ValueError(f"login names are letters, digits, '.', '-' and '_' (up to 64): not {', '.join(wrong)}")
    return logins


def make_logins(logins: dict[str, dict[str, str]]) -> None:
    with get_application_builder() as appbuilder:
        manager = appbuilder.sm
        manager.sync_roles()  # FAB's own roles and the permissions of every resource
        manager.bulk_sync_roles(base_role_configs(manager.ROLE_CONFIGS))
        for name, login in logins.items():
            role = ADMIN_ROLE if login["role"] == "admin" else BASE_ROLES[login["role"]][0]
            roles = [manager.find_role(role),
                     manager.find_role(owner_role(name)) or manager.add_role(owner_role(name))]
            user = manager.find_user(username=name)
            if user is None:
                manager.add_user(name, name, "dagsmith", f"{name}@dagsmith.invalid", roles, login["password"])
            else:
                user.roles = roles
                manager.update_user(user)
                manager.reset_password(user.id, login["password"])
    record_logins(Settings.from_env(), {name: login["role"] for name, login in logins.items()})


if __name__ == "__main__":
    try:
        given = check_logins(json.load(sys.stdin))
    except ValueError as exc:  # json's errors are ValueErrors too
        sys.exit(f"error: the logins on standard input: {exc}")
    make_logins(given)
