"""CI gates: `--fail-on` expressions, parsed once and checked against a comparison's changes.

A gate says which change is bad, in the units a reviewer thinks in; it is data, so the Markdown, the JSON and the
exit code all report the same thing. Grammar (spaces allowed around the operator):

    gate      := [scope ":"] metric op number unit
    scope     := "kernel" (the default: every matched kernel at or above --min-time) | "total" (the run's totals)
    metric    := time_s | flop_per_s | roofline_fraction | headroom_s | t_sol_s | flop_total | ai_dram
    op        := ">" | ">=" | "<" | "<="
    number    := a signed decimal, e.g. +5, -0.05, 2.5e-1
    unit      := "%"                  the relative change in percent, 100 · (head - base) / base (any metric)
               | "pt"                 points: the absolute change of a fraction (roofline_fraction) in its own
                                      units, so 0.05pt is five percentage points
               | the metric's unit    the absolute change head - base: s, ms, us (µs), ns for the `*_s` times;
                                      FLOP/s with k, M, G, T, P for flop_per_s; FLOP (k...P) for flop_total;
                                      FLOP/B for ai_dram

The unit is required: a bare number (`time_s>5`) is refused, because it reads as +5 % to one reader and +5 s to
another, and a gate misread as +5 s silently passes forever. The sign is part of the number and is taken
literally: `time_s>+5%` fails when time grew by more than 5 %; `time_s>+50us` when it grew by more than 50 µs;
`roofline_fraction<-0.05pt` when the fraction fell by more than 0.05; `total:time_s>-10%` fails unless the run
got at least 10 % faster. `Gate.threshold` holds percent for `%`, else the metric's base unit (seconds, FLOP/s,
FLOP, FLOP/B, a fraction).

A change that cannot be computed (a metric unknown in either run, or a relative change from zero) is skipped,
never counted as a pass or a failure; kernels found in only one run have no change, so only the total gates see
them.
"""

from __future__ import annotations

import math
import operator
import re
from decimal import Decimal
from dataclasses import dataclass, field
from typing import Callable, Iterable, Literal

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.values import plain_value
from ..core.vocabulary import AI_OFF_CHIP, APP_GPU_TIME, APP_HEADROOM, APP_TIME
from ..readers.units import unit_factor

# with --nsys on both sides also the app columns (per kernel) and the run's GPU time (total: scope)
GATE_METRICS = ("time_s", "flop_per_s", "roofline_fraction", "headroom_s", "t_sol_s", "flop_total", AI_OFF_CHIP,
                APP_TIME, APP_HEADROOM, APP_GPU_TIME)
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
}
_GATE = re.compile(
    r"^\s*(?:(?P<scope>[A-Za-z]+)\s*:)?\s*(?P<metric>[A-Za-z_0-9]+)\s*(?P<op>>=|<=|>|<)\s*"
    r"(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<unit>%|[A-Za-zµ/]+)?\s*$"
)
EXAMPLE = "'time_s>+5%', 'time_s>+50us', 'roofline_fraction<-0.05pt', 'total:time_s>+2%'"

# What each gate metric measures; a metric added to GATE_METRICS needs a line here only when its name does not
# end in `_s` (every `*_s` metric but a rate is a time in seconds).
DIMENSIONS = {"flop_per_s": "rate", "flop_total": "count", AI_OFF_CHIP: "intensity", "roofline_fraction": "fraction"}
_PREFIXES = ("", "k", "M", "G", "T", "P")
# dimension -> the unit spellings a threshold may carry; their factors to the metric's base unit are ncu's own unit
# table's (readers/units.unit_factor), a fraction's points are the fraction itself
UNITS: dict[str, tuple[str, ...]] = {
    "time": ("s", "ms", "us", "µs", "ns"),
    "rate": tuple(f"{p}FLOP/s" for p in _PREFIXES),
    "count": tuple(f"{p}FLOP" for p in _PREFIXES),
    "intensity": ("FLOP/B",),
    "fraction": ("pt",),
}
_SPELLED = {"time": "+50us", "rate": "-1TFLOP/s", "count": "+1GFLOP", "intensity": "-0.5FLOP/B",
            "fraction": "<-0.05pt"}


def dimension(metric: str) -> str:
    """What a gate metric measures: a key of UNITS."""
    return DIMENSIONS.get(metric, "time" if metric.endswith("_s") else "fraction")


@dataclass(frozen=True)
class Gate:
    """One parsed `--fail-on` expression."""

    text: str
    scope: Literal["kernel", "total"]
    metric: str
    op: str
    threshold: float  # percent when `relative`, else the metric's base unit (seconds, FLOP/s, ...)
    relative: bool
    unit: str = "%"  # as written: "%", "pt" or the metric's unit ("us", "GFLOP/s", ...)

    def verdicts(self, change: object, change_pct: object) -> np.ndarray:
        """Per value: 1.0 where the change is beyond the threshold, 0.0 where not, NaN where it cannot be judged
        (unknown or infinite). The one evaluation of a gate: compare's kernels and totals, history's bands."""
        value = _floats(change_pct if self.relative else change)
        judged = np.isfinite(value)
        failed = np.zeros(value.shape, bool)
        failed[judged] = OPERATORS[self.op](value[judged], self.threshold)
        return np.where(judged, failed.astype("float64"), np.nan)

    def fails(self, change: float, change_pct: float) -> bool | None:
        """True when the change is beyond the threshold, False when not, None when it cannot be judged."""
        verdict = float(self.verdicts([change], [change_pct])[0])
        return None if math.isnan(verdict) else verdict == 1.0

    @property
    def column(self) -> str:
        """The comparison column the gate reads: `<metric>_change_pct` or `<metric>_change`."""
        return f"{self.metric}_change_pct" if self.relative else f"{self.metric}_change"


@dataclass(frozen=True)
class GateResult:
    """A gate checked against one comparison: which kernels (or the totals) it failed on."""

    gate: Gate
    checked: int  # kernels (or 1 for totals) whose change could be judged
    skipped: int  # kernels in scope whose change could not be judged
    failures: list[dict[str, object]] = field(default_factory=list)  # one per failing kernel, or the totals

    @property
    def judged(self) -> bool:
        """Whether the gate looked at anything: in `compare`, one that judged no kernel (a broken report, no match,
        every value unknown) has proven nothing and is an error, never a pass (history gates over a single run
        judge nothing by design and keep `passed`)."""
        return self.checked > 0

    @property
    def passed(self) -> bool:
        return not self.failures


def parse_gate(text: str) -> Gate:
    """Parse one expression; a malformed one is an InputError that shows the grammar by example."""
    match = _GATE.match(text or "")
    if not match:
        raise InputError(None, f"--fail-on {text!r}: expected [total:]METRIC(>|<)NUMBER UNIT, e.g. {EXAMPLE}")
    scope = (match["scope"] or "kernel").lower()
    if scope not in {"kernel", "total"}:
        raise InputError(None, f"--fail-on {text!r}: scope must be 'kernel' or 'total', not {match['scope']!r}")
    metric = match["metric"]
    if metric not in GATE_METRICS:
        raise InputError(None, f"--fail-on {text!r}: unknown metric {metric!r}; choose from {', '.join(GATE_METRICS)}")
    number, unit = match["number"], match["unit"]
    threshold = float(number)
    if not math.isfinite(threshold):  # "1e999" overflows to inf, which no change can pass
        raise InputError(None, f"--fail-on {text!r}: the threshold {number} is beyond any finite number")
    kind = dimension(metric)
    spellings = (f"'{metric}<-5%' (percent) or '{metric}{_SPELLED[kind]}' (points)" if kind == "fraction" else
                 f"'{metric}>+5%' (percent), '{metric}>{_SPELLED[kind]}' (a value with its unit) or points for a "
                 "fraction ('roofline_fraction<-0.05pt')")
    if unit is None:
        raise InputError(None, f"--fail-on {text!r}: {number} has no unit, and a bare number is refused (+5 % or "
                               f"+5 s?); write {spellings}")
    if unit == "%":
        return Gate(text=text.strip(), scope=scope, metric=metric, op=match["op"], threshold=threshold,
                    relative=True)
    known = UNITS[kind]
    spelled = unit if unit in known else unit.replace("flop", "FLOP")
    factor = None if spelled not in known else 1.0 if kind == "fraction" else unit_factor(spelled)
    if factor is None:
        raise InputError(None, f"--fail-on {text!r}: {unit!r} is not a unit of {metric}; write {spellings}, or "
                               f"use one of {', '.join(['%', *known])}")
    threshold = float(Decimal(number) * Decimal(repr(factor)))  # 50us is 5e-05 s exactly, not 4.9999e-05
    return Gate(text=text.strip(), scope=scope, metric=metric, op=match["op"], threshold=threshold, relative=False,
                unit=unit)


def parse_gates(texts: Iterable[str]) -> list[Gate]:
    return [parse_gate(text) for text in texts]


def evaluate_gates(gates: Iterable[Gate], kernels: pd.DataFrame, totals: pd.DataFrame) -> list[GateResult]:
    """Check each gate: kernel gates against matched rows with `gated` set, total gates against the totals.

    `kernels` is a comparison table (one row per kernel, `<metric>_{base,head,change,change_pct}` columns, `gated`,
    `verdict`); `totals` has one row per metric with `base`, `head`, `change`, `change_pct`.
    """
    results = []
    for gate in gates:
        if gate.scope == "total":
            row = totals.loc[gate.metric] if gate.metric in totals.index else None
            verdict = None if row is None else gate.fails(row["change"], row["change_pct"])
            failures = [{"scope": "total", "metric": gate.metric, **{k: plain_value(row[k]) for k in
                                                                    ("base", "head", "change", "change_pct")}}
                        ] if verdict else []
            results.append(GateResult(gate, checked=int(verdict is not None), skipped=int(verdict is None),
                                      failures=failures))
            continue
        in_scope = kernels[kernels["gated"].to_numpy(dtype=bool)]
        outcome = gate.verdicts(in_scope[f"{gate.metric}_change"], in_scope[f"{gate.metric}_change_pct"])
        failing = in_scope[outcome == 1.0]
        failures = [{
            "kernel_name": plain_value(row["kernel_name"]), "grid": plain_value(row["grid_head"]),
            "block": plain_value(row["block_head"]), "nvtx_range": plain_value(row.get("nvtx_range_head")),
            "base": plain_value(row[f"{gate.metric}_base"]), "head": plain_value(row[f"{gate.metric}_head"]),
            "change": plain_value(row[f"{gate.metric}_change"]), "change_pct": plain_value(row[f"{gate.metric}_change_pct"]),
        } for _, row in failing.iterrows()]
        results.append(GateResult(gate, checked=int(np.isfinite(outcome).sum()),
                                  skipped=int(np.isnan(outcome).sum()), failures=failures))
    return results


def _floats(values: object) -> np.ndarray:
    """Changes as float64 (None, NA and text that is no number as NaN): what `Gate.verdicts` compares."""
    if isinstance(values, np.ndarray) and values.dtype == np.float64:
        return values
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
