"""Add a column computed from a user formula."""
from dagsmith_kit import run_service


def derive(inp, out, params):
    frame = inp.table("data")
    frame[params.get("column", "derived")] = eval(params.get("formula", "0"), {"df": frame})
    out.write_table("data", frame)


if __name__ == "__main__":
    run_service(derive)
