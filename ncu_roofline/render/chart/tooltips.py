"""What a point's or bar's tooltip says: every number a reviewer asks for, formatted with its unit.

Shape (grid × block, "—" when the capture did not record it), FLOPs per precision, bytes per level, the precision
mix, the roof that binds and its value, the roofline fraction and the headroom. Vectorised over the chart's rows.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...core.vocabulary import (
    ALL_TERMS,
    APP_HEADROOM,
    APP_TIME,
    DISPLAY,
    LEVELS,
    PRECISIONS,
    UNKNOWN_BOUND,
    ai_column,
    bytes_column,
    display,
    flop_column,
)
from ...core.values import STRING
from ...pipeline.totals import sol_complete
from ..text.numbers import (
    format_number,
    format_si,
    incomplete,
    lower_bound,
    pct,
    upper_bound,
)
from ..text.limiters import limiter_text

# (field, title) of each tooltip line, in order; every value is a preformatted string except launches.
TOOLTIP_FIELDS: tuple[tuple[str, str], ...] = (
    ("kernel_name", "kernel"), ("grid_block", "grid × block"), ("launches", "launches"), ("time", "time"),
    ("share", "time share"), ("performance", "achieved"), ("mix", "precision mix (FLOPs)"), ("flops", "FLOPs"),
    ("bytes", "bytes"), *((ai_column(level), f"AI {display(level)} (FLOP/byte)") for level in LEVELS),
    ("bound", "bound"), ("binding_roof", "binding roof"), ("fraction", "roofline fraction"),
    ("headroom", "headroom"), ("why", "why (limiter)"),
)


_TERMS = {t.key: t for t in ALL_TERMS}


def _numbers(table: pd.DataFrame, column: str) -> pd.Series:
    """A numeric column, all unknown when the table lacks it."""
    if column not in table:
        return pd.Series(np.nan, index=table.index, dtype=float)
    return pd.to_numeric(table[column], errors="coerce")


def _known_text(series: pd.Series) -> list[str]:
    """Each value as text, "—" where it is missing or blank (a list: Series steps on a few rows cost more than the
    texts)."""
    text = series.astype(STRING)
    blank = (text.str.strip() == "").fillna(True).to_numpy(dtype=bool)
    return ["—" if empty else value for value, empty in zip(text.tolist(), blank.tolist())]


def _joined(parts: list[list[str]]) -> list[str]:
    return [" · ".join(p for p in row if p) or "—" for row in zip(*parts)]


def main_precision(kept: pd.DataFrame) -> pd.Series:
    """The precision doing most of each kernel's FLOPs (display name), "unknown" without FLOPs."""
    flops = np.column_stack([_numbers(kept, flop_column(p)).to_numpy(dtype=float, na_value=np.nan)
                             for p in PRECISIONS]).reshape(len(kept), len(PRECISIONS))
    flops = np.where(np.isnan(flops), 0.0, flops)
    with np.errstate(invalid="ignore"):  # inf - inf: no known total, as in pandas' sum
        known = flops.sum(axis=1) > 0
    names = [display(p) for p in PRECISIONS]
    best = [names[i] if k else UNKNOWN_BOUND for i, k in zip(np.argmax(flops, axis=1).tolist(), known.tolist())]
    return pd.Series(best, index=kept.index, dtype=str)


def tooltip_columns(kept: pd.DataFrame, drawn_roofs: dict[str, float] | None = None) -> dict[str, object]:
    """The formatted tooltip fields for each row of the kernel table `kept` (same order).

    `drawn_roofs` (term key -> value) are the roofs the chart draws: a binding roof among them is given at the drawn
    value, as its label says it, and where the kernel's own roof (its launches' clock: what its roofline fraction
    is against) reads differently, that value follows it."""
    drawn_roofs = drawn_roofs or {}
    total = pd.to_numeric(kept["flop_total"], errors="coerce")
    flop = {p: _numbers(kept, flop_column(p)) for p in PRECISIONS}
    # plain lists per precision and level, joined row by row (a Series for each would cost more than its texts)
    mix = _joined([[f"{display(p)} {pct(v)}" if v > 0 else "" for v in (flop[p] / total).fillna(0)]
                   for p in PRECISIONS])
    flops = _joined([[f"{display(p)} {format_si(v, 'FLOP')}" if v > 0 else "" for v in flop[p].fillna(0)]
                     for p in PRECISIONS])
    traffic = _joined([[f"{display(lv)} {format_si(v, 'B')}" for v in _numbers(kept, bytes_column(lv))]
                       for lv in LEVELS])
    binding = []
    peaks = {peak: list(kept[peak]) for peak in dict.fromkeys(t.peak for t in ALL_TERMS) if peak in kept}
    for i, key in enumerate(kept["bound"]):  # ≤ 2×top rows: the drawn ones only
        term = _TERMS.get(key) if isinstance(key, str) else None
        value = peaks[term.peak][i] if term is not None and term.peak in peaks else None
        unit = "FLOP/s" if term is not None and term.kind == "compute" else "B/s"
        own = format_si(value, unit)
        if term is not None and key in drawn_roofs:
            drawn = format_si(drawn_roofs[key], unit)
            own = drawn if own in (drawn, "—") else f"{drawn} drawn · {own} at this kernel's clock"
        binding.append("—" if term is None else f"{display(key)} {own}")
    complete = sol_complete(kept).tolist()
    bound = [DISPLAY.get(b, UNKNOWN_BOUND) if isinstance(b, str) else UNKNOWN_BOUND for b in kept["bound"]]
    grid_block = [f"{grid} × {block}" for grid, block in zip(_known_text(kept["grid"]), _known_text(kept["block"]))]
    return {
        "grid_block": np.array([text if text != "— × —" else "— (not in the capture)" for text in grid_block],
                               dtype=object),
        "launches": kept["launches"].astype(int).to_numpy(),
        "time": [format_si(v, "s") for v in kept["time_s"]],
        "share": [pct(v) for v in kept["time_share"]],
        "performance": [format_si(v, "FLOP/s") for v in kept["flop_per_s"]],
        "mix": mix, "flops": flops, "bytes": traffic,
        **{ai_column(level): [format_number(v) for v in kept[ai_column(level)]] for level in LEVELS},
        "bound": bound,  # also the bars' colour: the display name only
        "binding_roof": [b + " — unproven: terms not counted" if incomplete(done) and b != "—" else b
                         for b, done in zip(binding, complete)],
        "fraction": [lower_bound(pct(v), done) for v, done in zip(kept["roofline_fraction"], complete)],
        "headroom": [upper_bound(format_si(v, "s"), done) + (" (upper bound)" if incomplete(done) and
                                                              math.isfinite(v) else "") + app
                     for v, done, app in zip(kept["headroom_s"].astype(float), complete, _app_texts(kept, complete))],
        "why": [limiter_text(w, e) for w, e in zip(_column(kept, "limiter"), _column(kept, "limiter_evidence"))],
    }


def _app_texts(kept: pd.DataFrame, complete: list) -> list[str]:
    """With --nsys: ' · over the run ≤ 995 ms of 1.23 s' (app headroom of app time; ≤ where the fraction is a bound,
    '—' where the timeline gave the group no time), else ''."""
    if APP_HEADROOM not in kept:
        return [""] * len(kept)
    return [f" · over the run {upper_bound(format_si(h, 's'), done)} of {format_si(t, 's')}"
            for h, t, done in zip(kept[APP_HEADROOM].astype(float), kept[APP_TIME].astype(float), complete)]


def _column(table: pd.DataFrame, column: str) -> list[object]:
    return table[column].astype("object").tolist() if column in table else [None] * len(table)


def time_unit(seconds: pd.Series) -> tuple[str, float]:
    """The unit the headroom axis reads best in (s, ms or µs) for its largest value, and its factor."""
    largest = pd.to_numeric(seconds, errors="coerce").abs().max()
    if not np.isfinite(largest) or largest >= 1:
        return "s", 1.0
    if largest >= 1e-3:
        return "ms", 1e3
    return "µs", 1e6
