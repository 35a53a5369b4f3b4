"""Speed of light and ranking: how far each launch or kernel is from its roof, and which to look at first.

t_sol = max(flop_p / peak_p over precisions, bytes_L / peak_L over levels), over the terms whose roof is known.
Where the capture splits tensor work by input type, each type is a term of its own against its own roof
(`bound` = "tensor_fp16", ...) and the whole-pipe `tensor` term steps aside: FP8 work over the FP16 roof would
count it twice too slow. `bound` is the term that gives the max, `roofline_fraction = t_sol / time_s`,
`headroom_s = time_s - t_sol`.
Kernels are ranked by headroom: the most recoverable time first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.status import StatusNotes
from ..core.vocabulary import ALL_TERMS, TENSOR_FLOP_COLUMNS, TERM_BY_KEY

TERMS = tuple((t.key, t.amount, t.peak) for t in ALL_TERMS)
# The whole tensor pipe: steps aside where a capture counts tensor work per input type.
_TENSOR_PIPE = TERM_BY_KEY["tensor"].key
# A point this far above its roof is flagged; below it, float rounding.
ABOVE_ROOF_TOLERANCE = 1e-6


def speed_of_light(frame: pd.DataFrame, notes: StatusNotes) -> pd.DataFrame:
    """t_sol_s, bound, roofline_fraction, headroom_s for rows holding derived quantities and peaks."""
    n = len(frame)
    names = [t[0] for t in TERMS]
    with np.errstate(divide="ignore", invalid="ignore"):
        demand = np.column_stack([frame[amount].to_numpy(dtype="float64") / frame[peak].to_numpy(dtype="float64")
                                  for _, amount, peak in TERMS]) if n else np.zeros((0, len(TERMS)))
    for j, (term, amount, peak) in enumerate(TERMS):
        work = frame[amount].to_numpy(dtype="float64")
        no_roof = (work > 0) & np.isnan(frame[peak].to_numpy(dtype="float64"))
        notes.add(no_roof, f"no roof {term}")
    demand = np.where(np.isfinite(demand), demand, np.nan)
    if n:
        demand[:, names.index(_TENSOR_PIPE)] = np.where(split_by_tensor_type(frame), np.nan,
                                                     demand[:, names.index(_TENSOR_PIPE)])
    any_term = ~np.isnan(demand).all(axis=1) if n else np.zeros(0, dtype=bool)
    t_sol = np.where(any_term, np.nanmax(np.where(any_term[:, None], demand, 0.0), axis=1), np.nan) if n \
        else np.zeros(0)
    bound_index = np.argmax(np.where(np.isnan(demand), -np.inf, demand), axis=1) if n else np.zeros(0, dtype=int)
    bound_codes = np.where(any_term & (t_sol > 0), bound_index, -1)
    time_s = frame["time_s"].to_numpy(dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a denormal time_s overflows: unknown
        fraction = t_sol / time_s
    fraction = np.where(np.isfinite(fraction), fraction, np.nan)
    above = demand > time_s[:, None] * (1 + ABOVE_ROOF_TOLERANCE) if n else np.zeros((0, len(TERMS)), dtype=bool)
    for j, term in enumerate(names):
        notes.add(above[:, j], f"above_roof {term}")
    return pd.DataFrame({
        "t_sol_s": t_sol,
        "bound": pd.Categorical.from_codes(bound_codes, categories=names),
        "roofline_fraction": fraction,
        "headroom_s": time_s - t_sol,
    }, index=frame.index)


def split_by_tensor_type(frame: pd.DataFrame) -> np.ndarray:
    """Rows whose tensor work is counted per input type (any `flop_tensor_<type>` known)."""
    present = [c for c in TENSOR_FLOP_COLUMNS if c in frame]
    if not present:
        return np.zeros(len(frame), dtype=bool)
    return frame[present].notna().any(axis=1).to_numpy()


def rank_kernels(kernels: pd.DataFrame) -> pd.DataFrame:
    """Most recoverable time first; ties broken by time, then name, so the order is deterministic."""
    total_time = np.nansum(kernels["time_s"].to_numpy(dtype="float64"))
    kernels = kernels.assign(time_share=kernels["time_s"] / total_time if total_time > 0 else np.nan)
    order = kernels.sort_values(["headroom_s", "time_s", "kernel_name", "grid", "block"],
                                ascending=[False, False, True, True, True], na_position="last", kind="stable")
    order = order.reset_index(drop=True)
    order.insert(0, "rank", np.arange(1, len(order) + 1, dtype=np.int64))
    return order
