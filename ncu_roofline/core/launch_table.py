"""The LaunchTable: what every reader returns and everything downstream consumes.

One row per kernel launch (an ncu "ID" / report action), the identity columns below, then one float64 column
per ncu metric named exactly as ncu names it (`dram__bytes.sum`), with values in base SI units: bytes, seconds,
hertz, counts (sectors stay sectors; the catalogue turns them into bytes). Readers know nothing of rooflines.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

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


def finish_launch_table(identity: dict[str, object], metrics: dict[str, object] | pd.DataFrame,
                        n: int) -> pd.DataFrame:
    """Build a LaunchTable from identity values (scalars or sequences) and metric arrays, or a frame of the
    metrics already laid out as one float64 block (`metric_frame`: taken as it is, no copy).

    Identity columns a reader does not know are filled with nulls of the right dtype (`launches` with 1,
    `reader_notes` with ""), so every reader returns the same schema.
    """
    data: dict[str, object] = {}
    texts: dict[object, pa.Array] = {}  # one Arrow array per repeated text (immutable: the null columns share one)
    for name, dtype in IDENTITY_COLUMNS.items():
        value = identity.get(name)
        if value is None:
            value = 1 if name == "launches" else ("" if name == "reader_notes" else pd.NA)
        if _is_scalar(value) and n:  # broadcast: no list of n objects to convert
            data[name] = _repeated(value, n, dtype, texts)
            continue
        if _is_scalar(value):
            series = pd.Series([value] * n, dtype="object")
        elif isinstance(value, (pd.Series, pd.api.extensions.ExtensionArray, np.ndarray)):
            # as it is, without iterating its values in Python (seconds per column at 10^6 launches), and without
            # a copy: the reader hands its arrays over (and changes them no more)
            series = pd.Series(value, dtype="object" if getattr(value, "dtype", None) == object else None,
                               copy=False)
            series = series.reset_index(drop=True)
        else:
            series = pd.Series(list(value), dtype="object")
        data[name] = series.astype(dtype) if n else pd.Series([], dtype=dtype)
    frame = pd.DataFrame(data, copy=False)  # the columns are this function's own: not copied again
    if isinstance(metrics, pd.DataFrame):  # built by the reader with metric_frame
        return pd.concat([frame, metrics.set_axis(frame.index)], axis=1) if len(metrics.columns) else frame
    if metrics:
        # one float64 block built at once: a Series per column costs ~80 us, and reports have ~1,000 metrics
        values = np.vstack([_float_column(v) for v in metrics.values()]) if n else np.empty((len(metrics), 0))
        frame = pd.concat([frame, metric_frame(values, list(metrics), frame.index)], axis=1)
    return frame


def metric_rows(n: int, count: int) -> np.ndarray:
    """An uninitialised float64 block for `count` metrics of `n` launches, a row per metric (as pandas keeps a
    block), for a reader to fill row by row and frame with `metric_frame`: no stacking copy of every column at the
    end (0.3 CPU-s at 10^6 launches)."""
    return np.empty((count, n), dtype=np.float64)


def metric_frame(rows: np.ndarray, names: list[str], index: pd.Index | None = None) -> pd.DataFrame:
    """A block of metric rows (`metric_rows`) as a frame of one column per metric, taken without a copy."""
    return pd.DataFrame(rows.T, columns=names, index=index, copy=False)


def _repeated(value: object, n: int, dtype: str, texts: dict[object, pa.ChunkedArray]) -> object:
    """`value` on each of `n` rows, as a column of `dtype`: text built in Arrow at once (pandas repeats a
    one-element array through a take, 0.08 CPU-s for a file name at 10^6 launches), each text once in `texts`
    (the five null text columns of a CSV read share one array)."""
    if dtype == "string":
        text = None if value is pd.NA else value
        if text not in texts:
            texts[text] = repeated_text(text, n)
        return pd.array(texts[text], dtype=dtype)
    return pd.Series(value, index=pd.RangeIndex(n), dtype=dtype)


_SHARED_ROWS = 1 << 16  # a multiple of Parquet's write batch (1,024 values): the same pages as one long array


def repeated_text(text: str | None, n: int) -> pa.ChunkedArray:
    """`text` (None: null) on `n` rows as a large_string column whose chunks are one array of at most 65,536 rows
    over and over: Arrow arrays are immutable, so they can share it. A source file's path on 10^6 launches was 48 MB
    of offsets and bytes written, and first touched, for one value (0.1-0.2 CPU-s in a fresh process); Parquet
    writes the same bytes from either."""
    rows = min(n, _SHARED_ROWS)
    if text is None:
        chunk = pa.nulls(rows, pa.large_string())
    else:
        data = text.encode("utf-8")
        offsets = np.arange(rows + 1, dtype=np.int64) * len(data)
        chunk = pa.LargeStringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(data * rows))
    whole, rest = divmod(n, rows) if rows else (0, 0)
    return pa.chunked_array([chunk] * whole + ([chunk.slice(0, rest)] if rest else []), pa.large_string())


def _float_column(values: object) -> np.ndarray:
    """A metric as float64: the readers' numeric arrays as they are, anything else through `pd.to_numeric`
    (text that is no number becomes NaN)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiub":
        return values.astype(np.float64, copy=False)
    return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def _is_scalar(value: object) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is pd.NA
