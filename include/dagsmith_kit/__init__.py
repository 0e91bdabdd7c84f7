"""dagsmith_kit: the small library microservices use to read and write bundles.

It depends on pandas (and joblib for models) only, so it installs in any microservice image.
"""

from dagsmith_kit.bundle import Bundle, BundleError
from dagsmith_kit.service import ServiceError, run_service, transform_tables
from dagsmith_kit.supervised import fit_and_predict

__all__ = ["Bundle", "BundleError", "ServiceError", "fit_and_predict", "run_service", "transform_tables"]
__version__ = "0.1.0"
