"""What a pipeline step's task tells OpenLineage (``apache-airflow-providers-openlineage``), so that lineage
tools show the pipeline as it really ran rather than as it was planned.

- Its datasets: the bundle the try read and, when it succeeded, the bundle it wrote (a candidate model's output
  waits for the search's selection; a step's is the step's output the next steps read).
- What ran: the ``dagsmith_step`` run facet names the try's microservice, its code version, its outcome and the
  self-healing substitution that put it there, with the reason.

The step operator notes its try while it runs (``execution.attempts.TryObserver``) and builds this from the note when
the provider asks (``get_openlineage_facets_on_complete`` / ``_on_failure``), so emitting reads nothing from the
store. The provider imports this module only when it emits: a parse of a pipeline DAG never loads OpenLineage.
Nothing is sent until an operator configures a transport (``AIRFLOW__OPENLINEAGE__TRANSPORT``).
"""

from __future__ import annotations

from airflow.providers.openlineage.extractors import OperatorLineage
from attrs import define
from openlineage.client.event_v2 import Dataset
from openlineage.client.facet_v2 import RunFacet

from dagsmith.execution.attempts import Try
from dagsmith.healing.classify import Diagnosis
from dagsmith.models.execution import StepStatus

#: OpenLineage's dataset naming for local files: namespace ``file``, the absolute path as the name.
FILE_NAMESPACE = "file"


@define
class StepRunFacet(RunFacet):
    """The try a pipeline step's task ran: which microservice, at which code version, with what outcome, and the
    substitution self-healing made to choose it."""

    microservice: str
    codeVersion: str
    attempt: int
    status: str
    errorClass: str | None = None
    substitutedFor: str | None = None
    substitutionReason: str | None = None


def try_lineage(attempt: Try, diagnosis: Diagnosis | None, *, output: str) -> OperatorLineage:
    """The lineage of one recorded try whose good output lies at ``output``."""
    facet = StepRunFacet(microservice=attempt.service, codeVersion=attempt.version, attempt=attempt.attempt,
                         status=StepStatus.FAILED if diagnosis else StepStatus.COMPLETED,
                         errorClass=diagnosis.error_class.value if diagnosis else None,
                         substitutedFor=attempt.replaced, substitutionReason=attempt.reason)
    return OperatorLineage(inputs=[_file(str(attempt.source))], outputs=[] if diagnosis else [_file(output)],
                           run_facets={"dagsmith_step": facet})


def _file(path: str) -> Dataset:
    return Dataset(namespace=FILE_NAMESPACE, name=path)
