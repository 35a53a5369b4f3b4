"""Roofs per launch: the report's own peaks, the user's file, the built-in table, in that order of trust.

- report: `*.peak_sustained` x the clock measured during the launch (what Nsight Compute draws), from the
  catalogue. A roof is taken from the report only when it matches how the work/traffic was measured.
- user (`--ceilings FILE.toml`): overrides any roof it names, report roofs included.
- table (`metrics/gpus.toml`): fills what is still unknown, matched on the device name or `--gpu NAME`.
A roof that stays unknown is null and named in the status; it is never guessed. `--clock max` rescales the
report's SM-clocked roofs from the measured clock to the device's maximum clock.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .catalogue import Catalogue, Columns, as_columns
from .derive import LEVELS, PRECISIONS, pick_definition
from .errors import InputError
from .status import StatusNotes
from .vocabulary import TENSOR_PEAK_COLUMNS, TENSOR_TERMS, TERM_BY_PEAK, tensor_peak_column

PEAK_COLUMNS = tuple([f"peak_flop_per_s_{p}" for p in PRECISIONS] + [f"peak_bytes_per_s_{lv}" for lv in LEVELS])
# The seven roofs, then one dense tensor roof per input type (used where the capture splits tensor work by type).
ROOF_COLUMNS = (*PEAK_COLUMNS, *TENSOR_PEAK_COLUMNS)
INTEGRATED_MEMORY_CC = (8.7, 11.0, 12.1)
# Roofs that run on the SM clock (scaled by --clock max); DRAM has its own clock.
_SM_CLOCKED = tuple(c for c in ROOF_COLUMNS if not c.endswith("dram"))
_WORK_OF_ROOF = {**{t.peak: t.amount for t in TERM_BY_PEAK.values()}, **{t.peak: t.amount for t in TENSOR_TERMS}}


@dataclass(frozen=True)
class CeilingOptions:
    gpu: str | None = None  # force this table row
    user_peaks: dict[str, float] | None = None
    user_source: str | None = None
    clock: str = "measured"  # or "max"
    use_table: bool = True  # False: report and user roofs only (a ceilings template prefilled from a report)


def attach_ceilings(raw: pd.DataFrame, derived: pd.DataFrame, catalogue: Catalogue, options: CeilingOptions,
                    notes: StatusNotes) -> pd.DataFrame:
    """Seven peak columns and one per tensor input type, `ceiling_source`, and status notes for unknown roofs."""
    n = len(raw)
    columns = as_columns(raw)
    out: dict[str, np.ndarray] = {}
    source_parts: list[np.ndarray] = []
    scale = _clock_scale(columns, catalogue, options.clock, notes)
    table_peaks, table_label = _table_peaks(raw, options, notes)
    user_peaks = _user_roofs(options.user_peaks)
    for column in ROOF_COLUMNS:
        quantity = _WORK_OF_ROOF[column]
        used = derived[f"def_{quantity}"]
        allowed = {d.id: np.asarray(used.isin(d.for_defs), dtype=bool)
                   for d in catalogue.definitions(column) if d.for_defs}
        report = pick_definition(columns, catalogue.definitions(column), allowed).values
        if column in _SM_CLOCKED:
            report = report * scale
        values = report.copy()
        origin = np.where(np.isnan(report), "", "report").astype(object)
        if column in user_peaks:
            values[:] = user_peaks[column]
            origin[:] = options.user_source or "user"
        from_table = np.isnan(values) & ~np.isnan(table_peaks[column])
        values[from_table] = table_peaks[column][from_table]
        origin[from_table] = table_label[from_table]
        out[column] = values
        if column in TENSOR_PEAK_COLUMNS:  # a type's roof is cited only where the launch did work of that type
            origin = np.where(derived[quantity].to_numpy(dtype="float64") > 0, origin, "").astype(object)
        source_parts.append(origin)
    integrated = raw["compute_capability"].isin(INTEGRATED_MEMORY_CC).fillna(False).to_numpy(dtype=bool)
    if integrated.any():
        # Orin, Thor and GB10 share memory with the CPU: Nsight Compute draws no DRAM roof there, nor do we.
        out["peak_bytes_per_s_dram"] = np.where(integrated, np.nan, out["peak_bytes_per_s_dram"])
        notes.add(integrated, "no DRAM roof: integrated memory (CC 8.7, 11.0, 12.1)")
    frame = pd.DataFrame(out, index=raw.index)
    frame["ceiling_source"] = _join_sources(source_parts, n)
    return frame


def _user_roofs(user_peaks: dict[str, float] | None) -> dict[str, float]:
    """The user's roofs; their `tensor` roof is by definition dense FP16 input, so it is the FP16 type's too."""
    roofs = dict(user_peaks or {})
    tensor_fp16 = tensor_peak_column("fp16")
    if "peak_flop_per_s_tensor" in roofs and tensor_fp16 not in roofs:
        roofs[tensor_fp16] = roofs["peak_flop_per_s_tensor"]
    return roofs


def _clock_scale(raw: Columns, catalogue: Catalogue, clock: str, notes: StatusNotes) -> np.ndarray:
    n = raw.n
    if clock == "measured":
        return np.ones(n)
    measured = pick_definition(raw, catalogue.definitions("sm_clock_hz")).values
    maximum = pick_definition(raw, catalogue.definitions("max_sm_clock_hz")).values
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = maximum / measured
    unknown = ~np.isfinite(scale)
    notes.add(unknown, "clock max unknown (needs device__attribute_max_gpu_frequency_khz and "
                       "sm__cycles_elapsed.avg.per_second); report roofs at the measured clock")
    return np.where(unknown, 1.0, scale)


def _table_peaks(raw: pd.DataFrame, options: CeilingOptions,
                 notes: StatusNotes) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per launch, the built-in table's roofs for its device (or for --gpu), and a label per launch."""
    from .gpus import UnknownGpuError, is_mig, match_gpu, tensor_type_peaks  # the table is data; loaded on first use

    n = len(raw)
    peaks = {c: np.full(n, np.nan) for c in ROOF_COLUMNS}
    labels = np.full(n, "", dtype=object)
    if not options.use_table:
        return peaks, labels
    if options.gpu:
        spec = match_gpu(options.gpu)  # an unknown --gpu is the user's error: InputError
        roofs = {**spec.peaks, **tensor_type_peaks(spec)}
        for column in ROOF_COLUMNS:
            peaks[column][:] = roofs.get(column, np.nan)
        labels[:] = f"table:{spec.name}"
        return peaks, labels
    names = raw["device_name"].astype("object").where(raw["device_name"].notna(), None).to_numpy()
    codes, uniques = pd.factorize(names, use_na_sentinel=True)
    for code, name in enumerate(uniques):
        rows = codes == code
        try:
            if is_mig(name):
                notes.add(rows, f"no table roofs: '{name}' is a MIG slice; profiling roofs do not apply to a slice, "
                                "pass --ceilings FILE.toml")
                continue
            spec = match_gpu(name)
        except UnknownGpuError as exc:
            notes.add(rows, f"no table roofs: {exc.message}")
            continue
        except InputError as exc:
            notes.add(rows, f"no table roofs: {exc.message}")
            continue
        roofs = {**spec.peaks, **tensor_type_peaks(spec)}
        for column in ROOF_COLUMNS:
            peaks[column][rows] = roofs.get(column, np.nan)
        labels[rows] = f"table:{spec.name}"
    return peaks, labels


def _join_sources(parts: list[np.ndarray], n: int) -> pd.Series:
    """'report', 'table:NVIDIA H100 PCIe', or 'report+table:...' where roofs came from several places."""
    combined = np.zeros(n, dtype=np.int64)
    for part in parts:
        codes, uniques = pd.factorize(part)
        combined = combined * (len(uniques) + 1) + codes
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    texts = []
    for row in first:
        seen = [s for s in dict.fromkeys(part[row] for part in parts) if s]
        texts.append("+".join(seen) if seen else "none")
    text_codes, categories = pd.factorize(np.asarray(texts, dtype=object))
    codes = text_codes[inverse.reshape(-1)] if n else np.zeros(0, dtype=np.int64)
    return pd.Series(pd.Categorical.from_codes(codes, categories=categories), index=range(n))
