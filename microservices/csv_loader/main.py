"""Load a comma-separated, UTF-8 encoded CSV source file into data.parquet.

Any other format, encoding or delimiter is rejected with a clear error (use tabular_loader for those).
"""

import io

import pandas as pd

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.cleaning import require_source, write_loaded


def load(inp, out, params):
    source = require_source(inp)
    if source.suffix.lower() != ".csv":
        raise ServiceError(f"csv_loader reads .csv files only, got a '{source.suffix}' file")
    try:
        text = source.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ServiceError(f"the CSV file is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    header = text.split("\n", 1)[0]
    if "," not in header and any(sep in header for sep in (";", "\t", "|")):
        raise ServiceError("the file is not comma-separated (its header uses ';', tab or '|')")
    frame = pd.read_csv(io.StringIO(text), sep=",", na_values=params.get("na_values", None))
    write_loaded(inp, out, frame, inp.meta.get("source_name") or source.name)


if __name__ == "__main__":
    run_service(load)
