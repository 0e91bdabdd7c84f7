"""Filter rows through an in-memory SQLite query."""
import sqlite3

from dagsmith_kit import run_service


def filter_rows(inp, out, params):
    connection = sqlite3.connect(":memory:")
    inp.table("data").to_sql("data", connection)
    query = "SELECT * FROM data WHERE %s" % params.get("condition", "1=1")
    import pandas as pd
    out.write_table("data", pd.read_sql(query, connection))


if __name__ == "__main__":
    run_service(filter_rows)
