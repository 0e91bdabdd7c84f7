"""Drop exact duplicate rows from every table (optionally judged on a subset of columns)."""

from dagsmith_kit import ServiceError, run_service


def deduplicate(inp, out, params):
    subset = params.get("subset", None)
    keep = params.get("keep", "first")
    if keep not in ("first", "last", "none"):
        raise ServiceError(f"keep must be 'first', 'last' or 'none', got {keep!r}")
    if isinstance(subset, str):
        subset = [subset]
    removed = {}
    for name, frame in inp.tables().items():
        missing = sorted(set(subset or []) - set(frame.columns))
        if missing:
            raise ServiceError(f"subset names columns the '{name}' table does not have: {', '.join(missing)}")
        kept = frame.drop_duplicates(subset=subset, keep=False if keep == "none" else keep)
        removed[name] = len(frame) - len(kept)
        out.write_table(name, kept.reset_index(drop=True))
    out.write_metrics({f"duplicates_removed_{name}": count for name, count in removed.items()})
    summary = ", ".join(f"{name}: {count} duplicate rows removed" for name, count in removed.items())
    out.append_report("## Deduplication\n\n" + summary)


if __name__ == "__main__":
    run_service(deduplicate)
