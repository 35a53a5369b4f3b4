"""Reader for ncu's raw page (`ncu --csv --page raw`): one row per launch, one column per metric.

The header names identity columns then metrics (1,500+ with the full set, some section-qualified such as
`SM.TriageA.sm__cycles_active.avg`); the next row is a units row unless `--print-units base` was used. Only the
columns the caller wants are read, so memory follows the metrics used, not the file's width.

Every launch row is read or the file is refused: a row that starts with a launch ID but has another number of
fields than the header, or a launch ID on two rows, is a damaged table, never a row to drop quietly.
"""

from __future__ import annotations

import csv
import re
import warnings
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..core.errors import InputError
from ..core.launch_table import finish_launch_table, metric_frame, metric_rows
from .columns import (
    CSV_IDENTITY,
    DEVICE_NAME_METRIC,
    NOT_AVAILABLE_TEXTS,
    decode_column,
    decode_values,
    identity_frame,
    parse_numbers,
)
from .csv_blocks import RowTooLong, block_sizes, parse_failure, row_too_long, split_row
from .long_pages import _MAX_ID, BLOCK_SIZE, _dedupe
from .text import TableStart, check_last_row, open_table, printable
from .units import default_unit, metric_unit_factor

_TEXT = pa.dictionary(pa.int32(), pa.binary())  # an identity text column as the CSV parser hands it over
_LAUNCH_ID_RE = re.compile(r"^\s*[+-]?\d[\d,]*\s*$")
_DUP_RE = re.compile(r"^_dup\d+_(.*)$", re.DOTALL)  # a later copy of a repeated column (long_pages._dedupe)


def read_raw_page(start: TableStart, wanted: Callable[[str], bool],
                  progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    header = start.header
    if len(set(header)) != len(header):
        header = _dedupe(header)
    identity_cols = [h for h in header if h in CSV_IDENTITY]
    metric_cols = [h for h in header if h not in CSV_IDENTITY and not h.startswith("_dup") and wanted(h)]
    copies = _copies(header, metric_cols)  # a metric given in several columns
    device_col = [DEVICE_NAME_METRIC] if DEVICE_NAME_METRIC in header else []
    needed = list(dict.fromkeys(identity_cols + metric_cols + [c for cs in copies.values() for c in cs[1:]]
                                + device_col))
    units = _units_row(start, header)
    check_last_row(start, len(header))

    damaged: list[tuple[str, int]] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        # A row of another width cannot be matched to the header. One that starts with a launch ID is a damaged
        # launch row (refused below, never dropped quietly); anything else is text that is not part of the table.
        try:
            first = (split_row(row.text) or [""])[0] if row.text else ""
        except csv.Error:  # a field over the csv module's limit: the row may well be a launch's
            first = row.text.split(",", 1)[0].strip('"')
        if _LAUNCH_ID_RE.match(first):
            damaged.append((first.strip(), row.actual_columns))
        return "skip"

    # The metrics are first read as numbers by the CSV parser itself (no text column per metric to parse again);
    # a value it cannot read as one (a thousands separator, a word) reads the page again as text, parsed below.
    metric_copies = {*metric_cols, *(c for cs in copies.values() for c in cs)} - {DEVICE_NAME_METRIC}
    numeric = [c for c in needed if c in metric_copies]
    # identity text arrives dictionary-encoded from the parser: each distinct name is decoded once anyway, and a
    # launch costs an index instead of its bytes (kernel names, grids, blocks: ~80 MB at 10^6 launches)
    texts = [c for c in identity_cols if c != "ID"] + [c for c in device_col if c not in metric_cols]
    reached = [0]

    def report(position: int) -> None:  # never backwards: a read again as text goes on from where the first got
        if progress is not None and position > reached[0]:
            reached[0] = position
            progress(position)

    streamed = _Block([c for c in metric_cols if c in metric_copies], metric_cols, _rows_hint(start, units)) \
        if numeric else None
    batches = _numeric_batches(start, header, units, needed, numeric, texts, on_invalid, damaged, report,
                               streamed) if numeric else None
    if batches is None:
        numeric, streamed = [], None
        for block_size in block_sizes(BLOCK_SIZE):  # a row longer than a block (a 10 MB name): larger blocks
            damaged.clear()
            try:
                batches = _batches(start, header, units, needed, block_size, on_invalid, report, texts=texts)
                break
            except RowTooLong:
                if block_size == block_sizes(BLOCK_SIZE)[-1]:
                    raise InputError(start.path, row_too_long(block_size)) from None
    if damaged:
        launch, fields = damaged[0]
        raise InputError(start.path, f"the row of launch {printable(launch)!r} has {fields} fields where the header "
                                     f"has {len(header)}" + (f" ({len(damaged)} such rows)" if len(damaged) > 1
                                                             else "") + ": the raw page is damaged")
    table = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else None
    if table is None or table.num_rows == 0:
        raise InputError(start.path, "the raw page has a header but no launch rows")

    launch_ids = _plain_ids(table.column("ID"))
    if launch_ids is None:
        ids, _ = parse_numbers(table.column("ID").combine_chunks())
        bad = ~(np.abs(ids) < _MAX_ID) | (ids % 1 != 0) | (ids < 0)
        if bad.any():
            text = decode_column(table.column("ID"))[bad].iloc[0]
            raise InputError(start.path, f"the ID column holds {printable(text)!r}, not a launch number")
        launch_ids = ids.astype(np.int64)
    # ncu writes the IDs in increasing order: then none repeats, and no sort of them is needed to tell
    if len(launch_ids) > 1 and not (launch_ids[1:] > launch_ids[:-1]).all():
        _refuse_repeated_ids(start, launch_ids)
    n = table.num_rows
    identity = identity_frame({c: table.column(c) for c in identity_cols}, str(start.path))
    identity["launch_id"] = launch_ids
    if device_col:
        identity["device_name"] = decode_values(table.column(DEVICE_NAME_METRIC))
    block = streamed.block() if streamed is not None else metric_rows(n, len(metric_cols))
    notes = unnoted = pd.Series("", index=range(n), dtype="object")
    for row, name in zip(block, metric_cols):
        read = []
        for column in copies.get(name, [name]):
            values = row if len(read) == 0 else np.empty(n)  # the first copy is read into the block itself
            if streamed is not None and column in streamed.taken:  # already in the block
                odd = streamed.odd_values(column, n)
            else:
                odd = _numbers_into(table.column(column), values) if column in numeric else \
                    _text_numbers_into(table.column(column), values)
            unit = units.get(column, "") if units else default_unit(name)
            factor, why = metric_unit_factor(name, unit)
            if factor is None:
                notes = _append(notes, np.ones(n, dtype=bool), why)
                values[:] = np.nan
            elif factor != 1:  # a value times 1 is that value, infinities and NaN included
                with np.errstate(over="ignore"):
                    np.multiply(values, factor, out=values)
                beyond = np.isinf(values)  # beyond float64 in base units
                odd |= beyond
                values[beyond] = np.nan
            if odd.any():
                notes = _append(notes, odd, f"value of {name} is not a number")
            read.append(values)
        if len(read) > 1:
            row[:], notes = _one_value(name, read, notes)
    identity["reader_notes"] = notes if notes is not unnoted else ""  # nothing noted: one text for every launch
    return finish_launch_table(identity, metric_frame(block, metric_cols), n)


def _plain_ids(column: pa.ChunkedArray) -> np.ndarray | None:
    """The launch IDs as int64 when every one is a plain integer in [0, 2^53), as ncu writes them: one cast, not
    the float parse and its checks (~60 MB of temporaries at 10^6 launches); None otherwise, for parse_numbers to
    read (and refuse) them. Digits only (Arrow's cast would also read "0x1f"), which the float parse reads as the
    same number below 2^53."""
    if column.null_count:
        return None
    try:
        text = pc.cast(column, pa.string())
        if not pc.all(pc.ascii_is_decimal(text)).as_py():
            return None
        ids = pc.cast(text, pa.int64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return ids if not len(ids) or ids.max() < _MAX_ID else None


def _refuse_repeated_ids(start: TableStart, launch_ids: np.ndarray) -> None:
    """Refuse a page whose IDs are out of order when one repeats (out of order alone is a readable page)."""
    unique, counts = np.unique(launch_ids, return_counts=True)
    if (counts > 1).any():
        repeated = unique[counts > 1]
        raise InputError(start.path, f"launch ID {repeated[0]} is on {counts[counts > 1][0]} rows"
                                     + (f" ({len(repeated)} IDs repeat)" if len(repeated) > 1 else "")
                                     + ": a raw page has one row per launch")


def _numbers_into(column: pa.ChunkedArray | pa.Array, out: np.ndarray) -> np.ndarray:
    """A float64 column of the CSV parser into `out`; returns the mask of values that are no measurement
    (`nan`, `inf` as written, or beyond float64), which parse_numbers notes likewise (null cells, ncu's n/a or
    empty, need no note)."""
    offset = 0
    for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
        out[offset:offset + len(chunk)] = chunk.to_numpy(zero_copy_only=False)  # a null is NaN
        offset += len(chunk)
    odd = ~np.isfinite(out)
    if column.null_count and odd.any():
        odd &= ~column.is_null().to_numpy(zero_copy_only=False)
    out[odd] = np.nan
    return odd


def _text_numbers_into(column: pa.ChunkedArray, out: np.ndarray) -> np.ndarray:
    values, odd = parse_numbers(column.combine_chunks())
    out[:] = values
    return odd


def _copies(header: list[str], metrics: list[str]) -> dict[str, list[str]]:
    """The columns of each metric given more than once: its own, then the renamed copies (`_dedupe`)."""
    wanted = set(metrics)
    copies: dict[str, list[str]] = {}
    for column in header:
        match = _DUP_RE.match(column)
        if match and match.group(1) in wanted:
            copies.setdefault(match.group(1), [match.group(1)]).append(column)
    return copies


def _one_value(name: str, copies: list[np.ndarray], notes: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """A metric in several columns, as the details page treats a metric on several rows: copies that agree (to
    1e-9, in base units) give that value, a copy that is not a number never hides one that is, and copies that
    disagree give null and a note naming the metric and the values (neither is used)."""
    stacked = np.column_stack(copies)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: no copy has a value
        low, high = np.nanmin(stacked, axis=1), np.nanmax(stacked, axis=1)
        clash = (high - low) > 1e-9 * np.maximum(np.abs(low), np.abs(high))
    value = np.where(clash, np.nan, low)
    if clash.any():
        shown = pd.Series([", ".join(f"{v:.6g}" for v in row if v == v) for row in stacked[clash]], dtype="object")
        text = pd.Series("", index=notes.index, dtype="object")
        text[clash] = (f"{name} is in {len(copies)} columns with different values (" + shown + "): neither is used"
                       ).to_numpy()
        notes = _join(notes, text)
    return value, notes


def _join(notes: pd.Series, add: pd.Series) -> pd.Series:
    both = (notes != "") & (add != "")
    return notes.where(~both, notes + "; ") + add


def _units_row(start: TableStart, header: list[str]) -> dict[str, str] | None:
    """The units row, when the first row after the header has an empty ID (ncu's units row)."""
    if not start.sample_rows:
        return None
    first = start.sample_rows[0]
    if first and first[0].strip() == "" and len(first) == len(header):
        return {name: unit.strip() for name, unit in zip(header, first)}
    return None


def _append(notes: pd.Series, mask: np.ndarray, text: str) -> pd.Series:
    add = pd.Series(np.where(mask, text, ""), dtype="object")
    both = (notes != "") & (add != "")
    return notes.where(~both, notes + "; ") + add


def _numeric_batches(start, header: list[str], units, needed: list[str], numeric: list[str], texts: list[str],
                     on_invalid, damaged: list, progress, streamed: "_Block") -> list[pa.RecordBatch] | None:
    """The page's needed columns with `numeric` ones parsed as float64 by the CSV reader (ncu's n/a and empty
    cells null); None when a cell of them is something else, or the page cannot be read so: the caller then
    reads it as text, which handles (or refuses) every such case, so both reads give the same table. The metric
    values go into `streamed` batch by batch; the batches keep the other columns."""
    damaged.clear()
    types = {c: pa.float64() for c in numeric}
    try:
        return _batches(start, header, units, needed, BLOCK_SIZE, on_invalid, progress, types, texts, streamed)
    except (InputError, RowTooLong):
        damaged.clear()
        return None


def _batches(start, header: list[str], units, needed: list[str], block_size: int, on_invalid,
             progress, numbers: dict[str, pa.DataType] | None = None,
             texts: list[str] | tuple[str, ...] = (), streamed: "_Block | None" = None) -> list[pa.RecordBatch]:
    """The page's needed columns, batch by batch, parsed in blocks of `block_size` bytes: as bytes, or where
    `numbers` says, as float64 (ncu's n/a and empty cells null), the `texts` columns as dictionaries of bytes."""
    batches = []
    types = {c: pa.binary() for c in needed} | {c: _TEXT for c in texts} | (numbers or {})
    with open_table(start) as stream:
        try:
            reader = pacsv.open_csv(
                stream,
                read_options=pacsv.ReadOptions(column_names=header, skip_rows=1 + (units is not None),
                                               block_size=block_size),
                parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid),
                convert_options=pacsv.ConvertOptions(include_columns=needed,
                                                      column_types=types,
                                                      null_values=NOT_AVAILABLE_TEXTS,
                                                      strings_can_be_null=False, quoted_strings_can_be_null=True))
            for batch in reader:
                batches.append(batch if streamed is None else streamed.add(batch))
                if progress is not None:
                    progress(stream.tell())
        except pa.ArrowInvalid as exc:
            raise parse_failure(start.path, exc) from None
    return batches


class _Block:
    """The metric rows of the launch table (`metric_rows`), filled batch by batch as the CSV parser hands them over:
    each batch's float64 columns are freed once copied, so the parser's next batch reuses their memory instead of
    every value being held twice (in Arrow, then in the block) and first touched twice (120 MB at 10^6 launches of
    15 metrics). `taken` are the columns filled here (a metric's first column); the rows of the others (a metric
    read as text) are filled by the caller. The row count is guessed from the file's size; a guess too low grows
    the block (one copy), one too high costs address space only (pages never touched are never mapped)."""

    def __init__(self, taken: list[str], metrics: list[str], rows_hint: int) -> None:
        self.taken = set(taken)
        self._rows = {name: i for i, name in enumerate(metrics) if name in self.taken}
        try:
            self._block = metric_rows(rows_hint, len(metrics))
        except MemoryError:  # a guess beyond the address space allowed (empty first rows of a huge file): grow
            self._block = metric_rows(1024, len(metrics))
        self._filled = 0
        self._odd: dict[str, list[tuple[int, np.ndarray]]] = {}

    def add(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Copy the batch's metric values in; the batch without them."""
        start, stop = self._filled, self._filled + batch.num_rows
        if stop > self._block.shape[1]:
            grown = metric_rows(max(stop, self._block.shape[1] * 3 // 2), self._block.shape[0])
            grown[:, :start] = self._block[:, :start]
            self._block = grown
        for name, i in self._rows.items():
            odd = _numbers_into(batch.column(name), self._block[i, start:stop])
            if odd.any():
                self._odd.setdefault(name, []).append((start, odd))
        self._filled = stop
        return batch.select([c for c in batch.schema.names if c not in self.taken])

    def odd_values(self, name: str, n: int) -> np.ndarray:
        """Where a column's values are no measurement, as `_numbers_into` returns it."""
        odd = np.zeros(n, dtype=bool)
        for start, part in self._odd.get(name, ()):
            odd[start:start + len(part)] = part
        return odd

    def block(self) -> np.ndarray:
        return self._block[:, :self._filled]


def _rows_hint(start: TableStart, units) -> int:
    """About how many launch rows the page holds, from its size and its first rows' lengths (a field is at least
    its text and a comma; the quotes ncu writes make this a quarter or so high, which is the margin wanted)."""
    rows = start.sample_rows[1:] if units is not None else start.sample_rows
    lengths = sorted(sum(len(field) + 1 for field in row) for row in rows) or [len(start.header) * 8]
    remaining = max(0, start.path.stat().st_size - start.offset)
    return remaining // max(1, lengths[len(lengths) // 2]) + 1024
