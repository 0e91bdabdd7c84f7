"""``dagsmith plan``: from a dataset and a goal to a stored, validated pipeline, explained."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.tree import Tree

from dagsmith.agents.choices import ChoiceError, check_choices
from dagsmith.agents.intent.given import KNOWN_METRICS
from dagsmith.agents.planner import plan_each
from dagsmith.cli.output import console, fail, print_json
from dagsmith.data.dictionary import read_columns_file
from dagsmith.errors import InputError
from dagsmith.models.catalog import Stage, TaskType
from dagsmith.models.intent import (
    AmbiguousGoal,
    ConstraintKind,
    GivenFields,
    Horizon,
    Intent,
    Question,
    SeveralTargets,
    find_constraint,
)
from dagsmith.models.plan import Plan, RankingMode, Recommendation
from dagsmith.models.reasoning import Provenance


#: The options ``plan`` and ``run`` share for choosing services in place of the recommender.
Interactive = Annotated[bool, typer.Option("--interactive", help="Answer questions about the goal and choose among the "
                                                                 "top 3 microservices per stage, at this terminal.")]
Choose = Annotated[list[str], typer.Option(
    metavar="[TARGET:]STAGE=MICROSERVICE",
    help="Use this microservice for the stage instead of the recommender's pick (repeatable). With one pipeline per "
         "target, a TARGET: prefix chooses for that target's pipeline only, e.g. 'price: modelling=ridge_regression'; "
         "a choice without one applies to every pipeline.")]
EachTarget = Annotated[bool, typer.Option("--each-target", help="Build one pipeline per named target.")]
#: The data, the goal, and the fields ``plan`` and ``run`` take instead of words (``GivenFields``): each wins over the
#: goal's.
Data = Annotated[Path, typer.Argument(help="The dataset: CSV, TSV, Parquet, JSON or Excel.")]
Goal = Annotated[str | None, typer.Argument(help='What you want, in plain language, e.g. "predict customer churn"; '
                                                 'may be left out when --target (or a --task that predicts nothing, '
                                                 'such as clustering) says it.')]
Target = Annotated[str | None, typer.Option("--target", metavar="COLUMN", help="The column to predict.")]
Task = Annotated[TaskType | None, typer.Option("--task", help="The task.")]
Metric = Annotated[str | None, typer.Option("--metric", metavar="NAME",
                                            help=f"What candidates are compared by: {', '.join(KNOWN_METRICS)}.")]
Exclude = Annotated[list[str], typer.Option("--exclude", metavar="COLUMN",
                                            help="A column no step uses as a feature (repeatable).")]
Columns = Annotated[Path | None, typer.Option(
    "--columns", metavar="FILE", help="What each column holds: a YAML or JSON file mapping column to description "
                                      "(read over the data's own: DATA.columns.yaml beside it, Parquet field "
                                      "metadata).")]
TimeBudget = Annotated[int | None, typer.Option("--time-budget", metavar="SECONDS", min=1,
                                                help="Seconds the run may take; the model search gets 60% of them, "
                                                     "or what the steps before it left.")]


def _horizon_read(text: str | None) -> str | None:
    """The horizon as given, once it reads as one (else the usage error says the form)."""
    if text is None:
        return None
    try:
        Horizon.given(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return text.strip()


HorizonSpan = Annotated[str | None, typer.Option(
    "--horizon", metavar="SPAN", callback=_horizon_read,
    help="How far ahead a forecast looks: '12 months', '30 days', or a count of rows; wins over the goal's words.")]


def read_choices(choose: list[str], interactive: bool) -> Callable | None:
    """Check the ``--choose`` lines are choices before anything is read (the targets they aim at are checked once the
    goal's are known), and with ``--interactive`` the question put to the person once each plan's candidates are
    ranked (for the stages ``--choose`` left open)."""
    try:
        check_choices(choose)
    except ChoiceError as exc:
        fail(f"--choose: {exc}", code=2)
    if interactive and not sys.stdin.isatty():
        fail("--interactive needs a terminal; use --choose STAGE=MICROSERVICE instead", code=2)
    return _ask if interactive else None


def read_columns(columns: Path | None) -> dict[str, str]:
    """The ``--columns`` dictionary, or the error for the person."""
    try:
        return read_columns_file(columns) if columns else {}
    except InputError as exc:
        fail(f"--columns: {exc}", code=2)


def plan_or_fail(data: Path, goal: str | None, *, json: bool = False, **options) -> list[Plan]:
    """``plan_each``'s pipelines, or the error for the person. A question about the goal offers its likeliest readings
    with the options that choose each; with ``--interactive`` the person picks one here (and it is remembered), with
    ``--json`` the question goes to standard output as JSON for a client to offer. A goal naming several targets also
    says how to ask for one pipeline each."""
    try:
        return plan_each(data, goal, **options)
    except AmbiguousGoal as question:
        if options.get("ask") and question.candidates:
            return plan_each(data, goal, **{**options, "given": _answer(question, options.get("given")),
                                            "answered": True})
        if json:
            print_json({"question": str(question), "candidates": [
                {**c.model_dump(mode="json"), "options": c.options} for c in question.candidates]})
            raise SystemExit(question.exit_code) from None
        several = isinstance(question, SeveralTargets)
        hint = " Or pass --each-target to build one pipeline per target." if several else ""
        fail(f"{question}{hint}{_offered(question)}", code=question.exit_code)
    except Question as refused:
        fail(f"{refused}{_offered(refused)}", code=refused.exit_code)
    except InputError as exc:
        fail(str(exc), code=exc.exit_code)


def _offered(question: Question) -> str:
    """The readings a question offers, each with the options that choose it."""
    if not question.candidates:
        return ""
    lines = [f"\n  {i}. {c.options}: {c.evidence}" for i, c in enumerate(question.candidates, 1)]
    return "\nLikely readings (pass the options of one, or say it in the goal):" + "".join(lines)


def _answer(question: AmbiguousGoal, given: GivenFields | None) -> GivenFields:
    """Interactive mode: the reading a person picks among a question's candidates, as fields over those given."""
    console.print(f"[bold]{escape(str(question))}[/]", highlight=False)
    for i, candidate in enumerate(question.candidates, 1):
        console.print(f"  {i}. [cyan]{escape(candidate.options)}[/] [dim]{escape(candidate.evidence)}[/]",
                      highlight=False)
    picked = question.candidates[_pick(len(question.candidates)) - 1]
    return (given or GivenFields()).model_copy(update={"target": picked.target, "task": picked.task_type})


def _ask(intent: Intent, recommendation: Recommendation, chosen: dict[Stage, str]) -> dict[Stage, str]:
    """Interactive mode: a person picks among the top 3 of each stage not ``chosen`` (Enter keeps the first); with one
    pipeline per target, under a heading naming the target, as each one is asked about in turn."""
    if intent.asks(ConstraintKind.EACH_TARGET):
        console.print(f"\n[bold]Pipeline predicting {escape(intent.target)}[/]", highlight=False)
    choices = {}
    for stage in recommendation.stages:
        top = stage.top
        if len(top) < 2 or stage.stage in chosen:
            continue
        console.print(f"\n[bold]{stage.stage.value}[/]")
        for i, candidate in enumerate(top, 1):
            console.print(f"  {i}. {candidate.microservice} "
                          f"[dim]({candidate.score:.3f}: {escape(candidate.reason)})[/]",
                          highlight=False)
        choices[stage.stage] = top[_pick(len(top)) - 1].microservice
    return choices


def _pick(count: int) -> int:
    """A number from 1 to ``count`` typed at the prompt, asked again until it is one."""
    while not 1 <= (pick := typer.prompt("  choose", default=1, type=int)) <= count:
        console.print(f"  [yellow]choose a number from 1 to {count}[/]")
    return pick


def _show_provenance(label: str, made: Provenance) -> None:
    """Who made a decision, at what cost, and why a configured model's answer was not used."""
    cost = (f" ({made.latency_ms:.0f} ms, {made.prompt_tokens}+{made.completion_tokens} tokens"
            f"{', cached' if made.cached else ''})" if made.prompt_tokens else "")
    fallback = f"; the model's answer was not used: {escape(made.fallback_reason)}" if made.fallback_reason else ""
    console.print(f"  [dim]{label}:[/] {escape(made.reasoner)}{cost}{fallback}", highlight=False)


def _show(result: Plan) -> None:
    profile, intent, spec = result.profile, result.intent, result.pipeline
    q = profile.quality
    console.print(f"[bold]Data[/] {escape(profile.source)}: {profile.n_rows:,} rows x {profile.n_columns} columns "
                  f"({profile.format}); quality {q.overall:.2f} (completeness {q.completeness:.2f}, "
                  f"consistency {q.consistency:.2f}, uniqueness {q.uniqueness:.2f})", highlight=False)
    for issue in q.issues[:5]:
        console.print(f"  [yellow]![/] {escape(issue)}", highlight=False)

    target = f", target [cyan]{escape(intent.target)}[/]" if intent.target else ""
    console.print(f"\n[bold]Intent[/] {intent.task_type.value}{target} (confidence {intent.confidence:.2f})")
    _show_provenance("read by", intent.provenance)
    for field, reason in intent.reasons.items():
        console.print(f"  [dim]{field}:[/] {escape(reason)}", highlight=False)
    for constraint in intent.constraints:
        value = f"{constraint.value} {constraint.unit}(s)" if isinstance(constraint, Horizon) else constraint.value
        console.print(f"  [dim]constraint[/] {constraint.kind} = {value}: {escape(constraint.reason)}", highlight=False)
    for warning in intent.warnings:
        console.print(f"  [yellow]warning[/] {escape(warning.message)}", highlight=False)

    console.print("\n[bold]Recommendations[/] [dim](top 3 per stage: score, then why)[/]")
    for stage in result.recommendation.stages:
        console.print(f" [cyan]{stage.stage.value}[/] [dim]({stage.considered} considered)[/]")
        for i, c in enumerate(stage.top, 1):
            console.print(f"   {i}. {c.microservice:<30} {c.score:.3f}  [dim]{escape(c.reason)}[/]", highlight=False)
        if not stage.candidates:
            console.print("   [red]no compatible microservice[/]")

    status = "[green]ready[/]" if spec.valid else "[red]draft (validation failed)[/]"
    tree = Tree(f"[bold]Pipeline[/] {spec.id or ''} {escape(spec.name)}: {status}")
    nodes = {}
    for step in spec.steps:
        params = ", ".join(f"{k}={v!r}" for k, v in step.params.items())
        label = f"[cyan]{step.stage.value}[/] {step.microservice}" + (f" [dim]({escape(params)})[/]" if params else "")
        if step.search:
            label = (f"[cyan]{step.stage.value}[/] best of {', '.join(step.search.candidates)} "
                     f"[dim]({escape(step.search.reason)})[/]")
        parent = nodes.get(step.depends_on[0]) if step.depends_on else None
        nodes[step.position] = (parent or tree).add(label)
    console.print(tree)
    _show_provenance("parameters by", spec.param_provenance)
    for check in spec.checks:
        mark = "[green]✓[/]" if check.passed else "[red]✗[/]"
        console.print(f"  {mark} {check.name}: {escape(check.detail)}", highlight=False)
    timing = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in result.timings.items())
    console.print(f"[dim]{timing}[/]")


def _show_which(result: Plan, i: int, count: int) -> None:
    """Which of the pipelines planned one per target follows, and why there are several."""
    each = find_constraint(result.intent.constraints, ConstraintKind.EACH_TARGET)
    gap = "\n" if i else ""
    console.print(f"{gap}[bold]Pipeline {i + 1} of {count}[/], target [cyan]{escape(result.intent.target)}[/]: "
                  f"{escape(each.reason)}\n", highlight=False)


def plan_command(
    data: Data,
    goal: Goal = None,
    target: Target = None,
    task: Task = None,
    metric: Metric = None,
    exclude: Exclude = [],  # noqa: B006
    time_budget: TimeBudget = None,
    horizon: HorizonSpan = None,
    columns: Columns = None,
    user: Annotated[str, typer.Option(help="Who the pipeline belongs to; their history weighs in.")] = "anonymous",
    interactive: Interactive = False,
    choose: Choose = [],  # noqa: B006
    mode: Annotated[RankingMode, typer.Option(help="Ranking mode (the others are ablations).")] = RankingMode.FULL,
    each_target: EachTarget = False,
    json: Annotated[bool, typer.Option("--json", help="Print the whole plan as JSON (a list when several pipelines "
                                                      "were built).")] = False,
) -> None:
    """Profile the data, read the goal, rank microservices per stage, build and store a validated pipeline."""
    ask = read_choices(choose, interactive)
    given = GivenFields(target=target, task=task, metric=metric, exclude=exclude, time_budget=time_budget,
                        horizon=horizon)
    results = plan_or_fail(data, goal, user=user, mode=mode, choose=choose, ask=ask, each_target=each_target,
                           given=given, descriptions=read_columns(columns), json=json)
    if json:
        print_json(results if len(results) > 1 else results[0])  # one plan keeps the shape callers read
    else:
        for i, result in enumerate(results):
            if len(results) > 1:
                _show_which(result, i, len(results))
            _show(result)
    if not all(result.pipeline.valid for result in results):
        raise typer.Exit(1)
