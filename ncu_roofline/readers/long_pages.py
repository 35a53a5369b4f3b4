"""Readers for ncu's long CSV pages: the details page (one row per launch and metric) and the per-kernel summary
(`--print-summary per-kernel`: one row per kernel and metric, Minimum/Maximum/Average over Invocations).

The file is streamed through pyarrow's CSV reader in batches; only the metrics the caller wants are kept, then
pivoted to one row per launch with a vectorised scatter, never a per-row Python loop.

Column layouts seen in the wild (FORMAT_NOTES §2): 12 columns with `Kernel Time` (2020.1), + rule columns (2021.2),
15 with launch config and CC, 20 with rule and speedup columns, 21 with `Body Item Label`. Rule rows carry no
metric; metric rows of pages with rule columns are shorter than the header and end in a trailing comma.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import InputError
from ..launch_table import finish_launch_table
from ..metric_names import is_extensive
from .columns import CSV_IDENTITY, DEVICE_NAME_METRIC, decode, decode_column, identity_frame, parse_numbers, \
    unit_factors
from .text import TableStart

BLOCK_SIZE = 8 * 1024 * 1024


def read_long_page(start: TableStart, wanted: Callable[[str], bool],
                   progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Read a details or summary page into a LaunchTable."""
    summary = start.layout == "summary"
    header = start.header
    value_column = "Average" if summary else "Metric Value"
    width = _row_width(start)
    names = header[:width] + [f"_extra{i}" for i in range(width - len(header))]
    keys = ["Process ID", "Kernel Name", "Block Size", "Grid Size", "Device"] if summary else ["ID"]
    keys = [k for k in keys if k in header]
    identity = [h for h in header if h in CSV_IDENTITY or h in keys] + (["Invocations"] if summary else [])
    needed = list(dict.fromkeys(identity + ["Metric Name", "Metric Unit", value_column]))
    missing = [c for c in needed if c not in names]
    if missing:
        raise InputError(start.path, f"the {start.layout} page lacks column(s) {', '.join(missing)}")

    odd_rows: list[list[str]] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        # Rows of another width: full-width rule rows (no metric), or text after the table. Keep metric rows.
        if row.text:
            parsed = next(csv.reader(io.StringIO(row.text)), [])
            if len(parsed) >= len(header) and parsed[header.index("Metric Name")].strip():
                odd_rows.append(parsed)
        return "skip"

    wanted_names: dict[bytes, bool] = {}
    batches: list[pa.RecordBatch] = []
    with open(start.path, "rb") as handle:
        handle.seek(start.offset)
        try:
            reader = pacsv.open_csv(
                handle,
                read_options=pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=BLOCK_SIZE),
                parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid),
                convert_options=pacsv.ConvertOptions(
                    include_columns=needed, column_types={c: pa.binary() for c in needed},
                    strings_can_be_null=False, quoted_strings_can_be_null=False),
            )
            for batch in reader:
                batches.append(_keep_wanted(batch, wanted, wanted_names, keys))
                if progress is not None:
                    progress(handle.tell())
        except pa.ArrowInvalid as exc:
            raise InputError(start.path, f"the CSV table could not be parsed: {_first_line(exc)}") from None
    if odd_rows:
        odd = pa.RecordBatch.from_pydict({c: pa.array([r[header.index(c)].encode() for r in odd_rows], pa.binary())
                                          for c in needed})
        batches.append(_keep_wanted(odd, wanted, wanted_names, keys))
    table = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else None
    if table is None or table.num_rows == 0:
        raise InputError(start.path, "the ncu table has a header but no metric rows (only rule results, or no "
                                     "kernel was profiled)")
    return _pivot(start, table.combine_chunks(), keys, value_column, summary)


def _row_width(start: TableStart) -> int:
    """How many fields a metric row has: the header's count, or fewer when rule columns are left off."""
    metric_col = start.header.index("Metric Name")
    widths = [len(r) for r in start.sample_rows if len(r) > metric_col and r[metric_col].strip()]
    if not widths:
        return len(start.header)
    return max(set(widths), key=widths.count)


def _keep_wanted(batch: pa.RecordBatch, wanted: Callable[[str], bool], memo: dict[bytes, bool],
                 keys: list[str]) -> pa.RecordBatch:
    """Rows of wanted metrics, plus the first row of every launch so that a launch with no wanted metric is
    still accounted for (its metric name is blanked so it adds no value)."""
    names = pc.unique(batch.column("Metric Name")).to_pylist()
    for name in names:
        if name not in memo:
            text = decode(name).strip()
            memo[name] = bool(text) and (wanted(text) or text == DEVICE_NAME_METRIC)
    is_wanted = pc.is_in(batch.column("Metric Name"), value_set=pa.array([n for n in names if memo[n]], pa.binary()))
    key = batch.column(keys[0]) if len(keys) == 1 else pc.binary_join_element_wise(
        *[batch.column(k) for k in keys], pa.scalar(b"\x1f", pa.binary()))
    first = pc.index_in(pc.unique(key), value_set=key).to_numpy(zero_copy_only=False)
    keep = is_wanted.to_numpy(zero_copy_only=False).copy()
    keep[first] = True
    kept = batch.filter(pa.array(keep))
    blank = pc.if_else(is_wanted.filter(pa.array(keep)), kept.column("Metric Name"), pa.scalar(b"", pa.binary()))
    return kept.set_column(kept.schema.get_field_index("Metric Name"), "Metric Name", blank)


def _pivot(start: TableStart, table: pa.Table, keys: list[str], value_column: str, summary: bool) -> pd.DataFrame:
    path = start.path
    key_frame = pd.DataFrame({k: decode_column(table.column(k)) for k in keys})
    launch_codes, launch_keys = pd.factorize(pd.MultiIndex.from_frame(key_frame) if len(keys) > 1
                                             else key_frame[keys[0]], sort=False)
    n = len(launch_keys)
    first_row = np.full(n, -1, dtype=np.int64)
    first_row[launch_codes[::-1]] = np.arange(len(launch_codes))[::-1]
    if summary:
        launch_ids = np.arange(n, dtype=np.int64)
    else:
        ids = pd.to_numeric(pd.Series(launch_keys), errors="coerce")
        if ids.isna().any() or (ids % 1 != 0).any():
            bad = pd.Series(launch_keys)[ids.isna() | (ids % 1 != 0)].iloc[0]
            raise InputError(path, f"the ID column holds {bad!r}, not a launch number")
        launch_ids = ids.astype(np.int64).to_numpy()

    metric_names = decode_column(table.column("Metric Name"))
    is_device = (metric_names == DEVICE_NAME_METRIC).to_numpy()
    values, odd = parse_numbers(table.column(value_column))
    factors, unknown_units = unit_factors(table.column("Metric Unit"))
    values = values * factors
    metric_codes, metric_index = pd.factorize(metric_names.where(~is_device & (metric_names != ""), pd.NA),
                                              sort=False)
    matrix = np.full((n, len(metric_index)), np.nan)
    rows = ~is_device & (metric_codes >= 0)
    matrix[launch_codes[rows], metric_codes[rows]] = values[rows]

    identity_columns = {c: table.column(c).take(pa.array(first_row)) for c in table.column_names
                        if c not in {"Metric Name", "Metric Unit", value_column}}
    identity = identity_frame(identity_columns, str(path))
    identity["launch_id"] = launch_ids
    identity["device_name"] = _device_names(launch_codes, is_device, table.column(value_column), n)
    launches = np.ones(n, dtype=np.int64)
    if summary:
        invocations = pd.to_numeric(decode_column(identity_columns["Invocations"]).str.replace(",", ""),
                                    errors="coerce").fillna(1).astype(np.int64).to_numpy()
        launches = np.maximum(invocations, 1)
        for j, name in enumerate(metric_index):
            if is_extensive(name):
                matrix[:, j] *= launches  # totals over all invocations = Average x Invocations
    identity["launches"] = launches
    text_rows = is_device | (metric_names == "").to_numpy()  # string values and blanked rows are not numbers
    identity["reader_notes"] = _notes(launch_codes, metric_names, table, odd & ~text_rows,
                                      np.isnan(factors) & ~text_rows, unknown_units, n)
    metrics = {name: matrix[:, j] for j, name in enumerate(metric_index)}
    return finish_launch_table(identity, metrics, n)


def _device_names(launch_codes: np.ndarray, is_device: np.ndarray, values: pa.Array, n: int) -> pd.Series:
    names = pd.Series(pd.NA, index=range(n), dtype="string")
    if is_device.any():
        text = decode_column(values.filter(pa.array(is_device)))
        names.iloc[launch_codes[is_device]] = text.str.strip('"').to_numpy()
    return names


def _notes(launch_codes: np.ndarray, metric_names: pd.Series, table: pa.Table, odd: np.ndarray,
           bad_unit: np.ndarray, unknown_units: list[str], n: int) -> pd.Series:
    """Per launch, what the reader could not read: non-numeric values and units it does not understand."""
    notes = pd.Series("", index=range(n), dtype="object")
    problem = odd | bad_unit
    if not problem.any():
        return notes
    frame = pd.DataFrame({"launch": launch_codes[problem], "metric": metric_names[problem].to_numpy(),
                          "unit": decode_column(table.column("Metric Unit").filter(pa.array(problem))).to_numpy(),
                          "bad_unit": bad_unit[problem]})
    frame["text"] = np.where(frame["bad_unit"], "unit '" + frame["unit"] + "' of " + frame["metric"] + " not understood",
                             "value of " + frame["metric"] + " is not a number")
    joined = frame.groupby("launch")["text"].agg("; ".join)
    notes.iloc[joined.index.to_numpy()] = joined.to_numpy()
    return notes


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
