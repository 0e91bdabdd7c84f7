"""The documentation site builds with no warning, its generated references cover the code, and the README stays a
short guide whose links land on the site's pages."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer.core
import typer.main
import yaml

from dagsmith.cli.app import app
from dagsmith.config import Settings

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_MAX_LINES = 200
#: An environment variable's name as the code writes it to read or set it: a string literal of its own.
VARIABLE = re.compile(r"[\"'](DAGSMITH_[A-Z_]*[A-Z])[\"']")
#: Relative links, with an optional anchor: ``[text](docs/page.md#anchor)``.
LINK = re.compile(r"\]\((?!https?://|mailto:)([^)#\s]*)(?:#([^)\s]*))?\)")


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site as ``mkdocs build --strict`` writes it, built once for every xdist worker of this test run."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each worker's own
    out = shared / "docs-site"
    with open(shared / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker builds; the others wait for it, then read its site
        if not out.exists():
            _build(out, shared / "docs-site-homes")
    return out


def _build(out: Path, homes: Path) -> None:
    """Any warning (a broken link or anchor, a failing hook) fails the build. Generating the references reads the
    code only: it starts no database (none under ``DAGSMITH_HOME``) and imports no Airflow (which would write under
    ``AIRFLOW_HOME``)."""
    homes.mkdir(exist_ok=True)
    building = out.with_name(f"{out.name}.building")
    shutil.rmtree(building, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "include"), os.environ.get("PYTHONPATH", "")]),
           "NO_MKDOCS_2_WARNING": "1", "DAGSMITH_HOME": str(homes / "dagsmith"), "AIRFLOW_HOME": str(homes / "airflow")}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                            str(ROOT / "mkdocs.yml"), "--site-dir", str(building)],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert build.returncode == 0, build.stderr[-3000:]
    assert not any(homes.iterdir()), f"building the site started something: {sorted(homes.iterdir())}"
    building.rename(out)  # only a site that built cleanly is shared


def _page(site: Path, source: str) -> str:
    """The HTML built from ``docs/<source>`` (``reference/cli.md`` -> ``reference/cli/index.html``)."""
    stem = source.removesuffix(".md")
    built = site / ("index.html" if stem == "index" else f"{stem}/index.html")
    return built.read_text(encoding="utf-8")


def _commands() -> list[tuple[str, list[str]]]:
    """Every registered command path (``dagsmith catalog add``) with its options' names, read from the typer app."""
    found = []

    def walk(command, path: str) -> None:
        options = [name for param in command.params if param.param_type_name == "option" and param.name != "help"
                   for name in param.opts]
        found.append((path, options))
        for name, sub in getattr(command, "commands", {}).items():
            if not sub.hidden:
                walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "dagsmith")
    return found


def test_the_cli_reference_lists_every_command_and_option(site):
    page = _page(site, "reference/cli.md")
    commands = _commands()
    assert {"dagsmith run", "dagsmith catalog add", "dagsmith pipelines export"} <= {path for path, _ in commands}
    missing = [path for path, _ in commands if f"<code>{path}</code>" not in page]
    assert not missing, f"commands missing from the CLI reference: {missing}"
    missing = [f"{path} {option}" for path, options in commands for option in options if option not in page]
    assert not missing, f"options missing from the CLI reference: {missing}"


def test_the_settings_page_lists_every_field_and_variable(site):
    page = _page(site, "reference/settings.md")
    missing = [field.name for field in dataclasses.fields(Settings) if f"<code>{field.name}" not in page]
    assert not missing, f"Settings fields missing from the settings page: {missing}"
    sources = [*(ROOT / "include").rglob("*.py"), *(ROOT / "dags").glob("*.py")]
    used = {name for path in sources for name in VARIABLE.findall(path.read_text(encoding="utf-8"))}
    assert {"DAGSMITH_HOME", "DAGSMITH_STEP_MEMORY_MB", "DAGSMITH_CATALOG_DIR"} <= used
    missing = sorted(name for name in used if f"<code>{name}</code>" not in page)
    assert not missing, f"environment variables the code reads but the settings page does not name: {missing}"


def test_the_readme_is_a_short_guide():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"
    text = "\n".join(lines)
    for command in ("make run", "make test", "docker compose up"):
        assert command in text


def test_the_readmes_links_resolve_to_the_sites_pages(site):
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python/name:", ""))["nav"]

    def pages(entries) -> set[str]:
        found = set()
        for entry in entries:
            for value in entry.values():
                found |= pages(value) if isinstance(value, list) else {value}
        return found

    on_site = pages(nav)
    links = LINK.findall(README.read_text(encoding="utf-8"))
    assert any(target.startswith("docs/") for target, _ in links), "the README links to no documentation page"
    broken = []
    for target, anchor in links:
        if not (ROOT / target).exists():
            broken.append(f"{target}: no such file")
        elif target.startswith("docs/") and target.endswith(".md"):
            source = target.removeprefix("docs/")
            if source not in on_site:
                broken.append(f"{target}: not in the site's nav")
            elif anchor and f'id="{anchor}"' not in _page(site, source):
                broken.append(f"{target}#{anchor}: no such section")
    assert not broken, f"README links that do not resolve: {broken}"
