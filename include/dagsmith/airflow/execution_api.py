"""Airflow's in-process execution API built for the one version of it that this process's tasks speak.

A local run's tasks (``dag.test()``) talk to an execution API that lives in their own process. Airflow builds it
for every API version it has ever released (nine in Airflow 3.3), so that workers of older releases keep working;
Cadwyn generates each version's routes and models on the API's first request, 3 s of CPU on every local run. In
that process the only client is the task SDK installed beside it, which speaks the newest version, so the app is
built for that version alone (0.5 s). Where the SDK speaks another version than the newest, or the newest differs
from the head of the API, the app is left as Airflow builds it.
"""

from __future__ import annotations

import copy


def serve_only_the_sdk_version() -> bool:
    """Narrow the execution API the next ``in_process_api_server()`` builds to the task SDK's version; say whether.

    Call it before the app is first built (it is built once per process)."""
    from airflow.api_fastapi.execution_api import routes, versions
    from airflow.sdk.api.datamodels._generated import API_VERSION
    from cadwyn import HeadVersion, Version, VersionBundle
    from cadwyn.route_generation import _DELETED_ROUTE_TAG
    from fastapi.routing import APIRoute

    bundle = versions.bundle
    if bundle.head_version.changes or str(bundle.versions[0].value) != API_VERSION:
        return False
    versions.bundle = VersionBundle(HeadVersion(), Version(API_VERSION))
    # Routes that only older versions have would otherwise fail the generation: no older version restores them.
    router = copy.copy(routes.execution_api_router)
    router.routes = [route for route in router.routes
                     if not (isinstance(route, APIRoute) and _DELETED_ROUTE_TAG in route.tags)]
    routes.execution_api_router = router
    return True
