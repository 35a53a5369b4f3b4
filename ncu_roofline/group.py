"""Launches rolled up into kernel groups, on raw counters.

A kernel group is (kernel name, grid, block, device), optionally split by NVTX range. Its quantities are derived
from counters summed over the group (rates and attributes averaged, weighted by launches), never from per-launch
derived values: metric-split captures whose launch order differed between runs leave partial launch rows that
only add up correctly at this level.
"""

from __future__ import annotations

import fnmatch

import numpy as np
import pandas as pd

from .launch_table import metric_columns
from .metric_names import is_extensive

GROUP_KEYS = ("kernel_name", "grid", "block", "device_name")


def group_keys(by_nvtx: bool) -> list[str]:
    return [*GROUP_KEYS, "nvtx_range"] if by_nvtx else list(GROUP_KEYS)


def group_launches(raw: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per kernel group with summed totals, averaged rates, and an honest launch count."""
    frame = raw.copy()
    metrics = metric_columns(raw)
    invalid = frame["_invalid"].to_numpy(dtype=bool) if "_invalid" in frame else np.zeros(len(frame), dtype=bool)
    if invalid.any():  # a launch with an impossible value is left out of every total, not only the one value
        frame.loc[invalid, metrics] = np.nan
    for key in keys:
        frame[key] = frame[key].astype("object").where(frame[key].notna(), "")
    grouped = frame.groupby(keys, sort=True, dropna=False)
    out = grouped.agg(kernel_demangled=("kernel_demangled", "first"),
                      compute_capability=("compute_capability", "first"),
                      source_files=("source_file", "nunique"))
    out["launches"] = _launch_counts(frame, keys)
    out["_excluded"] = pd.Series(invalid * frame["launches"].to_numpy(dtype=np.int64), index=frame.index) \
        .groupby([frame[k] for k in keys], sort=True, dropna=False).sum()
    weights = frame["launches"].astype("float64")
    extensive = [m for m in metrics if is_extensive(m)]
    intensive = [m for m in metrics if not is_extensive(m)]
    if extensive:
        out = out.join(grouped[extensive].sum(min_count=1))
    if intensive:
        values = frame[intensive].astype("float64")
        weighted = values.mul(weights, axis=0).groupby([frame[k] for k in keys], sort=True, dropna=False).sum()
        present = values.notna().mul(weights, axis=0).groupby([frame[k] for k in keys], sort=True,
                                                               dropna=False).sum()
        out = out.join(weighted / present.replace(0, np.nan))
    out = out.reset_index()
    for key in keys:
        out[key] = out[key].replace("", pd.NA).astype("string")
    return out


def _launch_counts(frame: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Launches per group: within a metric-split capture, the count in the part that holds the most of them
    (bits of `_file_mask`); across separate captures and files, the sum."""
    mask = frame["_file_mask"].to_numpy(dtype=np.int64) if "_file_mask" in frame else np.ones(len(frame), np.int64)
    capture = frame["_capture"].to_numpy() if "_capture" in frame else np.zeros(len(frame), np.int64)
    launches = frame["launches"].to_numpy(dtype=np.int64)
    bits = int(mask.max()).bit_length() if len(mask) else 1
    per_part = pd.DataFrame({f"b{b}": launches * ((mask >> b) & 1) for b in range(bits)})
    group_cols = [frame[k].to_numpy() for k in keys] + [capture]
    per_capture = per_part.groupby(group_cols, sort=True, dropna=False).sum().max(axis=1)
    return per_capture.groupby(level=list(range(len(keys))), sort=True, dropna=False).sum()


def filter_nvtx(raw: pd.DataFrame, pattern: str) -> pd.DataFrame:
    """Launches whose NVTX path (`outer/inner`) matches the glob; launches outside any range have path ""."""
    paths = raw["nvtx_range"].astype("object").where(raw["nvtx_range"].notna(), "")
    keep = np.fromiter((fnmatch.fnmatchcase(p, pattern) for p in paths.unique()), dtype=bool)
    allowed = set(np.asarray(paths.unique(), dtype=object)[keep])
    return raw[paths.isin(allowed).to_numpy()].reset_index(drop=True)
