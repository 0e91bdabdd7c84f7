"""The champion rule: a new version replaces the champion only when it scores at least as well as the champion on
the same held-out rows, the ``test`` rows of the run that trained it, by the metric that run reports.

The challenger's score is the run's own (``execution.quality``); the champion's is computed the same way from its
predictions on those rows, made by a sandboxed scoring step in the runtime the run's steps used. Those rows already
went through the run's steps up to the split (type fixes, dropped columns), so the champion replays only its own
later steps on them: both versions are of one pipeline, whose steps up to the split are the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dagsmith.config import Settings
from dagsmith.errors import UserFacingError
from dagsmith.execution.quality import judged_metric, prediction_quality
from dagsmith.registry.scoring import score
from dagsmith.registry.versions import Champion, Decision
from dagsmith.runtime import runtime_named
from dagsmith.runtime.docker import CONTAINER_ISOLATION
from dagsmith_kit import Bundle
from dagsmith_kit.metrics import label


def challenge(champion: Champion | None, metrics: dict[str, Any], split: Path, *, classification: bool,
              trace: dict[str, Any], settings: Settings) -> Decision:
    """Whether the new version (held-out ``metrics``) replaces ``champion``, scored on the held-out rows of the
    run's split step's output ``split``."""
    if champion is None:
        return Decision(True, "the first version of the pipeline")
    judged = judged_metric(metrics)
    if judged is None:
        return Decision(False, "there is no held-out metric to compare it with the champion by; promote it by hand "
                               "if it should score", champion_version=champion.version)
    metric, higher = judged
    name, new = label(metric), float(metrics[metric])
    bundle = Bundle.open(split)
    held_out, train = bundle.table("test"), bundle.table("train")
    target = bundle.require_target()
    try:
        scored = score(champion.path, held_out.drop(columns=[target]), runtime=runtime_of(trace, settings),
                       settings=settings, after_step=len(bundle.meta.get("lineage") or []))
    except UserFacingError as exc:
        return Decision(False, f"the champion v{champion.version} could not be scored on the new held-out rows "
                               f"({exc}); promote it by hand if it should score", metric, new,
                        champion_version=champion.version)
    quality = prediction_quality(held_out[target], scored.predictions, train[target], classification=classification)
    if metric not in quality.metrics:
        return Decision(False, f"the champion v{champion.version}'s {name} on the new held-out rows could not be "
                               f"computed ({quality.problem}); promote by hand", metric, new,
                        champion_version=champion.version)
    old = float(quality.metrics[metric])
    wins = new >= old if higher else new <= old
    verb = "at least as good as" if wins else "worse than"
    scores = f"{name} {new:.4f} on {len(held_out):,} held-out rows, {verb} the champion v{champion.version}'s {old:.4f}"
    return Decision(wins, f"{scores} on the same rows" + ("" if wins else "; the champion is kept"), metric, new, old,
                    champion.version)


def runtime_of(trace: dict[str, Any], settings: Settings):
    """The runtime the run's steps ran in (its trace says what contained them), else the configured one."""
    from dagsmith.runtime.kubernetes import POD_ISOLATION

    isolation = trace.get("isolation") or []
    name = ("docker" if CONTAINER_ISOLATION in isolation else "kubernetes" if POD_ISOLATION in isolation
            else "local" if isolation else settings.runtime)
    return runtime_named(name, settings)
