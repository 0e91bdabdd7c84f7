"""A pipeline's DAG names its owner and grants itself, under FAB, to its owner's role, and to every login's base role
when shared; the base roles are FAB's without rights on every DAG (the real DAG built from a spec, and FAB's own role
definitions; a real deployment enforcing it is tested in tests/ui/test_plugin.py)."""

from __future__ import annotations

import pytest
from airflow.providers.fab.auth_manager.security_manager.override import FabAirflowSecurityManagerOverride
from airflow.sdk.exceptions import AirflowFailException

from dagsmith.airflow.fab_logins import base_role_configs, check_logins
from dagsmith.airflow.build_owner import owner_of_run
from dagsmith.airflow.meta_dag import DAG_ID, build_dags, builder_dag_id
from dagsmith.airflow.ownership import BASE_ROLES, FAB_AUTH_MANAGER, READ, READ_AND_TRIGGER, owner_role, record_logins
from dagsmith.airflow.pipeline_dag import build
from dagsmith.airflow.run_params import run_user
from dagsmith.config import Settings
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


def test_under_fab_each_builder_has_a_build_dag_of_its_own_and_the_shared_one_is_for_admins(tmp_path, monkeypatch):
    """Airflow has no per-run rights: whoever reads a DAG reads every run's conf, logs and XComs. So each login who
    may build triggers a DAG only it and admins read; viewers have none; the simple auth manager has one."""
    monkeypatch.setenv("DAGSMITH_HOME", str(tmp_path))
    record_logins(Settings(home=tmp_path, database_url=None), {"ana": "user", "olu": "op", "vic": "viewer",
                                                               "root": "admin"})
    assert list(build_dags()) == [DAG_ID]
    monkeypatch.setenv("AIRFLOW__CORE__AUTH_MANAGER", FAB_AUTH_MANAGER)
    dags = build_dags()
    assert sorted(dags) == [DAG_ID, builder_dag_id("ana"), builder_dag_id("olu")]
    assert dags[DAG_ID].access_control == {} and "on_behalf_of" in dags[DAG_ID].params
    assert dags[builder_dag_id("ana")].access_control == {owner_role("ana"): READ_AND_TRIGGER}
    assert "on_behalf_of" not in dags[builder_dag_id("ana")].params and "user" not in dags[DAG_ID].params


def test_a_pipeline_belongs_to_the_login_that_triggers_its_build_and_admins_alone_name_another(monkeypatch):
    monkeypatch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS", "admin:admin,bob:user")
    assert owner_of_run(DAG_ID, "bob", None) == "bob"
    with pytest.raises(AirflowFailException, match="bob may not build a pipeline for ana: .*only admins"):
        owner_of_run(DAG_ID, "bob", "ana")
    assert owner_of_run(DAG_ID, "admin", "ana") == "ana" and owner_of_run(DAG_ID, "admin", None) == "admin"
    # made in-process (dag.test(), the CLI's own runs): nobody logged in, so whoever runs it names the owner
    assert owner_of_run(DAG_ID, "dag_test", None) == "anonymous" and owner_of_run(DAG_ID, None, "ana") == "ana"
    # a login's own build DAG, which FAB lets that login and admins only trigger, builds for that login alone
    assert owner_of_run(builder_dag_id("ana"), "admin", None) == "ana"
    with pytest.raises(AirflowFailException, match="builds for ana only"):
        owner_of_run(builder_dag_id("ana"), "ana", "bob")


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


def test_a_pipeline_run_a_login_triggers_is_that_logins_whatever_its_user_says():
    assert run_user("manual", "bob", "ana") == "bob"
    assert run_user("operator_triggered", "admin", "ana") == "ana"  # the meta-DAG's execute passes the owner
    assert run_user("manual", "dag_test", "ana") == "ana" and run_user("scheduled", None, "ana") == "ana"


def test_logins_are_checked_before_anything_is_made():
    logins = {"ana": {"role": "user", "password": "s3cret"}, "root": {"role": "admin", "password": "x"}}
    assert check_logins(logins) == logins
    for wrong in ([], {"ana": {"role": "boss", "password": "x"}}, {"ana": {"role": "user"}},
                  {"ana": {"role": "user", "password": ""}}, {"ana": "user"}):
        with pytest.raises(ValueError, match="ROLE one of admin, viewer, user, op"):
            check_logins(wrong)
    with pytest.raises(ValueError, match="login names are letters, digits.*not ana/../x"):  # it names a build DAG
        check_logins({"ana/../x": {"role": "user", "password": "x"}})
    with pytest.raises(ValueError, match="not dag_test"):  # what Airflow records for a run made in-process
        check_logins({"dag_test": {"role": "admin", "password": "x"}})
