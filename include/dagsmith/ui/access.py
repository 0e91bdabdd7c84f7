"""Who is asking, and what they may see and do, decided by Airflow's auth manager (not by the plugin).

Airflow does not authenticate plugin apps, so every route depends on ``current_viewer``, which resolves the
caller from Airflow's JWT (the UI's session cookie or a bearer token) exactly as Airflow's own API does. Rights
map onto questions every auth manager answers: building (upload, plan, trigger) needs the right to trigger
the caller's build DAG (under FAB their own, which only they and admins read; ``meta_dag``). Seeing every pipeline
needs, under the FAB auth manager, the right to read every DAG (admins), so Airflow and dagsmith's pages show each
person the same pipelines (``dagsmith.airflow.ownership``); under the simple auth manager, where every login reads
every DAG, the right to change Airflow's configuration (admins and ops). Anyone else sees their own pipelines and
those shared with everyone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
from airflow.api_fastapi.core_api.security import get_user
from airflow.configuration import conf
from fastapi import Depends, HTTPException, Request, status
from sqlalchemy import ColumnElement, or_

from dagsmith.airflow.meta_dag import DAG_ID as META_DAG_ID
from dagsmith.airflow.ownership import FAB_AUTH_MANAGER, builder_dag_id
from dagsmith.store import schema


@dataclass(frozen=True)
class Viewer:
    name: str
    can_build: bool
    is_admin: bool
    #: The caller's Airflow JWT, forwarded when the plugin triggers a run on their behalf.
    token: str
    #: The meta-DAG the caller builds with: under FAB their own unless they are an admin.
    build_dag: str = META_DAG_ID

    def sees(self, pipeline: schema.Pipeline) -> bool:
        return self.is_admin or pipeline.shared or pipeline.owner == self.name

    def visible(self) -> ColumnElement[bool] | None:
        """The pipelines this viewer may see, as a filter (``None``: all of them)."""
        return None if self.is_admin else or_(schema.Pipeline.owner == self.name, schema.Pipeline.shared)


def _token(request: Request) -> str:
    header = request.headers.get("authorization", "")
    return header[7:] if header.lower().startswith("bearer ") else request.cookies.get("_token", "")


#: A DAG no ``access_control`` grants: only those who may read every DAG may read it.
_UNGRANTED_DAG = "dagsmith_pipeline_granted_to_no_one"


def current_viewer(request: Request, user: Annotated[BaseUser, Depends(get_user)]) -> Viewer:
    manager, build_dag = get_auth_manager(), META_DAG_ID
    if conf.get("core", "auth_manager") == FAB_AUTH_MANAGER:
        is_admin = manager.is_authorized_dag(method="GET", details=DagDetails(id=_UNGRANTED_DAG), user=user)
        build_dag = META_DAG_ID if is_admin else builder_dag_id(user.get_name())
    else:
        is_admin = manager.is_authorized_configuration(method="PUT", user=user)
    can_build = manager.is_authorized_dag(method="POST", access_entity=DagAccessEntity.RUN,
                                          details=DagDetails(id=build_dag), user=user)
    return Viewer(name=user.get_name(), can_build=can_build, is_admin=is_admin, token=_token(request),
                  build_dag=build_dag)


def builder(viewer: Annotated[Viewer, Depends(current_viewer)]) -> Viewer:
    """A viewer who may change things (upload, plan, trigger); others get a 403 that says why."""
    if not viewer.can_build:
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"{viewer.name} may browse but not build: that needs the right "
                                                       f"to trigger {viewer.build_dag}")
    return viewer


ViewerDep = Annotated[Viewer, Depends(current_viewer)]
BuilderDep = Annotated[Viewer, Depends(builder)]
