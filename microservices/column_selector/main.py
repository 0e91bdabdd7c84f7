"""Keep only the columns named in ``keep``, or remove the columns named in ``drop`` (give exactly one), in
every table. The target and id columns always stay: ``keep`` adds them, ``drop`` refuses to remove them.
Names that are not columns of the table are refused, so a typo never silently keeps or drops the wrong data.
"""

from dagsmith_kit import ServiceError, run_service, transform_tables


def select_columns(inp, out, params):
    keep = params.get("keep", None)
    drop = params.get("drop", None)
    if (keep is None) == (drop is None):
        raise ServiceError("give exactly one of 'keep' or 'drop', a list of column names")
    names = [keep] if isinstance(keep, str) else [drop] if isinstance(drop, str) else keep or drop
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ServiceError("'keep' or 'drop' must be a non-empty list of column names")
    protected = [c for c in (inp.target, *inp.id_columns) if c]

    def fit(train):
        unknown = [n for n in names if n not in train.columns]
        if unknown:
            raise ServiceError(f"unknown column(s): {', '.join(unknown)}; the table has: "
                               f"{', '.join(map(str, train.columns[:30]))}")
        if drop is not None:
            refused = [n for n in names if n in protected]
            if refused:
                raise ServiceError(f"cannot drop {', '.join(refused)}: the target and id columns are always kept")
            return [c for c in train.columns if c not in set(names)]
        return [c for c in train.columns if c in set(names) | set(protected)]

    kept = transform_tables(inp, out, fit, lambda frame, columns: frame.filter(items=columns))
    removed = [c for c in inp.fit_table().columns if c not in kept]
    out.write_metrics({"columns_kept": len(kept), "columns_removed": len(removed)})
    out.append_report(f"## Column selection\n\nKept {len(kept)} columns, removed {len(removed)}: "
                      f"{', '.join(removed) or 'none'}.")


if __name__ == "__main__":
    run_service(select_columns)
