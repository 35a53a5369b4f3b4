"""One cell as a plain Python value: what a JSON summary, a chart spec's data and a gate's failure record hold.

The one cleaner every output shares, so that "unknown" is null the same way everywhere (docs/json-schema.md)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

# pandas' string dtype as one object: `dtype="string"` is looked up again at each use, about 50 µs a time (half of
# a string Series' making on a few rows), and small runs make a few hundred.
STRING = pd.StringDtype()


def plain_value(value: Any) -> Any:
    """None for a missing or non-finite value (None, NA, NaT, NaN, ±inf); numpy scalars as Python numbers."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if hasattr(value, "item"):  # a numpy scalar, also one left in an object column
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
