"""MkDocs hook: the CLI and settings references, generated from the code at every build, so they cannot drift.

``docs/reference/cli.md`` and ``docs/reference/settings.md`` hold the prose around them; each marker comment in a
page is replaced by what the typer app (``dagsmith.cli.app``) and ``Settings`` (``dagsmith.config``) say now.
Importing either starts nothing: no database, no Airflow.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

import typer
import typer.core
import typer.main

CLI_MARKER = "<!-- generated: cli -->"
SETTINGS_MARKER = "<!-- generated: settings -->"
_CODE_SPAN = re.compile(r"(`[^`]*`)")


def on_page_markdown(markdown: str, **_) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if SETTINGS_MARKER in markdown:
        markdown = markdown.replace(SETTINGS_MARKER, settings_reference())
    return markdown


def _text(text: str) -> str:
    """Help text as Markdown: ``|`` and ``<`` outside code spans would end a table cell or open an HTML tag."""
    return "".join(part if part.startswith("`") else part.replace("|", r"\|").replace("<", "&lt;")
                   for part in _CODE_SPAN.split(text))


def _paragraphs(help_text: str) -> str:
    """A docstring's paragraphs, each on one line (typer keeps the source's line breaks)."""
    return "\n\n".join(_text(" ".join(block.split())) for block in help_text.strip().split("\n\n"))


def commands() -> Iterator[tuple[str, typer.core.TyperCommand | typer.core.TyperGroup, typer.Context]]:
    """Every command of ``dagsmith``, groups included, depth first in the order ``--help`` lists them."""
    from dagsmith.cli.app import app

    root = typer.main.get_command(app)

    def walk(command, context: typer.Context, path: str):
        yield path, command, context
        if isinstance(command, typer.core.TyperGroup):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                if not getattr(sub, "hidden", False):
                    yield from walk(sub, typer.Context(sub, info_name=name, parent=context), f"{path} {name}")

    yield from walk(root, typer.Context(root, info_name="dagsmith"), "dagsmith")


def cli_reference() -> str:
    lines = []
    for path, command, context in commands():
        depth = "#" * min(path.count(" ") + 2, 4)
        lines += [f"{depth} `{path}`", "", _paragraphs(command.help or ""), "", "```",
                  command.get_usage(context).removeprefix("Usage: "), "```", ""]
        rows = [record for param in command.get_params(context) if not getattr(param, "hidden", False)
                and param.name != "help" and (record := param.get_help_record(context))]
        if rows:
            lines += ["| argument or option | what it does |", "|---|---|"]
            lines += [f"| `{name}` | {_text(' '.join(help_.split()))} |" for name, help_ in rows]
            lines.append("")
    return "\n".join(lines)


def _default(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def settings() -> Iterator[tuple[str, object]]:
    """Each ``Settings`` field's environment variables: (dotted attribute, ``Variable``)."""
    from dagsmith.config import Settings

    for field in dataclasses.fields(Settings):
        if not field.metadata.get("variables"):
            raise ValueError(f"Settings.{field.name} names no environment variable: give it "
                             "field(metadata=read_from(Variable(...))) (dagsmith.config) for the settings reference")
        for variable in field.metadata["variables"]:
            yield (f"{field.name}.{variable.attribute}" if variable.attribute else field.name), variable


def settings_reference() -> str:
    from dagsmith.config import Settings

    defaults = {field.name: field.default for field in dataclasses.fields(Settings)}
    lines = ["| variable | default | meaning | `Settings` field |", "|---|---|---|---|"]
    for attribute, variable in settings():
        value = defaults[attribute.split(".")[0]]
        if variable.unset is not None:
            default = _text(variable.unset)
        elif value is dataclasses.MISSING:
            raise ValueError(f"{variable.name}: Settings.{attribute} has no default value to show; say what "
                             "unset means with Variable(unset=...)")
        else:
            default = _default(getattr(value, variable.attribute) if variable.attribute else value)
        lines.append(f"| `{variable.name}` | {default} | {_text(variable.meaning)} | `{attribute}` |")
    return "\n".join(lines)
