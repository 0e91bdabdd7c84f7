"""A pipeline's DAG names its owner and grants itself, under FAB, to its owner's role, and to every login's base role
when shared; the base roles are FAB's without rights on every DAG (the real DAG built from a spec, and FAB's own role
definitions; a real deployment enforcing it is tested in tests/ui/test_plugin.py)."""

from __future__ import annotations

import pytest
from airflow.providers.fab.auth_manager.security_manager.override import FabAirflowSecurityManagerOverride

from dagsmith.airflow.fab_logins import base_role_configs, check_logins
from dagsmith.airflow.meta_dag import build as build_meta_dag
from dagsmith.airflow.ownership import BASE_ROLES, READ, READ_AND_TRIGGER, everyone, owner_role
from dagsmith.airflow.pipeline_dag import build
from dagsmith.models.plan import DagSpec, DagStep


def spec(shared: bool) -> DagSpec:
    return DagSpec(pipeline_id=7, name="churn", goal="predict churn", owner="ana", shared=shared,
                   dataset="/data/churn.csv",
                   steps=[DagStep(position=0, stage="loading", microservice="tabular_loader")])


def test_a_private_pipeline_is_its_owners_and_a_shared_one_everyones():
    private = build(spec(shared=False))
    assert private.owner == "ana" and private.access_control == {owner_role("ana"): READ_AND_TRIGGER}
    shared = build(spec(shared=True)).access_control
    assert shared == {owner_role("ana"): READ_AND_TRIGGER, "dagsmith_viewer": READ, "dagsmith_user": READ_AND_TRIGGER,
                      "dagsmith_op": READ_AND_TRIGGER}


def test_every_login_sees_the_meta_dag_and_only_builders_may_trigger_it():
    assert build_meta_dag().access_control == everyone()


def test_base_roles_keep_what_fab_grants_but_rights_on_every_dag():
    fab = {config["role"]: set(config["perms"]) for config in FabAirflowSecurityManagerOverride.ROLE_CONFIGS}
    made = {config["role"]: set(config["perms"]) for config in
            base_role_configs(FabAirflowSecurityManagerOverride.ROLE_CONFIGS)}
    for role, source in BASE_ROLES.values():
        dropped = fab[source] - made[role]
        assert dropped and {resource for _, resource in dropped} == {"DAGs"}, role
        assert ("menu_access", "DAGs") in made[role] and made[role] - fab[source] <= {("can_read", "Plugins")}
    trigger = ("can_create", "DAG Runs")
    assert trigger in made["dagsmith_user"] and trigger not in made["dagsmith_viewer"]


def test_logins_are_checked_before_anything_is_made():
    logins = {"ana": {"role": "user", "password": "s3cret"}, "root": {"role": "admin", "password": "x"}}
    assert check_logins(logins) == logins
    for wrong in ([], {"ana": {"role": "boss", "password": "x"}}, {"ana": {"role": "user"}},
                  {"ana": {"role": "user", "password": ""}}, {"ana": "user"}):
        with pytest.raises(ValueError, match="ROLE one of admin, viewer, user, op"):
            check_logins(wrong)
