"""Per-kernel series over runs: the kernels of every run matched as `compare` matches two runs, then summarised.

A kernel's identity across runs is `compare.match_kernels` applied run after run: each run's kernels are matched
against the newest row of every kernel seen so far (name, grid, block and NVTX path; launch order among equals;
name alone only where the name is unique on both sides). A kernel that skips a run keeps its series when it
returns; an unmatched kernel starts a new series.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .compare import match_kernels

IDENTITY = ("kernel_name", "grid", "block", "nvtx_range", "device_name", "launch_order")
VALUES = ("time_s", "roofline_fraction", "headroom_s", "bound", "ai_dram", "ai_l2", "ai_l1", "flop_per_s",
          "t_sol_s", "flop_total", "launches")
NUMERIC = tuple(v for v in VALUES if v != "bound")


def assign_series(rows: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """`rows` (kernel rows with `run_id`) with `series_id` and `run_index` (0 = oldest of `runs`), ordered by run.

    Rows of runs not in `runs` are dropped.
    """
    order = {run_id: i for i, run_id in enumerate(runs["run_id"])}
    rows = rows[rows["run_id"].isin(order)].copy()
    rows["run_index"] = rows["run_id"].map(order).astype("int64")
    rows = rows.sort_values(["run_index", "launch_order", "kernel_name"], kind="stable",
                            na_position="last").reset_index(drop=True)
    series_id = np.full(len(rows), -1, dtype="int64")
    known = rows.iloc[:0][list(IDENTITY)].assign(series_id=pd.Series(dtype="int64"))
    next_id = 0
    for _, positions in rows.groupby("run_index", sort=True).indices.items():
        run = rows.iloc[positions][list(IDENTITY)].reset_index(drop=True)
        pairs = match_kernels(known, run)
        matched = pairs[(pairs["base"] >= 0) & (pairs["head"] >= 0)]
        fresh = pairs[(pairs["base"] < 0) & (pairs["head"] >= 0)]["head"].to_numpy()
        ids = np.full(len(run), -1, dtype="int64")
        ids[matched["head"].to_numpy()] = known["series_id"].to_numpy()[matched["base"].to_numpy()]
        ids[fresh] = np.arange(next_id, next_id + len(fresh))
        next_id += len(fresh)
        series_id[positions] = ids
        # The newest row of each series is what the next run is matched against.
        updated = run.assign(series_id=ids)
        known = pd.concat([known[~known["series_id"].isin(ids)], updated], ignore_index=True)
    rows.insert(0, "series_id", series_id)
    return rows


def summarise(series: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per series: its identity (newest row), run count, first / earlier median / newest values, and the
    change of the newest run against the median of the earlier runs shown. Largest absolute time change first.

    The median of the earlier runs, not the first run, is the reference: one noisy run should not set the scale.
    """
    newest_index = len(runs) - 1
    if series.empty:
        return pd.DataFrame(columns=["series_id", *IDENTITY, "runs"])
    by = series.groupby("series_id", sort=True)
    last = by.tail(1).set_index("series_id")
    first = by.head(1).set_index("series_id")
    earlier = series[series["run_index"] < newest_index].groupby("series_id")[list(NUMERIC)].median()
    newest = series[series["run_index"] == newest_index].set_index("series_id")
    table = last[list(IDENTITY)].copy()
    table["runs"] = by.size()
    table["first_run_id"] = first["run_id"]
    table["newest_run_id"] = last["run_id"]
    table["in_newest_run"] = table.index.isin(newest.index)
    for metric in ("time_s", "roofline_fraction", "headroom_s", "ai_dram", "flop_per_s"):
        now = newest[metric].reindex(table.index).astype("float64")
        before = earlier[metric].reindex(table.index).astype("float64") if metric in earlier else np.nan
        table[f"{metric}_first"] = first[metric].astype("float64")
        table[f"{metric}_median_before"] = before
        table[f"{metric}_newest"] = now
        table[f"{metric}_change"] = now - before
        with np.errstate(divide="ignore", invalid="ignore"):
            table[f"{metric}_change_pct"] = np.where(before != 0, 100.0 * (now - before) / np.abs(before), np.nan)
    table["bound_first"] = first["bound"].astype("string")
    table["bound_newest"] = newest["bound"].reindex(table.index).astype("string")
    impact = table["time_s_change"].abs().fillna(-1.0)
    table = table.assign(_impact=-impact, _name=table["kernel_name"].fillna("").astype(str))
    table = table.sort_values(["_impact", "_name", "launch_order"], kind="stable").drop(columns=["_impact", "_name"])
    return table.reset_index()


def wide_values(series: pd.DataFrame, metric: str, n_runs: int) -> pd.DataFrame:
    """`metric` as one row per series and one column per run index (null where the kernel was absent)."""
    wide = series.pivot_table(index="series_id", columns="run_index", values=metric, aggfunc="first")
    return wide.reindex(columns=range(n_runs))
