"""The deterministic reasoner's reading of a failure: which class of error a step's stderr shows.

The class decides what healing does: a transient error is retried as is, an environment error or a bad
fit between service and data, or a model no better than a trivial predictor, calls for another service, a
resource error for a lighter one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from dagsmith.runtime.base import InvocationResult


class ErrorClass(StrEnum):
    TYPE_SHAPE = "type_shape_mismatch"
    MISSING_INPUT = "missing_parameter_or_column"
    MISSING_VALUES = "missing_values"
    NUMERICAL = "numerical_instability"
    RESOURCE = "resource_exhaustion"
    ENVIRONMENT = "environment"
    CONTRACT = "contract_violation"
    NO_SIGNAL = "no_better_than_baseline"
    TRANSIENT = "transient"
    UNKNOWN = "unknown"


#: Patterns over the last lines of stderr, most specific first.
_RULES: list[tuple[ErrorClass, re.Pattern]] = [(cls, re.compile(pattern, re.IGNORECASE)) for cls, pattern in [
    (ErrorClass.NO_SIGNAL, r"no better than the trivial baseline"),  # a model that learned nothing: try another
    (ErrorClass.RESOURCE, (r"MemoryError|Cannot allocate memory|out of memory|killed after the \d+ s timeout|"
                           r"Killed|TimeoutError|too slow|max_rows|No space left on device|Disk quota exceeded|"
                           r"File too large|"
                           r"BlockingIOError|can't start new thread")),  # the last two: the process limit
    (ErrorClass.ENVIRONMENT, (r"ModuleNotFoundError|ImportError|No module named|cannot open shared object|"
                              r"command not found|the runtime does not provide|"  # the last: pins the runtime lacks
                              r"Network is unreachable|Read-only file system|Permission denied")),  # the sandbox
    (ErrorClass.TRANSIENT, (r"ConnectionError|Connection reset|Temporary failure|BrokenPipeError|"
                            r"Resource temporarily unavailable|TimeoutExpired")),
    (ErrorClass.MISSING_VALUES, r"Input (?:X )?contains NaN|missing values|NaN values|impute"),
    (ErrorClass.NUMERICAL, (r"contains infinity|infinite values|too large for dtype|overflow|LinAlgError|"
                            r"singular matrix|"
                            r"did not converge|divide by zero|invalid value encountered")),
    (ErrorClass.MISSING_INPUT, (r"KeyError|not in index|no '?\w+'? (?:table|column)|missing (?:parameter|column)|"
                                r"required|has no attribute|holds no")),
    (ErrorClass.TYPE_SHAPE, (r"could not convert string to float|ValueError|TypeError|shape|dimension|"
                             r"dtype|numeric|encode")),
    (ErrorClass.CONTRACT, r"bundle|contract"),
]]
#: Classes where running the same service again may well succeed.
RETRY_SAME = {ErrorClass.TRANSIENT}


@dataclass(frozen=True)
class Diagnosis:
    error_class: ErrorClass
    summary: str  # the telling line of stderr

    def __str__(self) -> str:
        return f"{self.error_class.value}: {self.summary}"


def telling_line(stderr: str) -> str:
    """The line of an error output that says what went wrong (the exception's, else the last one)."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("error:") or re.match(r"^\w+(\.\w+)*(Error|Exception|Warning)\b", line):
            return line[:500]
    return (lines[-1] if lines else "no output")[:500]


def diagnose(result: InvocationResult) -> Diagnosis:
    """Classify a failed invocation from its flags and the tail of its stderr."""
    if result.timed_out or result.out_of_memory or result.exceeded:
        return Diagnosis(ErrorClass.RESOURCE, result.exceeded or telling_line(result.stderr))
    tail = "\n".join(result.stderr.strip().splitlines()[-15:])
    for error_class, pattern in _RULES:
        if pattern.search(tail):
            return Diagnosis(error_class, telling_line(result.stderr))
    return Diagnosis(ErrorClass.UNKNOWN, telling_line(result.stderr))
