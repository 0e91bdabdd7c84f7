"""A corpus of messy and broken datasets through `dagsmith plan` and `dagsmith profile`, as a user runs them: each
gets a correct plan (checked against what the file holds) or one specific paragraph and exit code 2, never a
traceback, and a refused one leaves nothing in the store."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import subprocess
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from dagsmith.cli.app import app
from dagsmith.config import Settings
from dagsmith.data.sniffing import DEFAULT_MAX_BYTES, MAX_BYTES_VARIABLE
from dagsmith.store import schema
from dagsmith.store.db import session_scope
from tests.conftest import ROOT

RNG = np.random.default_rng(7)
DAGSMITH = ROOT / ".venv" / "bin" / "dagsmith"


def _frame(rows: int = 120) -> pd.DataFrame:
    """A small, clean classification table: the base most cases break in one way."""
    return pd.DataFrame({"age": RNG.integers(18, 80, rows), "income": RNG.normal(50_000, 9_000, rows).round(2),
                         "plan": RNG.choice(["basic", "plus", "pro"], rows),
                         "label": RNG.choice(["yes", "no"], rows)})


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _xlsx(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_excel(buffer, index=False)
    return buffer.getvalue()


def _zip(*payloads: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for number, payload in enumerate(payloads, 1):
            archive.writestr(f"data-{number}.csv", payload)
    return buffer.getvalue()


def _nested(frame: pd.DataFrame) -> pd.DataFrame:
    """A struct column holding a struct, and a list column."""
    return frame.assign(account=[{"tier": plan, "since": {"year": 2020}} for plan in frame.pop("plan")],
                        logins=[[1, 2, 3]] * len(frame))


def _with(column: str, values) -> pd.DataFrame:
    frame = _frame()
    frame[column] = values
    return frame


@dataclass(frozen=True)
class Case:
    """A file to plan for, and either the words its error must contain or the task the plan must find.

    ``read`` errors come from reading the file, so `dagsmith profile` must refuse it the same way; the others
    (a target with one class, say) only `plan` can see. ``expect`` maps a profile field, or ``columns`` (the column
    names) or a ``values:COLUMN`` (its top values), to what a correct reading holds.
    """

    name: str
    content: bytes | Callable[[Path], None] | None
    goal: str = "predict the label"
    error: str | None = None
    read: bool = True
    task: str | None = None
    expect: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)


def _mixed_encodings(path: Path) -> None:
    text = "name,city,label\n" + "".join(f"row{i},Zürich,{'yes' if i % 2 else 'no'}\n" for i in range(60))
    path.write_bytes(text.encode("utf-8") + "row60,Málaga,no\n".encode("latin-1"))


def _sparse_zeros(path: Path) -> None:
    with open(path, "wb") as out:
        out.truncate(DEFAULT_MAX_BYTES)  # 2 GiB of nothing on disk, at the limit: refused from its first bytes


def _sparse_over_the_limit(path: Path) -> None:
    """A real table at its head, 2 GiB and one byte in all: without a limit, the zeros after the last line are
    one 2 GB field for pandas."""
    with open(path, "wb") as out:
        out.write(_csv(_frame(5_000)))
        out.truncate(DEFAULT_MAX_BYTES + 1)


def _ten_thousand_columns(path: Path) -> None:
    values = RNG.normal(size=(40, 10_000)).round(3)
    frame = pd.DataFrame(values, columns=[f"f{i}" for i in range(10_000)])
    frame["label"] = RNG.choice(["yes", "no"], 40)
    frame.to_csv(path, index=False)


CASES = [
    # the file itself
    Case("missing.csv", None, error="does not exist"),
    Case("missing[/b].csv", None, error="missing[/b].csv' does not exist"),
    Case("folder.csv", lambda p: p.mkdir(), error="is a directory"),
    Case("named-pipe.csv", os.mkfifo, error="is not a regular file (a named pipe"),
    Case("device.csv", lambda p: p.symlink_to("/dev/zero"), error="is not a regular file"),
    Case("empty.csv", b"", error="is empty (0 bytes)"),
    Case("blank.csv", b"\n \n\t\n", error="only blank space"),
    Case("garbage.csv", os.urandom(8192), error="binary"),
    Case("nul-bytes.csv", b"\x00" * 4096, error="binary"),
    Case("sparse-2gb-zeros.csv", _sparse_zeros, error="binary"),
    Case("sparse-over-2gib.csv", _sparse_over_the_limit,
         error=f"is 2,147,483,649 bytes (2.0 GiB), over the limit of 2,147,483,648 bytes (2.0 GiB) set by "
               f"{MAX_BYTES_VARIABLE}"),
    Case("over-a-set-limit.csv", _csv(_frame()), env={MAX_BYTES_VARIABLE: "1000"},
         error=f"over the limit of 1,000 bytes set by {MAX_BYTES_VARIABLE}"),
    Case("report.pdf", b"%PDF-1.7\n" + os.urandom(2048), error="PDF"),
    Case("two-tables.zip", _zip(_csv(_frame()), _csv(_frame())), error="zip archive holding 2 files: 'data-1.csv'"),
    Case("truncated.csv.gz", gzip.compress(_csv(_frame()))[:300],
         error="gzip-compressed but could not be decompressed"),
    Case("empty.csv.gz", gzip.compress(b""), error="gzip-compressed but holds nothing"),
    Case("bomb.csv.gz", gzip.compress(b"1,2\n" * 1_000_000), env={MAX_BYTES_VARIABLE: "100000"},
         error=f"decompresses to more than 100,000 bytes (97.7 KiB), the limit set by {MAX_BYTES_VARIABLE}"),
    Case("truncated.xlsx", _xlsx(_frame())[:3000], error="ZIP archive but not an Excel workbook"),
    Case("truncated.parquet", _parquet(_frame())[:1500], error="looks like Parquet but could not be parsed"),
    Case("no-rows.parquet", _parquet(_frame().head(0)), error="holds no rows"),
    Case("prose.txt", b"Dear team,\nplease find the numbers attached.\n", error="1 rows", read=False),
    Case("prose.xyz", b"Dear team\nplease find the numbers attached\n", error="cannot tell what format"),
    Case("header-only.csv", b"age,income,label\n", error="no data rows"),
    Case("duplicate-columns.csv", b"a,b,a,label\n1,2,3,yes\n4,5,6,no\n",
         error="duplicate column names: the columns at positions 1 and 3"),
    Case("duplicate-bracket-columns.csv", b"[/b],x,[/b],label\n1,2,3,yes\n4,5,6,no\n",
         error="duplicate column names: the columns at positions 1 and 3"),
    Case("ragged.csv", b"age,label\n1,yes\n2,no\n3,yes,extra,fields\n",
         error="line 4 has 4 fields where the first has 2"),
    Case("broken.jsonl", b'{"age": 1, "label": "yes"}\n{"age": \n', error="line 2"),
    Case("scalar.json", b'{"name": "x", "size": 3}', error="not a table"),
    # formats that lie about themselves, and encodings
    Case("parquet-named.csv", _parquet(_frame()), task="binary_classification",
         expect={"format": "parquet", "n_rows": 120, "columns": ["age", "income", "plan", "label"]}),
    Case("csv-named.parquet", _csv(_frame()), task="binary_classification", expect={"format": "csv", "n_rows": 120}),
    Case("excel-named.csv", _xlsx(_frame()), task="binary_classification", expect={"format": "excel", "n_rows": 120}),
    Case("bom-utf8.csv", _frame().to_csv(index=False).encode("utf-8-sig"), task="binary_classification",
         expect={"encoding": "utf-8-sig", "columns": ["age", "income", "plan", "label"]}),
    Case("bom-utf16.csv", _frame().to_csv(index=False).encode("utf-16"), task="binary_classification",
         expect={"encoding": "utf-16", "n_rows": 120, "columns": ["age", "income", "plan", "label"]}),
    Case("latin1.csv", _csv(_with("plan", RNG.choice(["básico", "más", "pró"], 120))).decode().encode("latin-1"),
         task="binary_classification", expect={"encoding": "cp1252", "values:plan": {"básico", "más", "pró"}}),
    Case("mixed-encodings.csv", _mixed_encodings, task="binary_classification",
         expect={"encoding": "utf-8+cp1252", "n_rows": 61, "values:city": {"Zürich", "Málaga"}}),
    Case("crlf.csv", _frame().to_csv(index=False, lineterminator="\r\n").encode(), task="binary_classification",
         expect={"columns": ["age", "income", "plan", "label"], "values:label": {"yes", "no"}}),
    Case("semicolons-decimal-comma.csv", _frame().to_csv(index=False, sep=";", decimal=",").encode(),
         task="binary_classification", expect={"delimiter": ";", "numeric": ["age", "income"]}),
    Case("quoted-newlines.csv", _csv(_with("plan", [f"line one\nline two {i}" for i in range(120)])),
         task="binary_classification", expect={"n_rows": 120}),
    Case("records.json", _frame().to_json(orient="records").encode(), task="binary_classification",
         expect={"format": "json", "n_rows": 120}),
    # packed and nested
    Case("archive.zip", _zip(_csv(_frame())), task="binary_classification",
         expect={"format": "csv", "n_rows": 120, "note": "Decompressed from zip"}),
    Case("gzipped.csv.gz", gzip.compress(_csv(_frame())), task="binary_classification",
         expect={"format": "csv", "n_rows": 120, "note": "Decompressed from gzip"}),
    Case("bzipped.jsonl.bz2", bz2.compress(_frame().to_json(orient="records", lines=True).encode()),
         task="binary_classification", expect={"format": "jsonl", "n_rows": 120}),
    Case("xz.tsv.xz", lzma.compress(_frame().to_csv(index=False, sep="\t").encode()), task="binary_classification",
         expect={"format": "tsv", "columns": ["age", "income", "plan", "label"]}),
    Case("nested.parquet", _parquet(_nested(_frame())), task="binary_classification",
         expect={"columns": ["age", "income", "label", "account.tier", "account.since.year"], "note": "'logins'"}),
    Case("nested.json", _nested(_frame()).to_json(orient="records").encode(), task="binary_classification",
         expect={"columns": ["age", "income", "label", "account.tier", "account.since.year"],
                 "note": "Nested fields became columns: 'account' into 'account.tier', 'account.since.year'"}),
    # shapes
    Case("one-row.csv", _csv(_frame(1)), error="has 1 rows", read=False),
    Case("three-rows.csv", _csv(_frame(3)), error="has 3 rows", read=False),
    Case("ten-thousand-columns.csv", _ten_thousand_columns, task="binary_classification",
         expect={"n_columns": 10_001, "n_rows": 40}),
    Case("only-the-target.csv", _csv(_frame()[["label"]]), error="no features", read=False),
    Case("only-the-target-has-values.csv", _csv(_frame()[["label"]].assign(age=np.nan, plan=np.nan)),
         error="'label' is the only column with values", read=False),
    # the target
    Case("one-class-target.csv", _csv(_with("label", "yes")), error="single class ('yes')", read=False),
    Case("all-missing-target.csv", _csv(_with("label", np.nan)), error="'label' has no values", read=False),
    Case("infinite-target.csv", _csv(_with("income", np.inf)), goal="predict the income", error="income", read=False),
    # values
    Case("all-missing-column.csv", _csv(_with("age", np.nan)), task="binary_classification",
         expect={"missing:age": 120}),
    Case("constant-column.csv", _csv(_with("age", 42)), task="binary_classification", expect={"values:age": {"42"}}),
    Case("infinities.csv", _csv(_with("income", np.where(RNG.random(120) < 0.1, np.inf, 1.0))),
         task="binary_classification", expect={"n_rows": 120}),
    Case("long-strings.csv", _csv(_with("plan", ["x" * 1_000_000] + ["short"] * 119)), task="binary_classification",
         expect={"n_rows": 120, "values:plan": {"short"}}),
    Case("mixed-dates.csv", _csv(_with("since", ["2024-01-05", "05/02/2024", "March 3, 2024", "20240404"] * 30)),
         task="binary_classification", expect={"n_columns": 5}),
    Case("odd-column-names.csv", _csv(_frame().rename(columns={
        "age": "Robert'); DROP TABLE pipelines;--", "income": "$(rm -rf /)", "plan": "naïve 列"})),
        task="binary_classification",
        expect={"columns": ["Robert'); DROP TABLE pipelines;--", "$(rm -rf /)", "naïve 列", "label"]}),
    Case("spaced-column-names.csv", _csv(_frame().rename(columns={"age": "  Age (years) ", "label": "Label"})),
         goal="predict the Label", task="binary_classification", expect={"columns": ["  Age (years) ", "income",
                                                                                     "plan", "Label"]}),
    Case("dirty-number-target.csv", _csv(_with("income", np.where(np.arange(120) % 40 == 0, "n/a (call us)",
                                                                   RNG.normal(5e4, 9e3, 120).round(2).astype(str)))),
         goal="predict the income", task="regression", expect={"semantic:income": "numeric"}),
    Case("identifier-target.csv", _csv(_with("label", [f"C-{i:05d}" for i in range(120)])), goal="predict the label",
         error="'label' holds an identifier, a different value on nearly every row", read=False),
    Case("dates-only.csv", _csv(pd.DataFrame({"opened": pd.date_range("2024-01-01", periods=120).astype(str),
                                              "closed": pd.date_range("2024-03-01", periods=120).astype(str)})),
         goal="group similar rows", error="nothing to learn from: every column is", read=False),
    Case("regression-gappy-target.csv", _csv(_with("income", np.where(RNG.random(120) < 0.3, np.nan,
                                                                      RNG.normal(5, 1, 120)))),
         goal="predict the income", task="regression"),
]


@pytest.fixture(scope="module")
def store(catalog_settings, tmp_path_factory) -> Settings:
    """The session's catalog with a home of its own; plans here belong to users no other test reads."""
    return Settings(home=tmp_path_factory.mktemp("bad-data-home"), database_url=catalog_settings.database_url)


def _counts(settings: Settings) -> tuple[int, int]:
    with session_scope(settings) as session:
        return (session.scalar(select(func.count()).select_from(schema.Pipeline)),
                session.scalar(select(func.count()).select_from(schema.PipelineStep)))


def _place(case: Case, folder: Path, monkeypatch) -> Path:
    """The case's file written in ``folder``, with the environment the case runs in."""
    path = folder / case.name
    if callable(case.content):
        case.content(path)
    elif case.content is not None:
        path.write_bytes(case.content)
    for variable, value in case.env.items():
        monkeypatch.setenv(variable, value)
    return path


def _invoke(store: Settings, monkeypatch, *args: str):
    """The command in this process, as the user types it; a failure must be a clean exit, never an exception."""
    monkeypatch.setenv("DAGSMITH_DATABASE_URL", store.database_url)
    monkeypatch.setenv("DAGSMITH_HOME", str(store.home))
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def _refused(result, words: str) -> None:
    assert result.exit_code == 2, result.stdout[-2000:] + result.stderr
    message = result.stderr.partition("error: ")[2]
    flat = "".join(message.split()).lower()  # the terminal wraps long lines, inside long words too
    assert "".join(words.split()).lower() in flat, message


def _check(profile: dict, expect: dict) -> None:
    columns = {column["name"]: column for column in profile["columns"]}
    for key, wanted in expect.items():
        kind, _, name = key.partition(":")
        if kind == "columns":
            assert list(columns) == wanted
        elif kind == "values":
            assert {v["value"] for v in columns[name]["top_values"]} >= wanted, columns[name]["top_values"]
        elif kind == "missing":
            assert columns[name]["missing"] == wanted
        elif kind == "semantic":
            assert columns[name]["semantic_type"] == wanted, columns[name]
        elif kind == "note":
            assert any(wanted in note for note in profile["notes"]), profile["notes"]
        elif kind == "numeric":
            assert all(columns[c]["mean"] is not None for c in wanted), [columns[c] for c in wanted]
        else:
            assert profile[key] == wanted, (key, profile[key])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_messy_data_gets_a_plan_or_one_clear_paragraph(case, store, tmp_path, monkeypatch):
    path = _place(case, tmp_path, monkeypatch)
    before = _counts(store)
    result = _invoke(store, monkeypatch, "plan", str(path), case.goal, "--json", "--user", "corpus")
    if case.error:
        _refused(result, case.error)
        assert _counts(store) == before, "a refused dataset left rows behind"
        return
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["intent"]["task_type"] == case.task, plan["intent"]
    assert plan["pipeline"]["status"] == "ready", plan["pipeline"]["checks"]
    _check(plan["profile"], case.expect)
    assert _counts(store) == (before[0] + 1, before[1] + len(plan["pipeline"]["steps"]))


def test_a_target_the_table_lacks_is_a_question_offering_its_columns(store, tmp_path, monkeypatch):
    """"predict the wingspan" over a table without one: which column is meant is the person's to say, so it is a
    question (exit 5, answerable at the terminal, as JSON or in Airflow), not a dead end; nothing is stored."""
    path = tmp_path / "birds.csv"
    path.write_bytes(_csv(_frame()))
    before = _counts(store)
    result = _invoke(store, monkeypatch, "plan", str(path), "predict the wingspan", "--json", "--user", "corpus")
    assert result.exit_code == 5, result.stdout[-2000:] + result.stderr
    question = json.loads(result.stdout)
    assert question["question"].startswith("The goal reads as asking to predict 'wingspan', but no column is called "
                                           "that.")
    offered = {c["target"] for c in question["candidates"]}
    assert offered and offered <= {"age", "income", "plan", "label"}
    assert _counts(store) == before


UNREADABLE = [c for c in CASES if c.error and c.read]


@pytest.mark.parametrize("case", UNREADABLE, ids=[c.name for c in UNREADABLE])
def test_profile_refuses_an_unreadable_file_with_the_same_paragraph(case, store, tmp_path, monkeypatch):
    path = _place(case, tmp_path, monkeypatch)
    _refused(_invoke(store, monkeypatch, "profile", str(path)), case.error)


CANARY = "CANARY-7f3a"
#: Files refused for what their lines hold, each with the canary in the offending line.
CANARY_FILES = {
    "repeated-names.csv": f"{CANARY},{CANARY},label\n1,2,yes\n3,4,no\n",
    "header-only.csv": f"age,{CANARY},label\n",
    "unclosed-quote.csv": f'age,label\n1,yes\n2,"{CANARY} no\n3,yes\n',
    "ragged.csv": f"age,label\n1,yes\n2,no,{CANARY},{CANARY}\n",
    "broken.jsonl": f'{{"age": 1, "label": "yes"}}\n{{"age": {CANARY}}}\n',
    "broken.json": f'[{{"age": 1, "label": "yes"}}, {{"age": {CANARY}}}]',
}


@pytest.mark.parametrize("name", CANARY_FILES)
@pytest.mark.parametrize("command", ["profile", "plan"])
def test_a_refusal_quotes_nothing_of_the_file(command, name, store, tmp_path, monkeypatch):
    """A refusal names the problem and where (a line, a column's position), never the file's content: the file may
    be anything its reader can open (a link to a system file), and the message may reach a log or another person."""
    path = tmp_path / name
    path.write_text(CANARY_FILES[name])
    result = _invoke(store, monkeypatch, command, str(path), *(["predict the label"] if command == "plan" else []))
    assert result.exit_code == 2, result.stdout[-2000:]
    assert CANARY not in "".join((result.stdout + result.stderr).split()), result.stderr


def test_a_system_file_planned_by_mistake_is_not_quoted(store, tmp_path, monkeypatch):
    """A link named like a table to a file of another kind (an account list, say): its first line is no column
    name, so no message of planning names it."""
    system = tmp_path / "accounts"
    system.write_text(f"{CANARY}:x:0:0::/root:/bin/bash\n" + "".join(f"u{i}:x:{i}:{i}::/home/u{i}:/bin/sh\n"
                                                                      for i in range(1, 60)))
    (tmp_path / "data.csv").symlink_to(system)
    result = _invoke(store, monkeypatch, "plan", str(tmp_path / "data.csv"), "predict the label")
    assert result.exit_code == 2, result.stdout[-2000:]
    assert CANARY not in "".join((result.stdout + result.stderr).split()), result.stderr


def test_names_in_brackets_are_printed_as_written(store, tmp_path, monkeypatch):
    """Column names and paths are text, not terminal markup: '[/b]' used to crash the printing of a plan."""
    path = tmp_path / "[red]accounts[red].csv"
    path.write_bytes(_csv(_frame().rename(columns={"age": "[/b]", "plan": "[bold]plan", "label": "[label]"})))
    profiled = _invoke(store, monkeypatch, "profile", str(path))
    assert profiled.exit_code == 0, profiled.stderr
    printed = profiled.stdout.replace("\n", "")  # long lines wrap at the terminal's width
    assert "[red]accounts[red].csv" in printed and "[/b]" in printed and "[bold]plan" in printed
    planned = _invoke(store, monkeypatch, "plan", str(path), "predict the [label]", "--user", "corpus")
    assert planned.exit_code == 0, planned.stderr
    assert "target [label]" in planned.stdout.replace("\n", "")


def _as_user_without_file_permissions(store: Settings, *args: str) -> subprocess.CompletedProcess:
    """The real entry point; as root, without the capabilities that let root read any file."""
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    env = {**os.environ, "DAGSMITH_DATABASE_URL": store.database_url, "DAGSMITH_HOME": str(store.home),
           "COLUMNS": "200"}
    return subprocess.run([*prefix, str(DAGSMITH), *args], capture_output=True, text=True, timeout=300, env=env,
                          check=False)


@pytest.mark.parametrize("command", ["profile", "plan"])
def test_a_file_without_read_permission_is_refused_as_unreadable(command, store, tmp_path):
    path = tmp_path / "locked.csv"
    path.write_bytes(_csv(_frame()))
    path.chmod(0)
    before = _counts(store)
    args = [command, str(path)] + (["predict the label", "--user", "corpus"] if command == "plan" else [])
    proc = _as_user_without_file_permissions(store, *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert f"'{path}' is not readable" in " ".join(proc.stderr.replace("│", " ").split())
    assert _counts(store) == before


@pytest.mark.parametrize("value", ["lots", "0", "-5", "1.5"])
def test_a_size_limit_that_is_not_a_number_of_bytes_is_named(value, tmp_path):
    path = tmp_path / "data.csv"
    path.write_bytes(_csv(_frame()))
    proc = subprocess.run([str(DAGSMITH), "profile", str(path)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, MAX_BYTES_VARIABLE: value, "COLUMNS": "200"}, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert (f"configuration: {MAX_BYTES_VARIABLE} must be a positive whole number of bytes, not '{value}'"
            in " ".join(proc.stderr.split()))
