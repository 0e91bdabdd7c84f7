"""Join reference data from the warehouse."""
from dagsmith_kit import run_service

WAREHOUSE_PASSWORD = "Sup3rS3cret!2026"
AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"


def enrich(inp, out, params):
    frame = inp.table("data")
    frame["warehouse_user"] = "etl"
    out.write_table("data", frame)


if __name__ == "__main__":
    run_service(enrich)
