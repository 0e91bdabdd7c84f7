"""The packages a microservice may pin: the runtime's own pinned set, and nothing an uploader asks for beyond it.

Services are untrusted, and installing a package runs its build step, so nothing is installed for a service:
its pins must name exactly what ``runtime/requirements.txt`` (the runtime image's pins, which the project's
requirements.txt installs into the local environment too) or dagsmith itself (``dagsmith-kit``) provides.
Upload validation refuses other pins; the runtimes refuse to run a service stored before that rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import dagsmith_kit

#: In the repository (or the deployment's copy of it, /opt/dagsmith), beside the package's ``include`` folder.
RUNTIME_REQUIREMENTS = Path(__file__).resolve().parents[3] / "runtime" / "requirements.txt"
KIT = "dagsmith-kit"
HOW_TO_ADD = ("to add a package, an operator pins it exactly (name==version) in runtime/requirements.txt and in "
              "the project's requirements.txt, then rebuilds the runtime image (scripts/setup-container-runtime.sh) "
              "and reinstalls (make install)")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^;\s]+)")


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares it: ``Scikit_Learn`` and ``scikit-learn`` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def provided() -> dict[str, str]:
    """Normalised name -> version of every package a service may pin.

    Read on each call, so a long-running scheduler sees a package an operator adds.
    """
    versions = {KIT: dagsmith_kit.__version__}
    for line in RUNTIME_REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line.split("#", 1)[0].strip())
        if match:
            versions[normalise(match.group(1))] = match.group(2)
    return versions


def unavailable(requirements: Iterable[str]) -> list[str]:
    """Each requirement line the runtime does not provide exactly, with what it has instead, e.g.
    ``pandas==2.0.0 (it has pandas==3.1.1)``; empty when the service can run on the runtime's packages."""
    versions = provided()
    missing = []
    for line in requirements:
        match = _PIN.match(line.strip())
        if not match:
            missing.append(f"{line} (not an exact pin)")
            continue
        name, version = normalise(match.group(1)), match.group(2)
        if name not in versions:
            missing.append(f"{line} (it has no {name})")
        elif versions[name] != version:
            missing.append(f"{line} (it has {name}=={versions[name]})")
    return missing


def not_provided(missing: list[str]) -> str:
    """What to tell the uploader or the operator about ``unavailable``'s answer.

    The wording "the runtime does not provide" is what failure classification reads as an environment error.
    """
    return (f"the runtime does not provide {', '.join(missing)}; nothing is installed for a service, so it may pin "
            f"only the runtime's packages: {HOW_TO_ADD}")
