"""Conventions the package keeps, checked on its source: one definition for each task family and each state,
modules small enough to hold one idea, and no import cycles among our own modules."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from dagsmith.errors import UserFacingError
from dagsmith.models.catalog import CLASSIFICATION_TASKS, SUPERVISED_TASKS, TaskType
from dagsmith.models.execution import StepStatus, TryAction
from dagsmith.models.plan import PipelineStatus

INCLUDE = Path(__file__).resolve().parents[1] / "include"
PACKAGE = INCLUDE / "dagsmith"
#: Where the enums live, and migrations, which record the schema as it was.
EXEMPT = (PACKAGE / "models", PACKAGE / "store" / "migrations")


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if not any(path.is_relative_to(folder) for folder in EXEMPT):
            yield str(path.relative_to(PACKAGE)), ast.parse(path.read_text(encoding="utf-8"))


def _prose(tree: ast.Module) -> set[int]:
    """Docstrings, the literal parts of f-strings and dict keys: text and names, not values compared or stored."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body \
                and isinstance(node.body[0], ast.Expr):
            ids.add(id(node.body[0].value))
        elif isinstance(node, ast.JoinedStr):
            ids.update(id(part) for part in node.values)
        elif isinstance(node, ast.Dict):
            ids.update(id(key) for key in node.keys if key is not None)
    return ids


def test_the_supervised_and_classification_families_are_defined_once():
    """Whether a task is supervised or a classification is ``TaskType``'s to say, not each module's."""
    families = {frozenset(CLASSIFICATION_TASKS), frozenset(SUPERVISED_TASKS),
                frozenset(SUPERVISED_TASKS) - {TaskType.TIME_SERIES_FORECASTING},
                frozenset(TaskType) - frozenset(SUPERVISED_TASKS)}
    redefined = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Set | ast.Tuple) and len(node.elts) >= 2 and all(
                    isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "TaskType"
                    for e in node.elts) and frozenset(TaskType[e.attr] for e in node.elts) in families:
                redefined.append(f"{name}:{node.lineno}")
    assert not redefined, f"task families defined outside TaskType: {redefined}"


def test_states_and_decisions_are_spelled_by_their_enums():
    """A status or a healing action written as a bare string is one typo from a state nothing handles."""
    words = {member.value for enum in (StepStatus, PipelineStatus, TryAction) for member in enum}
    spelled = []
    for name, tree in _modules():
        prose = _prose(tree)
        spelled += [f"{name}:{node.lineno} {node.value!r}" for node in ast.walk(tree)
                    if isinstance(node, ast.Constant) and node.value in words and id(node) not in prose]
    assert not spelled, f"status or action strings outside their enums: {spelled}"


def _fields(holder: type) -> dict[str, object]:
    """A model's or a dataclass' fields with their types (nothing for any other class)."""
    if issubclass(holder, BaseModel):
        return {name: field.annotation for name, field in holder.model_fields.items()}
    return typing.get_type_hints(holder) if dataclasses.is_dataclass(holder) else {}


def test_task_types_and_stages_are_held_by_their_enums():
    """A task type or a stage held as a bare ``str`` takes any typo and is compared by hand; its enum refuses a wrong
    one where the spec is read (a pipeline's spec file, the store, a REST body)."""
    names = {"task_type", "task_types", "stage", "stages"}
    loose_kinds = {str, str | None, list[str]}
    modules = [importlib.import_module(f"dagsmith.{package}.{found.name}") for package in ("models", "execution")
               for found in pkgutil.iter_modules([str(PACKAGE / package)])]
    holders = [holder for module in modules for holder in vars(module).values()
               if isinstance(holder, type) and holder.__module__ == module.__name__]
    assert len(holders) > 30, "the scan found the models"
    loose = [f"{holder.__module__}.{holder.__qualname__}.{name}: {kind}" for holder in holders
             for name, kind in _fields(holder).items() if name in names and kind in loose_kinds]
    assert not loose, f"task types or stages held as bare strings: {loose}"


def test_the_scan_finds_what_it_looks_for():
    """The scans above are only worth something if they see a planted literal."""
    tree = ast.parse('if step.status == "failed":\n    decision = {"action": "retry", "reason": f"failed {x}"}')
    prose = _prose(tree)
    found = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
             and node.value in {"failed", "retry"} and id(node) not in prose]
    assert sorted(found) == ["failed", "retry"]


def test_errors_the_cli_and_ui_show_people_share_one_base():
    """Every dagsmith error a command or a page catches to show its message is a ``UserFacingError``, so a new
    one is shown the same way without another ``except`` in each caller."""
    caught = []
    for folder in ("cli", "ui"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            module = importlib.import_module(f"dagsmith.{folder}.{path.stem}")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ExceptHandler) and node.type is not None:
                    names = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
                    caught += [(path.stem, getattr(module, n.id)) for n in names
                               if isinstance(n, ast.Name) and hasattr(module, n.id)]
    ours = [(where, error) for where, error in caught if error.__module__.startswith("dagsmith.")]
    assert len(ours) >= 5, "the scan found the errors the CLI and UI catch"
    assert not [f"{where}: {error.__name__}" for where, error in ours if not issubclass(error, UserFacingError)]


#: A module longer than this holds more than one idea; split it by what it does.
MAX_MODULE_LINES = 400


def _our_modules() -> dict[str, Path]:
    """Every module of dagsmith and dagsmith_kit by dotted name (a package by its ``__init__``), migrations aside."""
    modules = {}
    for package in ("dagsmith", "dagsmith_kit"):
        for path in sorted((INCLUDE / package).rglob("*.py")):
            if not path.is_relative_to(PACKAGE / "store" / "migrations"):
                parts = path.relative_to(INCLUDE).with_suffix("").parts
                modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The imports under ``if TYPE_CHECKING:``: annotations only, never run."""
    return {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
            and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
            for statement in block.body for node in ast.walk(statement)}


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Which of ``modules`` each one imports, from every import it runs: at the top and inside functions alike (an
    import moved into a function still makes a cycle, only a later one)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        skipped, imported = _type_checking_only(tree), set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parents = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*parents, base] if base else parents)
                imported.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                                for alias in node.names)
        graph[name] = set()
        for target in imported:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in graph:
        if root in order:
            continue
        work = [(root, iter(sorted(graph[root])))]
        order[root] = low[root] = len(order)
        stack.append(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in order:
                    order[nxt] = low[nxt] = len(order)
                    stack.append(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in stack:
                    low[node] = min(low[node], order[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == order[node]:
                    group = stack[stack.index(node):]
                    del stack[stack.index(node):]
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_modules_stay_small_enough_to_hold_one_idea():
    long = {name: n for name, path in _our_modules().items()
            if name.startswith("dagsmith.") and (n := len(path.read_text(encoding="utf-8").splitlines()))
            > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_our_modules_import_each_other_without_cycles():
    """A cycle hidden by an import inside a function still ties the modules together: each needs the other
    loaded, so neither can be understood, tested or moved alone."""
    graph = import_graph(_our_modules())
    assert len(graph) > 150 and "dagsmith.config" in graph["dagsmith.cli.app"]
    assert not cycles(graph), f"import cycles: {cycles(graph)}"


def test_the_cycle_scan_sees_an_import_inside_a_function(tmp_path):
    """A planted cycle, one side importing inside a function and relatively, is found; a TYPE_CHECKING one is not."""
    (tmp_path / "pkg").mkdir()
    files = {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import x\n",
             "pkg/b.py": "def f():\n    from . import a\n", "pkg/c.py": "from typing import TYPE_CHECKING\n"
             "if TYPE_CHECKING:\n    from pkg.d import y\n", "pkg/d.py": "import pkg.c\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    modules = {name.removesuffix(".py").replace("/", ".").removesuffix(".__init__"): tmp_path / name
               for name in files}
    assert cycles(import_graph(modules)) == [["pkg.a", "pkg.b"]]


def test_every_metric_a_goal_may_name_is_read_and_scored_from_the_one_registry():
    """The goal reader's phrases, the search's scorers and the answer's labels all come from
    ``dagsmith_kit.metrics``: a metric added there is read from goals and validated, or this fails."""
    from dagsmith.agents.intent import constraints
    from dagsmith_kit.metrics import METRICS
    from dagsmith_kit.search import SCORERS

    nameable = {name for name, metric in METRICS.items() if metric.nameable}
    assert set(constraints.METRICS) == nameable, "each metric a goal may name has the phrases that name it"
    supervised = {task.value for task in SUPERVISED_TASKS}
    searched = {name for name in nameable if supervised & set(METRICS[name].tasks)}
    assert searched <= set(SCORERS), "each metric a supervised goal may name is one a model search scores"
    assert all(constraints.METRICS_FOR[TaskType(task)] >= {name} for name in nameable for task in METRICS[name].tasks)


def test_the_command_starts_a_run_s_child_before_loading_pandas():
    """``dagsmith run`` starts its ``dag.test()`` child before its own imports (``cli.ahead``): pandas, which a
    module of the kit it shares would load through the kit's package, must not come before it."""
    script = "import sys, dagsmith.cli.ahead; print('pandas' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "False"


def test_parsing_a_pipeline_dag_and_closing_a_run_without_a_supervised_model_load_no_scikit_learn():
    """scikit-learn costs seconds to import: a DAG file's parse never pays it, nor does closing a clustering or an
    exploration (only a supervised model's held-out quality needs it)."""
    script = ("import sys, dagsmith.airflow.pipeline_dag, dagsmith.execution.closing, dagsmith.execution.answer, "
              "dagsmith.registry.runs; print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'scipy'}))")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
