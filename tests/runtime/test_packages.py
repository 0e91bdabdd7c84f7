"""The packages a microservice may pin: exactly the runtime's own pinned set, read from runtime/requirements.txt."""

from __future__ import annotations

import re

import dagsmith_kit
from dagsmith.healing.classify import ErrorClass, diagnose
from dagsmith.runtime.base import InvocationResult
from dagsmith.runtime.packages import RUNTIME_REQUIREMENTS, not_provided, provided, unavailable
from tests.conftest import CATALOG, ROOT


def test_the_runtime_pins_and_dagsmith_kit_are_provided_under_pep_503_names():
    versions = provided()
    assert RUNTIME_REQUIREMENTS == ROOT / "runtime" / "requirements.txt"
    assert versions["pandas"] == "3.1.1" and versions["scikit-learn"] == "1.9.1"
    assert versions["dagsmith-kit"] == dagsmith_kit.__version__
    assert unavailable(["pandas==3.1.1", "Scikit_Learn==1.9.1", "scikit.learn==1.9.1", "dagsmith_kit==0.1.0",
                        "pandas[performance]==3.1.1", 'numpy==2.4.6; python_version >= "3.11"']) == []


def test_an_absent_package_a_different_version_or_a_loose_pin_is_unavailable():
    assert unavailable(["tabulate==0.9.0", "pandas==2.0.0", "dagsmith-kit==0.0.9", "pyarrow>=20", "numpy==2.*"]) == [
        "tabulate==0.9.0 (it has no tabulate)", "pandas==2.0.0 (it has pandas==3.1.1)",
        "dagsmith-kit==0.0.9 (it has dagsmith-kit==0.1.0)", "pyarrow>=20 (not an exact pin)",
        "numpy==2.* (it has numpy==2.4.6)"]


def test_the_shipped_catalog_pins_only_what_the_runtime_provides():
    for requirements in CATALOG.glob("*/requirements.txt"):
        assert unavailable(requirements.read_text().split()) == [], requirements.parent.name


def test_the_project_installs_every_runtime_pin_for_the_local_runtime():
    project = {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in
               re.findall(r"^([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M)}
    runtime = {name: version for name, version in provided().items() if name != "dagsmith-kit"}
    assert {name: project.get(name) for name in runtime} == runtime


def test_the_refusal_says_how_to_add_a_package_and_heals_as_an_environment_error():
    message = not_provided(unavailable(["tabulate==0.9.0"]))
    assert "runtime/requirements.txt" in message and "scripts/setup-container-runtime.sh" in message
    assert "make install" in message
    result = InvocationResult(exit_code=125, stdout="", stderr=f"error: {message}", seconds=0.0)
    assert diagnose(result).error_class is ErrorClass.ENVIRONMENT
