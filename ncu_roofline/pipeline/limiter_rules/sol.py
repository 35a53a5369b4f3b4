"""Speed of light per unit, as Nsight Compute's SpeedOfLight.py (SOLBottleneck) reads it: the busiest of SM and
memory at >= 80 % of its peak is the roof (the unit named); both under 60 % sends the kernel down the latency
branch (the later rules); in between, compute- or memory-heavy by a 10-point gap, else balanced."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.vocabulary import SOL_COMPLETE
from .registry import Verdict, col, known, percent, phrases, rule, shared, undecided
from .settings import LimiterSettings

_UNITS = (("SM", "sol_sm_pct"), ("L1TEX", "sol_l1tex_pct"), ("L2", "sol_l2_pct"), ("DRAM", "sol_dram_pct"))
_MEMORY_UNITS = _UNITS[1:]
SOL_NEEDS = ("sol_sm_pct", "sol_memory_pct")


def _sol(f: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """SM and memory SOL % per row; memory is gpu__compute_memory_throughput, else the busiest memory unit."""
    if not any(c in f for _, c in _MEMORY_UNITS) and "sol_memory_pct" not in f:
        return col(f, "sol_sm_pct"), shared(len(f), np.nan)
    units = np.column_stack([col(f, c) for _, c in _MEMORY_UNITS])
    with np.errstate(invalid="ignore"):
        busiest = np.where(np.isnan(units).all(axis=1), np.nan, np.nanmax(np.where(np.isnan(units), -np.inf, units),
                                                                           axis=1))
    memory = col(f, "sol_memory_pct")
    return col(f, "sol_sm_pct"), np.where(np.isnan(memory), busiest, memory)


def _busiest(f: pd.DataFrame, units, fallback: np.ndarray, fallback_name: str) -> tuple[np.ndarray, np.ndarray]:
    """The busiest named unit and its %, per row; `fallback_name` with `fallback` where no unit was measured."""
    values = np.column_stack([col(f, c) for _, c in units])
    filled = np.where(np.isnan(values), -np.inf, values)
    index = np.argmax(filled, axis=1)
    value = values[np.arange(len(f)), index]
    names = np.asarray([n for n, _ in units], dtype=object)[index]
    none = np.isnan(value)
    return np.where(none, fallback_name, names).astype(object), np.where(none, fallback, value)


@rule("roof")
def check_roof(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    t = s.thresholds
    sm, memory = _sol(f)
    measured = known(sm, memory)
    top = np.fmax(sm, memory)
    fraction = col(f, "roofline_fraction")
    # no SOL counters (a CSV of roofline counters): the roofline's own fraction stands in (docs/limiters.md)
    by_fraction = ~measured & ~np.isnan(fraction) & (fraction >= t["roof_fraction"])
    by_sol = measured & (top >= t["roof_pct"])
    holds = by_sol | by_fraction
    name, value = _busiest(f, _UNITS, top, "memory") if by_sol.any() else (shared(len(f), "", "object"), top)

    def build(p) -> np.ndarray:  # the bound marks only for the rows that hold
        complete = p(f[SOL_COMPLETE].to_numpy(dtype=bool, na_value=True)) if SOL_COMPLETE in f else True
        bound = np.where(complete, "", "≥ ").astype(object)
        return np.where(p(by_sol), p(name) + " " + percent(p(value)) + " of peak",
                        percent(100 * p(fraction), bound) + " of its roof").astype(object)
    return Verdict(holds, measured | ~np.isnan(fraction), phrases(holds, build), SOL_NEEDS,
                   np.where(holds, col(f, "headroom_s"), np.nan))


def _heavy(f: pd.DataFrame, s: LimiterSettings, which: str) -> Verdict:
    t = s.thresholds
    sm, memory = _sol(f)
    decided = known(sm, memory)
    if not decided.any():  # no SOL counters: not tested anywhere
        return undecided(len(f), SOL_NEEDS)
    busy = decided & (np.fmax(sm, memory) >= t["latency_pct"]) & (np.fmax(sm, memory) < t["roof_pct"])
    gap = sm - memory
    holds = busy & {"compute": gap >= t["heavy_gap_pct"], "memory": -gap >= t["heavy_gap_pct"],
                    "balanced": np.abs(gap) < t["heavy_gap_pct"]}[which]
    unit, unit_pct = _busiest(f, _MEMORY_UNITS, memory, "")

    def build(p) -> np.ndarray:
        mem = "memory " + percent(p(memory)) + np.where(p(unit) == "", "", " (" + p(unit) + " " + percent(p(unit_pct))
                                                        + ")").astype(object)
        sm_text = "SM " + percent(p(sm))
        first, second = (mem, sm_text) if which == "memory" else (sm_text, mem)
        return first + ", " + second + " of peak"
    time_s = col(f, "time_s")
    # ours: the time the busier unit is idle, were it run at its peak
    return Verdict(holds, decided, phrases(holds, build), SOL_NEEDS,
                   np.where(holds, time_s * (1 - np.fmax(sm, memory) / 100), np.nan))


@rule("compute")
def check_compute(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    return _heavy(f, s, "compute")


@rule("memory")
def check_memory(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    return _heavy(f, s, "memory")


@rule("balanced")
def check_balanced(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    return _heavy(f, s, "balanced")
