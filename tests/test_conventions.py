"""Conventions the package keeps, checked on its source: one definition for each task family and each state."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

from dagsmith.errors import UserFacingError
from dagsmith.models.catalog import CLASSIFICATION_TASKS, SUPERVISED_TASKS, TaskType
from dagsmith.models.execution import StepStatus, TryAction
from dagsmith.models.plan import PipelineStatus

PACKAGE = Path(__file__).resolve().parents[1] / "include" / "dagsmith"
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
                    for e in node.elts):
                if frozenset(TaskType[e.attr] for e in node.elts) in families:
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
