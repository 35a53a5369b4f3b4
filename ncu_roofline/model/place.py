"""Placing analytic points on GPUs' roofs: intensity, attainable FLOP/s, minimum time, ridge and bound.

For a point of `flop` FLOP over `bytes` DRAM bytes whose work runs on compute roof P (FLOP/s) with DRAM bandwidth
B (bytes/s):

    ai = flop / bytes                         (FLOP/byte)
    attainable_flop_per_s = min(P, ai · B)     (the roofline)
    t_min_s = max(flop / P, bytes / B)         (= flop / attainable)
    ridge_ai = P / B                           (where the diagonal meets the roof)
    bound = "dram" when ai < ridge_ai, else P's key ("fp32", "tensor_fp16", ...), as in the kernel table.

Only DRAM is modelled: the minimum traffic of a workload is defined at DRAM (every input read once); caches can
only add to the measured traffic, which `analyze --points` shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.vocabulary import PEAK_OFF_CHIP, display
from ..roofs.peaks import compute_peak, memory_peak, spec_peaks

POINT_COLUMNS = ("name", "gpu", "flop", "bytes", "ai", "roof", "peak_flop_per_s", PEAK_OFF_CHIP,
                 "attainable_flop_per_s", "t_min_s", "ridge_ai", "bound", "status")


@dataclass(frozen=True)
class RoofSet:
    """One GPU's roofs for the model: a display name, peaks by column name, and where they came from."""

    name: str
    peaks: dict[str, float] = field(hash=False)
    source: str


def table_roofs(names: Iterable[str]) -> list[RoofSet]:
    """Roof sets of built-in table rows (name or alias, as `ceilings` lists them); unknown names are InputErrors."""
    from ..roofs.gpu_table import match_gpu

    out = []
    for name in names:
        spec = match_gpu(name)
        out.append(RoofSet(spec.name, spec_peaks(spec), f"table:{spec.name}"))
    return out


def user_roofs(path: str | Path) -> RoofSet:
    """The roofs of a `--ceilings FILE.toml`, named by its `name` or the file."""
    from ..roofs.user_file import load_user_ceilings

    user = load_user_ceilings(Path(path))
    return RoofSet(user.name or user.source, dict(user.peaks), user.source)


def gpu_roofs(names: Iterable[str], ceilings: str | Path | None = None) -> list[RoofSet]:
    """The GPUs points are placed on: built-in rows by name, then a user file; one set per GPU, first one kept."""
    sets = table_roofs(dict.fromkeys(names)) + ([user_roofs(ceilings)] if ceilings is not None else [])
    if not sets:
        raise InputError(None, "name a GPU with --gpu NAME (repeatable; see `ncu-roofline ceilings`) "
                               "or give --ceilings FILE.toml")
    return list({r.name: r for r in sets}.values())


@dataclass(frozen=True)
class Placement:
    """Points placed on every GPU asked for: what `model` prints, writes as JSON and draws."""

    points: pd.DataFrame  # POINT_COLUMNS (+ the points' own columns), points × GPUs, points first
    roof_sets: list[RoofSet]

    @property
    def peaks_by_gpu(self) -> dict[str, dict[str, float]]:
        return {r.name: r.peaks for r in self.roof_sets}

    @property
    def metadata(self) -> dict[str, str]:
        from ..core.version import __version__

        return {"ncu_roofline.tool_version": __version__,
                "ncu_roofline.roofs": ";".join(r.source for r in self.roof_sets)}


def place(points_or_workloads, roof_sets: list[RoofSet]) -> Placement:
    """A points frame (model.points) or workloads (model.workloads) on every roof set."""
    frame = points_or_workloads if isinstance(points_or_workloads, pd.DataFrame) else workloads_frame(
        points_or_workloads)
    return Placement(place_points(frame, roof_sets), roof_sets)


def place_points(points: pd.DataFrame, roof_sets: list[RoofSet]) -> pd.DataFrame:
    """Every point on every roof set (points × GPUs, points first): the POINT_COLUMNS, plus any extra columns of
    `points` (kernel, formula, ...). `points` needs name, flop, bytes and roof (a compute key)."""
    frames = []
    for roofs in roof_sets:
        compute = points["roof"].map(lambda key: compute_peak(roofs.peaks, key)).astype("float64")
        dram = memory_peak(roofs.peaks, "dram")
        frame = points.assign(gpu=roofs.name, peak_flop_per_s=compute,
                              peak_bytes_per_s_dram=np.nan if dram is None else dram)
        frames.append(frame)
    placed = pd.concat(frames, ignore_index=True) if frames else points.iloc[:0].assign(gpu="")
    placed = placed.assign(_order=np.tile(np.arange(len(points)), len(roof_sets)))
    placed = placed.sort_values(["_order"], kind="stable").drop(columns="_order").reset_index(drop=True)
    return pd.concat([placed, roofline_values(placed)], axis=1)[
        [*POINT_COLUMNS, *(c for c in placed.columns if c not in POINT_COLUMNS)]]


def roofline_values(frame: pd.DataFrame) -> pd.DataFrame:
    """ai, attainable_flop_per_s, t_min_s, ridge_ai, bound, status from flop, bytes, peak_flop_per_s and
    peak_bytes_per_s_dram columns (vectorised; unknown roofs give nulls and a status naming the roof)."""
    flop = frame["flop"].to_numpy(dtype="float64")
    nbytes = frame["bytes"].to_numpy(dtype="float64")
    peak = frame["peak_flop_per_s"].to_numpy(dtype="float64")
    dram = frame[PEAK_OFF_CHIP].to_numpy(dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # 1e308 FLOP over 1e-300 B: inf, quietly
        ai = np.where(nbytes > 0, flop / nbytes, np.nan)
        ridge = peak / dram
        attainable = np.minimum(peak, ai * dram)
        t_min = np.maximum(flop / peak, nbytes / dram)
    bound = np.where(np.isnan(ai) | np.isnan(ridge), None,
                     np.where(ai < ridge, "dram", frame["roof"].to_numpy(dtype=object)))
    status = np.full(len(frame), "ok", dtype=object)
    no_compute, no_dram = np.isnan(peak), np.isnan(dram)
    roof_names = frame["roof"].map(display).to_numpy(dtype=object)
    status[no_compute] = "no " + roof_names[no_compute] + " roof on this GPU"
    status[no_dram & ~no_compute] = "no DRAM roof on this GPU"
    status[no_dram & no_compute] = "no " + roof_names[no_dram & no_compute] + " or DRAM roof on this GPU"
    return pd.DataFrame({"ai": ai, "attainable_flop_per_s": attainable, "t_min_s": t_min, "ridge_ai": ridge,
                         "bound": bound, "status": status}, index=frame.index)


def workloads_frame(workloads) -> pd.DataFrame:
    """Workloads (model.workloads.Workload) as the points frame `place_points` takes, with their formulas."""
    parts = list(dict.fromkeys(k for w in workloads for k in w.parts))
    return pd.DataFrame({"name": [w.name for w in workloads], "flop": [float(w.flop) for w in workloads],
                         "bytes": [float(w.bytes) for w in workloads], "roof": [w.roof for w in workloads],
                         **{k: [w.parts.get(k, np.nan) for w in workloads] for k in parts},
                         "formula": [w.formula for w in workloads]})
