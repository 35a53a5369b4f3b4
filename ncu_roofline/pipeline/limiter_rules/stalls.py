"""Issuing or waiting (IssueSlotUtilization.py, the CPIStall rules): issue slots >= 80 % busy is `issue`; below,
`latency`, naming the largest of every stall reason NCU weighs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .registry import Verdict, col, fmt, percent, phrases, rule, shared, texts
from .settings import LimiterSettings


def top_stall(f: pd.DataFrame, stalls: dict[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the index of the largest stall reason (cycles per issued instruction) and its cycles."""
    values = np.column_stack([col(f, c) for c in stalls]) if stalls else np.full((len(f), 1), np.nan)
    filled = np.where(np.isnan(values), -np.inf, values)
    index = np.argmax(filled, axis=1)
    return index, values[np.arange(len(f)), index]


def _issue(f: pd.DataFrame, s: LimiterSettings, full_slots: bool) -> Verdict:
    issue, cycles = col(f, "issue_active"), col(f, "warp_cycles_per_issue")
    decided = ~np.isnan(issue)
    full = decided & (issue >= s.thresholds["issue_full"])
    holds = full if full_slots else decided & ~full
    if not holds.any():
        return Verdict(holds, decided, shared(len(f), None, "object"), ("issue_active",))
    index, stall = top_stall(f, s.stalls)
    names = np.asarray(list(s.stalls.values()) or [""], dtype=object)

    def build(p) -> np.ndarray:
        of = texts(np.isnan(p(cycles)), "", " of " + fmt(p(cycles)))
        why = texts(np.isnan(p(stall)), "", "; " + fmt(p(stall)) + of + " cycles per instruction: " + names[p(index)])
        return "issue slots " + percent(100 * p(issue)) + " busy" + why
    # CPIStall's estimate: the largest stall's share of a warp's cycles per issued instruction
    gain = np.where(holds & ~full_slots, col(f, "time_s") * stall / cycles, np.nan)
    return Verdict(holds, decided, phrases(holds, build), ("issue_active",), np.where(np.isfinite(gain), gain, np.nan))


@rule("issue")
def check_issue(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    return _issue(f, s, True)


@rule("latency")
def check_latency(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    return _issue(f, s, False)
