"""Noise-aware gates: the newest run judged against the band of the runs before it, not against one baseline.

`compare`'s gates ask whether head moved from base; over a history a kernel's time wanders from run to run, so a
fixed baseline fails on noise. Here, for each kernel (or the run totals, with a `total:` gate) and each gate
metric, the previous `window` runs give a band:

- `minmax` (default): [min, max] of the window's values;
- `mad`: median ± k · 1.4826 · MAD, where MAD = median(|x - median|); the 1.4826 makes k·MAD·1.4826 read as k
  standard deviations for normal noise, so k = 3 is "three sigma", and one wild run barely moves the band.

The newest value's change is its distance outside the band, signed: `newest - high` above it, `newest - low`
below it, 0 inside; in percent, that distance over |the band edge crossed|. The gate's grammar and its literal
reading of the threshold are those of `ncu_roofline.gates`: `time_s>+5%` fails when the newest time is more than
5 % above the highest time of the window. A kernel absent from the newest run, or with no value in the window, is
skipped (neither passed nor failed).

"Since": for a failing kernel, the oldest run of the streak ending at the newest run in which every value is
outside (same side, beyond the threshold) the band of the `window` runs before the streak: where the move began.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import InputError
from .gates import Gate, GateResult, _plain

BANDS = ("minmax", "mad")
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class BandOptions:
    window: int = 10
    band: str = "minmax"
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
    known = values[~np.isnan(values)]
    if not len(known):
        return np.nan, np.nan
    if options.band == "minmax":
        return float(known.min()), float(known.max())
    median = float(np.median(known))
    spread = options.k * MAD_TO_SIGMA * float(np.median(np.abs(known - median)))
    return median - spread, median + spread


def outside(value: float, low: float, high: float) -> tuple[float, float]:
    """(change, change_pct) of `value` outside [low, high]: 0 inside, signed distance to the crossed edge."""
    if np.isnan(value) or np.isnan(low) or np.isnan(high):
        return np.nan, np.nan
    edge = high if value > high else low if value < low else None
    if edge is None:
        return 0.0, 0.0
    change = value - edge
    return change, (100.0 * change / abs(edge) if edge != 0 else np.nan)


def judge(gate: Gate, wide: pd.DataFrame, identity: pd.DataFrame, run_ids: list[str],
          options: BandOptions) -> tuple[GateResult, pd.DataFrame]:
    """Check one gate on `wide` (one row per series, one column per run index, oldest first; the last column is
    the newest run). `identity` (same index) gives each failure its kernel name and shape.

    Returns the gate's result and one row per judged series: `low`, `high`, `newest`, `change`, `change_pct`,
    `failed`, `since_run_id`.
    """
    values = wide.to_numpy(dtype="float64")
    newest_col = values.shape[1] - 1
    window = values[:, max(0, newest_col - options.window):newest_col]
    rows = []
    for position, series_id in enumerate(wide.index):
        low, high = band_of(window[position], options)
        newest = values[position, newest_col]
        change, pct = outside(newest, low, high)
        verdict = gate.fails(change, pct)
        since = _since(gate, values[position], options) if verdict else None
        rows.append({"series_id": series_id, "low": low, "high": high, "newest": newest, "change": change,
                     "change_pct": pct, "failed": verdict, "since_run_id": run_ids[since] if since is not None
                     else None, "window_runs": int((~np.isnan(window[position])).sum())})
    table = pd.DataFrame(rows, columns=["series_id", "low", "high", "newest", "change", "change_pct", "failed",
                                        "since_run_id", "window_runs"])
    failures = []
    for row in table[table["failed"] == True].itertuples(index=False):  # noqa: E712 (None is "not judged")
        who = identity.loc[row.series_id] if row.series_id in identity.index else {}
        failures.append({
            "kernel_name": _plain(who.get("kernel_name", "total")), "grid": _plain(who.get("grid")),
            "block": _plain(who.get("block")), "nvtx_range": _plain(who.get("nvtx_range")),
            "newest": _plain(row.newest), "band_low": _plain(row.low), "band_high": _plain(row.high),
            "window_runs": row.window_runs, "change": _plain(row.change), "change_pct": _plain(row.change_pct),
            "newest_run_id": run_ids[newest_col], "since_run_id": row.since_run_id,
        })
    judged = table["failed"].notna()
    return GateResult(gate, checked=int(judged.sum()), skipped=int((~judged).sum()), failures=failures), table


def _since(gate: Gate, values: np.ndarray, options: BandOptions) -> int | None:
    """The run index where the streak of out-of-band values ending at the newest run began (see the module)."""
    newest = len(values) - 1
    start = newest
    for candidate in range(newest - 1, -1, -1):
        reference = values[max(0, candidate - options.window):candidate]
        low, high = band_of(reference, options)
        streak = values[candidate:newest + 1]
        verdicts = [gate.fails(*outside(v, low, high)) for v in streak]
        if not all(verdicts):
            break
        start = candidate
    return start
