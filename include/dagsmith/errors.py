"""The errors a person should see: their message says what went wrong and what to do, in one paragraph.

The CLI prints any of them without a traceback and exits with its ``exit_code``; the UI answers with its
``http_status``. Anything else that escapes is a bug in dagsmith.
"""

from __future__ import annotations


class UserFacingError(Exception):
    exit_code = 1
    http_status = 500


class InputError(UserFacingError):
    """What the person gave (a dataset, a goal, a choice, a setting) cannot be used as it is."""

    exit_code = 2
    http_status = 422


class ServiceUnavailable(UserFacingError):
    """Something dagsmith relies on (the database, the container engine, Airflow) cannot be reached or started."""

    exit_code = 3
    http_status = 503
