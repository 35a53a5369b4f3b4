"""The limiter's rule registry: a rule is one function registered under its name plus one `[rules.NAME]` table in
metrics/limiters.toml (its next step, the NCU verdicts it stands for) and its place in `[order]`.

A rule sees the launch or group rows and the thresholds, and answers per row with a `Verdict`: where it holds,
where it could be decided (its counters were present), the evidence in words and the time it estimates a fix
would save. The evidence is written here, by `fmt` and `percent` only, so every rule writes numbers alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..expressions import one_value


@dataclass
class Verdict:
    holds: np.ndarray  # bool per row
    decided: np.ndarray  # bool per row: its counters were there (an undecided rule is skipped, "not tested")
    evidence: np.ndarray  # object: the sentence where the rule holds, None elsewhere
    needs: tuple[str, ...]  # quantities whose absence leaves it undecided
    gain_s: np.ndarray | None = None  # the time a fix would save (s), where it holds; None: not estimated


Rule = Callable[[pd.DataFrame, dict[str, float]], Verdict]
RULES: dict[str, Rule] = {}


def rule(name: str) -> Callable[[Rule], Rule]:
    """Register `fn` as the rule `name` (its table is `[rules.NAME]`, its place the name in `[order]`)."""
    def register(fn: Rule) -> Rule:
        RULES[name] = fn
        return fn
    return register


def col(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A quantity as float64; an absent one is null on every row (`shared`: read-only, never written)."""
    return frame[name].to_numpy(dtype="float64") if name in frame else shared(len(frame), np.nan)


def shared(n: int, value: object, dtype: str = "float64") -> np.ndarray:
    """`value` on `n` rows as a read-only view of one element (`one_value`): a capture without the limiter's
    counters reads some twenty absent quantities and builds as many empty verdicts, and at 10^6 launches each
    fresh array was 8 MB of first-touched memory (most of the limiter's time there)."""
    return one_value(n, value, dtype)


def undecided(n: int, needs: tuple[str, ...]) -> Verdict:
    """The verdict of a rule whose counters no row has: decided nowhere, holds nowhere, no evidence."""
    nowhere = shared(n, False, "bool")
    return Verdict(nowhere, nowhere, shared(n, None, "object"), needs)


def known(*arrays: np.ndarray) -> np.ndarray:
    """Rows where every array has a value: one running mask, not a stack of the arrays' masks."""
    out = ~np.isnan(arrays[0])
    for array in arrays[1:]:
        out &= ~np.isnan(array)
    return out


def ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        value = top / bottom
    return np.where(np.isfinite(value), value, np.nan)


def fmt(values: np.ndarray) -> np.ndarray:
    """Three significant digits over an array, as an object array of str (so that `+` joins texts element-wise)."""
    values = np.asarray(values, dtype="float64")
    distinct, inverse = np.unique(values, return_inverse=True)  # launches of one kernel repeat their numbers
    return np.asarray([f"{v:.3g}" for v in distinct.tolist()], dtype=object)[inverse.reshape(values.shape)]


def percent(values_pct: np.ndarray, bound: np.ndarray | str = "") -> np.ndarray:
    """Percentages (already in %) the way the tables write them (render/numbers.pct: one decimal, '91.7%'), with
    `bound` ('≥ ', '≤ ' or '' per row) in front where the number is a bound."""
    values = np.asarray(values_pct, dtype="float64")
    distinct, inverse = np.unique(values, return_inverse=True)
    texts = np.asarray([f"{v / 100:.1%}" for v in distinct.tolist()], dtype=object)[inverse.reshape(values.shape)]
    return np.asarray(bound, dtype=object) + texts


def phrases(rows: np.ndarray, build) -> np.ndarray:
    """Evidence texts where `rows` hold (None elsewhere): `build(pick)` joins `fmt`ed columns, `pick(a)` = a[rows]."""
    if not rows.any():
        return shared(len(rows), None, "object")
    out = np.full(len(rows), None, dtype=object)
    out[rows] = build(lambda values: np.asarray(values)[rows])
    return out


def texts(mask: np.ndarray, yes: np.ndarray | str, no: np.ndarray | str) -> np.ndarray:
    return np.where(mask, yes, no).astype(object)
