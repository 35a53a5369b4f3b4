"""A measured profile placed on other GPUs' roofs: what each kernel group would take there, as two stated models.

Per kernel group (the kernel table's sums: FLOP per precision, bytes per level, time, t_sol) and target GPU T:

    t_sol_target_s          = max(flop_p / peak_p(T), bytes_L / peak_L(T))   (pipeline.rank.speed_of_light)
    launch_floor_s          = launches x seconds_per_launch                    (metrics/projection.toml)
    time_at_roof_s          = max(t_sol_target_s, launch_floor_s)              the lower bound
    time_same_efficiency_s  = max(time_s x t_sol_target_s / t_sol_s, ...)     the measured roofline fraction kept

`bound_target` is the term that gives t_sol on T: a kernel FP32-bound on a V100 can be DRAM-bound on an H100.
Work in a term T has no roof for (tensor work of an input type T has no tensor roof for, FP64 on a user file
without it) is not projectable: that row's times stay null and its status says which roof is missing. Where the
capture left terms uncounted (`sol_complete` false), both t_sols are lower bounds and `terms_lacking` names them.

The run per target sums the projected groups (weighted by Nsight Systems' timeline where the analysis has one:
each group's projected times x app_time_s / time_s) and gives the speedup as a range between the two models.
The assumptions (ASSUMPTIONS) travel in every output's metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.data import METRICS_DIR
from ..core.errors import InputError
from ..core.status import StatusNotes
from ..core.vocabulary import (
    ALL_TERMS,
    APP_TIME,
    AT_FLOOR,
    BOUND_SOURCE,
    BOUND_TARGET,
    KERNEL_IDENTITY,
    LAUNCH_FLOOR,
    PROJECTION_COLUMNS,
    PROJECTION_RUN_COLUMNS,
    ROOF_COLUMNS,
    SOL_COMPLETE,
    SOL_COMPLETE_TARGET,
    SPEEDUP_AT_ROOF,
    SPEEDUP_HIGH,
    SPEEDUP_LOW,
    SPEEDUP_SAME_EFFICIENCY,
    T_SOL_TARGET,
    TARGET,
    TERM_BY_KEY,
    TERMS_LACKING,
    TIME_AT_ROOF,
    TIME_SAME_EFFICIENCY,
    TIME_UNPROJECTED,
    counted,
    display,
)
from ..model.place import RoofSet
from ..pipeline.catalogue import read_toml
from ..pipeline.rank import speed_of_light, split_by_tensor_type
from ..roofs.peaks import compute_peak, memory_peak

PROJECTION_FILE = "projection.toml"
ASSUMPTIONS: tuple[str, ...] = (
    "the same bytes move at each memory level on the target, though its cache sizes differ",
    "the same FLOPs run in the same precisions: no new instructions (no tensor cores where the profile used "
    "none, no FP8 where it used FP16)",
    "the target runs at the clock its roofs are given for (the table's boost clock, or the --to file's figures)",
    "time_at_roof_s: the kernel reaches the target's roof (a lower bound); time_same_efficiency_s: it keeps the "
    "roofline fraction it had on the profiled GPU",
    "no kernel takes less than the launch floor per launch (metrics/projection.toml)",
)


def launch_floor() -> tuple[float, str]:
    """Seconds per launch below which no projected kernel goes, and where that figure comes from."""
    data = read_toml(METRICS_DIR / PROJECTION_FILE)["launch_floor"]
    return float(data["seconds_per_launch"]), " ".join(str(data["source"]).split())


@dataclass(frozen=True)
class Projection:
    """Kernel groups projected onto every target (kernels first, then targets), and the run per target."""

    kernels: pd.DataFrame  # identity columns, then PROJECTION_COLUMNS
    runs: pd.DataFrame  # PROJECTION_RUN_COLUMNS, one row per target
    targets: list[RoofSet]
    source_gpu: str
    metadata: dict[str, str] = field(default_factory=dict)
    source_peaks: dict[str, float] = field(default_factory=dict)  # the profiled GPU's roofs, for the chart

    @property
    def peaks_by_gpu(self) -> dict[str, dict[str, float]]:
        return {r.name: r.peaks for r in self.targets}


def projection_metadata(base: dict[str, str], targets: list[RoofSet], seconds_per_launch: float,
                        floor_source: str) -> dict[str, str]:
    """The analysis' own metadata plus what the projection assumed and onto which roofs."""
    return {**base, "ncu_roofline.projection.targets": json.dumps([{"name": t.name, "roofs": t.source}
                                                                   for t in targets]),
            "ncu_roofline.projection.assumptions": json.dumps(list(ASSUMPTIONS)),
            "ncu_roofline.projection.launch_floor": json.dumps({"seconds_per_launch": seconds_per_launch,
                                                                "source": floor_source})}


def measured_roofs(kernels: pd.DataFrame) -> dict[str, float]:
    """The roofs the profiled kernels were placed on (the first group's that has any), by peak column."""
    for _, row in kernels[[c for c in ROOF_COLUMNS if c in kernels.columns]].iterrows():
        known = {c: float(v) for c, v in row.items() if pd.notna(v) and v > 0}
        if known:
            return known
    return {}


def target_roofs(targets: list[str]) -> list[RoofSet]:
    """The targets in the order given: a table GPU by name, or a ceilings file (`.toml`, roofs/user_file.py); the
    first kept where two name the same GPU."""
    from ..model.place import table_roofs, user_roofs

    sets = [user_roofs(t) if t.lower().endswith(".toml") else table_roofs([t])[0] for t in targets]
    if not sets:
        raise InputError(None, "name a target GPU with --to NAME (repeatable; see `ncu-roofline ceilings`) "
                               "or --to FILE.toml")
    return list({r.name: r for r in sets}.values())


def project_kernels(kernels: pd.DataFrame, targets: list[RoofSet], *, seconds_per_launch: float) -> pd.DataFrame:
    """Every kernel group on every target (groups first, in the table's order, then targets)."""
    identity = [c for c in ("rank", *KERNEL_IDENTITY) if c in kernels.columns]
    frames = [_onto(kernels, identity, roofs, seconds_per_launch) for roofs in targets]
    if not frames:
        return pd.DataFrame(columns=[*identity, *PROJECTION_COLUMNS])
    placed = pd.concat(frames, ignore_index=True)
    order = np.tile(np.arange(len(kernels)), len(targets))
    return placed.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)


def _target_peak(peaks: dict[str, float], key: str) -> float:
    term = TERM_BY_KEY.get(key)
    value = memory_peak(peaks, key) if term is not None and term.kind == "memory" else compute_peak(peaks, key)
    return np.nan if value is None else value


def _onto(kernels: pd.DataFrame, identity: list[str], roofs: RoofSet, seconds_per_launch: float) -> pd.DataFrame:
    n = len(kernels)
    peaks = {t.key: _target_peak(roofs.peaks, t.key) for t in ALL_TERMS}
    frame = kernels[["time_s", *(t.amount for t in ALL_TERMS)]].assign(**{t.peak: peaks[t.key] for t in ALL_TERMS})
    sol = speed_of_light(frame, StatusNotes(n))  # its notes judge the target's roofs against the measured time
    split = split_by_tensor_type(kernels)
    notes = StatusNotes(n)
    roofless = np.zeros(n, dtype=bool)
    lacking = np.full(n, "", dtype=object)
    for term in ALL_TERMS:
        applies = ~split if term.key == "tensor" else split if term.key not in TERM_BY_KEY else np.ones(n, bool)
        work = kernels[term.amount].to_numpy(dtype="float64")
        if np.isnan(peaks[term.key]):
            missing = applies & (work > 0)
            notes.add(missing, f"not projectable: no {display(term.key)} roof on {roofs.name}")
            roofless |= missing
            continue
        uncounted = applies & np.isnan(work)
        lacking = np.where(uncounted, lacking + np.where(lacking == "", "", ", ") + display(term.key), lacking)
    t_sol_target = np.where(roofless, np.nan, sol["t_sol_s"].to_numpy(dtype="float64"))
    launches = kernels["launches"].to_numpy(dtype="float64")
    floor = launches * seconds_per_launch
    time_s = kernels["time_s"].to_numpy(dtype="float64")
    t_sol = kernels["t_sol_s"].to_numpy(dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        kept = np.where(t_sol > 0, time_s * t_sol_target / t_sol, np.nan)
    at_roof = np.fmax(t_sol_target, floor)  # fmax: a null t_sol stays null below
    at_roof = np.where(np.isnan(t_sol_target), np.nan, at_roof)
    same = np.where(np.isnan(kept), np.nan, np.fmax(kept, floor))
    no_source = ~roofless & ~np.isnan(t_sol_target) & np.isnan(kept)
    notes.add(no_source, "no speed of light on the profiled GPU: same efficiency unknown")
    notes.add(~roofless & np.isnan(t_sol_target), "no counted work to place on the target's roofs")
    has_lack = lacking != ""
    notes.add_column(np.where(has_lack & ~roofless, "not counted: " + lacking + " (projected times are lower bounds)",
                              ""))
    bound = np.where(~roofless & sol["bound"].notna().to_numpy(), sol["bound"].astype(object).to_numpy(), None)
    with np.errstate(divide="ignore", invalid="ignore"):
        speedup_roof = np.where(at_roof > 0, time_s / at_roof, np.nan)
        speedup_same = np.where(same > 0, time_s / same, np.nan)
    out = kernels[identity].copy()
    out[TARGET] = roofs.name
    values = {
        "time_s": time_s, "t_sol_s": t_sol, BOUND_SOURCE: kernels["bound"].astype(object).to_numpy(),
        "roofline_fraction": kernels["roofline_fraction"].to_numpy(dtype="float64"),
        SOL_COMPLETE: kernels[SOL_COMPLETE].to_numpy(dtype=bool),
        T_SOL_TARGET: t_sol_target, BOUND_TARGET: bound, TIME_AT_ROOF: at_roof,
        TIME_SAME_EFFICIENCY: same, LAUNCH_FLOOR: floor,
        AT_FLOOR: ~np.isnan(t_sol_target) & (floor > t_sol_target), SPEEDUP_AT_ROOF: speedup_roof,
        SPEEDUP_SAME_EFFICIENCY: speedup_same,
        SOL_COMPLETE_TARGET: sol[SOL_COMPLETE].to_numpy(dtype=bool) & ~roofless & ~has_lack,
        TERMS_LACKING: np.where(has_lack, lacking, None), "status": notes.render().astype(str).to_numpy(),
    }
    for name in PROJECTION_COLUMNS:
        out[name] = values[name] if name != TARGET else out[TARGET]
    if APP_TIME in kernels.columns:
        out[APP_TIME] = kernels[APP_TIME].to_numpy(dtype="float64")
    return out.reset_index(drop=True)


def project_runs(projected: pd.DataFrame, targets: list[RoofSet], *, unprofiled_s: float = 0.0) -> pd.DataFrame:
    """The run per target: measured and projected GPU time of the groups projected, and the speedup range.

    With a timeline (an `app_time_s` column), each group counts app_time_s / time_s times (the whole run's
    launches of it), groups the timeline did not find are left out, and `unprofiled_s` (timeline time of kernels
    never profiled) is added to what was not projected."""
    rows = []
    weighted = APP_TIME in projected.columns
    for roofs in targets:
        part = projected[projected[TARGET] == roofs.name]
        time_s = part["time_s"].to_numpy(dtype="float64")
        weight = part[APP_TIME].to_numpy(dtype="float64") / time_s if weighted else np.ones(len(part))
        at_roof, same = part[TIME_AT_ROOF].to_numpy(dtype="float64"), part[TIME_SAME_EFFICIENCY].to_numpy("float64")
        modelled = ~np.isnan(at_roof) & ~np.isnan(same)
        done = modelled & np.isfinite(weight)
        measured = weight * time_s
        total = float(np.sum(measured[done])) if done.any() else np.nan
        roof_total = float(np.sum((weight * at_roof)[done])) if done.any() else np.nan
        same_total = float(np.sum((weight * same)[done])) if done.any() else np.nan
        left = float(np.nansum(np.where(done, 0.0, np.where(np.isfinite(measured), measured, 0.0)))) + unprofiled_s
        slow, fast = max(roof_total, same_total), min(roof_total, same_total)
        status = []
        if (~modelled).any():
            status.append(f"{counted(int((~modelled).sum()), 'kernel')} not projected (see their status)")
        if (modelled & ~done).any():
            status.append(f"{counted(int((modelled & ~done).sum()), 'kernel')} without time on the timeline "
                          "left out")
        if unprofiled_s > 0:
            status.append("timeline time of kernels never profiled is not projected")
        complete = bool(part[SOL_COMPLETE_TARGET].to_numpy(dtype=bool)[done].all()) if done.any() else False
        if done.any() and not complete:
            status.append("some speeds of light lack uncounted terms: projected times are lower bounds, "
                          "speedups upper bounds")
        rows.append({TARGET: roofs.name, "kernels": len(part), "kernels_projected": int(done.sum()),
                     "time_s": total, TIME_AT_ROOF: roof_total, TIME_SAME_EFFICIENCY: same_total,
                     SPEEDUP_LOW: total / slow if slow > 0 else np.nan,
                     SPEEDUP_HIGH: total / fast if fast > 0 else np.nan,
                     TIME_UNPROJECTED: left, SOL_COMPLETE: complete, "status": "; ".join(status) or "ok"})
    return pd.DataFrame(rows, columns=list(PROJECTION_RUN_COLUMNS))


def refuse_unplaceable(projected: pd.DataFrame, runs: pd.DataFrame, source: str | None) -> None:
    """A projection with nothing projected onto some target is bad input: say why, naming the first reason."""
    for row in runs.itertuples(index=False):
        if row.kernels_projected == 0:
            part = projected[projected[TARGET] == row.target]
            reasons = sorted(set(part["status"]) - {"ok"})
            why = reasons[0] if reasons else "no kernel group to project"
            raise InputError(source, f"no kernel can be projected onto {row.target}: {why}")
