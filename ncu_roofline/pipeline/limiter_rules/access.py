"""Traffic thrown away: global sectors moved beyond the ideal for the same requests (UncoalescedAccess.py) and
shared-memory wavefronts replayed for bank conflicts (UncoalescedSharedAccess.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...core.vocabulary import txn_column
from .registry import Verdict, col, fmt, known, phrases, ratio, rule, undecided
from .settings import LimiterSettings


@rule("uncoalesced")
def check_uncoalesced(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    sectors, requests, ideal = (col(f, c) for c in ("sectors_global", "requests_global", "sectors_global_ideal"))
    decided = known(sectors, requests, ideal)
    if not decided.any():
        return undecided(len(f), ("sectors_global", "requests_global", "sectors_global_ideal"))
    times = ratio(sectors, ideal)
    holds = decided & (requests > 0) & ~np.isnan(times) & (times >= s.thresholds["uncoalesced_ratio"])
    return Verdict(holds, decided, phrases(holds, lambda p: (
        fmt(p(sectors) / p(requests)) + " sectors/request, ideal " + fmt(p(ideal) / p(requests)))),
        ("sectors_global", "requests_global", "sectors_global_ideal"),
        np.where(holds, col(f, "time_s") * (1 - 1 / times), np.nan))  # ours: the wasted sectors' share of time


@rule("bank_conflicts")
def check_bank_conflicts(f: pd.DataFrame, s: LimiterSettings) -> Verdict:
    wavefronts, ideal = col(f, txn_column("shared")), col(f, "txn_shared_ideal")
    decided = known(wavefronts, ideal)
    if not decided.any():
        return undecided(len(f), (txn_column("shared"), "txn_shared_ideal"))
    times = ratio(wavefronts, ideal)
    holds = decided & ~np.isnan(times) & (times >= s.thresholds["bank_conflict_ratio"])
    return Verdict(holds, decided, phrases(holds, lambda p: (
        fmt(p(times)) + " shared wavefronts per conflict-free one (" + fmt(p(wavefronts) - p(ideal)) + " of "
        + fmt(p(wavefronts)) + " are bank conflicts)")), (txn_column("shared"), "txn_shared_ideal"),
        np.where(holds, col(f, "time_s") * (1 - 1 / times), np.nan))  # ours: the replays' share of time
