"""Data dictionaries: what columns hold, read from a file beside the data, Parquet field metadata or --columns, shown in
the profile and used to read goals."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dagsmith.agents.intent import detect_intent
from dagsmith.agents.profiler import profile_dataset
from dagsmith.data.dictionary import DictionaryError, read_columns_file

FRAME = pd.DataFrame({"cust": range(40), "amt": [float(i % 7) for i in range(40)],
                      "flg": ["y", "n", "n", "n"] * 10})


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "accounts.csv"
    FRAME.to_csv(path, index=False)
    return path


def _descriptions(profile) -> dict:
    return {c.name: c.description for c in profile.columns if c.description}


def test_a_sidecar_beside_the_data_describes_its_columns_and_names_what_the_table_lacks(table):
    (table.parent / "accounts.columns.yaml").write_text("amt: amount spent last month\n"
                                                         "flg: whether the account was closed\n"
                                                         "region: where the customer lives\n")
    profile = profile_dataset(table)
    assert _descriptions(profile) == {"amt": "amount spent last month", "flg": "whether the account was closed"}
    assert any("region" in note and "does not have" in note for note in profile.notes)


def test_parquet_field_metadata_is_read_and_given_descriptions_win(tmp_path):
    path = tmp_path / "accounts.parquet"
    schema = pa.Schema.from_pandas(FRAME, preserve_index=False)
    schema = pa.schema([field.with_metadata({"description": f"the {field.name} field"}) if field.name != "cust"
                        else field for field in schema])
    pq.write_table(pa.Table.from_pandas(FRAME, schema=schema, preserve_index=False), path)
    profile = profile_dataset(path, descriptions={"flg": "closed account flag"})
    assert _descriptions(profile) == {"amt": "the amt field", "flg": "closed account flag"}


def test_a_list_of_entries_is_a_dictionary_too(tmp_path):
    path = tmp_path / "cols.json"
    path.write_text(json.dumps([{"name": "amt", "description": "  amount\n spent "}, {"name": "flg"}]))
    with pytest.raises(DictionaryError, match="gives 'flg' no description"):
        read_columns_file(path)
    path.write_text(json.dumps([{"name": "amt", "description": "  amount\n spent "}]))
    assert read_columns_file(path) == {"amt": "amount spent"}


@pytest.mark.parametrize("name, text, message", [
    ("cols.yaml", "amt: [unclosed\n  token: hunter2", "is not valid YAML"),
    ("cols.json", '{"amt": "hunter2"', "is not valid JSON"),
    ("cols.yaml", "- hunter2\n- amt\n", "must map each column to its description"),
])
def test_a_broken_dictionary_is_one_line_that_never_quotes_the_file(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DictionaryError, match=message) as raised:
        read_columns_file(path)
    assert "hunter2" not in str(raised.value) and "\n" not in str(raised.value)


def test_a_goal_in_the_words_of_a_description_names_its_column(table):
    goal = "predict whether the account was closed"
    assert detect_intent(goal, profile_dataset(table)).target != "flg"
    described = profile_dataset(table, descriptions={"flg": "whether the account was closed by the customer",
                                                     "amt": "amount the account spent"})
    found = detect_intent(goal, described)
    assert (found.task_type.value, found.target) == ("binary_classification", "flg")
    assert "the data's dictionary describes it" in found.reasons["target"]


def test_two_columns_described_alike_name_neither(table):
    described = profile_dataset(table, descriptions={"flg": "account closed last month",
                                                     "amt": "amount the account had when closed"})
    assert detect_intent("predict the closed account", described).target != "flg"


def test_exported_samples_carry_their_published_dictionary_to_the_profile(tmp_path):
    env = {**os.environ, "DAGSMITH_HOME": str(tmp_path / "home"), "COLUMNS": "400"}
    data = tmp_path / "boston.csv"

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "dagsmith.cli.app", *map(str, args)], capture_output=True,
                              text=True, env=env, timeout=300)

    exported = cli("datasets", "export", "boston", data)
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "boston.columns.yaml").is_file() and "boston.columns.yaml" in exported.stdout
    profiled = cli("profile", data, "--json")
    assert profiled.returncode == 0, profiled.stderr
    columns = {c["name"]: c["description"] for c in json.loads(profiled.stdout)["columns"]}
    assert columns["medv"] == "median value of owner-occupied homes (house value) in $1000s"
    broken = tmp_path / "broken.yaml"
    broken.write_text("medv: [")
    refused = cli("profile", data, "--columns", broken)
    assert refused.returncode == 2 and refused.stderr.strip().startswith("error: --columns:")
    assert "Traceback" not in refused.stderr
