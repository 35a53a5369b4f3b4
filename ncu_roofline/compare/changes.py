"""Per-kernel and total changes between two runs, with a verdict per kernel: what `compare` reports and gates on.

Over plain tables: the façade (`comparison.py`) hands in each run's kernel and launch rows.

Where a matched kernel's launch count differs between the runs (usually the capture's `--launch-count`, not the
program), its amounts that add up over launches (`PER_LAUNCH`: time, FLOPs, speed of light, headroom) are
compared per launch, and `compared` says `per_launch`; `per_launch=False` (`compare --totals`) compares the sums.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.vocabulary import AI_OFF_CHIP, APP_HEADROOM, APP_TIME, SOL_COMPLETE
from ..pipeline.totals import SUMMED, run_totals
from .match import launch_order, match_kernels

METRICS = ("time_s", "flop_total", "flop_per_s", AI_OFF_CHIP, "t_sol_s", "roofline_fraction", "headroom_s")
TOTAL_METRICS = ("kernels", "launches", "time_s", "flop_total", "flop_per_s", "t_sol_s", "roofline_fraction",
                 "headroom_s", "kernels_upper_bound")  # the last: kernels whose speed of light lacks terms
# Compared too where both runs were weighted by their timelines (`--nsys`, pipeline/app_weight.py).
APP_METRICS = (APP_TIME, APP_HEADROOM)
# Amounts that add up over launches: per launch where the launch counts differ (ratios are the same either way).
PER_LAUNCH = ("time_s", "flop_total", "t_sol_s", "headroom_s")
COMPARED_PER_LAUNCH, COMPARED_TOTAL = "per_launch", "total"
VERDICTS = ("regression", "improvement", "neutral", "added", "removed")
DEFAULT_TIME_THRESHOLD_PCT = 2.0
# `sol_complete` travels with each side: where false, that side's t_sol is a lower bound, its headroom an upper one.
_SIDE_COLUMNS = ("grid", "block", "nvtx_range", "device_name", "launches", "rank", "bound", SOL_COMPLETE)


def kernel_changes(base_kernels: pd.DataFrame, base_launches: pd.DataFrame, head_kernels: pd.DataFrame,
                   head_launches: pd.DataFrame, *, min_time_s: float = 0.0,
                   time_threshold_pct: float = DEFAULT_TIME_THRESHOLD_PCT, per_launch: bool = True) -> pd.DataFrame:
    """The comparison table (see `comparison.Comparison`), without `gates_failed`."""
    base_kernels = base_kernels.assign(launch_order=launch_order(base_kernels, base_launches)).reset_index(drop=True)
    head_kernels = head_kernels.assign(launch_order=launch_order(head_kernels, head_launches)).reset_index(drop=True)
    pairs = match_kernels(base_kernels, head_kernels)
    metrics = (*METRICS, *APP_METRICS) if APP_HEADROOM in base_kernels and APP_HEADROOM in head_kernels else METRICS
    b = _side(base_kernels, pairs["base"].to_numpy(), metrics)
    h = _side(head_kernels, pairs["head"].to_numpy(), metrics)

    names = b["kernel_name"].where(b["kernel_name"].notna(), h["kernel_name"])
    table = pd.DataFrame({"kernel_name": names.astype("string"),
                          "match": pd.array([m or pd.NA for m in pairs["match"]], dtype="string")})
    for column in _SIDE_COLUMNS:
        if column == "nvtx_range" and column not in base_kernels and column not in head_kernels:
            continue
        table[f"{column}_base"], table[f"{column}_head"] = b[column], h[column]
    counts_b, counts_h = (side["launches"].astype("float64").to_numpy() for side in (b, h))
    matched = (pairs["match"] != "").to_numpy()
    differ = matched & (counts_b > 0) & (counts_h > 0) & (counts_b != counts_h)
    divide = differ if per_launch else np.zeros(len(table), dtype=bool)
    table["compared"] = pd.array([(COMPARED_PER_LAUNCH if d else COMPARED_TOTAL) if m else pd.NA
                                  for m, d in zip(matched, divide)], dtype="string")
    for metric in metrics:
        before, after = b[metric].astype("float64"), h[metric].astype("float64")
        if metric in PER_LAUNCH:
            before = before.where(~divide, before / np.where(divide, counts_b, 1.0))
            after = after.where(~divide, after / np.where(divide, counts_h, 1.0))
        change = after - before
        with np.errstate(divide="ignore", invalid="ignore"):
            pct = np.where(before != 0, 100.0 * change / before.abs(), np.nan)
        table[f"{metric}_base"], table[f"{metric}_head"] = before, after
        table[f"{metric}_change"], table[f"{metric}_change_pct"] = change, pd.Series(pct, dtype="float64")

    biggest = table[["time_s_base", "time_s_head"]].max(axis=1, skipna=True)
    table.insert(2, "gated", (biggest >= min_time_s).to_numpy(dtype=bool) & (pairs["match"] != "").to_numpy())
    table.insert(2, "verdict", _verdicts(table, pairs, time_threshold_pct))
    return _sort_by_change(table)


def _side(kernels: pd.DataFrame, rows: np.ndarray, metrics: tuple[str, ...] = METRICS) -> pd.DataFrame:
    """`kernels` rows at `rows` (-1: a missing kernel, all null), with every column the comparison reads."""
    wanted = ["kernel_name", *_SIDE_COLUMNS, *metrics]
    frame = kernels.reindex(columns=wanted)
    picked = frame.reindex(rows).reset_index(drop=True)  # -1 is no label: an all-null row
    for column in ("launches", "rank"):
        picked[column] = picked[column].astype("Int64")
    picked[SOL_COMPLETE] = picked[SOL_COMPLETE].astype("boolean")
    for column in ("kernel_name", "grid", "block", "nvtx_range", "device_name", "bound"):
        picked[column] = picked[column].astype("string")
    return picked


def _verdicts(table: pd.DataFrame, pairs: pd.DataFrame, threshold_pct: float) -> pd.Series:
    pct = table["time_s_change_pct"].to_numpy(dtype="float64")
    verdict = np.full(len(table), "neutral", dtype=object)
    judged = table["gated"].to_numpy(dtype=bool)
    verdict[judged & (pct > threshold_pct)] = "regression"
    verdict[judged & (pct < -threshold_pct)] = "improvement"
    verdict[(pairs["head"] < 0).to_numpy()] = "removed"
    verdict[(pairs["base"] < 0).to_numpy()] = "added"
    return pd.Series(verdict, dtype="string")


def _sort_by_change(table: pd.DataFrame) -> pd.DataFrame:
    """Largest absolute time change first (a missing side counts as zero), then by name and shape: stable."""
    impact = (table["time_s_head"].fillna(0.0) - table["time_s_base"].fillna(0.0)).abs()
    keys = pd.DataFrame({"impact": -impact})
    for column in ("kernel_name", "grid_base", "block_base", "grid_head", "block_head", "nvtx_range_base",
                   "nvtx_range_head"):
        if column in table:
            keys[column] = table[column].fillna("").astype(str)
    order = keys.sort_values(list(keys.columns), kind="stable").index
    return table.loc[order].reset_index(drop=True)


def total_changes(base_kernels: pd.DataFrame, head_kernels: pd.DataFrame,
                  table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Run totals of both sides and their change: one row per TOTAL_METRICS name; null where a side is unknown.

    Given the comparison `table`, where it compares some kernels per launch the totals follow the same rule: each
    side's sums take those kernels' per-launch amounts (the launch counts stay the real ones), so the heading and
    the `total:` gates never say -40 % where every row, per launch, says +0 %."""
    if table is not None and (table["compared"] == COMPARED_PER_LAUNCH).any():
        base_kernels, head_kernels = (_as_compared(table, side) for side in ("base", "head"))
    before, after = run_totals(base_kernels), run_totals(head_kernels)
    rows = []
    for metric in TOTAL_METRICS:
        b, h = _number(before[metric]), _number(after[metric])
        change = h - b
        pct = 100.0 * change / abs(b) if b and np.isfinite(b) else np.nan
        rows.append({"base": b, "head": h, "change": change, "change_pct": pct})
    return pd.DataFrame(rows, index=pd.Index(TOTAL_METRICS, name="metric"), dtype="float64")


def _number(value: object) -> float:
    return float("nan") if value is None else float(value)


def _as_compared(table: pd.DataFrame, side: str) -> pd.DataFrame:
    """One side's kernels as the comparison table holds them (per launch where it compares them so)."""
    present = (table["verdict"] != ("added" if side == "base" else "removed")).to_numpy(dtype=bool)
    columns = {column: table[f"{column}_{side}"] for column in (*SUMMED, "launches", SOL_COMPLETE)}
    return pd.DataFrame(columns)[present].reset_index(drop=True)
