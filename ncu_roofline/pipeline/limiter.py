"""Why a launch or kernel group sits below its roof: one `limiter` from a documented vocabulary, with the numbers.

The tests run in the order `metrics/limiters.toml` gives ([order]: the first thing to fix first); the first that
holds is the limiter and `limiter_evidence` says why in a short phrase with its numbers. A test whose counters are
missing cannot be decided: the answer is then `unknown`, naming the metrics to collect (the run note gives the ncu
command once, run_notes.py), unless a test before it already holds. Thresholds, formulas and their sources are data
in `metrics/limiters.toml`; this module only applies them, column-wise.

Also here, the instruction roofline of Ding & Williams (2019): `warp_inst`, `gips` = warp_inst / time_s / 1e9,
`ii_<level>` = warp instructions per transaction, against `peak_warp_gips` (SMs x warp schedulers x SM clock).

Launch rows: `limiter_inputs` (from raw metrics) then `limiter_columns`. Kernel groups: group.py sums the
extensive inputs and time-weights the others (core/vocabulary.py lists which), then `limiter_columns` runs on the
group rows: a group's limiter comes from its sums, never from a vote of its launches.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from ..core.data import METRICS_DIR
from ..core.vocabulary import II_SHARED_IDEAL, INSTRUCTION_LEVELS, LIMITERS, UNKNOWN_LIMITER, ii_column, txn_column
from .catalogue import LIMITERS_FILE, Catalogue, as_columns
from .derive import pick_definition

GIGA = 1e9
NOT_COLLECTED = "not collected: "  # how an `unknown` limiter's evidence starts, then the metrics it lacks


@dataclass(frozen=True)
class LimiterSettings:
    thresholds: dict[str, float]
    order: tuple[str, ...]
    schedulers_per_sm: int
    stalls: dict[str, str]  # stall column -> what a person reads
    sections: tuple[str, ...]  # ncu sections that collect the counters
    quantities: tuple[str, ...]  # every quantity limiters.toml defines


@cache
def limiter_settings() -> LimiterSettings:
    data = tomllib.loads((METRICS_DIR / LIMITERS_FILE).read_text(encoding="utf-8"))
    return LimiterSettings(
        thresholds={name: float(entry["value"]) for name, entry in data["thresholds"].items()},
        order=tuple(data["order"]["limiters"]), schedulers_per_sm=int(data["device"]["schedulers_per_sm"]),
        stalls=dict(data["stalls"]), sections=tuple(data["collect"]["sections"]),
        quantities=tuple(k for k, v in data.items() if isinstance(v, list)))


def limiter_inputs(raw: pd.DataFrame, catalogue: Catalogue) -> pd.DataFrame:
    """Per launch, every limiter and instruction-roofline quantity: the first definition whose inputs are present
    (null where none is: a custom catalogue without limiters.toml gives all nulls)."""
    out = {}
    columns = as_columns(raw)
    for quantity in limiter_settings().quantities:
        defs = catalogue.definitions(quantity)
        out[quantity] = pick_definition(columns, defs).values if defs else np.full(len(raw), np.nan)
    return pd.DataFrame(out, index=raw.index)


def peak_warp_gips(inputs: pd.DataFrame, raw: pd.DataFrame, devices: dict | None) -> np.ndarray:
    """The report's own SMs x schedulers x measured SM clock; else the GPU table's SM count x schedulers per SM x
    the measured clock (the table's boost clock where the report gives none)."""
    peak = inputs["peak_warp_inst_per_s"].to_numpy(dtype="float64") / GIGA
    missing = np.isnan(peak)
    if missing.any() and devices:
        names = (raw["device_name"].astype("object").where(raw["device_name"].notna(), "").to_numpy(dtype=object)
                 if "device_name" in raw else np.full(len(raw), "", dtype=object))
        clock = raw_clock(inputs)
        for name in pd.unique(names[missing]):
            spec = devices.get(None, devices.get(name))  # --gpu: its row stands for every device
            if getattr(spec, "sm_count", None) is None or getattr(spec, "boost_clock_hz", None) is None:
                continue
            rows = missing & (names == name).astype(bool)
            hz = np.where(np.isnan(clock[rows]), spec.boost_clock_hz, clock[rows])
            peak[rows] = spec.sm_count * limiter_settings().schedulers_per_sm * hz / GIGA
    return peak


def raw_clock(inputs: pd.DataFrame) -> np.ndarray:
    if "sm_clock_hz" in inputs:
        return inputs["sm_clock_hz"].to_numpy(dtype="float64")
    return np.full(len(inputs), np.nan)


def instruction_roofline(frame: pd.DataFrame) -> pd.DataFrame:
    """gips and warp instructions per transaction at each level, from (summed) counts; null where a count is."""
    warp_inst = frame["warp_inst"].to_numpy(dtype="float64")
    out = {"gips": _ratio(warp_inst, frame["time_s"].to_numpy(dtype="float64") * GIGA)}
    for level in INSTRUCTION_LEVELS:
        out[ii_column(level)] = _ratio(warp_inst, frame[txn_column(level)].to_numpy(dtype="float64"))
    out[II_SHARED_IDEAL] = _ratio(warp_inst, frame["txn_shared_ideal"].to_numpy(dtype="float64"))
    return pd.DataFrame(out, index=frame.index)


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        value = top / bottom
    return np.where(np.isfinite(value), value, np.nan)


# ------------------------------------------------------------------------------------------------------- tests
# Each test: (holds, decided, evidence) over all rows; evidence is only read where the test holds.

@dataclass
class _Test:
    holds: np.ndarray
    decided: np.ndarray
    evidence: list[str | None]
    needs: tuple[str, ...]  # quantities whose absence leaves it undecided


def _col(frame: pd.DataFrame, name: str) -> np.ndarray:
    return frame[name].to_numpy(dtype="float64") if name in frame else np.full(len(frame), np.nan)


def _known(*arrays: np.ndarray) -> np.ndarray:
    return np.logical_and.reduce([~np.isnan(a) for a in arrays])


def num(value: float) -> str:
    """Three significant digits, the way every evidence number is written (tests format theirs the same way)."""
    return f"{value:.3g}"


def _phrases(rows: np.ndarray, make) -> list[str | None]:
    out: list[str | None] = [None] * len(rows)
    for i in np.flatnonzero(rows):
        out[i] = make(int(i))
    return out


def test_roof(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    fraction = _col(f, "roofline_fraction")
    holds = ~np.isnan(fraction) & (fraction >= t["roof_fraction"])
    # no roof known: the test says nothing and blocks nothing (the other tests do not need a roof)
    return _Test(holds, np.ones(len(f), dtype=bool),
                 _phrases(holds, lambda i: f"{num(100 * fraction[i])} % of its roof"), ())


def test_launch(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    time_s, waves, sms, blocks = (_col(f, c) for c in ("time_s", "waves", "sm_count", "grid_blocks"))
    short = ~np.isnan(time_s) & (time_s < t["launch_time_s"])
    small = ~np.isnan(waves) & (waves < t["launch_waves"])

    def phrase(i: int) -> str:
        if short[i]:
            return f"{num(time_s[i] * 1e6)} µs per launch"
        where = f" on {num(sms[i])} SMs" if not np.isnan(sms[i]) else ""
        grid = f" ({num(blocks[i])} blocks)" if not np.isnan(blocks[i]) else ""
        return f"{num(waves[i])} waves{where}{grid}"
    return _Test(short | small, short | ~np.isnan(waves), _phrases(short | small, phrase), ("waves",))


def test_tail(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    waves, occ, theo = (_col(f, c) for c in ("waves", "occupancy_pct", "occupancy_theoretical_pct"))
    whole = np.floor(waves)
    partial = waves - whole
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(partial > 0, 1.0 / (whole + 1.0), 0.0)
    decided = _known(waves, occ, theo)
    holds = decided & (whole >= 1) & (effect >= t["tail_effect"]) & (occ < theo * t["tail_occupancy_ratio"])
    return _Test(holds, decided, _phrases(holds, lambda i: (
        f"{num(waves[i])} waves: the partial last wave may take up to {num(100 * effect[i])} % of the time "
        f"(occupancy {num(occ[i])} % of {num(theo[i])} % theoretical)")),
        ("waves", "occupancy_pct", "occupancy_theoretical_pct"))


def test_uncoalesced(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    sectors, requests, ideal = (_col(f, c) for c in ("sectors_global", "requests_global", "sectors_global_ideal"))
    decided = _known(sectors, requests, ideal)
    ratio = _ratio(sectors, ideal)
    holds = decided & (requests > 0) & ~np.isnan(ratio) & (ratio >= t["uncoalesced_ratio"])
    return _Test(holds, decided, _phrases(holds, lambda i: (
        f"{num(sectors[i] / requests[i])} sectors/request, ideal {num(ideal[i] / requests[i])}")),
        ("sectors_global", "requests_global", "sectors_global_ideal"))


def test_bank_conflicts(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    wavefronts, ideal = _col(f, txn_column("shared")), _col(f, "txn_shared_ideal")
    decided = _known(wavefronts, ideal)
    ratio = _ratio(wavefronts, ideal)
    holds = decided & ~np.isnan(ratio) & (ratio >= t["bank_conflict_ratio"])
    return _Test(holds, decided, _phrases(holds, lambda i: (
        f"{num(ratio[i])} shared wavefronts per conflict-free one ({num(wavefronts[i] - ideal[i])} of "
        f"{num(wavefronts[i])} are bank conflicts)")), (txn_column("shared"), "txn_shared_ideal"))


_OCCUPANCY_LIMITS = (("blocks_limit_registers", "registers"), ("blocks_limit_shared_mem", "shared memory"),
                     ("blocks_limit_warps", "block size"), ("blocks_limit_blocks", "blocks per SM"))


def test_occupancy(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    occ, theo = _col(f, "occupancy_pct"), _col(f, "occupancy_theoretical_pct")
    limits = np.column_stack([_col(f, c) for c, _ in _OCCUPANCY_LIMITS])
    decided = _known(occ, theo) & ~np.isnan(limits).any(axis=1)
    holds = decided & (theo < 100 - 1e-9) & (occ < t["occupancy_low_pct"])
    registers, shared, block = (_col(f, c) for c in ("registers_per_thread", "shared_mem_per_block", "block_size"))

    def phrase(i: int) -> str:
        lowest = np.nanmin(limits[i])
        names = [name for (column, name), value in zip(_OCCUPANCY_LIMITS, limits[i]) if value == lowest]
        detail = {"registers": f"{num(registers[i])}/thread", "shared memory": f"{num(shared[i])} B/block",
                  "block size": f"{num(block[i])} threads/block", "blocks per SM": f"{num(lowest)} blocks/SM"}
        why = " and ".join(f"{n} ({detail[n]})" if not detail[n].startswith("nan") else n for n in names)
        return f"occupancy {num(occ[i])} % (theoretical {num(theo[i])} %), limited by {why}"
    return _Test(holds, decided, _phrases(holds, phrase), ("occupancy_pct", "occupancy_theoretical_pct",
                                                          *(c for c, _ in _OCCUPANCY_LIMITS)))


def _top_stall(f: pd.DataFrame, stalls: dict[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the index of the largest stall reason (cycles per issued instruction) and its cycles."""
    values = np.column_stack([_col(f, c) for c in stalls]) if stalls else np.full((len(f), 1), np.nan)
    filled = np.where(np.isnan(values), -np.inf, values)
    index = np.argmax(filled, axis=1)
    return index, values[np.arange(len(f)), index]


def _issue_tests(f: pd.DataFrame, t: dict[str, float], stalls: dict[str, str]) -> tuple[_Test, _Test]:
    issue, cycles = _col(f, "issue_active"), _col(f, "warp_cycles_per_issue")
    decided = ~np.isnan(issue)
    full = decided & (issue >= t["issue_full"])
    index, stall = _top_stall(f, stalls)
    names = list(stalls.values())

    def stall_text(i: int) -> str:
        if np.isnan(stall[i]):
            return ""
        of = f" of {num(cycles[i])}" if not np.isnan(cycles[i]) else ""
        return f"; {num(stall[i])}{of} cycles per instruction: {names[index[i]]}"
    issue_test = _Test(full, decided, _phrases(full, lambda i: (
        f"issue slots {num(100 * issue[i])} % busy{stall_text(i)}")), ("issue_active",))
    latency = decided & ~full
    latency_test = _Test(latency, decided, _phrases(latency, lambda i: (
        f"issue slots {num(100 * issue[i])} % busy{stall_text(i)}")), ("issue_active",))
    return issue_test, latency_test


def limiter_columns(frame: pd.DataFrame, catalogue: Catalogue | None = None) -> pd.DataFrame:
    """`limiter` and `limiter_evidence` for launch or group rows holding the limiter inputs and the speed of light.

    `catalogue` names the metrics behind a missing quantity in an `unknown` answer (its first definition)."""
    settings = limiter_settings()
    t = settings.thresholds
    issue, latency = _issue_tests(frame, t, settings.stalls)
    tests = {"roof": test_roof(frame, t), "launch": test_launch(frame, t), "tail": test_tail(frame, t),
             "uncoalesced": test_uncoalesced(frame, t), "bank_conflicts": test_bank_conflicts(frame, t),
             "occupancy": test_occupancy(frame, t), "issue": issue, "latency": latency}
    n = len(frame)
    limiter = np.full(n, UNKNOWN_LIMITER, dtype=object)
    evidence = np.full(n, None, dtype=object)
    open_rows = np.ones(n, dtype=bool)
    blocked = np.zeros(n, dtype=bool)  # an earlier test was undecided: a later one that holds may not be the answer
    missing: list[set[str]] = [set() for _ in range(n)]
    for name in settings.order:
        test = tests[name]
        take = open_rows & ~blocked & test.holds
        limiter[take] = name
        for i in np.flatnonzero(take):
            evidence[i] = test.evidence[i]
        open_rows &= ~take
        undecided = open_rows & ~test.decided
        for i in np.flatnonzero(undecided):  # every counter the remaining tests lack: one collect command
            missing[i].update(q for q in test.needs if np.isnan(_col(frame, q)[i]))
        blocked |= undecided
    for i in np.flatnonzero(limiter == UNKNOWN_LIMITER):
        evidence[i] = NOT_COLLECTED + ", ".join(missing_metrics(sorted(missing[i]), catalogue))
    return pd.DataFrame({"limiter": pd.Categorical(limiter, categories=list(LIMITERS)),
                         "limiter_evidence": pd.array(evidence, dtype="string")}, index=frame.index)


def missing_metrics(quantities: list[str], catalogue: Catalogue | None) -> list[str]:
    """The metrics of each quantity's first definition (what to collect), or the quantity's name."""
    names: list[str] = []
    for quantity in quantities:
        defs = catalogue.definitions(quantity) if catalogue is not None else []
        names.extend(defs[0].expr.inputs if defs else [quantity])
    return list(dict.fromkeys(names))


def launch_limiters(raw: pd.DataFrame, values: pd.DataFrame, catalogue: Catalogue,
                    devices: dict | None) -> pd.DataFrame:
    """Per launch: the limiter inputs (kept for the groups), the instruction roofline and the limiter."""
    inputs = limiter_inputs(raw, catalogue)
    inputs["peak_warp_gips"] = peak_warp_gips(inputs.assign(sm_clock_hz=_clock(raw, catalogue)), raw, devices)
    frame = pd.concat([values, inputs], axis=1)
    return pd.concat([inputs, instruction_roofline(frame), limiter_columns(frame, catalogue)], axis=1)


def _clock(raw: pd.DataFrame, catalogue: Catalogue) -> np.ndarray:
    defs = catalogue.definitions("sm_clock_hz")
    return pick_definition(raw, defs).values if defs else np.full(len(raw), np.nan)


def group_limiters(groups: pd.DataFrame, catalogue: Catalogue | None = None) -> pd.DataFrame:
    """Kernel group rows (their limiter inputs summed or time-weighted by group.py) with the instruction roofline
    and the limiter recomputed from those sums."""
    if "warp_inst" not in groups:
        return groups
    extra = pd.concat([instruction_roofline(groups), limiter_columns(groups, catalogue)], axis=1)
    return pd.concat([groups.drop(columns=[c for c in extra.columns if c in groups]), extra], axis=1)
