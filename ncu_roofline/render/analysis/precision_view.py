"""One precision's roofline, as Nsight Compute draws it (`analyze --precision fp16`).

The main chart's y is a kernel's total FLOP/s over every precision; this view keeps one precision's work only:
y = flop_<p> / time_s, intensities flop_<p> / bytes_<level>, and only that precision's roof. Kernels without
work in that precision have zero FLOPs here and are counted as such in the subtitle. The bound, roofline fraction
and headroom stay the whole kernel's (they come from every roof at once).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.errors import InputError
from ...core.vocabulary import LEVELS, PRECISIONS, ai_column, bytes_column, flop_column


def precision_view(kernels: pd.DataFrame, precision: str) -> pd.DataFrame:
    """The kernel table re-expressed for one precision's chart (see the module docstring)."""
    if precision not in PRECISIONS:
        raise InputError(None, f"--precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    view = kernels.copy()
    work = pd.to_numeric(view.get(flop_column(precision), pd.Series(np.nan, index=view.index)),
                         errors="coerce").astype(float)
    if not (work > 0).any():  # a chart of no work over another precision's roof would look like an answer
        from ..chart.roofline import used_precisions

        executed = used_precisions(kernels)
        raise InputError(None, f"--precision {precision}: the capture counts no {precision.upper()} FLOPs in any "
                               f"kernel ({'not collected' if work.isna().all() else 'zero everywhere'}); it executes "
                               + (", ".join(executed) if executed else "no counted FLOPs at all"))
    for other in PRECISIONS:
        if other != precision and flop_column(other) in view:
            view[flop_column(other)] = 0.0
    view["flop_total"] = work
    time_s = pd.to_numeric(view["time_s"], errors="coerce").astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        view["flop_per_s"] = (work / time_s).where(time_s > 0)
        for level in LEVELS:
            traffic = pd.to_numeric(view[bytes_column(level)], errors="coerce").astype(float)
            view[ai_column(level)] = (work / traffic).where(traffic > 0)
    return view
