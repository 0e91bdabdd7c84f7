"""Copies of the catalog with its documentation degraded, for the documentation-degradation protocol.

Only what authors write for people changes; the code does exactly the same, so a code-grounded analysis
should hold up while one that believes the documentation loses its footing.
- mild: manifest descriptions cut to their first sentence (usage notes and caveats gone), docstrings to
  their first line;
- moderate: also no keywords and no docstrings beyond the module's first line (parameter descriptions gone);
- severe: manifests keep only name and category, and the code keeps no docstring at all.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import yaml

from dagsmith.bench.experiments import Degradation
from dagsmith.catalog.upload import service_folders

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def _first_sentence(text: str) -> str:
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0] if text else ""


def _manifest(manifest: dict, level: Degradation) -> dict:
    if level is Degradation.SEVERE:
        return {key: manifest[key] for key in ("name", "category") if key in manifest}
    degraded = {**manifest, "description": _first_sentence(str(manifest.get("description") or ""))}
    if level is Degradation.MODERATE:
        degraded.pop("keywords", None)
    return degraded


def _docstring_nodes(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                yield node, first


def _code(source: str, level: Degradation) -> str:
    """The module with its docstrings cut down (or removed) for ``level``; behaviour is unchanged."""
    tree = ast.parse(source)
    for node, docstring in list(_docstring_nodes(tree)):
        keep_line = level is Degradation.MILD or (level is Degradation.MODERATE and isinstance(node, ast.Module))
        if keep_line:
            docstring.value.value = docstring.value.value.strip().splitlines()[0]
        else:
            node.body.remove(docstring)
            if not node.body:
                node.body.append(ast.Pass())
    return ast.unparse(tree) + "\n"


def degraded_catalog(source: Path, level: Degradation, destination: Path) -> Path:
    """Write the catalog under ``source`` into ``destination`` with documentation degraded to ``level``."""
    if destination.exists():
        shutil.rmtree(destination)
    for folder in service_folders(source):
        copy = destination / folder.name
        shutil.copytree(folder, copy)
        manifest_file = copy / "manifest.yaml"
        manifest = yaml.safe_load(manifest_file.read_text(encoding="utf-8")) or {}
        manifest_file.write_text(yaml.safe_dump(_manifest(manifest, level), sort_keys=False), encoding="utf-8")
        for module in copy.glob("*.py"):
            module.write_text(_code(module.read_text(encoding="utf-8"), level), encoding="utf-8")
    return destination
