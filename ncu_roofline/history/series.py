"""Per-kernel series over runs: the kernels of every run matched as `compare` matches two runs, then summarised.

A kernel's identity across runs is `compare.match_kernels` applied run after run: each run's kernels are matched
against the newest row of every kernel seen so far (name, grid, block and NVTX path; launch order among equals;
name alone only where the name is unique on both sides). A kernel that skips a run keeps its series when it
returns; an unmatched kernel starts a new series.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..compare.match import match_kernels
from ..core.vocabulary import AI_COLUMNS, AI_OFF_CHIP, SOL_COMPLETE

IDENTITY = ("kernel_name", "grid", "block", "nvtx_range", "device_name", "launch_order")
# `sol_complete` (false: that run's t_sol a lower bound, its headroom an upper bound) travels with the values;
# a history written before the column reads it as null (unknown), never as complete.
VALUES = ("time_s", "roofline_fraction", "headroom_s", "bound", *AI_COLUMNS, "flop_per_s", "t_sol_s", "flop_total",
          "launches", SOL_COMPLETE)
NUMERIC = tuple(v for v in VALUES if v not in ("bound", SOL_COMPLETE))


def assign_series(rows: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """`rows` (kernel rows with `run_id`) with `series_id` and `run_index` (0 = oldest of `runs`), ordered by run.

    Rows of runs not in `runs` are dropped. Equal identities (name, grid, block, NVTX path, and the k-th such
    group in launch order) share a series in one vectorised pass: `compare`'s exact match, which is every kernel
    of a steady history. Only a run that brings a new identity is then matched in full with `match_kernels`
    against the newest row of every earlier series, so a retuned launch shape (name-only match) or a renamed NVTX
    range (launch-order match) keeps its series as it would in `compare`.
    """
    order = {run_id: i for i, run_id in enumerate(runs["run_id"])}
    run_codes, run_ids = pd.factorize(rows["run_id"], use_na_sentinel=True)  # one lookup per run, not per row
    run_index = np.asarray([order.get(r, -1) for r in run_ids] + [-1], dtype="int64")[run_codes]
    # the rows ordered by run, launch order, name (nulls last; stable): one take of the frame, none when in order
    names, uniques = pd.factorize(rows["kernel_name"], sort=True, use_na_sentinel=True)
    names = np.where(names < 0, len(uniques), names)
    launch = rows["launch_order"].to_numpy(dtype="float64", na_value=np.nan)
    keep = np.flatnonzero(run_index >= 0)
    keep = keep[np.lexsort((names[keep], launch[keep], run_index[keep]))]
    if len(keep) != len(rows) or (keep != np.arange(len(rows))).any():
        rows = rows.take(keep)
    rows = rows.reset_index(drop=True).assign(run_index=run_index[keep])
    # integer codes of each identity part (null and "" alike), grouped as integers: no text is converted
    keys = pd.DataFrame({c: _codes(rows[c]) for c in ("kernel_name", "grid", "block", "nvtx_range")})
    parts = list(keys.columns)
    keys["run_index"] = rows["run_index"].to_numpy()
    keys["occurrence"] = keys.groupby([*parts, "run_index"], sort=False).cumcount()
    series_id = keys.groupby([*parts, "occurrence"], sort=False).ngroup().to_numpy(dtype="int64")
    first_run = pd.Series(rows["run_index"].to_numpy()).groupby(series_id).min()
    new_in = first_run[first_run > 0]  # series whose identity first appears after the oldest run
    links: dict[int, int] = {}
    run_index = rows["run_index"].to_numpy()
    for run in sorted(set(new_in.to_numpy().tolist())):
        canonical = _resolve(series_id, links)
        earlier = rows[run_index < run].assign(series_id=canonical[run_index < run])
        known = earlier.drop_duplicates("series_id", keep="last").reset_index(drop=True)
        here = np.flatnonzero(run_index == run)
        current = rows.iloc[here].reset_index(drop=True)
        present = set(canonical[here].tolist())
        pairs = match_kernels(known[list(IDENTITY)], current[list(IDENTITY)])
        pairs = pairs[(pairs["base"] >= 0) & (pairs["head"] >= 0)]
        for base, head in zip(pairs["base"], pairs["head"]):
            old, fresh = int(known["series_id"].iloc[base]), int(series_id[here[head]])
            if first_run.loc[fresh] == run and old not in present:
                links[fresh] = old
                present.add(old)
    rows.insert(0, "series_id", pd.factorize(_resolve(series_id, links))[0].astype("int64"))
    return rows


def _codes(column: pd.Series) -> np.ndarray:
    """`column`'s values as integer codes, a null the same code as "" (an identity part that is absent)."""
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    if (codes < 0).any():
        blank = np.flatnonzero(np.asarray(uniques, dtype=object) == "")
        codes = np.where(codes < 0, blank[0] if len(blank) else len(uniques), codes)
    return codes.astype("int64")


def _resolve(series_id: np.ndarray, links: dict[int, int]) -> np.ndarray:
    """Series ids with every linked id replaced by the id it continues (links may chain)."""
    if not links:
        return series_id
    final = {}
    for sid in links:
        target = sid
        while target in links:
            target = links[target]
        final[sid] = target
    mapping = pd.Series(final)
    resolved = pd.Series(series_id).map(mapping)
    return resolved.fillna(pd.Series(series_id)).to_numpy(dtype="int64")


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
    # only the columns used, before the rows are picked: the texts of every row are never copied
    run_index = series["run_index"].to_numpy()
    earlier = series.loc[run_index < newest_index, ["series_id", *NUMERIC]].groupby("series_id").median()
    newest = series.loc[run_index == newest_index, ["series_id", *VALUES]].set_index("series_id")
    table = last[list(IDENTITY)].copy()
    table["runs"] = by.size()
    table["first_run_id"] = first["run_id"]
    table["newest_run_id"] = last["run_id"]
    table["in_newest_run"] = table.index.isin(newest.index)
    for metric in ("time_s", "roofline_fraction", "headroom_s", AI_OFF_CHIP, "flop_per_s"):
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
    table[f"{SOL_COMPLETE}_newest"] = newest[SOL_COMPLETE].reindex(table.index).astype("boolean")
    impact = table["time_s_change"].abs().fillna(-1.0)
    table = table.assign(_impact=-impact, _name=table["kernel_name"].fillna("").astype(str))
    table = table.sort_values(["_impact", "_name", "launch_order"], kind="stable").drop(columns=["_impact", "_name"])
    return table.reset_index()


def wide_values(series: pd.DataFrame, metric: str, n_runs: int) -> pd.DataFrame:
    """`metric` as one row per series and one column per run index (null where the kernel was absent).

    A series' first known value of each run, for the series with any known value: pivot_table's (aggfunc
    'first', all-null rows dropped), placed by integer index instead of a groupby of every row."""
    values = series[metric]
    if not pd.api.types.is_float_dtype(values.dtype):  # e.g. a nullable or object column: pandas' own way
        wide = series.pivot_table(index="series_id", columns="run_index", values=metric, aggfunc="first")
        return wide.reindex(columns=range(n_runs))
    known = np.flatnonzero(~np.isnan(values.to_numpy()))
    sid = series["series_id"].to_numpy()[known]
    run = series["run_index"].to_numpy()[known]
    ids, row = np.unique(sid, return_inverse=True)
    table = np.full((len(ids), n_runs), np.nan)
    cell = row.reshape(-1) * n_runs + run
    cells, first = np.unique(cell, return_index=True)  # the first known value of each (series, run)
    table.reshape(-1)[cells] = values.to_numpy()[known][first]
    return pd.DataFrame(table, index=pd.Index(ids, name="series_id"), columns=pd.RangeIndex(n_runs, name="run_index"))
