"""Write a machine-readable summary of the run so far to ``artifacts/run_summary.json``: task, target, id
columns, dataset name, each table's row and column counts, whether a model and predictions are present, every
metric, the files in artifacts/ and (unless ``include_lineage`` is false) the pipeline steps with their
parameters and timings. The data is not changed; report.md gets a link to the file.
"""

import json

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.bundle import ARTIFACTS_DIR, MODEL_FILE, PREDICTIONS_FILE
from dagsmith_kit.insight import save_text_artifact


def write_json_report(inp, out, params):
    indent = int(params.get("indent", 2))
    include_lineage = bool(params.get("include_lineage", True))
    if not 0 <= indent <= 8:
        raise ServiceError(f"indent must be between 0 and 8 spaces, got {indent}")
    meta = inp.meta
    tables = {name: inp.table(name) for name in inp.table_names()}
    artifacts = inp.path / ARTIFACTS_DIR
    summary = {
        "task_type": meta.get("task_type"),
        "target": meta.get("target"),
        "id_columns": inp.id_columns,
        "dataset": meta.get("source_name"),
        "tables": {name: {"rows": len(frame), "columns": frame.shape[1]} for name, frame in tables.items()},
        "has_model": (inp.path / MODEL_FILE).is_file(),
        "has_predictions": (inp.path / PREDICTIONS_FILE).is_file(),
        "metrics": inp.metrics(),
        "artifacts": sorted(p.name for p in artifacts.iterdir()) if artifacts.is_dir() else [],
    }
    if include_lineage:
        summary["steps"] = meta.get("lineage") or []
    text = json.dumps(summary, indent=indent or None, default=str)
    save_text_artifact(out, "run_summary.json", text + "\n")
    out.append_report(f"## Run summary (JSON)\n\n{len(summary['metrics'])} metrics, {len(meta.get('lineage') or [])} "
                      "steps and the table sizes in [run_summary.json](artifacts/run_summary.json).")


if __name__ == "__main__":
    run_service(write_json_report)
