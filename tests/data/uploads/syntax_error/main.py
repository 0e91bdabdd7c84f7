"""Drop rows where every value is missing."""
from dagsmith_kit import run_service

def clean(inp, out, params)
    out.write_table("data", inp.table("data").dropna(how="all"))

run_service(clean)
