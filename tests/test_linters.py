"""The linters hold over the tree: ruff's rules on every file, mypy's types on models, execution and runtime (both
configured in pyproject.toml). Run here, so `make test` and `make test-fast` fail on what they find."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def _run(*args: str, given: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, input=given, capture_output=True, text=True,
                          timeout=600)


def test_ruff_finds_nothing():
    result = _run("ruff", "check", "--quiet", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_finds_nothing_on_the_execution_side():
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_both_see_a_planted_fault(tmp_path):
    """The checks above are only worth something if the tools, as configured, refuse a fault."""
    ruff = _run("ruff", "check", "--stdin-filename", "include/dagsmith/planted.py", "-",
                given="import os  # noqa: E402\n")
    assert ruff.returncode == 1 and "F401" in ruff.stdout and "RUF100" in ruff.stdout
    planted = tmp_path / "planted.py"
    planted.write_text("from dagsmith.store import schema\n\n\ndef workspace(run: schema.Execution) -> str:\n"
                       "    return run.workspace\n")
    # a cache of its own: the whole tree's check may be writing the shared one at this moment, from another worker
    mypy = _run("mypy", "--cache-dir", str(tmp_path / "cache"), str(planted))
    assert mypy.returncode == 1 and "Incompatible return value type" in mypy.stdout, mypy.stdout
