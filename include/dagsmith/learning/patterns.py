"""Learned execution patterns: how often each microservice succeeded or failed at each stage.

Owner '' holds the global counts; a user's name holds that user's own.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from dagsmith.store import schema

#: Successes at which the pattern signal saturates (the design's "100 successes = 1.0").
SATURATION = 100
#: How much a user's own history counts against the global one, when the user has any.
USER_SHARE = 0.6


@dataclass(frozen=True)
class StageHistory:
    successes: int = 0
    failures: int = 0

    @property
    def net(self) -> float:
        return min(1.0, max(0.0, (self.successes - self.failures) / SATURATION))


@dataclass(frozen=True)
class History:
    """Global and per-user stage counts, keyed by (stage, microservice id)."""

    global_counts: dict[tuple[str, int], StageHistory]
    user_counts: dict[tuple[str, int], StageHistory]

    def signal(self, stage: str, microservice_id: int) -> float:
        """Pattern signal in [0, 1]: net successes, the user's own history weighing in when there is some."""
        overall = self.global_counts.get((stage, microservice_id), StageHistory()).net
        mine = self.user_counts.get((stage, microservice_id))
        if mine is None:
            return overall
        return (1 - USER_SHARE) * overall + USER_SHARE * mine.net

    def counts(self, stage: str, microservice_id: int) -> StageHistory:
        return self.global_counts.get((stage, microservice_id), StageHistory())


def load_history(session: Session, user: str | None) -> History:
    owners = ["", user] if user else [""]
    rows = session.execute(
        select(schema.Pattern.owner, schema.Pattern.stage, schema.Pattern.microservice_id,
               schema.Pattern.successes, schema.Pattern.failures)
        .where(schema.Pattern.kind == "stage", schema.Pattern.owner.in_(owners))
    )
    global_counts, user_counts = {}, {}
    for owner, stage, service_id, successes, failures in rows:
        target = global_counts if owner == "" else user_counts
        target[(stage, service_id)] = StageHistory(successes, failures)
    return History(global_counts, user_counts)


#: How many typical successors a microservice's statistics list.
SUCCESSORS = 5


def service_statistics(session: Session, microservice_id: int) -> dict:
    """A microservice's record across every run (global counts): runs, success rate, and the services that
    most often ran right after it."""
    successes, failures = session.execute(
        select(func.coalesce(func.sum(schema.Pattern.successes), 0),
               func.coalesce(func.sum(schema.Pattern.failures), 0))
        .where(schema.Pattern.kind == "stage", schema.Pattern.owner == "",
               schema.Pattern.microservice_id == microservice_id)).one()
    runs = successes + failures
    following = session.execute(
        select(schema.Microservice.name, schema.Pattern.successes)
        .join(schema.Microservice, schema.Microservice.id == schema.Pattern.next_microservice_id)
        .where(schema.Pattern.kind == "transition", schema.Pattern.owner == "",
               schema.Pattern.microservice_id == microservice_id)
        .order_by(schema.Pattern.successes.desc(), schema.Microservice.name).limit(SUCCESSORS)).all()
    return {"runs": runs, "successes": successes, "failures": failures,
            "success_rate": round(successes / runs, 3) if runs else None,
            "successors": [{"name": name, "times": times} for name, times in following]}
