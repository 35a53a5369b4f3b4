"""Noise-aware gates: the newest run judged against the band of the runs before it, not against one baseline.

`compare`'s gates ask whether head moved from base; over a history a kernel's time wanders from run to run, so a
fixed baseline fails on noise. Here, for each kernel (or the run totals, with a `total:` gate) and each gate
metric, the previous `window` runs give a band:

- `mad` (default): median ± k · 1.4826 · MAD, where MAD = median(|x - median|); the 1.4826 makes k·MAD·1.4826
  read as k standard deviations for normal noise, so k = 3 is "three sigma", and a minority of old outliers
  (runs before an optimisation that was later reverted, one wild run) does not move the band;
  when the window holds a level change, only the runs since the last one make the band (below);
- `minmax`: [min, max] of the window's values. One slow run anywhere in the window widens it to that run: on
  Baseline, Baseline, DivToMult ×3, Baseline the reverted optimisation's +77.8 % sits inside [DivToMult,
  Baseline] and passes, which is why it is not the default (docs/status.md has the measurements).

A level change (`mad` only): the window's runs from position j on form a new level when there are at least two of
them and every one lies outside the band of the runs before j, on the same side. The latest such j wins, and the
runs before it are left out of the band. So 1, 1, 1.8, 1.8 then 3.0 is judged against the band of 1.8, 1.8 and
fails (the whole window's median 1.4 ± 3 · 1.4826 · 0.4 held 3.0); ±2 % noise never puts two runs outside a band
as wide as its own spread, and one slow run is no level (it needs two). What it does not catch is a slow drift
(+1 % a run): each step is inside the band of the runs before it. Gate a drift in `compare` against a fixed
baseline, or with `--window` short enough that the drift adds up to more than the threshold inside it.

The newest value's change is its distance outside the band, signed: `newest - high` above it, `newest - low`
below it, 0 inside; in percent, that distance over |the band edge crossed|. The gate's grammar and its literal
reading of the threshold are those of `ncu_roofline.gates`: `time_s>+5%` fails when the newest time is more than
5 % above the highest time of the window. A kernel absent from the newest run, or with no value in the window, is
skipped (neither passed nor failed).

"Since": for a failing kernel, the oldest run of the streak ending at the newest run in which every value is
outside (same side, beyond the threshold) the band of the `window` runs before the streak: where the move began.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.values import plain_value
from ..pipeline.gates import Gate, GateResult

BANDS = ("minmax", "mad")
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class BandOptions:
    window: int = 10
    band: str = "mad"
    k: float = 3.0

    def __post_init__(self) -> None:
        if self.band not in BANDS:
            raise InputError(None, f"--band must be 'minmax' or 'mad', not {self.band!r}")
        if self.window < 1:
            raise InputError(None, f"--window must be at least 1, not {self.window}")
        if not self.k >= 0:
            raise InputError(None, f"--k must be zero or more, not {self.k}")


def band_of(values: np.ndarray, options: BandOptions) -> tuple[float, float]:
    """(low, high) of the known values; (nan, nan) when there are none."""
    low, high = bands(np.asarray(values, dtype="float64").reshape(1, -1), options)
    return float(low[0]), float(high[0])


def bands(window: np.ndarray, options: BandOptions) -> tuple[np.ndarray, np.ndarray]:
    """Per row of `window` (series × runs, NaN where a kernel was absent): the band's low and high edges."""
    low = np.full(window.shape[0], np.nan)
    high = low.copy()
    known = ~np.isnan(window).all(axis=1) if window.shape[1] else np.zeros(window.shape[0], bool)
    if not known.any():  # a first run, or kernels new in the newest run: nothing to judge against
        return low, high
    rows = window[known]
    if options.band == "minmax":
        low[known], high[known] = np.nanmin(rows, axis=1), np.nanmax(rows, axis=1)
    else:
        low[known], high[known] = _mad_band(since_level_change(rows, options), options)
    return low, high


def _mad_band(rows: np.ndarray, options: BandOptions) -> tuple[np.ndarray, np.ndarray]:
    """median ± k · 1.4826 · MAD per row (NaN where a row knows no value)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN row: its band is NaN
        median = np.nanmedian(rows, axis=1)
        spread = options.k * MAD_TO_SIGMA * np.nanmedian(np.abs(rows - median[:, None]), axis=1)
    return median - spread, median + spread


def since_level_change(rows: np.ndarray, options: BandOptions) -> np.ndarray:
    """`rows` (series × runs) with the runs before each row's last level change set to NaN (see the module)."""
    start = np.zeros(rows.shape[0], dtype=int)
    for j in range(1, rows.shape[1] - 1):
        low, high = _mad_band(rows[:, :j], options)
        after = rows[:, j:]
        known = ~np.isnan(after)
        with np.errstate(invalid="ignore"):
            above = np.where(known, after > high[:, None], True).all(axis=1)
            below = np.where(known, after < low[:, None], True).all(axis=1)
        step = (known.sum(axis=1) >= 2) & (above | below) & ~np.isnan(low)
        start[step] = j
    if not start.any():
        return rows
    kept = rows.copy()
    kept[np.arange(rows.shape[1])[None, :] < start[:, None]] = np.nan
    return kept


def outside(value, low, high) -> tuple[np.ndarray, np.ndarray]:
    """(change, change_pct) of `value` outside [low, high]: 0 inside, else the signed distance to the crossed edge
    and that distance in percent of |edge|; NaN where anything is unknown. Works on scalars and arrays."""
    value, low, high = (np.asarray(x, dtype="float64") for x in (value, low, high))
    edge = np.where(value > high, high, np.where(value < low, low, np.nan))
    change = np.where(np.isnan(edge), 0.0, value - edge)
    change = np.where(np.isnan(value) | np.isnan(low) | np.isnan(high), np.nan, change)
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = np.where(np.isnan(edge), 0.0, 100.0 * change / np.abs(edge))
    pct = np.where(np.isnan(change) | ~np.isfinite(pct), np.nan, pct)
    return change, pct


def judge(gate: Gate, wide: pd.DataFrame, identity: pd.DataFrame, run_ids: list[str],
          options: BandOptions) -> tuple[GateResult, pd.DataFrame]:
    """Check one gate on `wide` (one row per series, one column per run index, oldest first; the last column is
    the newest run). `identity` (same index) gives each failure its kernel name and shape.

    Returns the gate's result and one row per judged series: `low`, `high`, `newest`, `change`, `change_pct`,
    `failed` (None: not judged), `since_run_id`, `window_runs`.
    """
    values = wide.to_numpy(dtype="float64")
    newest_col = values.shape[1] - 1
    window = values[:, max(0, newest_col - options.window):max(newest_col, 0)]
    low, high = bands(window, options)
    newest = values[:, newest_col] if newest_col >= 0 else np.full(len(wide), np.nan)
    change, pct = outside(newest, low, high)
    verdict = gate.verdicts(change, pct)
    table = pd.DataFrame({"series_id": wide.index, "low": low, "high": high, "newest": newest, "change": change,
                          "change_pct": pct,
                          "failed": pd.array([None if np.isnan(v) else bool(v) for v in verdict], dtype="boolean"),
                          "since_run_id": pd.array([None] * len(wide), dtype="string"),
                          "window_runs": (~np.isnan(window)).sum(axis=1)})
    failures = []
    for position in np.flatnonzero(verdict == 1.0):  # the failing kernels only: a handful
        since = run_ids[_since(gate, values[position], options)]
        table.loc[position, "since_run_id"] = since
        series_id = wide.index[position]
        who = identity.loc[series_id] if series_id in identity.index else {}
        failures.append({
            "kernel_name": plain_value(who.get("kernel_name", "total")), "grid": plain_value(who.get("grid")),
            "block": plain_value(who.get("block")), "nvtx_range": plain_value(who.get("nvtx_range")),
            "newest": plain_value(newest[position]), "band_low": plain_value(low[position]), "band_high": plain_value(high[position]),
            "window_runs": int(table["window_runs"].iloc[position]), "change": plain_value(change[position]),
            "change_pct": plain_value(pct[position]), "newest_run_id": run_ids[newest_col], "since_run_id": since,
        })
    judged = ~np.isnan(verdict)
    return GateResult(gate, checked=int(judged.sum()), skipped=int((~judged).sum()), failures=failures), table


def _since(gate: Gate, values: np.ndarray, options: BandOptions) -> int | None:
    """The run index where the streak of out-of-band values ending at the newest run began (see the module)."""
    newest = len(values) - 1
    start = newest
    for candidate in range(newest - 1, -1, -1):
        reference = values[max(0, candidate - options.window):candidate]
        low, high = band_of(reference, options)
        streak = values[candidate:newest + 1]
        if not (gate.verdicts(*outside(streak, low, high)) == 1.0).all():
            break
        start = candidate
    return start
