"""Unit strings as ncu prints them, turned into factors to base SI units.

ncu auto-scales values unless `--print-units base` was given, so the same metric arrives as `byte`, `Kbyte`,
`Mbyte`; `ns`, `nsecond`, `usecond`, `us`, `msecond`; `hz`, `Ghz`, `cycle/second`, `cycle/nsecond`. Prefixes are
decimal (ncu's Kbyte is 1000 bytes). Counts (inst, sector, cycle, request, warp, ...) keep their unit: a sector
stays a sector here, and the metric catalogue multiplies by 32 bytes where it means bytes.
"""

from __future__ import annotations

from functools import lru_cache

from ..core.metric_names import metric_kind
from .text import printable

# Powers of ten, so that `cycle/nsecond` is exactly 1e9 and not 1/1e-9.
# Micro as "u", the micro sign (U+00B5) or the Greek mu (U+03BC, as nsys may print it).
_PREFIX = {"": 0, "K": 3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "m": -3, "u": -6, "µ": -6, "μ": -6, "n": -9,
           "p": -12}
# Prefixes that shrink (milli, micro, nano, pico) only make sense on time; on counts "m" would be a typo.
_SMALL_PREFIXES = {"m", "u", "µ", "μ", "n", "p"}

# Base units that take any prefix.
_BASE = {"second", "s", "sec", "hz", "Hz", "byte", "bytes", "B", "bit"}
# Dimensionless counts: prefixes scale them, the name stays.
_COUNTS = {"inst", "sector", "cycle", "request", "warp", "thread", "block", "cluster", "wavefront",
           "transaction", "instruction", "pass", "SM", "register", "msg", "op", "flop", "FLOP", "ops"}
# Ratios and labels that carry no scale.
_NO_SCALE = {"", "%", "pct", "percent", "ratio"}


@lru_cache(maxsize=1024)
def unit_factor(unit: str | None) -> float | None:
    """Factor that turns a value printed in `unit` into base units, or None when the unit is not understood."""
    if unit is None:
        return 1.0
    num, _, den = unit.strip().partition("/")
    en, ed = _exponent(num.strip()), _exponent(den.strip())
    if en is None or ed is None:
        return None
    return 10.0 ** (en - ed)


def _exponent(atom: str) -> int | None:
    """Power of ten of one unit atom (`Kbyte` -> 3, `nsecond` -> -9, `inst` -> 0), None when unknown."""
    if atom in _NO_SCALE or atom in _BASE or _is_count(atom):
        return 0
    prefix, rest = atom[:1], atom[1:]
    if prefix in _PREFIX and rest:
        if rest in _BASE:
            return _PREFIX[prefix]
        if _is_count(rest) and prefix not in _SMALL_PREFIXES:
            return _PREFIX[prefix]
    return None


def _is_count(atom: str) -> bool:
    return atom in _COUNTS or (atom.endswith("s") and atom[:-1] in _COUNTS)


def default_unit(metric: str) -> str:
    """The unit ncu prints a metric in with `--print-units base` when no units row says so: nanoseconds for a
    duration (its kind read off the name, core/metric_names.py), no unit otherwise."""
    return "nsecond" if metric_kind(metric) == "time" else ""


def unit_dimension(unit: str | None) -> str | None:
    """What a unit measures: "time", "bytes", "bits", "frequency", "cycle", "count" (other counts), "none" (no
    unit, %, ratio), "per_time" (anything per second), "per_cycle", "other"; None when not understood."""
    if unit_factor(unit) is None:
        return None
    num, slash, den = (unit or "").strip().partition("/")
    if slash:
        below = _atom_dimension(den.strip())
        return "per_time" if below == "time" else "per_cycle" if below == "cycle" else "other"
    return _atom_dimension(num.strip())


def _atom_dimension(atom: str) -> str:
    bare = atom[1:] if atom[:1] in _PREFIX and atom[1:] and _exponent(atom) is not None and atom not in _COUNTS \
        and atom not in _BASE and atom not in _NO_SCALE else atom
    if bare in _NO_SCALE:
        return "none"
    if bare in ("second", "s", "sec"):
        return "time"
    if bare in ("byte", "bytes", "B"):
        return "bytes"
    if bare == "bit":
        return "bits"
    if bare in ("hz", "Hz"):
        return "frequency"
    if bare in ("cycle", "cycles"):
        return "cycle"
    return "count"


# The units that fit each kind of metric (core.metric_names.metric_kind), and why. A value in a unit of another
# dimension is refused, never converted: `850 cycle` as a duration would read as 850 s, and `inst/cycle` on a
# byte counter is no amount of bytes. "none" (no unit) is how `--print-units base` pages and dimensionless exports
# print base units, so it fits everything but a duration, whose base ncu prints in nanoseconds.
UNIT_FITS: dict[str, tuple[frozenset[str], str]] = {
    "time": (frozenset({"time"}), "a duration, in seconds"),
    "bytes": (frozenset({"bytes", "none"}), "a byte count"),
    "cycles": (frozenset({"cycle", "none"}), "a cycle count"),
    "rate": (frozenset({"per_time", "frequency", "none"}), "a rate per second"),
    "per_cycle": (frozenset({"per_cycle", "none"}), "a rate per cycle"),
    "ratio": (frozenset({"none"}), "a ratio or percentage"),
}


@lru_cache(maxsize=4096)
def metric_unit_factor(metric: str, unit: str | None) -> tuple[float | None, str | None]:
    """(factor to base units, None), or (None, why the unit is refused for this metric): not understood, or of
    another dimension than the metric's name says (UNIT_FITS)."""
    factor = unit_factor(unit)
    if factor is None:
        return None, f"unit '{printable(unit or '')}' of {metric} not understood"
    kind = metric_kind(metric)
    if kind is not None and unit is not None:
        fits, what = UNIT_FITS[kind]
        if unit_dimension(unit) not in fits:
            return None, f"unit '{printable(unit)}' does not fit {metric} ({what}): value not used"
    return factor, None
