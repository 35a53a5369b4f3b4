"""The LaunchTable: what every reader returns and everything downstream consumes.

One row per kernel launch (an ncu "ID" / report action), the identity columns below, then one float64 column
per ncu metric named exactly as ncu names it (`dram__bytes.sum`), with values in base SI units: bytes, seconds,
hertz, counts (sectors stay sectors; the catalogue turns them into bytes). Readers know nothing of rooflines.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# name -> pandas dtype. Identity columns never contain "__", metric columns always do (or are ncu names).
IDENTITY_COLUMNS: dict[str, str] = {
    "source_file": "string",
    "launch_id": "int64",
    "kernel_name": "string",  # the name as exported (demangled when ncu printed it so)
    "kernel_demangled": "string",
    "process_id": "Int64",
    "process_name": "string",
    "device_name": "string",  # e.g. "NVIDIA H100 PCIe"; null when the export does not say
    "compute_capability": "Float64",  # 8.0, 9.0, 12.0; null when unknown
    "context": "Int64",
    "stream": "Int64",
    "grid": "string",  # "(x, y, z)" as ncu prints it
    "block": "string",
    "nvtx_range": "string",
    "workload_type": "string",  # "kernel", "graph", "range"
    "launches": "int64",  # launches this row stands for: 1, or Invocations of a per-kernel summary row
    "reader_notes": "string",  # what the reader could not read for this launch ("" when nothing)
    "ncu_rules": "string",  # NCU's own rule results, a JSON list (readers/ncu_rules.py); null where none stored
    "clock_control": "string",  # ncu --clock-control of the capture (base, none...); null where not recorded
    "cache_control": "string",  # ncu --cache-control (all, none); null where not recorded
}


def is_metric_column(name: str) -> bool:
    return name not in IDENTITY_COLUMNS and not name.startswith("_")


def metric_columns(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if is_metric_column(c)]


def finish_launch_table(identity: dict[str, object], metrics: dict[str, object], n: int) -> pd.DataFrame:
    """Build a LaunchTable from identity values (scalars or sequences) and metric arrays.

    Identity columns a reader does not know are filled with nulls of the right dtype (`launches` with 1,
    `reader_notes` with ""), so every reader returns the same schema.
    """
    data: dict[str, object] = {}
    for name, dtype in IDENTITY_COLUMNS.items():
        value = identity.get(name)
        if value is None:
            value = 1 if name == "launches" else ("" if name == "reader_notes" else pd.NA)
        if _is_scalar(value) and n:  # broadcast by pandas: no list of n objects to convert
            data[name] = pd.Series(value, index=pd.RangeIndex(n), dtype=dtype)
            continue
        if _is_scalar(value):
            series = pd.Series([value] * n, dtype="object")
        elif isinstance(value, (pd.Series, pd.api.extensions.ExtensionArray, np.ndarray)):
            # as it is, without iterating its values in Python (seconds per column at 10^6 launches)
            series = pd.Series(value, dtype="object" if getattr(value, "dtype", None) == object else None)
            series = series.reset_index(drop=True)
        else:
            series = pd.Series(list(value), dtype="object")
        data[name] = series.astype(dtype) if n else pd.Series([], dtype=dtype)
    frame = pd.DataFrame(data)
    if metrics:
        # one float64 block built at once: a Series per column costs ~80 us, and reports have ~1,000 metrics; a row
        # per column, as pandas keeps a block, so that the frame takes it without a copy
        values = np.vstack([_float_column(v) for v in metrics.values()]).T if n else np.empty((0, len(metrics)))
        metric_frame = pd.DataFrame(values, columns=list(metrics), index=frame.index, copy=False)
        frame = pd.concat([frame, metric_frame], axis=1)
    return frame


def _float_column(values: object) -> np.ndarray:
    """A metric as float64: the readers' numeric arrays as they are, anything else through `pd.to_numeric`
    (text that is no number becomes NaN)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiub":
        return values.astype(np.float64, copy=False)
    return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def _is_scalar(value: object) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is pd.NA
