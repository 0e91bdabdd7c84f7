"""Save the table as CSV under the file name the user chooses."""
import os

from dagsmith_kit import run_service


def export(inp, out, params):
    target = os.path.join(str(out.path), params.get("filename", "export.csv"))
    inp.table("data").to_csv(target, index=False)


if __name__ == "__main__":
    run_service(export)
