"""Ridge points: where a memory roof meets a compute roof.

The ridge intensity `peak_flop_per_s / peak_bytes_per_s` (FLOP/byte) is the arithmetic intensity above which a
kernel can no longer be bound by that memory level for that kind of work. Pure functions over roofs in base units,
keyed by the `peak_*` column names of `vocabulary.py`, so `ceilings show`, the chart and its tooltips share one
computation.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from .vocabulary import COMPUTE_TERMS, MEMORY_TERMS, TENSOR_TERMS, Term

# Compute roofs in drawing order: the CUDA-core precisions and the tensor pipe, then one per tensor input type.
RIDGE_COMPUTE_TERMS: tuple[Term, ...] = (*COMPUTE_TERMS, *TENSOR_TERMS)


def _known(value: Any) -> bool:
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
        for c in RIDGE_COMPUTE_TERMS if _known(peaks.get(c.peak))
        for m in MEMORY_TERMS if _known(peaks.get(m.peak))
    ]
