"""Reader for ncu's raw page (`ncu --csv --page raw`): one row per launch, one column per metric.

The header names identity columns then metrics (1,500+ with the full set, some section-qualified such as
`SM.TriageA.sm__cycles_active.avg`); the next row is a units row unless `--print-units base` was used. Only the
columns the caller wants are read, so memory follows the metrics used, not the file's width.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from ..errors import InputError
from ..launch_table import finish_launch_table
from ..units import default_unit, unit_factor
from .columns import CSV_IDENTITY, DEVICE_NAME_METRIC, decode_column, identity_frame, parse_numbers
from .long_pages import BLOCK_SIZE, _first_line
from .text import TableStart


def read_raw_page(start: TableStart, wanted: Callable[[str], bool],
                  progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    header = start.header
    if len(set(header)) != len(header):
        header = _dedupe(header)
    identity_cols = [h for h in header if h in CSV_IDENTITY]
    metric_cols = [h for h in header if h not in CSV_IDENTITY and wanted(h)]
    device_col = [DEVICE_NAME_METRIC] if DEVICE_NAME_METRIC in header else []
    needed = list(dict.fromkeys(identity_cols + metric_cols + device_col))
    units = _units_row(start, header)

    bad_rows = 0

    def on_invalid(row: pacsv.InvalidRow) -> str:
        nonlocal bad_rows
        bad_rows += 1
        return "skip"

    batches = []
    with open(start.path, "rb") as handle:
        handle.seek(start.offset)
        try:
            reader = pacsv.open_csv(
                handle,
                read_options=pacsv.ReadOptions(column_names=header, skip_rows=1 + (units is not None),
                                               block_size=BLOCK_SIZE),
                parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid),
                convert_options=pacsv.ConvertOptions(include_columns=needed,
                                                      column_types={c: pa.binary() for c in needed},
                                                      strings_can_be_null=False, quoted_strings_can_be_null=False))
            for batch in reader:
                batches.append(batch)
                if progress is not None:
                    progress(handle.tell())
        except pa.ArrowInvalid as exc:
            raise InputError(start.path, f"the CSV table could not be parsed: {_first_line(exc)}") from None
    table = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else None
    if table is None or table.num_rows == 0:
        raise InputError(start.path, "the raw page has a header but no launch rows")
    if bad_rows and bad_rows * 2 > table.num_rows:
        raise InputError(start.path, f"{bad_rows} rows do not have the header's {len(header)} columns "
                                     "(truncated or not a raw page)")

    ids = pd.to_numeric(decode_column(table.column("ID")), errors="coerce")
    if ids.isna().any():
        raise InputError(start.path, f"the ID column holds {decode_column(table.column('ID'))[ids.isna()].iloc[0]!r}, "
                                     "not a launch number")
    n = table.num_rows
    identity = identity_frame({c: table.column(c) for c in identity_cols}, str(start.path))
    identity["launch_id"] = ids.astype(np.int64).to_numpy()
    if device_col:
        identity["device_name"] = decode_column(table.column(DEVICE_NAME_METRIC)).replace("", pd.NA)
    metrics: dict[str, np.ndarray] = {}
    notes = pd.Series("", index=range(n), dtype="object")
    for name in metric_cols:
        values, odd = parse_numbers(table.column(name).combine_chunks())
        factor = unit_factor(units.get(name, "") if units else default_unit(name))
        if factor is None:
            notes = _append(notes, np.ones(n, dtype=bool), f"unit '{units.get(name) if units else default_unit(name)}' of {name} not understood")
            values = np.full(n, np.nan)
        else:
            values = values * factor
        if odd.any():
            notes = _append(notes, odd, f"value of {name} is not a number")
        metrics[name] = values
    identity["reader_notes"] = notes
    return finish_launch_table(identity, metrics, n)


def _units_row(start: TableStart, header: list[str]) -> dict[str, str] | None:
    """The units row, when the first row after the header has an empty ID (ncu's units row)."""
    if not start.sample_rows:
        return None
    first = start.sample_rows[0]
    if first and first[0].strip() == "" and len(first) == len(header):
        return {name: unit.strip() for name, unit in zip(header, first)}
    return None


def _dedupe(header: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in header:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append(name if count == 0 else f"_dup{count}_{name}")
    return out


def _append(notes: pd.Series, mask: np.ndarray, text: str) -> pd.Series:
    add = pd.Series(np.where(mask, text, ""), dtype="object")
    both = (notes != "") & (add != "")
    return notes.where(~both, notes + "; ") + add


