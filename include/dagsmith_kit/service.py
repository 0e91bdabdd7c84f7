"""The command line every microservice exposes: ``main.py --input IN --output OUT --params P.json``.

``run_service(step)`` parses that command line, opens the input bundle read-only, starts the output
bundle as a copy of it (so content a step does not touch flows on), calls ``step(inp, out, params)``
and records the step in the output's lineage. Errors go to stderr with a non-zero exit code, which is
what the executor and the self-healer read.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from dagsmith_kit import transforms
from dagsmith_kit.bundle import Bundle, BundleError
from dagsmith_kit.errors import ServiceError

Step = Callable[[Bundle, Bundle, dict[str, Any]], None]


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Run one dagsmith microservice step on a bundle.")
    parser.add_argument("--input", required=True, help="input bundle folder (read only)")
    parser.add_argument("--output", required=True, help="output bundle folder (created)")
    parser.add_argument("--params", help="JSON file with this step's parameters")
    return parser.parse_args(argv)


def load_params(path: str | None) -> dict[str, Any]:
    """The step's parameters, as a :class:`~dagsmith_kit.params.Params` that checks each value's type on reading."""
    from dagsmith_kit.params import Params

    if not path:
        return Params()
    params = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(params, dict):
        raise ServiceError(f"the parameters file {path} must hold a JSON object")
    return Params(params)


def _refused_parameter(exc: Exception) -> bool:
    """scikit-learn's own check of an estimator's parameters (a value out of its range or of the wrong type): its
    message names the parameter, the range and the value, so it is the step's one-line error."""
    return type(exc).__name__ == "InvalidParameterError" and type(exc).__module__.startswith("sklearn")


def run_service(step: Step, argv: list[str] | None = None) -> None:
    """Run ``step`` as a microservice and exit with its status."""
    args = _parse_args(argv)
    started = time.monotonic()
    try:
        params = load_params(args.params)
        inp = Bundle.open(args.input)
        inp.check_tables()
        out = inp.copy_into(args.output)
        recorded = len(transforms.steps(out.path))
        step(inp, out, params)
        if len(transforms.steps(out.path)) == recorded:
            transforms.audit(inp, out)
        out.meta.setdefault("lineage", []).append(
            {"service": transforms.service_name(),
             "params": params,
             "seconds": round(time.monotonic() - started, 3)}
        )
        out.save_meta()
    except (ServiceError, BundleError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except (ValueError, TypeError) as exc:
        if not _refused_parameter(exc):
            raise
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def transform_tables(
    inp: Bundle,
    out: Bundle,
    fit: Callable[[pd.DataFrame], Any],
    apply: Callable[[pd.DataFrame, Any], pd.DataFrame],
) -> Any:
    """Fit on the training table (or the whole table before a split) and apply to every table.

    This is how transformers avoid leakage: what they learn comes from ``train`` only. ``apply`` and the state are
    recorded in ``out`` (``dagsmith_kit.transforms``), so the same preparation can be replayed on new rows:
    ``apply`` must treat each row on its own and cope with a table lacking the target (new rows have none).
    """
    state = fit(inp.fit_table())
    for name, frame in inp.tables().items():
        out.write_table(name, apply(frame, state))
    transforms.record(out, apply, state)
    return state
