"""Run totals for the summaries (JSON, Markdown, terminal), from the same tables the Parquet files hold.

Unknown is never zero: a total over kernels of which some have an unknown value is null, and says how many kernels
are unknown and why; the sum over the known ones is given beside it under its own name (`*_known`).
"""

from __future__ import annotations

import pandas as pd

from .run_notes import unplaced_kernels


def run_totals(kernels: pd.DataFrame, launches: pd.DataFrame) -> dict[str, object]:
    """Kernels, launches, time and headroom of the run, with unknowns counted and explained."""
    _, reasons = unplaced_kernels(kernels, launches)
    out: dict[str, object] = {
        "kernels": int(len(kernels)),
        "launches": int(launches["launches"].sum()) if len(launches) else 0,
    }
    for column in ("time_s", "headroom_s"):
        values = kernels[column].astype("float64") if len(kernels) else pd.Series([], dtype="float64")
        known = values.notna()
        out[column] = float(values.sum()) if known.all() and len(values) else None
        out[f"{column}_known"] = float(values[known].sum()) if known.any() else None
        out[f"kernels_unknown_{column.removesuffix('_s')}"] = int((~known).sum())
    out["unknown_reasons"] = reasons
    return out

