"""dagsmith_kit: the small library microservices use to read and write bundles.

It depends on pandas (and joblib for models) only, so it installs in any microservice image. What it offers at its
top is imported on first use: a process that needs one light module of it (``dagsmith_kit.files``, as dagsmith's
command line does) does not load pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dagsmith_kit.bundle import Bundle, BundleError
    from dagsmith_kit.service import ServiceError, run_service, transform_tables
    from dagsmith_kit.supervised import fit_and_predict

#: Each name the package offers, and the module of the kit it lives in.
_EXPORTS = {"Bundle": "bundle", "BundleError": "bundle", "ServiceError": "service", "run_service": "service",
            "transform_tables": "service", "fit_and_predict": "supervised"}
__all__ = ["Bundle", "BundleError", "ServiceError", "fit_and_predict", "run_service", "transform_tables"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"dagsmith_kit.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'dagsmith_kit' has no attribute {name!r}")
