"""Roofs as plain numbers: one GPU's peaks by name, the compute roof for a data type, and ridge points.

Pure functions over a `peaks` mapping (`peak_flop_per_s_<precision>`, `peak_flop_per_s_tensor_<type>`,
`peak_bytes_per_s_<level>` -> FLOP/s or bytes/s), so the analytic model, `ceilings compare` and the chart can share
them without knowing where a roof came from (table row, user file, report).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from ..core.vocabulary import (
    COMPUTE_TERMS,
    MEMORY_TERMS,
    PEAK_COLUMNS,
    PRECISIONS,
    TENSOR_TERMS,
    TENSOR_TYPES,
    Term,
    peak_bytes_column,
    peak_flop_column,
    tensor_peak_column,
)

Peaks = Mapping[str, float]

# The table's tensor figures by data type -> the vocabulary's tensor input type (BF16 runs at the FP16 rate and
# shares its roof, as Nsight Compute draws it).
_TENSOR_TYPE_OF: dict[str, str] = {"bf16": "fp16", **{t: t for t in TENSOR_TYPES}}


def spec_peaks(spec) -> dict[str, float]:
    """Every roof a table row knows, under the output-column names; per-type tensor roofs included.

    Reads `spec.peaks` (which may already hold `peak_flop_per_s_tensor_<type>` keys) and fills per-type tensor
    roofs from `spec.tensor_peaks` where it holds them; FP16 wins over BF16 when both are given.
    """
    peaks = dict(spec.peaks)
    tensor = getattr(spec, "tensor_peaks", {}) or {}
    for dtype in sorted(tensor, key=lambda d: d != "fp16"):  # fp16 first, so it is the one kept
        column = tensor_peak_column(_TENSOR_TYPE_OF.get(dtype, dtype))
        peaks.setdefault(column, tensor[dtype])
    return peaks


def compute_roof_column(key: str) -> str:
    """Peak column of a compute roof key: `fp32` -> peak_flop_per_s_fp32, `tensor_fp8` -> ..._tensor_fp8."""
    if key in PRECISIONS:
        return peak_flop_column(key)
    if key.startswith("tensor_") and key.removeprefix("tensor_") in TENSOR_TYPES:
        return tensor_peak_column(key.removeprefix("tensor_"))
    raise KeyError(f"unknown compute roof {key!r}")


def compute_peak(peaks: Peaks, key: str) -> float | None:
    """The roof for compute key `key` (`fp32`, `tensor`, `tensor_fp16`, ...), or None when unknown.

    The table's default tensor roof (`peak_flop_per_s_tensor`) is dense FP16 input by definition, so it stands in
    for `tensor_fp16` where no per-type figure is given, and the reverse.
    """
    value = peaks.get(compute_roof_column(key))
    if value is None and key == "tensor_fp16":
        value = peaks.get(peak_flop_column("tensor"))
    if value is None and key == "tensor":
        value = peaks.get(tensor_peak_column("fp16"))
    return _known(value)


def memory_peak(peaks: Peaks, level: str) -> float | None:
    return _known(peaks.get(peak_bytes_column(level)))


def ridge_intensity(compute_flop_per_s: float | None, memory_bytes_per_s: float | None) -> float | None:
    """Where a memory diagonal meets a compute roof: roof / bandwidth, in FLOP/byte; None when either is unknown."""
    if compute_flop_per_s is None or memory_bytes_per_s is None:
        return None
    return compute_flop_per_s / memory_bytes_per_s


def compute_keys(peaks: Peaks) -> list[str]:
    """The compute roofs `peaks` knows: precisions first, then tensor input types, in vocabulary order."""
    keys = [t.key for t in COMPUTE_TERMS] + [f"tensor_{t}" for t in TENSOR_TYPES]
    return [k for k in keys if compute_peak(peaks, k) is not None]


def _known(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) and value > 0 else None


# Compute roofs in drawing order: the CUDA-core precisions and the tensor pipe, then one per tensor input type.
RIDGE_COMPUTE_TERMS: tuple[Term, ...] = (*COMPUTE_TERMS, *TENSOR_TERMS)


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def ridge_points(peaks: Mapping[str, float | None]) -> list[dict[str, Any]]:
    """Every known compute roof x every known memory roof, each with its ridge intensity in FLOP/byte.

    `peaks` maps roof columns (`peak_flop_per_s_fp32`, `peak_bytes_per_s_l2`, `peak_flop_per_s_tensor_fp16`, ...)
    to values; unknown (None, NaN, 0) roofs are left out, never guessed. Order: compute roof, then memory level
    farthest from the cores first.
    """
    return [
        {
            "compute": c.key,
            "memory": m.key,
            "peak_flop_per_s": float(peaks[c.peak]),
            "peak_bytes_per_s": float(peaks[m.peak]),
            "ai_flop_per_byte": float(peaks[c.peak]) / float(peaks[m.peak]),
        }
        for c in RIDGE_COMPUTE_TERMS if _positive(peaks.get(c.peak))
        for m in MEMORY_TERMS if _positive(peaks.get(m.peak))
    ]


def run_peaks(kernels: Any, columns: Iterable[str] | None = None) -> dict[str, float]:
    """One value per roof column for the whole run (every peak column, or `columns`): the median of the kernels'
    known peaks. Ceilings are per launch in the table, but a chart, or a point placed on the run's roofs, has one
    set. The caller normally has one GPU and one clock, so the values agree and the median is that value; where
    they differ (clock changes between launches) the median is the typical roof and stays robust to a stray launch.
    Non-positive peaks count as unknown. The one place a run's roofs are summarised (the chart, model/match.py)."""
    import numpy as np
    import pandas as pd

    wanted = list(columns) if columns is not None else [*PEAK_COLUMNS, *(tensor_peak_column(t) for t in TENSOR_TYPES)]
    peaks: dict[str, float] = {}
    for column in wanted:
        if column in kernels:
            values = pd.to_numeric(kernels[column], errors="coerce")
            values = values[np.isfinite(values) & (values > 0)]
            if len(values):
                peaks[column] = float(values.median())
    return peaks
