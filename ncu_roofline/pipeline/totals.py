"""Run totals: the one place a run's sums are taken, for the summaries (JSON, Markdown, terminal), `compare` and
the history's `total:` gates, from the same kernel tables the Parquet files hold.

Unknown is never zero: a sum over kernels of which some have an unknown value is null, and says how many kernels
are unknown (and, given the launch rows, why); the sum over the known ones is given beside it under its own name
(`*_known`). Ratios are recomputed from sums over the kernels that know both terms (FLOP/s = ΣFLOP / Σtime,
roofline fraction = Σt_sol / Σtime), never means of ratios, and are null when no kernel knows them.

Headroom from a speed of light that lacks terms (`sol_complete` false) is an upper bound: how much of the
recoverable time is such is `headroom_s_upper_bound_only` (over the kernels whose headroom is known), on
`kernels_upper_bound` kernels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.vocabulary import SOL_COMPLETE
from .run_notes import unplaced_kernels

SUMMED = ("time_s", "flop_total", "t_sol_s", "headroom_s")
RATIOS = {"flop_per_s": "flop_total", "roofline_fraction": "t_sol_s"}  # ratio -> its numerator (over time_s)


def run_totals(kernels: pd.DataFrame, launches: pd.DataFrame | None = None) -> dict[str, object]:
    """Kernels, launches, summed time, FLOPs, speed of light and headroom of the run, ratios from those sums, with
    unknowns counted (and explained in `unknown_reasons` when `launches` is given)."""
    out: dict[str, object] = {
        "kernels": int(len(kernels)),
        "launches": int(pd.to_numeric(kernels["launches"]).sum()) if len(kernels) and "launches" in kernels else 0,
    }
    for column in SUMMED:
        values = _column(kernels, column)
        known = values.notna()
        out[column] = float(values.sum()) if known.all() and len(values) else None
        out[f"{column}_known"] = float(values[known].sum()) if known.any() else None
        out[f"kernels_unknown_{column.removesuffix('_s')}"] = int((~known).sum())
    time_s = _column(kernels, "time_s")
    for ratio, numerator in RATIOS.items():
        top = _column(kernels, numerator)
        both = top.notna() & time_s.notna()
        seconds = float(time_s[both].sum())
        out[ratio] = float(top[both].sum() / seconds) if seconds > 0 else None
    headroom = _column(kernels, "headroom_s")
    partial = headroom.notna() & ~sol_complete(kernels)
    out["headroom_s_upper_bound_only"] = float(headroom[partial].sum()) if partial.any() else 0.0
    out["kernels_upper_bound"] = int(partial.sum())
    if launches is not None:
        out["unknown_reasons"] = unplaced_kernels(kernels, launches)[1]
    return out


def _column(kernels: pd.DataFrame, name: str) -> pd.Series:
    if name not in kernels:
        return pd.Series(np.nan, index=kernels.index, dtype="float64")
    return pd.to_numeric(kernels[name], errors="coerce").astype("float64")


def sol_complete(kernels: pd.DataFrame) -> pd.Series:
    """Each kernel's `sol_complete`; kernels of a table without the column (an older file) or with it unknown count
    as complete. The one reading of the column: totals, tables, tooltips and the chart use it."""
    if SOL_COMPLETE not in kernels:
        return pd.Series(True, index=kernels.index)
    return kernels[SOL_COMPLETE].astype("boolean").fillna(True).astype(bool)
