"""Triggering the caller's build DAG (``access.Viewer.build_dag``) through Airflow's own REST API, as the person using
the page.

The plugin forwards the caller's JWT instead of creating the run itself, so Airflow applies the same
permissions, audit log and validation of params as for a run triggered from its UI.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from urllib.parse import quote, urlsplit

from airflow.configuration import conf

from dagsmith.errors import ServiceUnavailable

TIMEOUT_SECONDS = 30


class TriggerFailed(ServiceUnavailable, RuntimeError):
    """Airflow did not accept the run (with its reason)."""

    http_status = 502


def api_base() -> str:
    """Where this deployment's REST API answers: Airflow's ``[api] base_url``, else the api-server's own port
    (the plugin runs inside the api-server)."""
    base = conf.get("api", "base_url", fallback="") or f"http://localhost:{conf.get('api', 'port', fallback='8080')}"
    return base.rstrip("/")


def run_url(dag: str, run_id: str) -> str:
    """The run's page in the Airflow UI, relative to the host the person is on (behind any proxy)."""
    return f"{urlsplit(api_base()).path}/dags/{dag}/runs/{quote(run_id, safe='')}"


def trigger_meta_dag(dag: str, conf_: dict, token: str) -> str:
    """Start a run of the build DAG ``dag`` with ``conf_`` as the caller (``token``); returns its run id."""
    request = urllib.request.Request(
        f"{api_base()}/api/v2/dags/{dag}/dagRuns", method="POST",
        data=json.dumps({"logical_date": None, "conf": conf_}).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            return json.loads(response.read())["dag_run_id"]
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")[:500]
        raise TriggerFailed(f"Airflow refused the run ({error.code}): {detail}") from None
    except (urllib.error.URLError, TimeoutError) as error:
        raise TriggerFailed(f"Airflow's REST API at {api_base()} did not answer: {error}") from None
