"""The launch itself: a grid too small or too short to fill the GPU (SpeedOfLight.py's Small Grid, ncu-roofline's
5 µs), a partial last wave (LaunchStatistics.py), and a launch limit that keeps occupancy low (Occupancy.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .registry import Verdict, col, fmt, known, percent, phrases, rule, texts, undecided
from .settings import LimiterSettings


@rule("launch")
def check_launch(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    t = s.thresholds
    time_s, waves, sms, blocks = (col(f, c) for c in ("time_s", "waves", "sm_count", "grid_blocks"))
    short = ~np.isnan(time_s) & (time_s < t["launch_time_s"])
    if not short.any() and np.isnan(waves).all():  # no waves and no short launch: decided nowhere
        return undecided(len(f), ("waves",))
    small = ~np.isnan(waves) & (waves < t["launch_waves"])

    def build(p) -> np.ndarray:
        grid = texts(np.isnan(p(sms)), "", " on " + fmt(p(sms)) + " SMs") \
            + texts(np.isnan(p(blocks)), "", " (" + fmt(p(blocks)) + " blocks)")
        return texts(p(short), fmt(p(time_s) * 1e6) + " µs per launch", fmt(p(waves)) + " waves" + grid)
    # ours: a grid of w < 1 waves leaves 1 - w of the SMs idle; a short launch's overhead is outside its time
    gain = np.where(small & ~short, time_s * (1 - waves), np.nan)
    return Verdict(short | small, short | ~np.isnan(waves), phrases(short | small, build), ("waves",), gain)


@rule("tail")
def check_tail(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    t = s.thresholds
    waves, occ, theo = (col(f, c) for c in ("waves", "occupancy_pct", "occupancy_theoretical_pct"))
    decided = known(waves, occ, theo)
    if not decided.any():
        return undecided(len(f), ("waves", "occupancy_pct", "occupancy_theoretical_pct"))
    whole = np.floor(waves)
    partial = waves - whole
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(partial > 0, 1.0 / (whole + 1.0), 0.0)
    holds = decided & (whole >= 1) & (effect >= t["tail_effect"]) & (occ < theo * t["tail_occupancy_ratio"])
    return Verdict(holds, decided, phrases(holds, lambda p: (
        fmt(p(waves)) + " waves: the partial last wave may take up to " + percent(100 * p(effect))
        + " of the time (occupancy " + percent(p(occ)) + " of " + percent(p(theo)) + " theoretical)")),
        ("waves", "occupancy_pct", "occupancy_theoretical_pct"),
        np.where(holds, col(f, "time_s") * effect, np.nan))  # LaunchStatistics.py: the potential tail effect


_OCCUPANCY_LIMITS = (("blocks_limit_registers", "registers"), ("blocks_limit_shared_mem", "shared memory"),
                     ("blocks_limit_warps", "block size"), ("blocks_limit_blocks", "blocks per SM"))


@rule("occupancy")
def check_occupancy(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    t = s.thresholds
    occ, theo = col(f, "occupancy_pct"), col(f, "occupancy_theoretical_pct")
    decided = known(occ, theo, *(col(f, c) for c, _ in _OCCUPANCY_LIMITS))
    needs = ("occupancy_pct", "occupancy_theoretical_pct", *(c for c, _ in _OCCUPANCY_LIMITS))
    if not decided.any():
        return undecided(len(f), needs)
    limits = np.column_stack([col(f, c) for c, _ in _OCCUPANCY_LIMITS])
    holds = decided & (theo < 100 - 1e-9) & (occ < t["occupancy_low_pct"])
    registers, shared, block = (col(f, c) for c in ("registers_per_thread", "shared_mem_per_block", "block_size"))

    def build(p) -> np.ndarray:
        mine = p(limits)
        lowest = np.nanmin(mine, axis=1)
        details = (("registers (", fmt(p(registers)), "/thread)", p(registers)),
                   ("shared memory (", fmt(p(shared)), " B/block)", p(shared)),
                   ("block size (", fmt(p(block)), " threads/block)", p(block)),
                   ("blocks per SM (", fmt(lowest), " blocks/SM)", lowest))
        why = np.full(len(lowest), "", dtype=object)
        for j, (name, value, unit, raw) in enumerate(details):
            text = texts(np.isnan(raw), name[:-2], name + value + unit)
            binding = mine[:, j] == lowest
            why = np.where(binding, why + texts(why == "", "", " and ") + text, why).astype(object)
        return "occupancy " + percent(p(occ)) + " (theoretical " + percent(p(theo)) + "), limited by " + why
    # Occupancy.py's estimate for a theoretical limit: the share of warp slots the limit leaves empty
    return Verdict(holds, decided, phrases(holds, build), needs,
                   np.where(holds, col(f, "time_s") * (1 - theo / 100), np.nan))
