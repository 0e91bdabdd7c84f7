"""Airflow's REST API (``/api/v2``) as a client uses it: a JWT from ``POST /auth/token``, JSON in and out.

``dagsmith run`` submits to a running deployment through it. Failures become dagsmith errors with one clear
message; the password is sent once for the token, and neither is ever kept in a message.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from urllib.parse import quote

from dagsmith.errors import ServiceUnavailable


class AirflowError(ServiceUnavailable):
    """The API answered with an error (``status``: its HTTP code), or not as Airflow's API answers."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class AirflowUnreachable(AirflowError):
    """Nothing answers at the address (refused, timed out, name unknown)."""


class LoginRefused(AirflowError):
    """The deployment refused the user name and password."""


class AirflowClient:
    """One login to one deployment."""

    def __init__(self, base: str, user: str, password: str, *, timeout: float = 30.0):
        self.base, self.timeout, self.token = base.rstrip("/"), timeout, None
        try:
            answer = self.call("POST", "/auth/token", {"username": user, "password": password})
        except AirflowError as exc:
            if exc.status in (401, 403):
                raise LoginRefused(f"the Airflow at {self.base} refused the login of user '{user}': wrong user "
                                   "name or password", exc.status) from None
            raise
        self.token = answer["access_token"]

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {self.token}"}
                                                          if self.token else {})}
        request = urllib.request.Request(self.base + path, method=method, headers=headers,
                                         data=json.dumps(body).encode() if body is not None else None)
        where = f"{method} {path.split('?')[0]}"
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            raise AirflowError(f"the Airflow at {self.base} answered {where} with HTTP {exc.code}: "
                               f"{_detail(exc)}", exc.code) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            reason = getattr(exc, "reason", None) or exc.__class__.__name__
            raise AirflowUnreachable(f"no Airflow answers at {self.base} ({reason})") from None
        except ValueError:
            raise AirflowError(f"what answers at {self.base} is not Airflow's REST API ({where} is not JSON)") from None

    def trigger(self, dag: str, conf: dict) -> str:
        """Start a run of ``dag`` now with ``conf``; its run id."""
        return self.call("POST", f"/api/v2/dags/{dag}/dagRuns", {"logical_date": None, "conf": conf})["dag_run_id"]

    def run(self, dag: str, run_id: str) -> dict:
        return self.call("GET", f"/api/v2/dags/{dag}/dagRuns/{quote(run_id)}")

    def run_tasks(self, dag: str, run_id: str) -> list[dict]:
        """The run's task instances, mapped ones each with its ``map_index``."""
        return self.call("GET", f"/api/v2/dags/{dag}/dagRuns/{quote(run_id)}/taskInstances?limit=1000")[
            "task_instances"]

    def xcom(self, dag: str, run_id: str, task: str, key: str = "return_value", map_index: int = -1):
        path = (f"/api/v2/dags/{dag}/dagRuns/{quote(run_id)}/taskInstances/{task}/xcomEntries/{key}"
                f"?map_index={map_index}&deserialize=true")
        return self.call("GET", path)["value"]

    def task_log(self, dag: str, run_id: str, task: str, try_number: int = 1, map_index: int = -1) -> list:
        """One try's log: its structured events (messages, exceptions)."""
        path = (f"/api/v2/dags/{dag}/dagRuns/{quote(run_id)}/taskInstances/{task}/logs/{try_number}"
                f"?full_content=true&map_index={map_index}")
        return self.call("GET", path)["content"]


def _detail(error: urllib.error.HTTPError) -> str:
    """The error's own explanation (FastAPI's ``detail``), shortened."""
    try:
        detail = json.loads(error.read() or b"{}").get("detail") or error.reason
    except (ValueError, AttributeError, OSError):
        detail = error.reason
    return str(detail)[:300]
