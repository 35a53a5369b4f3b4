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

import json

import numpy as np
import pandas as pd

from ..core.vocabulary import (
    II_SHARED_IDEAL,
    INSTRUCTION_LEVELS,
    LIMITER_COLUMNS,
    LIMITER_GAIN,
    LIMITER_NCU,
    NCU_RULES,
    UNKNOWN_LIMITER,
    ii_column,
    txn_column,
)
from .catalogue import Catalogue, as_columns, pick_definition, sm_clock_hz
from .expressions import uniform_mask
from .limiter_rules import RULES, LimiterSettings, limiter_settings
from .limiter_rules.registry import col as _column
from .limiter_rules.registry import ratio as _ratio
from .limiter_rules.registry import shared

GIGA = 1e9
NOT_COLLECTED = "not collected: "  # how an `unknown` limiter's evidence starts, then the metrics it lacks
__all__ = ["LimiterSettings", "limiter_settings", "limiter_columns", "launch_limiters", "group_limiters",
           "next_step", "transaction_peaks", "agrees_with_ncu", "ncu_findings", "ncu_mark", "NCU_DIFFERS"]
NCU_DIFFERS = " ≠"  # after the one-word `why` where NCU's own SpeedOfLight verdict is another class


def transaction_peaks(peak_bytes_per_s: dict[str, float | None], peak_gips: float | None) -> dict[str, float | None]:
    """The instruction roofline's walls in G transactions/s: each memory level's bytes/s roof over a sector's bytes,
    and shared memory's one wavefront per SM per clock (the peak warp GIPS over the schedulers of an SM)."""
    settings = limiter_settings()
    peaks = {lv: p / settings.sector_bytes / GIGA if p else None for lv, p in peak_bytes_per_s.items()}
    peaks["shared"] = peak_gips / settings.schedulers_per_sm if peak_gips else None
    return peaks


def limiter_inputs(raw: pd.DataFrame, catalogue: Catalogue) -> pd.DataFrame:
    """Per launch, every limiter and instruction-roofline quantity: the first definition whose inputs are present
    (null where none is: a custom catalogue without limiters.toml gives all nulls). A quantity that no definition
    can give is left out rather than a column of nulls, unless the tables show it (LIMITER_COLUMNS): the rules,
    the instruction roofline and the group sums read an absent column as null (a capture without the limiter's
    counters lacks ~50)."""
    out = {}
    columns = as_columns(raw)
    for quantity in limiter_settings().quantities:
        # only the definitions whose every input is a column can give a value: a capture without the limiter's
        # counters skips the rest at once (issue #38: the limiter adds <= 5 % to such a capture)
        defs = [d for d in catalogue.definitions(quantity) if all(columns.has(m) for m in d.expr.inputs)]
        if defs:
            out[quantity] = pick_definition(columns, defs, shared_nulls=True).values  # copied into a block
        elif quantity in LIMITER_COLUMNS:  # the others, absent, read as null (`_column`)
            out[quantity] = shared(len(raw), np.nan)  # copied into a block below
    if out and all(values.strides == (0,) for values in out.values()):  # none counted: nothing to stack
        return pd.DataFrame(out, index=raw.index, copy=False)
    # one float64 block at once (a frame from a dict of ~50 arrays is stacked column by column), laid out as pandas
    # keeps it (a row per column), so that the frame takes the block as it is instead of copying it
    values = np.vstack(list(out.values())).T if out else np.empty((len(raw), 0))
    return pd.DataFrame(values, columns=list(out), index=raw.index, copy=False)


def peak_warp_gips(inputs: pd.DataFrame, raw: pd.DataFrame, devices: dict | None) -> np.ndarray:
    """The report's own SMs x schedulers x measured SM clock; else the GPU table's SM count x schedulers per SM x
    the measured clock (the table's boost clock where the report gives none)."""
    peak = _column(inputs, "peak_warp_inst_per_s") / GIGA
    missing = np.isnan(peak)
    if missing.any() and devices:
        clock = raw_clock(inputs)
        if None in devices:  # --gpu: its row stands for every device, no launch's device name is read
            _table_peak(peak, missing, clock, devices[None])
            return peak
        # each device's launches by code (a null name is ''): no text per launch
        codes, names = pd.factorize(raw["device_name"]) if "device_name" in raw else \
            (np.full(len(raw), -1), np.asarray([], dtype=object))
        used = np.flatnonzero(np.bincount(codes[missing] + 1, minlength=len(names) + 1)) - 1  # no sort
        for code in used.tolist():
            spec = devices.get(str(names[code]) if code >= 0 else "")
            _table_peak(peak, missing & (codes == code), clock, spec)
    return peak


def _table_peak(peak: np.ndarray, rows: np.ndarray, clock: np.ndarray, spec: object) -> None:
    """The GPU table's SMs x schedulers x measured clock (its boost clock where none is measured) on `rows`."""
    if getattr(spec, "sm_count", None) is None or getattr(spec, "boost_clock_hz", None) is None:
        return
    hz = np.where(np.isnan(clock[rows]), spec.boost_clock_hz, clock[rows])
    peak[rows] = spec.sm_count * limiter_settings().schedulers_per_sm * hz / GIGA


def raw_clock(inputs: pd.DataFrame) -> np.ndarray:
    if "sm_clock_hz" in inputs:
        return inputs["sm_clock_hz"].to_numpy(dtype="float64")
    return np.full(len(inputs), np.nan)


def instruction_roofline(frame: pd.DataFrame) -> pd.DataFrame:
    """gips and warp instructions per transaction at each level, from (summed) counts; null where a count is."""
    warp_inst = frame["warp_inst"].to_numpy(dtype="float64")
    names = ["gips", *(ii_column(level) for level in INSTRUCTION_LEVELS), II_SHARED_IDEAL]
    if np.isnan(warp_inst).all():  # no instructions counted: every ratio is null, none computed
        return pd.DataFrame({name: shared(len(frame), np.nan) for name in names}, index=frame.index, copy=False)
    out = {"gips": _ratio(warp_inst, frame["time_s"].to_numpy(dtype="float64") * GIGA)}
    for level in INSTRUCTION_LEVELS:
        out[ii_column(level)] = _ratio(warp_inst, _column(frame, txn_column(level)))
    out[II_SHARED_IDEAL] = _ratio(warp_inst, _column(frame, "txn_shared_ideal"))
    return pd.DataFrame(out, index=frame.index, copy=False)


def limiter_columns(frame: pd.DataFrame, catalogue: Catalogue | None = None,
                    settings: LimiterSettings | None = None) -> pd.DataFrame:
    """`limiter`, `limiter_evidence` and `limiter_gain_s` for launch or group rows holding the limiter inputs and
    the speed of light: the rules of `[order]` tried in turn, the first that holds answers. A rule whose counters
    are missing is not tested (the later ones still are); where none holds and one was not tested, `unknown`,
    naming what to collect (`catalogue`: each missing quantity's first definition).

    The evidence is a Categorical: launches of one kernel share their sentences, and every `unknown` launch of a
    capture the one "not collected" text (Parquet stores it dictionary-encoded)."""
    settings = settings or limiter_settings()
    n = len(frame)
    names = [*settings.order, UNKNOWN_LIMITER]
    limiter = np.full(n, len(names) - 1, dtype=np.int64)  # codes into `names`: no text per launch
    evidence = np.full(n, -1, dtype=np.int64)  # codes into `texts` (-1: none)
    texts: list[object] = []
    gain = np.full(n, np.nan)
    open_rows = np.ones(n, dtype=bool)
    verdicts = {name: RULES[name](frame, settings) for name in settings.order}
    needs = sorted({q for v in verdicts.values() for q in v.needs})
    # bit j: needs[j] is null on the row; the quantities null on every row (absent ones: a capture without the
    # limiter's counters) are one int for all rows, the others an array
    absent_everywhere, absent = 0, None
    for j, quantity in enumerate(needs):
        null = uniform_mask(np.isnan(_column(frame, quantity))) if quantity in frame and n else True
        if null is True:
            absent_everywhere |= 1 << j
        elif null is not False:
            absent = np.zeros(n, dtype=np.int64) if absent is None else absent
            np.bitwise_or(absent, 1 << j, out=absent, where=null)
    missing = np.zeros(n, dtype=np.int64)  # bit j: an untested rule lacked needs[j] on the row
    for position, (name, verdict) in enumerate(verdicts.items()):
        take = open_rows & verdict.holds
        if take.any():
            limiter[take] = position
            local, found = pd.factorize(verdict.evidence[take])  # the rows this rule answers, not every row
            evidence[take] = np.where(local < 0, -1, local + len(texts))
            texts.extend(found)
        if verdict.gain_s is not None:
            gain[take] = verdict.gain_s[take]
        open_rows &= ~take
        untested = open_rows & ~verdict.decided
        if untested.any():  # every counter the untested rules lack: one collect command
            lacks = sum(1 << needs.index(q) for q in set(verdict.needs))
            lacked = absent_everywhere & lacks if absent is None else (absent | absent_everywhere) & lacks
            np.bitwise_or(missing, lacked, out=missing, where=untested)  # in place: no gather and scatter
    every = bool(open_rows.all())  # every row unknown (no counters): no index of the rows
    unknown = slice(None) if every else np.flatnonzero(open_rows)
    if n and (every or len(unknown)):  # one text per distinct set of missing counters, not one per launch
        lacking = missing[unknown]
        if lacking.min() == lacking.max():  # every unknown row lacks the same counters: no sort of them
            patterns, inverse = lacking[:1], 0
        else:
            patterns, inverse = np.unique(lacking, return_inverse=True)
            inverse = inverse.reshape(-1)
        evidence[unknown] = inverse + len(texts)
        texts.extend(NOT_COLLECTED + ", ".join(missing_metrics([q for j, q in enumerate(needs) if int(b) >> j & 1],
                                                               catalogue)) for b in patterns)
    return pd.DataFrame({"limiter": pd.Categorical.from_codes(limiter, categories=pd.Index(names, dtype=object)),
                         "limiter_evidence": coded_categorical(evidence, texts),
                         LIMITER_GAIN: gain}, index=frame.index, copy=False)


def coded_categorical(codes: np.ndarray, texts: list[object]) -> pd.Categorical:
    """Codes into `texts` (-1: null) as the Categorical `categorical` would build from the texts themselves:
    categories in order of first appearance, each text once."""
    if len(codes) and codes.min() == codes.max():  # one text (or none) on every row: no sort of the codes
        single = [texts[int(codes[0])]] if codes[0] >= 0 else []
        return pd.Categorical.from_codes(np.full(len(codes), 0 if single else -1, dtype=np.int64),
                                         categories=pd.Index(single, dtype=object))
    known = codes >= 0
    distinct, first = np.unique(codes[known], return_index=True)
    order = distinct[np.argsort(first, kind="stable")]
    categories = [texts[i] for i in order]
    if len(set(categories)) < len(categories):  # two sources wrote one text: let factorize merge them
        return categorical(np.asarray([*texts, None], dtype=object)[np.where(known, codes, len(texts))])
    remap = np.full(len(texts) + 1, -1, dtype=np.int64)
    remap[order] = np.arange(len(order))
    return pd.Categorical.from_codes(remap[np.where(known, codes, len(texts))],
                                     categories=pd.Index(categories, dtype=object))


def categorical(values: np.ndarray, categories: list[str] | None = None) -> pd.Categorical:
    """An object array of texts (None for null) as a Categorical with object categories, built from its codes:
    pandas' own inference turns 10^5 texts into an Arrow string array first, most of the limiter's time."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    if categories is None:
        return pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=object))
    position = {c: i for i, c in enumerate(categories)}
    remap = np.asarray([position[u] for u in uniques] + [-1], dtype=np.int64)
    return pd.Categorical.from_codes(remap[codes], categories=pd.Index(categories, dtype=object))


def next_step(limiter: object, settings: LimiterSettings | None = None) -> str | None:
    """The one thing to try next for a limiter (its `[rules.NAME]` next_step); None for unknown or no limiter."""
    table = (settings or limiter_settings()).rules.get(str(limiter))
    return None if table is None else table.get("next_step")


def missing_metrics(quantities: list[str], catalogue: Catalogue | None) -> list[str]:
    """The metrics of each quantity's first definition (what to collect), or the quantity's name."""
    names: list[str] = []
    for quantity in quantities:
        defs = catalogue.definitions(quantity) if catalogue is not None else []
        names.extend(defs[0].expr.inputs if defs else [quantity])
    return list(dict.fromkeys(names))


def launch_limiters(raw: pd.DataFrame, values: pd.DataFrame, catalogue: Catalogue,
                    devices: dict | None, clock: str = "measured") -> pd.DataFrame:
    """Per launch: the limiter inputs (kept for the groups), the instruction roofline and the limiter, with NCU's
    own SpeedOfLight verdict beside it and NCU's estimated speedup as the gain where the report stores one.

    `clock="max"` (`--clock max`) puts the instruction roof on the device's maximum SM clock, as the other roofs."""
    inputs = limiter_inputs(raw, catalogue)
    measured = sm_clock_hz(raw, catalogue)
    peak = peak_warp_gips(inputs.assign(sm_clock_hz=measured), raw, devices)
    if clock == "max":
        scale = sm_clock_hz(raw, catalogue, "max") / measured
        peak = np.where(np.isfinite(scale), peak * scale, peak)
    inputs["peak_warp_gips"] = peak
    frame = pd.concat([values, inputs], axis=1)
    why = limiter_columns(frame, catalogue)
    if NCU_RULES in raw and raw[NCU_RULES].notna().any():
        verdict, gain = _ncu_columns(raw[NCU_RULES], why["limiter"], frame["time_s"].to_numpy(dtype="float64"))
        why[LIMITER_NCU] = verdict
        why[LIMITER_GAIN] = np.where(np.isnan(gain), why[LIMITER_GAIN].to_numpy(dtype="float64"), gain)
    else:
        why[LIMITER_NCU] = pd.Categorical.from_codes(np.full(len(frame), -1), categories=pd.Index([], dtype=object))
    return pd.concat([inputs, instruction_roofline(frame), why], axis=1)


def ncu_findings(text: object) -> list[dict]:
    """A launch's `ncu_rules` JSON as a list of findings (readers/ncu_rules.py), [] where it has none."""
    return json.loads(text) if isinstance(text, str) and text else []


def _ncu_columns(rules: pd.Series, limiter: pd.Series, time_s: np.ndarray) -> tuple[pd.Categorical, np.ndarray]:
    """NCU's SpeedOfLight title per launch, and the time NCU's estimated speedup of the rule behind our limiter
    (`ncu_gain` of its table) saves: time_s x speedup %. Each distinct JSON text is parsed once."""
    codes, texts = pd.factorize(rules.astype("object"))
    parsed = [ncu_findings(t) for t in texts]
    titles = [next((f["title"] for f in found if f["rule"] == "SOLBottleneck"), None) for found in parsed]
    verdict = np.asarray(titles + [None], dtype=object)[np.where(codes < 0, len(titles), codes)]
    return categorical(verdict), time_s * _ncu_speedup_pct(codes, parsed, limiter.astype("object").to_numpy()) / 100


def _ncu_speedup_pct(codes: np.ndarray, parsed: list[list[dict]], limiters: np.ndarray) -> np.ndarray:
    """Per row, NCU's largest estimated speedup (%) among the rules behind `limiters[row]` (`ncu_gain` of its
    table) in the row's findings (`parsed[codes[row]]`); null where NCU gives none. One lookup per distinct
    (findings, limiter) pair: the launches of a kernel share both."""
    settings = limiter_settings()
    out = np.full(len(codes), np.nan)
    names, words = pd.factorize(pd.Series(limiters, dtype="object").astype(str))
    rows = np.flatnonzero(codes >= 0)
    if not len(rows):
        return out
    pairs, inverse = np.unique(np.column_stack([codes[rows], names[rows]]), axis=0, return_inverse=True)
    for j, (code, name) in enumerate(pairs):
        wanted = settings.rules.get(str(words[name]), {}).get("ncu_gain", ())
        speedups = [f["speedup_pct"] for f in parsed[code] if f["rule"] in wanted and f["speedup_pct"]]
        if speedups:
            out[rows[inverse.reshape(-1) == j]] = max(speedups)
    return out


def ncu_mark(limiter: object, ncu_verdict: object) -> str:
    """The short mark after the terminal's `why` where NCU disagrees ('' where it agrees or said nothing)."""
    return NCU_DIFFERS if agrees_with_ncu(limiter, ncu_verdict) is False else ""


def agrees_with_ncu(limiter: object, ncu_verdict: object) -> bool | None:
    """Whether our limiter is one of the classes NCU's SpeedOfLight verdict stands for (`ncu` of its table);
    None where NCU gave none or ours is unknown."""
    if not isinstance(ncu_verdict, str) or not ncu_verdict or str(limiter) == UNKNOWN_LIMITER:
        return None
    table = limiter_settings().rules.get(str(limiter), {})
    return ncu_verdict in table.get("ncu", ())


def group_limiters(groups: pd.DataFrame, catalogue: Catalogue | None = None, launches: pd.DataFrame | None = None,
                   codes: np.ndarray | None = None) -> pd.DataFrame:
    """Kernel group rows (their limiter inputs summed or time-weighted by group.py) with the instruction roofline
    and the limiter recomputed from those sums. Given the launch rows and each one's group (`codes`, from
    group.group_codes), the gain of a group whose launches carry NCU's estimate is summed over them
    (`group_gain`)."""
    if "warp_inst" not in groups:
        return groups
    extra = pd.concat([instruction_roofline(groups), limiter_columns(groups, catalogue)], axis=1)
    if launches is not None and codes is not None and NCU_RULES in launches and launches[NCU_RULES].notna().any():
        extra[LIMITER_GAIN] = group_gain(launches, codes, extra["limiter"], extra[LIMITER_GAIN].to_numpy(),
                                         groups["time_s"].to_numpy(dtype="float64"))
    return pd.concat([groups.drop(columns=[c for c in extra.columns if c in groups]), extra], axis=1)


def group_gain(launches: pd.DataFrame, codes: np.ndarray, limiter: pd.Series, ours: np.ndarray,
               group_time_s: np.ndarray) -> np.ndarray:
    """A group's `limiter_gain_s` where any of its launches carries NCU's estimated speedup for the group's
    limiter: the sum over its launches of each one's gain in time (time_s x NCU's speedup %; sum, never an
    average of the fractions). A launch without NCU's estimate adds its own gain where its limiter is the
    group's, else its share of time of our formula's group gain (`ours`); unknown where that is. Groups without
    NCU's estimates keep `ours`. A launch left out of the totals (`_invalid`) adds nothing, as to the time."""
    invalid = launches["_invalid"].to_numpy(dtype=bool) if "_invalid" in launches else np.zeros(len(codes), bool)
    time_s = np.where(invalid, 0.0, launches["time_s"].to_numpy(dtype="float64"))
    words = limiter.astype("object").to_numpy()[codes]
    rule_codes, texts = pd.factorize(launches[NCU_RULES].astype("object"))
    speedup = _ncu_speedup_pct(rule_codes, [ncu_findings(t) for t in texts], words)
    own = launches[LIMITER_GAIN].to_numpy(dtype="float64") if LIMITER_GAIN in launches else np.full(len(codes), np.nan)
    same = launches["limiter"].astype("object").to_numpy() == words if "limiter" in launches else False
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(time_s == 0, 0.0, ours[codes] * time_s / group_time_s[codes])
    part = np.where(~np.isnan(speedup), time_s * speedup / 100, np.where(same & ~np.isnan(own), own, share))
    part[invalid] = 0.0
    carried = np.bincount(codes, weights=(~np.isnan(speedup)).astype("float64"), minlength=len(ours)) > 0
    unknown = np.bincount(codes, weights=np.isnan(part).astype("float64"), minlength=len(ours)) > 0
    total = np.bincount(codes, weights=np.nan_to_num(part), minlength=len(ours))
    return np.where(carried, np.where(unknown, np.nan, total), ours)
