"""Data dictionaries: what each column holds, in its owner's words, read where it already exists.

A column called ``medv`` means nothing to a reader of goals; "median value of owner-occupied homes" does. Descriptions
come from, in order of precedence: a file the person names (``--columns FILE``), a sidecar file beside the data
(``DATA.columns.yaml``, ``.yml`` or ``.json``), and the field metadata of a Parquet file (``description``, ``comment``
or ``doc``). A dictionary file maps each column to its description, either directly (``churn: the customer left``) or
as a list of ``{name, description}`` entries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from dagsmith.errors import InputError
from dagsmith.models.profile import DatasetProfile

#: Sidecar names tried beside ``DATA.ext`` (and beside ``DATA`` without all its suffixes, for ``churn.csv.gz``).
SIDECAR_SUFFIXES = (".columns.yaml", ".columns.yml", ".columns.json")
#: Parquet field metadata keys that hold a column's description, as common writers name it.
METADATA_KEYS = (b"description", b"comment", b"doc")
#: A description is a sentence or two; longer text is cut here so a pasted manual cannot flood a profile.
MAX_DESCRIPTION_CHARS = 300


class DictionaryError(InputError, ValueError):
    """A column dictionary file that cannot be read as column -> description."""


def read_columns_file(path: Path | str) -> dict[str, str]:
    """Column -> description from a YAML or JSON file; the error names the file and what is wrong, never its text."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DictionaryError(f"no column dictionary at {path}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise DictionaryError(f"cannot read the column dictionary {path}: {type(err).__name__}") from None
    try:
        loaded = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError):
        kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
        raise DictionaryError(f"the column dictionary {path} is not valid {kind}") from None
    return _entries(loaded, path)


def _entries(loaded: Any, path: Path) -> dict[str, str]:
    if isinstance(loaded, Mapping):
        pairs = [(name, value.get("description") if isinstance(value, Mapping) else value)
                 for name, value in loaded.items()]
    elif isinstance(loaded, list) and all(isinstance(e, Mapping) and "name" in e for e in loaded):
        pairs = [(e["name"], e.get("description")) for e in loaded]
    else:
        raise DictionaryError(f"the column dictionary {path} must map each column to its description "
                              "(column: description), or list entries with a name and a description")
    found = {}
    for name, description in pairs:
        if not isinstance(description, (str, int, float)) or isinstance(description, bool):
            raise DictionaryError(f"the column dictionary {path} gives '{name}' no description text")
        if text := " ".join(str(description).split()):
            found[str(name)] = text[:MAX_DESCRIPTION_CHARS]
    return found


def _bare_name(data: Path) -> str:
    """``churn`` for ``churn.csv`` and ``churn.csv.gz``: the name a sidecar dictionary starts with."""
    return data.name.split(".", 1)[0]


def sidecar_for(data: Path | str) -> Path | None:
    """The dictionary file beside ``data``: ``churn.columns.yaml`` or ``churn.csv.columns.yaml`` for ``churn.csv``."""
    data = Path(data)
    for base in dict.fromkeys((data.name, _bare_name(data))):
        for suffix in SIDECAR_SUFFIXES:
            if (candidate := data.with_name(base + suffix)).is_file():
                return candidate
    return None


def write_sidecar(data: Path | str, descriptions: Mapping[str, str]) -> Path:
    """Write ``descriptions`` as the dictionary beside ``data`` (``churn.columns.yaml`` for ``churn.csv``)."""
    data = Path(data)
    sidecar = data.with_name(_bare_name(data) + SIDECAR_SUFFIXES[0])
    sidecar.write_text(yaml.safe_dump(dict(descriptions), sort_keys=False, allow_unicode=True), encoding="utf-8")
    return sidecar


def parquet_descriptions(data: Path | str) -> dict[str, str]:
    """Descriptions stored in a Parquet file's field metadata; nothing for other files or fields without one."""
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(data)
    except (OSError, ValueError):  # not Parquet after all, or unreadable: the reader says so, not the dictionary
        return {}
    found = {}
    for field in schema:
        metadata = field.metadata or {}
        for key in METADATA_KEYS:
            if text := " ".join(metadata.get(key, b"").decode("utf-8", "replace").split()):
                found[field.name] = text[:MAX_DESCRIPTION_CHARS]
                break
    return found


def dictionary_for(data: Path | str, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every description known for ``data``'s columns: ``given`` (from ``--columns``) over a sidecar over metadata."""
    found = parquet_descriptions(data) if Path(data).suffix.lower() in (".parquet", ".pq") else {}
    if sidecar := sidecar_for(data):
        found |= read_columns_file(sidecar)
    return found | dict(given or {})


def describe(profile: DatasetProfile, descriptions: Mapping[str, str]) -> DatasetProfile:
    """The profile with each described column's description, and a note naming described columns it lacks."""
    if not descriptions:
        return profile
    columns = [c.model_copy(update={"description": descriptions[c.name]}) if c.name in descriptions else c
               for c in profile.columns]
    unknown = [name for name in descriptions if profile.column(name) is None]
    more = " and more" if len(unknown) > 5 else ""
    lacking = [f"The column descriptions name {', '.join(unknown[:5])}{more}, which the table does not have."]
    notes = [*profile.notes, *(lacking if unknown else [])]
    return profile.model_copy(update={"columns": columns, "notes": notes})
