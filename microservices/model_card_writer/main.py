"""Append a model card for the trained model in model.joblib to report.md: the estimator (the last step of a
pipeline) with its parameters, the number and names of the features it was fitted on, its classes, the task,
target and table sizes, an optional ``intended_use`` statement, the pipeline steps from the lineage and the
metrics recorded so far. Refuses a bundle without a model and models that are not scikit-learn estimators.
"""

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.insight import markdown_table


def write_model_card(inp, out, params):
    max_params = int(params.get("max_params", 25))
    max_features = int(params.get("max_features", 20))
    intended_use = params.get("intended_use", None)
    model = inp.load_model()
    estimator = model[-1] if hasattr(model, "steps") else model
    if not hasattr(estimator, "get_params"):
        raise ServiceError(f"the model is a {type(estimator).__name__}, not a scikit-learn estimator: "
                           "it has no parameters to describe")
    settings = [[k, repr(v)] for k, v in sorted(estimator.get_params(deep=False).items())
                if v is None or isinstance(v, (bool, int, float, str))][:max_params]
    names = [str(n) for n in getattr(model, "feature_names_in_", [])]
    n_features = getattr(model, "n_features_in_", len(names) or None)
    classes = [str(c) for c in getattr(model, "classes_", [])]
    wrapped = f" (last step of a {len(model.steps)}-step scikit-learn pipeline)" if hasattr(model, "steps") else ""
    lines = ["## Model card", "",
             f"- model: `{type(estimator).__name__}`{wrapped}",
             f"- task: {inp.task_type or 'unknown'}, target: {inp.target or 'none'}",
             "- data: " + (", ".join(f"{name} {len(inp.table(name))} rows" for name in inp.table_names()) or "none"),
             f"- features: {n_features if n_features is not None else 'unknown'}"
             + (f" ({', '.join(names[:max_features])}{', ...' if len(names) > max_features else ''})" if names else "")]
    if classes:
        lines.append(f"- classes: {', '.join(classes)}")
    if intended_use:
        lines += ["", f"**Intended use.** {intended_use}"]
    lines += ["", "### Parameters", "", markdown_table(["parameter", "value"], settings) if settings else "None."]
    metrics = inp.metrics()
    lines += ["", "### Metrics", "",
              markdown_table(["metric", "value"], [[k, v] for k, v in metrics.items()]) if metrics else "None yet."]
    steps = [str(step.get("service")) for step in inp.meta.get("lineage") or []]
    lines += ["", "### Training pipeline", "", " -> ".join(f"`{s}`" for s in steps) or "No steps recorded."]
    out.append_report("\n".join(lines))


if __name__ == "__main__":
    run_service(write_model_card)
