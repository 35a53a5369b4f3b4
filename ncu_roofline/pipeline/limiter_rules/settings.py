"""metrics/limiters.toml read once: thresholds, the rule order, each rule's table, the stall reasons, the device
constants of the instruction roofline. A scratch copy of the file (a new rule, tests) reads through `path`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ...core.data import METRICS_DIR
from ..catalogue import LIMITERS_FILE, read_toml


@dataclass(frozen=True)
class LimiterSettings:
    thresholds: dict[str, float]
    order: tuple[str, ...]
    rules: dict[str, dict]  # [rules.NAME]: holds, next_step, ncu (the NCU verdicts it stands for)
    schedulers_per_sm: int
    sector_bytes: float  # bytes of one L1/L2/DRAM transaction (a sector)
    stalls: dict[str, str]  # stall column -> what a person reads
    sections: tuple[str, ...]  # ncu sections that collect the counters
    quantities: tuple[str, ...]  # every quantity limiters.toml defines


@cache
def limiter_settings(path: Path | None = None) -> LimiterSettings:
    data = read_toml(path or METRICS_DIR / LIMITERS_FILE)
    return LimiterSettings(
        thresholds={name: float(entry["value"]) for name, entry in data["thresholds"].items()},
        order=tuple(data["order"]["limiters"]), rules=dict(data.get("rules", {})),
        schedulers_per_sm=int(data["device"]["schedulers_per_sm"]),
        sector_bytes=float(data["device"]["sector_bytes"]),
        stalls=dict(data["stalls"]), sections=tuple(data["collect"]["sections"]),
        quantities=tuple(k for k, v in data.items() if isinstance(v, list)))
