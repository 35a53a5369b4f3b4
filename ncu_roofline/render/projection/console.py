"""Terminal and Markdown views of a projection: one line per (kernel group, target) and the run per target."""

from __future__ import annotations

import pandas as pd
from rich.table import Table

from ...core.kernel_labels import display_name, distinct_labels
from ...core.vocabulary import (
    AT_FLOOR,
    BOUND_SOURCE,
    BOUND_TARGET,
    SOL_COMPLETE,
    SOL_COMPLETE_TARGET,
    SPEEDUP_HIGH,
    SPEEDUP_LOW,
    TARGET,
    TIME_AT_ROOF,
    TIME_SAME_EFFICIENCY,
    TIME_UNPROJECTED,
    counted,
    display,
)
from ..text.fit import Col, fit_table
from ..chart.gpu_roof_labels import short_gpu_names
from ..text.numbers import cell, format_si, lower_bound, missing, unproven
from ..text.safe_text import for_terminal

# The rank, the kernel, its GPU and the two projected times are kept; the rest give way (render/fit.py).
PROJECTION_COLUMNS = (Col("#"), Col("kernel", "left"), Col("GPU", "left"), Col("now", drop=3),
                      Col("at roof", legend="at roof: the measured work at the target's roof (a lower bound)"),
                      Col("same eff", legend="same eff: at the roofline fraction measured now"),
                      Col("bound", "left", drop=2, legend="bound: now → on the target"),
                      Col("speedup", drop=1))
INCOMPLETE = ("≥ at roof, ? bound: the speed of light lacks terms that were not counted (terms_lacking), "
              "so projected times are lower bounds")


def bound_change(row) -> str:
    """'dram → l2', with '?' on a bound an uncounted term may beat and '(floor)' where the launch floor sets it."""
    source = "—" if missing(getattr(row, BOUND_SOURCE)) else unproven(display(str(getattr(row, BOUND_SOURCE))),
                                                                       getattr(row, SOL_COMPLETE))
    if missing(getattr(row, BOUND_TARGET)):
        return f"{source} → —"
    target = unproven(display(str(getattr(row, BOUND_TARGET))), getattr(row, SOL_COMPLETE_TARGET))
    return f"{source} → {target}{' (floor)' if bool(getattr(row, AT_FLOOR)) else ''}"


def speedup_range(low: float, high: float) -> str:
    """'1.77–3.58×' (the two models' speedups, lowest first); '—' where either is unknown."""
    if missing(low) or missing(high):
        return "—"
    low, high = sorted((float(low), float(high)))
    return f"{low:.3g}×" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g}–{high:.3g}×"


def _rows(kernels: pd.DataFrame, short: dict[str, str]) -> list[list[str]]:
    rows = []
    for row in kernels.itertuples(index=False):
        done = getattr(row, SOL_COMPLETE_TARGET)
        at_roof, same = getattr(row, TIME_AT_ROOF), getattr(row, TIME_SAME_EFFICIENCY)
        rows.append([str(row.rank), str(row.kernel_name), for_terminal(short.get(row.target, row.target)),
                     format_si(row.time_s, "s"), lower_bound(format_si(at_roof, "s"), done),
                     format_si(same, "s") + ("?" if not done and not missing(same) else ""),
                     bound_change(row),
                     speedup_range(row.time_s / same if same else None, row.time_s / at_roof if at_roof else None)])
    return rows


def projection_table(kernels: pd.DataFrame, *, top: int = 10, width: int = 120, wide: bool = False,
                     title: str = "") -> Table:
    """The first `top` kernel groups (in the analysis' rank order) on every target, fitted to `width` columns."""
    ranks = list(dict.fromkeys(kernels["rank"]))[:top]
    shown = kernels[kernels["rank"].isin(ranks)]
    short = short_gpu_names(list(dict.fromkeys(shown[TARGET])))
    rows = _rows(shown, short)
    full = [display_name(r[1]) for r in rows]
    grids, blocks = shown["grid"].astype("string").tolist(), shown["block"].astype("string").tolist()

    def names(max_len: int) -> list[str]:
        return [for_terminal(n) for n in distinct_labels(full, grids, blocks, max_len)]

    incomplete = not shown[SOL_COMPLETE_TARGET].astype(bool).all()
    return fit_table(PROJECTION_COLUMNS, rows, width, title=title or None, name_index=1, names=names,
                     footer=INCOMPLETE if incomplete else "", wide=wide,
                     hint="`--wide` prints every column; `--json -` every number").table


def run_lines(runs: pd.DataFrame) -> list[str]:
    """One sentence per target: the run's GPU time now and projected, the speedup range, what was left out."""
    lines = []
    for row in runs.itertuples(index=False):
        if row.kernels_projected == 0:
            lines.append(f"{row.target}: nothing projected ({row.status}).")
            continue
        bound = "" if bool(getattr(row, SOL_COMPLETE)) else " (lower bounds: uncounted terms)"
        times = sorted((getattr(row, TIME_AT_ROOF), getattr(row, TIME_SAME_EFFICIENCY)))
        text = (f"{row.target}: GPU time {format_si(row.time_s, 's')} → {format_si(times[0], 's')}–"
                f"{format_si(times[1], 's')}{bound}, speedup "
                f"{speedup_range(getattr(row, SPEEDUP_LOW), getattr(row, SPEEDUP_HIGH))} "
                f"over {counted(int(row.kernels_projected), 'kernel')}")
        if getattr(row, TIME_UNPROJECTED) > 0:
            text += f"; {format_si(getattr(row, TIME_UNPROJECTED), 's')} not projected"
        lines.append(text + ".")
    return lines


def status_lines(kernels: pd.DataFrame, *, top: int = 10) -> list[str]:
    """'status of #1 on H200: ...' for every shown row whose projection says something."""
    ranks = list(dict.fromkeys(kernels["rank"]))[:top]
    shown = kernels[kernels["rank"].isin(ranks) & (kernels["status"] != "ok")]
    by_text: dict[tuple[str, str], list[str]] = {}
    for row in shown.itertuples(index=False):
        by_text.setdefault((row.status, row.target), []).append(f"#{row.rank}")
    return [f"status of {', '.join(ranks)} on {target}: {status}" for (status, target), ranks in by_text.items()]


def projection_markdown(kernels: pd.DataFrame, runs: pd.DataFrame, *, source_gpu: str, inputs: list[str],
                        assumptions: tuple[str, ...], top: int = 10) -> str:
    """The Markdown summary (`--summary-md`): the run per target, the kernels' table, the assumptions."""
    lines = [f"## Projection of {cell(', '.join(inputs))} ({cell(source_gpu)}) onto "
             f"{cell(', '.join(runs[TARGET]))}", ""]
    lines += [f"- {cell(text)}" for text in run_lines(runs)]
    lines += ["", "| # | kernel | GPU | now | at roof | same efficiency | bound | speedup |",
              "|---:|---|---|---:|---:|---:|---|---:|"]
    ranks = list(dict.fromkeys(kernels["rank"]))[:top]
    shown = kernels[kernels["rank"].isin(ranks)]
    names = distinct_labels([display_name(str(n)) for n in shown["kernel_name"]],
                            shown["grid"].astype("string").tolist(), shown["block"].astype("string").tolist(), 60)
    for name, cells in zip(names, _rows(shown, {})):
        lines.append(f"| {cells[0]} | `{cell(name)}` | {cell(cells[2])} | {' | '.join(cell(c) for c in cells[3:])} |")
    notes = status_lines(kernels, top=top)
    if notes:
        lines += [""] + [f"- {cell(n)}" for n in notes]
    lines += ["", "Assumptions (a model, not a measurement; docs/projection.md):", ""]
    lines += [f"- {cell(a)}" for a in assumptions]
    return "\n".join(lines) + "\n"
