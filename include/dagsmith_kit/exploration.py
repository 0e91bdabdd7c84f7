"""Exploratory findings in numbers and in words: distributions, gaps, correlations, outliers per column, and what
relates to a focus column ("what drives X"), each as a report section, metrics and a part of ``exploration.json``.

Every analysis reads the whole table and says what it found, not only what it computed, so the run's answer can
quote it. Association strengths share one 0-1 scale whatever the column types (Spearman |rho| between numbers, the
correlation ratio eta between a number and categories, Cramér's V between categories), so one ranking holds them all.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dagsmith_kit.bundle import Bundle
from dagsmith_kit.insight import grid_shape, is_numeric, markdown_table, readable_number, save_figure
from dagsmith_kit.service import ServiceError

EXPLORATION_FILE = "exploration.json"
ANALYSES = ("statistics", "distributions", "missingness", "correlations", "outliers", "associations")
#: Rows read by the pairwise analyses; a uniform sample above it keeps wide, long tables to seconds.
PAIR_ROWS = 20_000
#: Columns with more levels than this are identifiers or free text, not categories to compare.
MAX_LEVELS = 50
#: Pairs need this many complete rows before a strength means anything.
MIN_PAIR_ROWS = 10
TOP_PAIRS = 10
#: Extreme values listed per column.
EXTREMES = 5
#: A column that orders every row as the focus does (Spearman), or names its classes one to one (Cramér's V), at least
#: this strongly is the focus itself in other units or under other names (`z_happy` beside `happy`): a copy, named as
#: such rather than as the first thing that goes with it.
SAME = 0.9999


@dataclass(frozen=True)
class Association:
    """How strongly ``column`` goes with the focus column, on a 0-1 scale, and which way in words."""

    column: str
    strength: float
    measure: str
    rows: int
    direction: str | None = None
    same: bool = False  # the focus itself in other units or under other names (``SAME``)


@dataclass(frozen=True)
class ColumnOutliers:
    column: str
    count: int
    share: float
    low: float
    high: float
    extremes: list[tuple[int, float]]  # (row number counted from 1, value), most extreme first


def requested(analyses: Any, focus: str | None) -> list[str]:
    """The analyses to run, in report order: every one when none is named; associations only with a focus."""
    names = ANALYSES if analyses is None else [analyses] if isinstance(analyses, str) else list(analyses)
    unknown = sorted(set(names) - set(ANALYSES))
    if unknown:
        raise ServiceError(f"unknown analyses {', '.join(unknown)}; choose among {', '.join(ANALYSES)}")
    wanted = set(names) | ({"associations"} if focus else set())
    return [name for name in ANALYSES if name in wanted and (name != "associations" or focus)]


def categorical(series: pd.Series) -> bool:
    """Worth comparing by level: not a number, and few enough distinct values to be categories."""
    return not is_numeric(series) and 1 < series.nunique(dropna=True) <= MAX_LEVELS


# ---------------------------------------------------------------- single columns
def shape(series: pd.Series) -> str:
    """The shape of a numeric distribution in words, from its skewness."""
    values = series.dropna().astype("float64")
    if values.nunique() < 3:
        return "two-valued" if values.nunique() == 2 else "constant"
    skew = float(values.skew())
    side = "right" if skew > 0 else "left"
    return ("heavily " + side + "-skewed" if abs(skew) > 2 else side + "-skewed" if abs(skew) > 0.5
            else "roughly symmetric")


def tukey_outliers(values: pd.Series, factor: float = 1.5) -> tuple[float, float, pd.Series]:
    """The Tukey fences (Q1 - k IQR, Q3 + k IQR) of ``values`` and the values outside them."""
    q1, q3 = values.quantile(0.25), values.quantile(0.75)
    low, high = float(q1 - factor * (q3 - q1)), float(q3 + factor * (q3 - q1))
    return low, high, values[(values < low) | (values > high)]


def column_outliers(frame: pd.DataFrame, columns: list[str], factor: float = 1.5) -> list[ColumnOutliers]:
    """Per numeric column, the values outside its Tukey fences and the most extreme of them with their rows;
    columns with none are left out, the rest come most affected first. A column where half the rows or more hold
    one value has no fences (its quartiles meet: every other value would be an outlier) and is left out too."""
    found = []
    for column in columns:
        values = frame[column].dropna().astype("float64")
        if values.nunique() < 3 or values.quantile(0.25) == values.quantile(0.75):
            continue
        low, high, outside = tukey_outliers(values, factor)
        if outside.empty:
            continue
        middle = values.median()
        extremes = outside.reindex((outside - middle).abs().sort_values(ascending=False).index).head(EXTREMES)
        found.append(ColumnOutliers(column, len(outside), len(outside) / len(values), low, high,
                                    [(int(row) + 1, float(value)) for row, value in extremes.items()]))
    return sorted(found, key=lambda c: -c.share)


def column_statistics(series: pd.Series) -> dict[str, float]:
    """Count, gaps, mean, standard deviation (n - 1), extremes and median of a numeric column."""
    values = series.astype("float64")
    return {"count": float(values.count()), "missing": float(values.isna().sum()), "mean": float(values.mean()),
            "std": float(values.std(ddof=1)), "min": float(values.min()), "median": float(values.median()),
            "max": float(values.max())}


# ---------------------------------------------------------------- pairs
def _eta(values: pd.Series, groups: pd.Series) -> float:
    """Correlation ratio: the share of the spread of ``values`` that the groups explain, square-rooted."""
    total = float(((values - values.mean()) ** 2).sum())
    if total == 0:
        return 0.0
    means = values.groupby(groups, observed=True).agg(["mean", "size"])
    between = float((means["size"] * (means["mean"] - values.mean()) ** 2).sum())
    return float(np.sqrt(between / total))


def _cramers_v(a: pd.Series, b: pd.Series) -> float:
    table = pd.crosstab(a, b).to_numpy(dtype="float64")
    if min(table.shape) < 2:
        return 0.0
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    chi2 = float(((table - expected) ** 2 / expected).sum())
    return float(np.sqrt(chi2 / (table.sum() * (min(table.shape) - 1))))


def _by_level(column: str, values: pd.Series, groups: pd.Series, measured: str, grouped: str, rows: int) -> Association:
    """A number against categories: the correlation ratio, and the levels where the number is highest and lowest."""
    values, groups = values.astype("float64"), groups.astype(str)
    means = values.groupby(groups, observed=True).mean().sort_values()
    return Association(column, _eta(values, groups), "correlation ratio eta", rows,
                       f"{measured} is highest where {grouped} is '{means.index[-1]}' "
                       f"({readable_number(means.iloc[-1])} "
                       f"on average) and lowest where it is '{means.index[0]}' ({readable_number(means.iloc[0])})")


def associate(frame: pd.DataFrame, focus: str, column: str) -> Association | None:
    """How ``column`` goes with ``focus``, or None when the pair cannot be compared (too few rows, an identifier or
    free text on either side, a constant)."""
    pair = frame[[column, focus]].dropna()
    x, y = pair[column], pair[focus]
    if len(pair) < MIN_PAIR_ROWS or x.nunique() < 2 or y.nunique() < 2:
        return None
    if is_numeric(x) and is_numeric(y):
        rho = float(x.astype("float64").corr(y.astype("float64"), method="spearman"))
        if not np.isfinite(rho):
            return None
        if abs(rho) >= SAME:
            return Association(column, abs(rho), "Spearman |rho|", len(pair),
                               f"{column} orders every row {'as' if rho > 0 else 'against'} {focus}: {focus} itself "
                               "in other units, not something that goes with it", same=True)
        way = "higher" if rho > 0 else "lower"
        return Association(column, abs(rho), "Spearman |rho|", len(pair),
                           f"higher {column} goes with {way} {focus}")
    if is_numeric(y) and categorical(x):
        return _by_level(column, y, x, focus, column, len(pair))
    if is_numeric(x) and categorical(y):
        return _by_level(column, x, y, column, focus, len(pair))
    if categorical(x) and categorical(y):
        v = _cramers_v(x.astype(str), y.astype(str))
        if v >= SAME:
            return Association(column, v, "Cramér's V", len(pair), f"each class of {column} is one class of {focus}: "
                               f"{focus} itself under other names, not something that goes with it", same=True)
        return Association(column, v, "Cramér's V", len(pair),
                           _most_common_with(x.astype(str), y.astype(str), focus, column))
    return None


def _most_common_with(x: pd.Series, y: pd.Series, focus: str, column: str) -> str:
    """For two categorical columns: the level of ``column`` where the focus's rarer value is most frequent."""
    rare = y.value_counts().index[-1]
    rates = (y == rare).groupby(x).mean().sort_values()
    return (f"{focus} is '{rare}' most often when {column} is '{rates.index[-1]}' ({rates.iloc[-1]:.0%}, against "
            f"{(y == rare).mean():.0%} overall)")


def associations(frame: pd.DataFrame, focus: str, columns: list[str]) -> list[Association]:
    """Every other column's association with ``focus``, strongest first."""
    if focus not in frame.columns:
        raise ServiceError(f"there is no column '{focus}' to relate the others to; the columns are "
                           f"{', '.join(map(str, frame.columns[:25]))}")
    found = (associate(frame, focus, column) for column in columns if column != focus)
    return sorted((a for a in found if a is not None), key=lambda a: -a.strength)


def strongest_pairs(numeric: pd.DataFrame, method: str, top_n: int = TOP_PAIRS) -> tuple[pd.DataFrame, pd.Series]:
    """The correlation matrix of the non-constant numeric columns and its ``top_n`` strongest pairs."""
    numeric = numeric.loc[:, numeric.std() > 0]
    if numeric.shape[1] < 2:
        raise ServiceError("correlation needs at least two numeric, non-constant columns")
    matrix = numeric.corr(method=method)
    upper = matrix.where(np.triu(np.ones(matrix.shape, dtype=bool), k=1)).stack().dropna()
    return matrix, upper.reindex(upper.abs().sort_values(ascending=False).index).head(top_n)


def correlation_heatmap(out: Bundle, matrix: pd.DataFrame, name: str, title: str) -> None:
    import matplotlib.pyplot as plt

    size = min(4 + 0.35 * len(matrix), 20)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    image = ax.imshow(matrix.to_numpy(), cmap="coolwarm", vmin=-1, vmax=1)
    ax.set_xticks(range(len(matrix)), matrix.columns, rotation=90, fontsize=7)
    ax.set_yticks(range(len(matrix)), matrix.columns, fontsize=7)
    ax.set_title(title)
    fig.colorbar(image, ax=ax, shrink=0.8)
    save_figure(out, fig, name)


def distribution_grid(out: Bundle, frame: pd.DataFrame, columns: list[str], *, bins: int = 30,
                      max_categories: int = 12, name: str = "distributions.png") -> None:
    """One PNG: a histogram per numeric column, a bar chart of the most frequent values per other column."""
    import matplotlib.pyplot as plt

    rows, cols = grid_shape(len(columns))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, column in zip(axes.flat, columns):
        series = frame[column].dropna()
        if is_numeric(series):
            ax.hist(series.astype("float64"), bins=bins, color="steelblue", edgecolor="white")
        else:
            counts = series.astype(str).value_counts().head(max_categories)
            ax.bar(np.arange(len(counts)), counts.to_numpy(), color="darkorange")
            ax.set_xticks(np.arange(len(counts)), counts.index, rotation=45, ha="right", fontsize=7)
        ax.set_title(str(column), fontsize=9)
    for ax in list(axes.flat)[len(columns):]:
        ax.set_visible(False)
    save_figure(out, fig, name)


# ---------------------------------------------------------------- writing the findings
def write_exploration(out: Bundle, frame: pd.DataFrame, columns: list[str], analyses: list[str],
                      focus: str | None = None, *, method: str = "spearman", outlier_factor: float = 1.5,
                      max_plotted: int = 16) -> dict[str, Any]:
    """Run ``analyses`` on ``columns`` of ``frame`` and write each as a report section, metrics and a part of
    ``exploration.json``; returns that document."""
    if frame.empty or not columns:
        raise ServiceError("the table has no rows or no columns to explore")
    pairs = frame if len(frame) <= PAIR_ROWS else frame.sample(n=PAIR_ROWS, random_state=0)
    numeric = [c for c in columns if is_numeric(frame[c])]
    document: dict[str, Any] = {"rows": len(frame), "columns": len(columns), "focus": focus}
    writers = {
        "statistics": lambda: _statistics(out, frame, columns, numeric),
        "distributions": lambda: _distributions(out, frame, columns, numeric, max_plotted),
        "missingness": lambda: _missingness(out, frame, columns),
        "correlations": lambda: _correlations(out, pairs, numeric, method, focus),
        "outliers": lambda: _outliers(out, frame, [c for c in numeric if c != focus] or numeric, outlier_factor),
        "associations": lambda: _associations(out, pairs, focus, columns),
    }
    for name in analyses:
        document[name] = writers[name]()
    (out.path / EXPLORATION_FILE).write_text(json.dumps(document, indent=2, default=str), encoding="utf-8")
    return document


def read_exploration(bundle_path: str | Path) -> dict | None:
    """``exploration.json`` of a bundle folder, or None when the bundle holds none."""
    file = Path(bundle_path) / EXPLORATION_FILE
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else None


def _statistics(out: Bundle, frame: pd.DataFrame, columns: list[str], numeric: list[str]) -> dict[str, Any]:
    figures = {c: column_statistics(frame[c]) for c in numeric}
    rows = [[c, *(figures[c][name] for name in ("mean", "median", "std", "min", "max"))] for c in numeric]
    others = [[c, int(frame[c].nunique()), str(frame[c].mode().iloc[0]) if frame[c].notna().any() else ""]
              for c in columns if c not in numeric]
    repeated = int(frame[columns].duplicated().sum())
    out.write_metrics({"stat.rows": len(frame), "stat.columns": len(columns), "stat.duplicate_rows": repeated}
                      | _statistic_metrics(figures))
    out.append_report(
        f"## Statistics\n\n{len(frame):,} rows, {len(columns)} columns ({len(numeric)} numeric)"
        + (f"; {repeated:,} rows repeat an earlier one exactly" if repeated else "") + ".\n\n"
        + (markdown_table(["column", "mean", "median", "std", "min", "max"], rows) + "\n\n" if rows else "")
        + (markdown_table(["column", "distinct values", "most frequent"], others) if others else ""))
    return {"numeric": len(numeric), "duplicate_rows": repeated}


def _statistic_metrics(figures: dict[str, dict[str, float]]) -> dict[str, float]:
    return {f"stat.{c}.{name}": value for c, stats in figures.items() for name, value in stats.items()}


def _distributions(out: Bundle, frame: pd.DataFrame, columns: list[str], numeric: list[str],
                   max_plotted: int) -> dict[str, str]:
    """Each column's shape in words and a plot; numbers are also summarised by their range, centre and spread."""
    shapes = {c: shape(frame[c]) for c in numeric}
    figures = {c: column_statistics(frame[c]) for c in numeric}
    out.write_metrics(_statistic_metrics(figures))
    rows = [[c, *(figures[c][name] for name in ("min", "median", "max", "mean", "std")), shapes[c]] for c in numeric]
    plotted = [c for c in columns if frame[c].notna().any()][:max_plotted]
    if plotted:
        distribution_grid(out, frame, plotted)
    skewed = [f"{c} ({s})" for c, s in shapes.items() if "skewed" in s]
    out.append_report("## Distributions\n\n"
                      + (f"Skewed: {', '.join(skewed)}; a log or rank transform suits these before linear models. "
                         if skewed else "No numeric column is markedly skewed. ")
                      + (markdown_table(["column", "min", "median", "max", "mean", "std", "shape"], rows) + "\n\n"
                         if rows else "")
                      + (f"Plotted: {len(plotted)} of {len(columns)} columns.\n\n"
                         "![distributions](artifacts/distributions.png)" if plotted else ""))
    return shapes


def _missingness(out: Bundle, frame: pd.DataFrame, columns: list[str]) -> dict[str, Any]:
    share = frame[columns].isna().mean().sort_values(ascending=False)
    gaps = share[share > 0]
    incomplete = float(frame[columns].isna().any(axis=1).mean())
    out.write_metrics({f"missing.{c}": float(v) for c, v in gaps.items()} | {"missing.rows_incomplete": incomplete})
    out.append_report("## Missing values\n\n" + (
        f"{len(gaps)} of {len(columns)} columns have gaps; {incomplete:.1%} of the rows miss at least one value.\n\n"
        + markdown_table(["column", "missing share"], [[c, f"{v:.1%}"] for c, v in gaps.items()])
        if len(gaps) else "No value is missing."))
    return {"columns": {c: float(v) for c, v in gaps.items()}, "rows_incomplete": incomplete}


def _correlations(out: Bundle, frame: pd.DataFrame, numeric: list[str], method: str,
                  focus: str | None) -> list[dict[str, Any]]:
    if len([c for c in numeric if frame[c].std() > 0]) < 2:
        out.append_report("## Correlations\n\nFewer than two numeric columns vary: there is nothing to correlate.")
        return []
    matrix, top = strongest_pairs(frame[numeric].astype("float64"), method)
    if focus in matrix.columns:
        with_focus = matrix[focus].drop(focus)
        top = with_focus.reindex(with_focus.abs().sort_values(ascending=False).index).head(TOP_PAIRS)
        top.index = pd.MultiIndex.from_tuples([(focus, c) for c in top.index])
    pairs = [{"a": a, "b": b, "value": float(v)} for (a, b), v in top.items()]
    out.write_metrics({f"corr.{p['a']}.{p['b']}": p["value"] for p in pairs})
    correlation_heatmap(out, matrix, f"correlation_{method}.png", f"{method.title()} correlation")
    heading = f"with {focus}" if focus in matrix.columns else "strongest pairs by absolute value"
    out.append_report(f"## {method.title()} correlations ({heading})\n\n"
                      + markdown_table(["column", "column", "correlation"],
                                       [[p["a"], p["b"], p["value"]] for p in pairs])
                      + f"\n\n![correlation heatmap](artifacts/correlation_{method}.png)")
    return pairs


def _outliers(out: Bundle, frame: pd.DataFrame, numeric: list[str], factor: float) -> list[dict[str, Any]]:
    found = column_outliers(frame, numeric, factor)
    out.write_metrics({f"outliers.{c.column}.iqr": c.count for c in found}
                      | {"outliers.total": sum(c.count for c in found)})
    rows = [[c.column, c.count, f"{c.share:.1%}", f"{readable_number(c.low)} to {readable_number(c.high)}",
             ", ".join(f"{readable_number(v)} (row {r})" for r, v in c.extremes)] for c in found]
    out.append_report(f"## Outliers per column\n\nValues outside the Tukey fences (quartiles ± {factor:g} × IQR) of "
                      f"each numeric column.\n\n"
                      + (markdown_table(["column", "outliers", "share", "usual range", "most extreme"], rows)
                         if rows else "No numeric column has values outside its fences."))
    return [asdict(c) for c in found]


def _associations(out: Bundle, frame: pd.DataFrame, focus: str, columns: list[str]) -> list[dict[str, Any]]:
    import matplotlib.pyplot as plt

    ranked = associations(frame, focus, columns)
    out.write_metrics({f"association.{a.column}": a.strength for a in ranked})
    if ranked:
        shown = ranked[:15][::-1]
        fig, ax = plt.subplots(figsize=(7, 0.35 * len(shown) + 1.5))
        ax.barh([a.column for a in shown], [a.strength for a in shown], color="seagreen")
        ax.set_xlim(0, 1)
        ax.set_xlabel("strength of association (0-1)")
        ax.set_title(f"What goes with {focus}")
        save_figure(out, fig, "associations.png")
    lines = [f"{i}. **{a.column}**: {a.measure} {a.strength:.2f}" + (f"; {a.direction}" if a.direction else "")
             for i, a in enumerate(ranked, 1)]
    out.append_report(f"## What goes with {focus}\n\nEvery column ranked by the strength of its association with "
                      f"{focus} (0 none, 1 complete). Association is not cause: a column can move with {focus} "
                      "because both follow a third.\n\n"
                      + ("\n".join(lines) + "\n\n![associations](artifacts/associations.png)" if lines
                         else f"No column could be compared with {focus}."))
    return [asdict(a) for a in ranked]
