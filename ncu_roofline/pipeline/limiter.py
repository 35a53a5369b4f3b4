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
from .catalogue import LIMITERS_FILE, Catalogue, as_columns, pick_definition

GIGA = 1e9
NOT_COLLECTED = "not collected: "  # how an `unknown` limiter's evidence starts, then the metrics it lacks


@dataclass(frozen=True)
class LimiterSettings:
    thresholds: dict[str, float]
    order: tuple[str, ...]
    schedulers_per_sm: int
    sector_bytes: float  # bytes of one L1/L2/DRAM transaction (a sector)
    stalls: dict[str, str]  # stall column -> what a person reads
    sections: tuple[str, ...]  # ncu sections that collect the counters
    quantities: tuple[str, ...]  # every quantity limiters.toml defines


@cache
def limiter_settings() -> LimiterSettings:
    data = tomllib.loads((METRICS_DIR / LIMITERS_FILE).read_text(encoding="utf-8"))
    return LimiterSettings(
        thresholds={name: float(entry["value"]) for name, entry in data["thresholds"].items()},
        order=tuple(data["order"]["limiters"]), schedulers_per_sm=int(data["device"]["schedulers_per_sm"]),
        sector_bytes=float(data["device"]["sector_bytes"]),
        stalls=dict(data["stalls"]), sections=tuple(data["collect"]["sections"]),
        quantities=tuple(k for k, v in data.items() if isinstance(v, list)))


def transaction_peaks(peak_bytes_per_s: dict[str, float | None], peak_gips: float | None) -> dict[str, float | None]:
    """The instruction roofline's walls in G transactions/s: each memory level's bytes/s roof over a sector's bytes,
    and shared memory's one wavefront per SM per clock (the peak warp GIPS over the schedulers of an SM)."""
    settings = limiter_settings()
    peaks = {lv: p / settings.sector_bytes / GIGA if p else None for lv, p in peak_bytes_per_s.items()}
    peaks["shared"] = peak_gips / settings.schedulers_per_sm if peak_gips else None
    return peaks


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
    evidence: np.ndarray  # object: str where the test holds
    needs: tuple[str, ...]  # quantities whose absence leaves it undecided


def _col(frame: pd.DataFrame, name: str) -> np.ndarray:
    return frame[name].to_numpy(dtype="float64") if name in frame else np.full(len(frame), np.nan)


def _known(*arrays: np.ndarray) -> np.ndarray:
    return np.logical_and.reduce([~np.isnan(a) for a in arrays])


def fmt(values: np.ndarray) -> np.ndarray:
    """Three significant digits, the way every evidence number is written, over an array: an object array of str (so that `+` joins texts element-wise)."""
    values = np.asarray(values, dtype="float64")
    distinct, inverse = np.unique(values, return_inverse=True)  # launches of one kernel repeat their numbers
    return np.asarray([f"{v:.3g}" for v in distinct.tolist()], dtype=object)[inverse.reshape(values.shape)]


def _phrases(rows: np.ndarray, build) -> np.ndarray:
    """Evidence texts where `rows` hold (None elsewhere): `build(pick)` joins `fmt`ed columns, `pick(a)` = a[rows]."""
    out = np.full(len(rows), None, dtype=object)
    if rows.any():
        out[rows] = build(lambda values: np.asarray(values)[rows])
    return out


def _texts(mask: np.ndarray, yes: np.ndarray | str, no: np.ndarray | str) -> np.ndarray:
    return np.where(mask, yes, no).astype(object)


def check_roof(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    fraction = _col(f, "roofline_fraction")
    holds = ~np.isnan(fraction) & (fraction >= t["roof_fraction"])
    # no roof known: the test says nothing and blocks nothing (the other tests do not need a roof)
    return _Test(holds, np.ones(len(f), dtype=bool),
                 _phrases(holds, lambda p: fmt(100 * p(fraction)) + " % of its roof"), ())


def check_launch(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    time_s, waves, sms, blocks = (_col(f, c) for c in ("time_s", "waves", "sm_count", "grid_blocks"))
    short = ~np.isnan(time_s) & (time_s < t["launch_time_s"])
    small = ~np.isnan(waves) & (waves < t["launch_waves"])

    def build(p) -> np.ndarray:
        grid = _texts(np.isnan(p(sms)), "", " on " + fmt(p(sms)) + " SMs") \
            + _texts(np.isnan(p(blocks)), "", " (" + fmt(p(blocks)) + " blocks)")
        return _texts(p(short), fmt(p(time_s) * 1e6) + " µs per launch", fmt(p(waves)) + " waves" + grid)
    return _Test(short | small, short | ~np.isnan(waves), _phrases(short | small, build), ("waves",))


def check_tail(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    waves, occ, theo = (_col(f, c) for c in ("waves", "occupancy_pct", "occupancy_theoretical_pct"))
    whole = np.floor(waves)
    partial = waves - whole
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(partial > 0, 1.0 / (whole + 1.0), 0.0)
    decided = _known(waves, occ, theo)
    holds = decided & (whole >= 1) & (effect >= t["tail_effect"]) & (occ < theo * t["tail_occupancy_ratio"])
    return _Test(holds, decided, _phrases(holds, lambda p: (
        fmt(p(waves)) + " waves: the partial last wave may take up to " + fmt(100 * p(effect))
        + " % of the time (occupancy " + fmt(p(occ)) + " % of " + fmt(p(theo)) + " % theoretical)")),
        ("waves", "occupancy_pct", "occupancy_theoretical_pct"))


def check_uncoalesced(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    sectors, requests, ideal = (_col(f, c) for c in ("sectors_global", "requests_global", "sectors_global_ideal"))
    decided = _known(sectors, requests, ideal)
    ratio = _ratio(sectors, ideal)
    holds = decided & (requests > 0) & ~np.isnan(ratio) & (ratio >= t["uncoalesced_ratio"])
    return _Test(holds, decided, _phrases(holds, lambda p: (
        fmt(p(sectors) / p(requests)) + " sectors/request, ideal " + fmt(p(ideal) / p(requests)))),
        ("sectors_global", "requests_global", "sectors_global_ideal"))


def check_bank_conflicts(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    wavefronts, ideal = _col(f, txn_column("shared")), _col(f, "txn_shared_ideal")
    decided = _known(wavefronts, ideal)
    ratio = _ratio(wavefronts, ideal)
    holds = decided & ~np.isnan(ratio) & (ratio >= t["bank_conflict_ratio"])
    return _Test(holds, decided, _phrases(holds, lambda p: (
        fmt(p(ratio)) + " shared wavefronts per conflict-free one (" + fmt(p(wavefronts) - p(ideal)) + " of "
        + fmt(p(wavefronts)) + " are bank conflicts)")), (txn_column("shared"), "txn_shared_ideal"))


_OCCUPANCY_LIMITS = (("blocks_limit_registers", "registers"), ("blocks_limit_shared_mem", "shared memory"),
                     ("blocks_limit_warps", "block size"), ("blocks_limit_blocks", "blocks per SM"))


def check_occupancy(f: pd.DataFrame, t: dict[str, float]) -> _Test:
    occ, theo = _col(f, "occupancy_pct"), _col(f, "occupancy_theoretical_pct")
    limits = np.column_stack([_col(f, c) for c, _ in _OCCUPANCY_LIMITS])
    decided = _known(occ, theo) & ~np.isnan(limits).any(axis=1)
    holds = decided & (theo < 100 - 1e-9) & (occ < t["occupancy_low_pct"])
    registers, shared, block = (_col(f, c) for c in ("registers_per_thread", "shared_mem_per_block", "block_size"))

    def build(p) -> np.ndarray:
        mine = p(limits)
        lowest = np.nanmin(mine, axis=1)
        details = (("registers (", fmt(p(registers)), "/thread)", p(registers)),
                   ("shared memory (", fmt(p(shared)), " B/block)", p(shared)),
                   ("block size (", fmt(p(block)), " threads/block)", p(block)),
                   ("blocks per SM (", fmt(lowest), " blocks/SM)", lowest))
        why = np.full(len(lowest), "", dtype=object)
        for j, (name, value, unit, raw) in enumerate(details):
            text = _texts(np.isnan(raw), name[:-2], name + value + unit)
            binding = mine[:, j] == lowest
            why = np.where(binding, why + _texts(why == "", "", " and ") + text, why).astype(object)
        return "occupancy " + fmt(p(occ)) + " % (theoretical " + fmt(p(theo)) + " %), limited by " + why
    return _Test(holds, decided, _phrases(holds, build), ("occupancy_pct", "occupancy_theoretical_pct",
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
    names = np.asarray(list(stalls.values()) or [""], dtype=object)

    def build(p) -> np.ndarray:
        of = _texts(np.isnan(p(cycles)), "", " of " + fmt(p(cycles)))
        why = _texts(np.isnan(p(stall)), "",
                     "; " + fmt(p(stall)) + of + " cycles per instruction: " + names[p(index)])
        return "issue slots " + fmt(100 * p(issue)) + " % busy" + why
    latency = decided & ~full
    return (_Test(full, decided, _phrases(full, build), ("issue_active",)),
            _Test(latency, decided, _phrases(latency, build), ("issue_active",)))


def limiter_columns(frame: pd.DataFrame, catalogue: Catalogue | None = None) -> pd.DataFrame:
    """`limiter` and `limiter_evidence` for launch or group rows holding the limiter inputs and the speed of light.

    `catalogue` names the metrics behind a missing quantity in an `unknown` answer (its first definition)."""
    settings = limiter_settings()
    t = settings.thresholds
    issue, latency = _issue_tests(frame, t, settings.stalls)
    tests = {"roof": check_roof(frame, t), "launch": check_launch(frame, t), "tail": check_tail(frame, t),
             "uncoalesced": check_uncoalesced(frame, t), "bank_conflicts": check_bank_conflicts(frame, t),
             "occupancy": check_occupancy(frame, t), "issue": issue, "latency": latency}
    n = len(frame)
    limiter = np.full(n, UNKNOWN_LIMITER, dtype=object)
    evidence = np.full(n, None, dtype=object)
    open_rows = np.ones(n, dtype=bool)
    blocked = np.zeros(n, dtype=bool)  # an earlier test was undecided: a later one that holds may not be the answer
    needs = sorted({q for test in tests.values() for q in test.needs})
    absent = np.column_stack([np.isnan(_col(frame, q)) for q in needs]) if needs else np.zeros((n, 0), dtype=bool)
    missing = np.zeros_like(absent)
    for name in settings.order:
        test = tests[name]
        take = open_rows & ~blocked & test.holds
        limiter[take] = name
        evidence[take] = test.evidence[take]
        open_rows &= ~take
        undecided = open_rows & ~test.decided
        if undecided.any():  # every counter the remaining tests lack: one collect command
            columns = [needs.index(q) for q in test.needs]
            missing[np.ix_(undecided, columns)] |= absent[np.ix_(undecided, columns)]
        blocked |= undecided
    unknown = np.flatnonzero(limiter == UNKNOWN_LIMITER)
    if len(unknown):  # one text per distinct set of missing counters, not one per launch
        bits = missing[unknown].astype(np.int64) @ (np.int64(1) << np.arange(len(needs), dtype=np.int64))
        patterns, inverse = np.unique(bits, return_inverse=True)
        texts = [NOT_COLLECTED + ", ".join(missing_metrics([q for j, q in enumerate(needs) if int(b) >> j & 1],
                                                           catalogue)) for b in patterns]
        evidence[unknown] = np.asarray(texts, dtype=object)[inverse.reshape(-1)]
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
                    devices: dict | None, clock: str = "measured") -> pd.DataFrame:
    """Per launch: the limiter inputs (kept for the groups), the instruction roofline and the limiter.

    `clock="max"` (`--clock max`) puts the instruction roof on the device's maximum SM clock, as the other roofs."""
    inputs = limiter_inputs(raw, catalogue)
    measured = _clock(raw, catalogue, "sm_clock_hz")
    peak = peak_warp_gips(inputs.assign(sm_clock_hz=measured), raw, devices)
    if clock == "max":
        scale = _clock(raw, catalogue, "max_sm_clock_hz") / measured
        peak = np.where(np.isfinite(scale), peak * scale, peak)
    inputs["peak_warp_gips"] = peak
    frame = pd.concat([values, inputs], axis=1)
    return pd.concat([inputs, instruction_roofline(frame), limiter_columns(frame, catalogue)], axis=1)


def _clock(raw: pd.DataFrame, catalogue: Catalogue, quantity: str) -> np.ndarray:
    defs = catalogue.definitions(quantity)
    return pick_definition(raw, defs).values if defs else np.full(len(raw), np.nan)


def group_limiters(groups: pd.DataFrame, catalogue: Catalogue | None = None) -> pd.DataFrame:
    """Kernel group rows (their limiter inputs summed or time-weighted by group.py) with the instruction roofline
    and the limiter recomputed from those sums."""
    if "warp_inst" not in groups:
        return groups
    extra = pd.concat([instruction_roofline(groups), limiter_columns(groups, catalogue)], axis=1)
    return pd.concat([groups.drop(columns=[c for c in extra.columns if c in groups]), extra], axis=1)
