"""What an ncu metric name says about how its values combine.

`<unit>__<counter>.<rollup>.<submetric>`: a counter rolled up with `.sum`/`.avg`/`.min`/`.max` and no submetric is a
per-launch amount (bytes, instructions, cycles, nanoseconds) and adds up over launches. Submetrics such as
`.per_second`, `.peak_sustained`, `.pct_of_peak_sustained_elapsed` are rates or ratios, and device attributes and
launch settings describe the launch: those are averaged, never summed.
"""

from __future__ import annotations

from functools import lru_cache

_INTENSIVE_PREFIXES = ("device__", "launch__", "profiler__", "numa__", "nvlink__", "c2clink__", "pmsampling__")
_INTENSIVE_PARTS = ("per_", "peak", "pct", "ratio", "max_rate")


@lru_cache(maxsize=8192)
def is_extensive(name: str) -> bool:
    """True when values of `name` add up over launches (a total), False for rates, peaks and attributes."""
    if any(name.startswith(p) or f".{p}" in name for p in _INTENSIVE_PREFIXES):
        return False
    # The submetric is whatever follows the rollup: "dram__bytes.sum.per_second" -> "per_second".
    parts = name.split(".")
    for part in parts[1:]:
        if part.startswith(_INTENSIVE_PARTS):
            return False
    return True
