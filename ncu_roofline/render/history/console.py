"""The terminal view of a history: the kernels that moved most (with a sparkline of their time), then the gates.

Takes plain tables (the summary and the per-kernel series) and a metadata dict; knows nothing of the dataset.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ...core.kernel_labels import kernel_labels
from ...core.kernel_names import short_kernel_name
from ...pipeline.gates import GateResult
from ..text.changes import short_dims, signed_points, signed_value, value_text
from ..text.console import print_table
from ..text.fit import Col, fit_table
from ..text.numbers import format_si as fmt_si
from ..text.numbers import incomplete, missing, signed_pct, unproven
from ..text.safe_text import for_terminal

SPARKS = "▁▂▃▄▅▆▇█"
SPARK_RUNS = 30  # the newest runs drawn in a sparkline: a table cell, not a chart


def sparkline(values: np.ndarray, scale: tuple[float, float] | None = None) -> str:
    """One character per run, a space where the kernel was absent. With `scale` (from `spark_scale`) each value is
    drawn as its ratio to the series' median on the table's one scale, so ±1 % jitter stays low beside a 14 % drop;
    without, between the series' own min and max."""
    known = values[~np.isnan(values)]
    if not len(known):
        return ""
    if scale is not None:
        values, (low, high) = values / float(np.median(known)), scale
    else:
        low, high = float(known.min()), float(known.max())
    span = high - low
    return "".join(" " if math.isnan(v) else SPARKS[0 if span <= 0 else max(0, min(len(SPARKS) - 1, int(
        (v - low) / span * (len(SPARKS) - 1) + 0.5)))] for v in values)


def newest_bound_text(row) -> str:
    """'dram', 'fp32 → dram?': the first and newest bound, the newest unproven where that run's speed of light
    lacks terms (`sol_complete_newest` false)."""
    first, last = ("—" if pd.isna(v) else str(v) for v in (row.bound_first, row.bound_newest))
    newest = unproven(last, _newest_complete(row))
    return newest if first == last else f"{first} → {newest}"


def newest_points_text(row) -> str:
    """Δ of roof in points, '?' where the newest fraction is only a lower bound."""
    text = signed_points(row.roofline_fraction_change)
    return text + "?" if incomplete(_newest_complete(row)) and text != "—" else text


def _newest_complete(row) -> object:
    value = getattr(row, "sol_complete_newest", None)
    return None if value is None or pd.isna(value) else bool(value)


def spark_scale(series: list[np.ndarray]) -> tuple[float, float]:
    """The table's one sparkline scale: the lowest and highest ratio of a value to its series' median."""
    ratios = [v[~np.isnan(v)] / np.median(v[~np.isnan(v)]) for v in series if (~np.isnan(v)).any()]
    if not ratios:
        return 1.0, 1.0
    joined = np.concatenate(ratios)
    joined = joined[np.isfinite(joined)]
    return (float(joined.min()), float(joined.max())) if len(joined) else (1.0, 1.0)


def spark_legend(scale: tuple[float, float]) -> str:
    """'one scale: -14.0% … +1.0% of each kernel's median'."""
    low, high = scale
    return f"one scale: {signed_pct(100 * (low - 1))} … {signed_pct(100 * (high - 1))} of each kernel's median"


def spark_values(summary: pd.DataFrame, time_wide: pd.DataFrame, top: int) -> list[np.ndarray]:
    """The last SPARK_RUNS times of each listed kernel (empty where it has none)."""
    return [time_wide.loc[row.series_id].to_numpy(dtype="float64")[-SPARK_RUNS:] if row.series_id in time_wide.index
            else np.array([]) for row in summary.head(top).itertuples(index=False)]


def history_table(summary: pd.DataFrame, time_wide: pd.DataFrame, *, runs: int, top: int = 10,
                  title: str = "", width: int = 120, wide: bool = False) -> Table:
    """`summary` rows (largest time change first), `time_wide` (series × run index) for the sparklines, in
    `width` columns: the rank, a distinct name and Δ time (the sort key, in %) are kept, the others give way."""
    spark_title = f"time ({runs} runs)" if runs <= SPARK_RUNS else f"time (last {SPARK_RUNS} of {runs} runs)"
    series = spark_values(summary, time_wide, top)
    scale = spark_scale(series)
    columns = (Col("#"), Col("kernel", "left"), Col("Δ time", legend="Δ time: newest against the median before"),
               Col("newest", drop=6), Col("median before", drop=3),
               Col(spark_title, "left", drop=5, legend=f"{spark_title}: {spark_legend(scale)}"),
               Col("Δ of roof", drop=4), Col("bound", "left", drop=2), Col("runs", drop=1))
    rows = []
    for rank, (row, values) in enumerate(zip(summary.head(top).itertuples(index=False), series), start=1):
        rows.append([str(rank), "", signed_pct(row.time_s_change_pct), fmt_si(row.time_s_newest, "s"),
                     fmt_si(row.time_s_median_before, "s"), sparkline(values, scale),
                     newest_points_text(row), newest_bound_text(row),
                     str(row.runs)])

    def names(max_len: int) -> list[str]:  # one name per kernel at every width, in history.html too
        return [for_terminal(n) for n in summary_labels(summary, max_len)[:top]]

    return fit_table(columns, rows, width, title=escape(for_terminal(title)), name_index=1, names=names, wide=wide,
                     hint="`--wide` prints every column; `-o DIR` writes them all to history.parquet").table


def summary_labels(summary: pd.DataFrame, max_len: int | None = None) -> list[str]:
    """The one label of each kernel of a history summary (core.kernel_labels) over all its rows: the terminal
    and history.html print the same name."""
    from ...core.kernel_labels import LABEL_LEN, display_name

    return kernel_labels([display_name(str(n)) for n in summary["kernel_name"].fillna("")],
                         [short_dims(g) for g in summary["grid"]], [short_dims(b) for b in summary["block"]],
                         max_len or LABEL_LEN)


def summary_identities(summary: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    """(kernel_name, grid, block) -> the table's label, for a failing gate to name its kernels as the table does."""
    return {(str(n), str(g), str(b)): label for n, g, b, label in
            zip(summary["kernel_name"], summary["grid"], summary["block"], summary_labels(summary))}


def gate_line(result: GateResult, labels: dict | None = None) -> str:
    """One rich-markup line: PASS/FAIL, the gate, and the failing kernels with their distance outside the band
    (`labels`, `summary_identities`: named as the table names them)."""
    gate = result.gate
    mark = "[green]PASS[/]" if result.passed else "[bold red]FAIL[/]"
    scope = "totals" if gate.scope == "total" else f"{result.checked} kernels checked"
    detail = ""
    if result.failures:
        parts = []
        for f in result.failures[:3]:
            known = (labels or {}).get((str(f.get("kernel_name")), str(f.get("grid")), str(f.get("block"))))
            name = "total" if gate.scope == "total" else for_terminal(known or short_kernel_name(str(f["kernel_name"])))
            parts.append(f"{name} {for_terminal(failure_text(gate, f))}")
        detail = ": " + "; ".join(parts) + (f" and {len(result.failures) - 3} more" if len(result.failures) > 3
                                            else "")
    return f"{mark} {escape(for_terminal(gate.text))} ({scope}){escape(detail)}"


def failure_text(gate, failure: dict, quote: str = "") -> str:
    """'+77.8% above the band 1.96 ms – 1.96 ms of 5 runs, in run6 (the newest)': how far outside the band, in
    the formatter's units, and since which run (named as given; `quote` wraps the names, "`" in Markdown)."""
    moved = signed_pct(failure["change_pct"]) if gate.relative else signed_value(gate.metric, failure["change"])
    change = failure["change"]
    side = "outside" if change is None or pd.isna(change) else "above" if change > 0 else "below"
    band = f"{value_text(gate.metric, failure['band_low'])} – {value_text(gate.metric, failure['band_high'])}"
    return (f"{moved} {side} the band {band} of {failure['window_runs']} runs, "
            f"{since_text(failure['since_run_id'], failure['newest_run_id'], quote)}")


def since_text(since: object, newest: object, quote: str = "") -> str:
    """'in run6 (the newest)', 'since run r4' / 'since run6': a run id that already reads as a run ('run6',
    'Run-12') is not called 'run run6'."""
    def name(run_id: object) -> str:
        text = f"{quote}{run_id}{quote}"
        return text if str(run_id).lower().startswith("run") else f"run {text}"

    if since is None or since == newest:
        return f"in {name(newest)} (the newest)"
    return f"since {name(since)}"


def print_history(summary: pd.DataFrame, time_wide: pd.DataFrame, gates: list[GateResult], *, runs: int,
                  newest_run_id: str | None, top: int = 10, console: Console | None = None,
                  wide: bool = False) -> None:
    console = console or Console(emoji=False)
    if top:
        shown = min(top, len(summary))
        print_table(console, history_table(
            summary, time_wide, runs=runs, top=top, width=console.width, wide=wide,
            title=f"{len(summary)} kernels over {runs} runs (newest {newest_run_id}) — "
                  f"top {shown} by time change against the median of earlier runs"), wide=wide)
    labels = summary_identities(summary) if gates else {}
    for result in gates:
        console.print(gate_line(result, labels), highlight=False, soft_wrap=True)
    if gates:
        console.print("[bold red]gates failed[/]" if any(not r.passed for r in gates) else "[green]all gates passed[/]",
                      highlight=False)


def print_frame(frame: pd.DataFrame, *, console: Console | None = None, max_rows: int = 1000) -> None:
    """Any result table (`--sql`) as a rich table: nulls as "—", at most `max_rows` rows."""
    console = console or Console(emoji=False)
    table = Table(header_style="bold")
    for column in frame.columns:
        table.add_column(Text(for_terminal(column)), no_wrap=True)
    for row in frame.head(max_rows).itertuples(index=False):
        table.add_row(*(Text("—" if missing(v) else for_terminal(v)) for v in row))
    console.print(table)
    if len(frame) > max_rows:
        console.print(f"({len(frame) - max_rows} more rows not shown)", highlight=False)
