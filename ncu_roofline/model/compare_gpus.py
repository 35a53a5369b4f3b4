"""`ceilings compare`: several GPUs' roofs and ridge points side by side, the table one would copy by hand."""

from __future__ import annotations

import pandas as pd

from ..core.vocabulary import LEVELS, display, peak_bytes_column
from ..roofs.peaks import compute_keys, compute_peak, compute_roof_column, memory_peak, ridge_intensity
from .place import RoofSet


def compare_roofs(roof_sets: list[RoofSet]) -> pd.DataFrame:
    """Rows: every compute roof any GPU knows, the memory roofs, then each compute roof's ridge against DRAM.

    Columns: key (peak column, or `<compute>/dram` for a ridge), kind (compute, memory, ridge), label, and one
    column per GPU (FLOP/s, bytes/s or FLOP/byte; null where that GPU has no such roof).
    """
    keys = list(dict.fromkeys(k for roofs in roof_sets for k in compute_keys(roofs.peaks)))
    # `tensor` and `tensor_fp16` are the same roof (dense FP16 input); list it once, under its explicit name.
    if "tensor" in keys and "tensor_fp16" in keys:
        keys.remove("tensor")
    rows = []
    for key in keys:
        rows.append({"key": compute_roof_column(key), "kind": "compute", "label": display(key),
                     **{r.name: compute_peak(r.peaks, key) for r in roof_sets}})
    for level in LEVELS:
        rows.append({"key": peak_bytes_column(level), "kind": "memory", "label": display(level),
                     **{r.name: memory_peak(r.peaks, level) for r in roof_sets}})
    for key in keys:
        rows.append({"key": f"{key}/dram", "kind": "ridge", "label": f"ridge {display(key)} / DRAM (FLOP/B)",
                     **{r.name: ridge_intensity(compute_peak(r.peaks, key), memory_peak(r.peaks, "dram"))
                        for r in roof_sets}})
    frame = pd.DataFrame(rows, columns=["key", "kind", "label", *(r.name for r in roof_sets)])
    return frame
