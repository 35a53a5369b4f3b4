"""How every renderer writes numbers and table cells: one formatter, so the terminal, Markdown, JSON-side labels
and charts of analyze and compare all read the same ("2.00 TFLOP/s", "—" for unknown)."""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas and numpy are imported by `positive` only: `ncu-roofline ceilings` starts without them
    import pandas as pd

_SI_PREFIXES = {-12: "p", -9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def format_si(value: float | None, unit: str) -> str:
    """`value` with three significant digits and a decimal SI prefix: `format_si(1.56e12, "B/s")` → "1.56 TB/s".

    One formatter for roof labels and tooltips, so a roof and a point that sit together read the same.
    """
    if missing(value) or not math.isfinite(value):
        return "—"
    value = float(value)
    if value == 0:
        return f"0 {unit}"
    rounded = float(f"{value:.3g}")  # round first, so 999.96e9 becomes 1.00 T rather than 1000 G
    if not math.isfinite(rounded):  # ±1.798e308 rounds up past the largest float
        return f"{value:.2e} {unit}"
    exponent = _si_exponent(rounded)
    mantissa = round(rounded / 10**exponent, 9)
    if not 1e-3 <= abs(mantissa) < 1e6:  # far beyond the prefixes (a denormal 2e-310, ±1.8e308): exponent form
        return f"{rounded:.2e} {unit}"
    decimals = max(0, 2 - int(math.floor(math.log10(abs(mantissa)))))
    return f"{mantissa:.{decimals}f} {_SI_PREFIXES[exponent]}{unit}"


def time_scale(seconds: Iterable[float]) -> tuple[str, float]:
    """The unit (s, ms, µs or ns) a time axis reads in, and its factor from seconds: the prefix `format_si` gives
    the largest value, so the axis tops out between 1 and 1000 in that unit (3.2e-5 s → ("µs", 1e6): 32 µs).
    Nothing finite, or all zero: seconds."""
    finite = [abs(float(v)) for v in seconds if not missing(v) and math.isfinite(float(v))]
    largest = float(f"{max(finite, default=0.0):.3g}")  # as format_si rounds: 999.96 µs reads 1.00 ms
    if largest == 0:
        return "s", 1.0
    exponent = _si_exponent(largest, low=-9, high=0)
    return f"{_SI_PREFIXES[exponent]}s", 10.0 ** -exponent


def _si_exponent(value: float, *, low: int = -12, high: int = 18) -> int:
    """The multiple of 3 whose SI prefix writes `value` (non-zero) with 1 to 999 before it, within [low, high]."""
    return min(max(int(math.floor(math.log10(abs(value)) / 3) * 3), low), high)


def format_number(value: float) -> str:
    """Three significant digits, trailing zeros kept ("2.00", "0.500", "312"), like `format_si`."""
    if missing(value) or not math.isfinite(value):
        return "—"
    if value == 0 or not 1e-3 <= abs(value) < 1e4:
        return f"{value:.3g}"
    decimals = max(0, 2 - int(math.floor(math.log10(abs(value)))))
    return f"{value:.{decimals}f}"



def pct(value: float) -> str:
    """A share or fraction as a percentage with one decimal: 0.123 -> '12.3%'; '—' for unknown (or beyond float).
    Every table, summary, chart text and tooltip writes a percentage this way."""
    return "—" if missing(value) or not math.isfinite(value) else f"{value:.1%}"


def signed_pct(percent: float) -> str:
    """A change already in percent: '+20.0%', '-6.3%'; '—' when unknown."""
    return "—" if missing(percent) or not math.isfinite(percent) else f"{percent:+.1f}%"


def missing(value: object) -> bool:
    """None, NaN, or pandas' NA/NaT. pandas is asked only once something has imported it (a value cannot be one of
    its markers before that), so the GPU table of `ncu-roofline ceilings` is written without importing it."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    pandas = sys.modules.get("pandas")
    return pandas is not None and bool(pandas.isna(value))


# How a speed of light that lacks terms (`sol_complete` false) reads: its headroom an upper bound, its bound unproven.
UPPER_BOUND = "≤ "
UNPROVEN = "?"
INCOMPLETE_LEGEND = ("≤ headroom, ≥ of roof, bound?: the speed of light lacks terms that were not counted, so the "
                     "headroom is an upper bound and the bound unproven (see status)")


def incomplete(complete: object) -> bool:
    """Whether a row's `sol_complete` is false; a table without the column (older files) reads as complete."""
    return complete is False or (not missing(complete) and not bool(complete))


def upper_bound(text: str, complete: object) -> str:
    """'≤ 10.1 ms' where the speed of light is incomplete (the headroom is then an upper bound); unknown stays '—'."""
    return UPPER_BOUND + text if incomplete(complete) and text != "—" else text


def lower_bound(text: str, complete: object) -> str:
    """'≥ 72.0%' for a roofline fraction from an incomplete speed of light (t_sol, its numerator, is a lower bound)."""
    return "≥ " + text if incomplete(complete) and text != "—" else text


def unproven(bound: str, complete: object) -> str:
    """'dram?' where the speed of light is incomplete: an uncounted term may bind instead."""
    return bound + UNPROVEN if incomplete(complete) and bound not in {"—", "unknown"} else bound


def cell(text: object) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def positive(series: pd.Series) -> pd.Series:
    """Finite and above zero: what a log axis can show."""
    import numpy as np
    import pandas as pd

    values = pd.to_numeric(series, errors="coerce").astype(float)
    return pd.Series(np.isfinite(values) & (values > 0), index=series.index)
