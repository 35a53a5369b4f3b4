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


# What a plain counter (no submetric) measures, by a token of its counter name: the kinds whose unit a reader can
# check. Other counters (instructions, sectors, warps, attributes) take any count unit.
_COUNTER_KINDS = (("time", "time"), ("bytes", "bytes"), ("cycles", "cycles"))
# What a submetric makes of any counter: a rate per second, a rate per cycle (peaks are per cycle), a ratio.
_SUBMETRIC_KINDS = (("per_second", "rate"), ("pct", "ratio"), ("ratio", "ratio"), ("per_cycle", "per_cycle"),
                    ("peak_sustained", "per_cycle"))


@lru_cache(maxsize=8192)
def metric_kind(name: str) -> str | None:
    """The dimension a value of `name` has: "time", "bytes", "cycles" (plain counters), "rate", "per_cycle",
    "ratio" (submetrics), or None where the name does not say (device attributes, other counters).

    `gpu__time_duration.sum` -> time, `dram__bytes_read.sum` -> bytes, `sm__cycles_elapsed.avg` -> cycles,
    `dram__bytes.sum.per_second` -> rate, `dram__bytes.sum.peak_sustained` -> per_cycle."""
    if any(name.startswith(p) or f".{p}" in name for p in _INTENSIVE_PREFIXES):
        return None
    parts = name.split(".")
    at = next((i for i, part in enumerate(parts) if "__" in part), 0)  # past a section prefix `SM.TriageA.`
    counter, rest = parts[at], parts[at + 1:]
    for part in rest[1:]:  # after the rollup
        for token, kind in _SUBMETRIC_KINDS:
            if part.startswith(token):
                return kind
    if len(rest) > 1:
        return None  # a submetric this table does not know
    tokens = counter.split("__", 1)[-1].split("_")
    for token, kind in _COUNTER_KINDS:
        if token in tokens:
            return kind
    return None
