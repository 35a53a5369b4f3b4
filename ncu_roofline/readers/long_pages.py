"""Readers for ncu's long CSV pages: the details page (one row per launch and metric) and the per-kernel summary
(`--print-summary per-kernel`: one row per kernel and metric, Minimum/Maximum/Average over Invocations).

Only the needed columns are parsed, and the text that repeats on every row of a launch (launch ID, kernel name,
launch configuration, metric name, unit) arrives dictionary-encoded from the parser: a few bytes per row instead of
the row's text. A page whose rows all have one width is parsed by pyarrow's `read_csv` on every core; a page with
rows of another width (rule rows beside shorter metric rows) is streamed batch by batch in file order, so that
those rows, parsed one by one, are read in their turn. Either way each batch leaves behind only what the
LaunchTable needs: the identity of each launch once (its first row in the batch), and for the metrics the caller
wants, the launch, a metric code and the value already in base units. Memory follows the launches and the metrics
used, not the file's text; everything is column-wise, never a per-row Python loop.

Column layouts seen in the wild (FORMAT_NOTES §2): 12 columns with `Kernel Time` (2020.1), + rule columns (2021.2),
15 with launch config and CC, 20 with rule and speedup columns, 21 with `Body Item Label`. Rule rows carry no
metric; metric rows of pages with rule columns are shorter than the header and end in a trailing comma.

Every launch that has a complete row in the file is in the table, whether or not it has a wanted metric: a row
with too few fields is not part of the table (program output), a file cut in the middle of a row is refused.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..core.errors import InputError
from ..core.launch_table import finish_launch_table
from ..core.metric_names import is_extensive
from .columns import (
    CSV_IDENTITY,
    DEVICE_NAME_METRIC,
    decode,
    decode_column,
    decode_values,
    identity_frame,
    metric_unit_factors,
    parse_numbers,
)
from .csv_blocks import RowTooLong, block_sizes, parse_failure, row_too_long, split_row
from .text import TableStart, check_last_row, open_table, printable

BLOCK_SIZE = 4 * 1024 * 1024  # 8 MiB parsed the narrow raw page 10-25 % slower (CPU) and held more memory
# Rows of another width are parsed one by one in Python; they are gathered and read as a batch of this many.
_ODD_BATCH_ROWS = 16_384
# Metric codes for rows that are not metrics the caller wants.
_UNWANTED, _DEVICE = -1, -2
# IDs are exact in float64 up to here; ncu numbers launches from 0.
_MAX_ID = 2.0 ** 53
_DICTIONARY = pa.dictionary(pa.int32(), pa.binary())


@dataclass
class _Parts:
    """What the batches leave behind, to be joined into one row per launch at the end."""

    identity: list[pa.RecordBatch] = field(default_factory=list)  # first row of each launch in a batch
    identity_keys: list[np.ndarray] = field(default_factory=list)
    keys: list[np.ndarray] = field(default_factory=list)  # per wanted metric row: launch key,
    codes: list[np.ndarray] = field(default_factory=list)  # metric code,
    values: list[np.ndarray] = field(default_factory=list)  # value in base units
    device_keys: list[np.ndarray] = field(default_factory=list)
    device_names: list[pa.Array] = field(default_factory=list)
    problems: list[pd.DataFrame] = field(default_factory=list)  # values and units that could not be read


class _Batches:
    """Turns parsed batches into `_Parts`: wanted rows only, numbers parsed, units applied."""

    def __init__(self, start: TableStart, wanted: Callable[[str], bool], keys: list[str], identity: list[str],
                 value_column: str) -> None:
        self.start = start
        self.wanted = wanted
        self.key_columns = keys
        self.identity_columns = identity
        self.value_column = value_column
        self.summary = start.layout == "summary"
        self.metric_codes: dict[bytes, int] = {}  # name as written -> code
        self.metric_index: dict[str, int] = {}  # metric -> code, in order of first sight
        self.summary_keys: dict[bytes, int] = {}
        self.last_key: int | None = None
        self.run_last_key: int | None = None
        self.last_name: object = None
        self.run_keys: list[np.ndarray] = []  # the launch key of each run of consecutive rows
        self.parts = _Parts()

    @property
    def metric_names(self) -> list[str]:
        return list(self.metric_index)

    def absorb(self, batch: pa.RecordBatch, in_order: bool = True) -> None:
        """`in_order`: the batch is the next stretch of the file (rows of another width come later, gathered)."""
        if batch.num_rows == 0:
            return
        launch = self._launch_keys(batch)
        # Identity: the first row of each launch in this batch; a launch that goes on from the previous batch
        # already has one (launches in another order are sorted out in _pivot). A launch's rows are consecutive,
        # so only the rows where the key changes are candidates: a sort of launches, not of rows.
        starts = np.flatnonzero(np.concatenate(([True], launch[1:] != launch[:-1])))
        unique, first = np.unique(launch[starts], return_index=True)
        first = starts[first]
        if in_order and not self.summary:
            self._check_runs(batch, launch)
        if launch[0] == self.last_key:
            unique, first = unique[unique != self.last_key], first[unique != self.last_key]
        self.last_key = launch[-1]
        self.parts.identity.append(batch.select(self.identity_columns).take(pa.array(first)))
        self.parts.identity_keys.append(unique)

        codes = self._metric_codes(batch.column("Metric Name"))
        rows = np.flatnonzero(codes >= 0)
        if rows.size:
            take = pa.array(rows)
            values, odd = parse_numbers(batch.column(self.value_column).take(take))
            factors, why = metric_unit_factors(batch.column("Metric Unit").take(take), codes[rows], self.metric_names)
            with np.errstate(over="ignore"):
                values = values * factors
            odd |= np.isinf(values)  # "1e308" Gbyte: beyond float64 in base units
            values[np.isinf(values)] = np.nan
            self.parts.keys.append(launch[rows])
            self.parts.codes.append(codes[rows])
            self.parts.values.append(values)
            bad_unit = np.isnan(factors)
            problem = odd | bad_unit
            if problem.any():
                where = rows[problem]
                self.parts.problems.append(pd.DataFrame({
                    "launch": launch[where],
                    "metric": np.asarray(self.metric_names, dtype=object)[codes[where]],
                    "unit": decode_column(batch.column("Metric Unit").take(pa.array(where))).to_numpy(),
                    "bad_unit": bad_unit[problem], "why": why[problem]}))
        devices = np.flatnonzero(codes == _DEVICE)
        if devices.size:
            self.parts.device_keys.append(launch[devices])
            self.parts.device_names.append(batch.column(self.value_column).take(pa.array(devices)))

    def _check_runs(self, batch: pa.RecordBatch, launch: np.ndarray) -> None:
        """ncu writes each launch's rows together: an ID that comes back after another launch's rows, or whose
        rows name two kernels, is two launches sharing one ID. Merging them would lose one silently."""
        change = np.flatnonzero(launch[1:] != launch[:-1]) + 1
        continued = launch[0] == self.run_last_key
        starts = change if continued else np.concatenate([[0], change]).astype(np.int64)
        self.run_last_key = launch[-1]
        self.run_keys.append(launch[starts])
        if "Kernel Name" not in batch.schema.names:
            return
        names = batch.column("Kernel Name")
        same = launch[1:] == launch[:-1]
        if same.any():
            if isinstance(names, pa.DictionaryArray):  # one dictionary per batch: equal text, equal index
                codes = names.indices.to_numpy(zero_copy_only=False)
                differs = codes[1:] != codes[:-1]
            else:
                differs = pc.not_equal(names.slice(1), names.slice(0, len(names) - 1)).to_numpy(zero_copy_only=False)
            clash = np.flatnonzero(same & differs)
            if clash.size:
                self._refuse_shared_id(int(launch[clash[0] + 1]), "its rows name two kernels")
        if continued and names[0].as_py() != self.last_name:
            self._refuse_shared_id(int(launch[0]), "its rows name two kernels")
        self.last_name = names[len(names) - 1].as_py()

    def check_shared_ids(self) -> None:
        if not self.run_keys:
            return
        unique, counts = np.unique(np.concatenate(self.run_keys), return_counts=True)
        if (counts > 1).any():
            self._refuse_shared_id(int(unique[counts > 1][0]), f"its rows come in {counts[counts > 1][0]} separate "
                                                               "blocks" + (f" ({int((counts > 1).sum())} IDs do so)"
                                                                           if (counts > 1).sum() > 1 else ""))

    def _refuse_shared_id(self, key: int, why: str) -> None:
        raise InputError(self.start.path, f"launch ID {key} is used by two launches ({why}; IDs written 1, 01, +1 "
                                          "and 1.0 are one ID): the details page is damaged or was edited")

    def _launch_keys(self, batch: pa.RecordBatch) -> np.ndarray:
        """int64 per row: the launch ID (details), or a code per (process, kernel, shape, device) (summary)."""
        if self.summary:
            columns = [_plain(batch.column(k)) for k in self.key_columns]
            joined = columns[0] if len(columns) == 1 else pc.binary_join_element_wise(
                *columns, pa.scalar(b"\x1f", pa.binary()))
            unique = pc.unique(joined)
            codes = np.array([self.summary_keys.setdefault(k, len(self.summary_keys)) for k in unique.to_pylist()],
                             dtype=np.int64)
            return codes[pc.index_in(joined, value_set=unique).to_numpy(zero_copy_only=False)]
        column = batch.column("ID")  # dictionary-encoded: each launch's ID is parsed once, not once per metric row
        ids, _ = parse_numbers(column.dictionary)
        bad = ~(np.abs(ids) < _MAX_ID) | (ids % 1 != 0) | (ids < 0)
        indices = column.indices.to_numpy(zero_copy_only=False)
        if bad.any():
            row = int(np.argmax(bad[indices]))
            text = decode(column.dictionary[int(indices[row])].as_py())
            raise InputError(self.start.path, f"the ID column holds {printable(text)!r}, not a launch number")
        return ids.astype(np.int64)[indices]

    def _metric_codes(self, names: pa.DictionaryArray) -> np.ndarray:
        """Per row: the metric's code when the caller wants it, _DEVICE for the device name, else _UNWANTED.
        The names come dictionary-encoded from the parser, so the catalogue is asked once per distinct name."""
        lookup = np.array([self._code(name) for name in names.dictionary.to_pylist()] or [_UNWANTED],
                          dtype=np.int64)
        return lookup[names.indices.to_numpy(zero_copy_only=False)]

    def _code(self, name: bytes) -> int:
        code = self.metric_codes.get(name)
        if code is None:
            text = decode(name).strip()
            if text == DEVICE_NAME_METRIC:
                code = _DEVICE
            elif text and self.wanted(text):
                code = self.metric_index.setdefault(text, len(self.metric_index))  # " x" and "x" are one metric
            else:
                code = _UNWANTED
            self.metric_codes[name] = code
        return code


def read_long_page(start: TableStart, wanted: Callable[[str], bool],
                   progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Read a details or summary page into a LaunchTable."""
    summary = start.layout == "summary"
    header = _dedupe(start.header)
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
    positions = [header.index(c) for c in needed]
    required = max(positions) + 1  # fields a row must have to be read
    check_last_row(start, required)
    # Text that repeats row after row (the kernel name on every metric row of its launch, the metric names, units,
    # the launch ID) is dictionary-encoded by the parser: it is never copied per row, which is most of the file.
    types = {c: pa.binary() if c == value_column else _DICTIONARY for c in needed}

    convert_options = pacsv.ConvertOptions(include_columns=needed, column_types=types, strings_can_be_null=False,
                                           quoted_strings_can_be_null=False)
    for block_size in block_sizes(BLOCK_SIZE):  # a row longer than a block (a 10 MB name): larger blocks
        batches = _Batches(start, wanted, keys, [c for c in identity if c in needed], value_column)
        read_options = pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=block_size)
        try:
            table = _read_parallel(start, read_options, convert_options, progress) if _uniform(start, width) \
                else None
            if table is not None:
                for batch in table.to_batches():
                    batches.absorb(batch)
                del table
            else:
                _read_serial(start, batches, required, positions, needed, types, read_options, convert_options,
                             progress)
            break
        except RowTooLong:
            if block_size == block_sizes(BLOCK_SIZE)[-1]:
                raise InputError(start.path, row_too_long(block_size)) from None
    if not summary:
        batches.check_shared_ids()
    if not batches.parts.identity:
        raise InputError(start.path, "the ncu table has a header but no metric rows (only rule results, or no "
                                     "kernel was profiled)")
    return _pivot(start, batches, summary)


def _read_parallel(start: TableStart, read_options: pacsv.ReadOptions, convert_options: pacsv.ConvertOptions,
                   progress: Callable[[int], None] | None) -> pa.Table | None:
    """The whole page's needed columns at once, parsed on every core; None when a row has another width (their
    order is unknown to a threaded parse, so such pages are read serially) or the parse fails (the serial read
    then says why)."""
    odd = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        odd.append(row.actual_columns)
        return "skip"

    with open_table(start, progress) as stream:
        try:
            table = pacsv.read_csv(stream, read_options=read_options,
                                   parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid),
                                   convert_options=convert_options)
        except pa.ArrowInvalid:
            return None
    return None if odd else table


def _uniform(start: TableStart, width: int) -> bool:
    """Whether the sampled rows all have the metric rows' width (no rule rows of another width, no stray text)."""
    return all(len(row) == width for row in start.sample_rows)


def _read_serial(start: TableStart, batches: _Batches, required: int, positions: list[int], needed: list[str],
                 types: dict[str, pa.DataType], read_options: pacsv.ReadOptions,
                 convert_options: pacsv.ConvertOptions, progress: Callable[[int], None] | None) -> None:
    """Batch by batch in file order; rows of another width are parsed one by one and read in their turn."""
    odd_rows: list[list[str]] = []
    unreadable: list[str] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        # Rows of another width: full-width rule rows next to shorter metric rows, rows with an extra field, or
        # program output. Rows long enough to hold every needed column are read; shorter ones are not table rows.
        try:
            parsed = split_row(row.text) if row.text else []
        except csv.Error:  # a NUL byte, say: cannot tell what the row holds
            unreadable.append(row.text[:40])
            return "skip"
        if len(parsed) >= required:
            odd_rows.append([parsed[i] for i in positions])
        return "skip"

    with open_table(start) as stream:
        try:
            reader = pacsv.open_csv(stream, read_options=read_options,
                                    parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid),
                                    convert_options=convert_options)
            for batch in reader:
                batches.absorb(batch)
                if len(odd_rows) >= _ODD_BATCH_ROWS:
                    batches.absorb(_odd_batch(odd_rows, needed, types), in_order=False)
                    odd_rows.clear()
                if progress is not None:
                    progress(stream.tell())
        except pa.ArrowInvalid as exc:
            raise parse_failure(start.path, exc) from None
    if unreadable:
        raise InputError(start.path, f"{len(unreadable)} row(s) could not be parsed (a field of more than "
                                     f"{csv.field_size_limit():,} characters?), the first starting "
                                     f"{printable(unreadable[0])!r}")
    if odd_rows:
        batches.absorb(_odd_batch(odd_rows, needed, types), in_order=False)


def _odd_batch(rows: list[list[str]], needed: list[str], types: dict[str, pa.DataType]) -> pa.RecordBatch:
    """Rows read one by one, as a batch of the same schema as the parser's."""
    columns = {}
    for i, c in enumerate(needed):
        values = pa.array([r[i].encode() for r in rows], pa.binary())
        columns[c] = values.dictionary_encode() if pa.types.is_dictionary(types[c]) else values
    return pa.RecordBatch.from_pydict(columns)


def _plain(values: pa.Array) -> pa.Array:
    return values.dictionary_decode() if isinstance(values, pa.DictionaryArray) else values


def _row_width(start: TableStart) -> int:
    """How many fields a metric row has: the header's count, or fewer when rule columns are left off."""
    metric_col = start.header.index("Metric Name")
    widths = [len(r) for r in start.sample_rows if len(r) > metric_col and r[metric_col].strip()]
    if not widths:
        return len(start.header)
    return max(set(widths), key=widths.count)


def _dedupe(header: list[str]) -> list[str]:
    """A repeated column name keeps its first place; later copies are renamed out of the way."""
    if len(set(header)) == len(header):
        return header
    seen: dict[str, int] = {}
    out = []
    for name in header:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append(name if count == 0 else f"_dup{count}_{name}")
    return out


def _pivot(start: TableStart, batches: _Batches, summary: bool) -> pd.DataFrame:
    """One row per launch: identity from its first row, one column per wanted metric (scatter, no loop)."""
    parts = batches.parts
    identity_keys = np.concatenate(parts.identity_keys)
    identity_rows = pa.Table.from_batches(parts.identity)
    _, first = np.unique(identity_keys, return_index=True)  # a launch's row from the earliest batch
    if len(first) < len(identity_keys):
        keep = np.zeros(len(identity_keys), dtype=bool)
        keep[first] = True
        identity_rows = identity_rows.filter(pa.array(keep))
        identity_keys = identity_keys[keep]
    launch_keys = identity_keys
    if (np.diff(launch_keys) < 0).any():  # launches in ID order, as the raw page and reports give them
        order = np.argsort(launch_keys, kind="stable")
        identity_rows = identity_rows.combine_chunks().take(pa.array(order))
        launch_keys = launch_keys[order]
    n = len(launch_keys)
    identity_columns = {c: identity_rows.column(c) for c in identity_rows.column_names}

    metric_index = batches.metric_names
    matrix = np.full((n, len(metric_index)), np.nan)
    conflicts = None
    if parts.keys:
        rows = np.searchsorted(launch_keys, np.concatenate(parts.keys))
        codes, values = np.concatenate(parts.codes), np.concatenate(parts.values)
        matrix[rows, codes] = values
        repeated = _repeated_cells(rows, codes, values, len(metric_index))
        if repeated is not None:
            settled, conflicts = repeated
            matrix[settled["row"].to_numpy(), settled["code"].to_numpy()] = settled["value"].to_numpy()

    identity = identity_frame(identity_columns, str(start.path))
    identity["launch_id"] = np.arange(n, dtype=np.int64) if summary else launch_keys
    identity["device_name"] = _device_names(parts, launch_keys, n)
    launches = np.ones(n, dtype=np.int64)
    notes = _notes(parts, launch_keys, n, conflicts, metric_index)
    if summary:
        text = decode_column(identity_columns["Invocations"])
        invocations, _ = parse_numbers(pa.array(text.fillna("").str.encode("utf-8"), pa.binary()))
        counted = np.isfinite(invocations) & (invocations >= 1) & (invocations < 2 ** 62) & (invocations % 1 == 0)
        launches = np.where(counted, invocations, 1).astype(np.int64)
        for j, name in enumerate(metric_index):
            if is_extensive(name):
                with np.errstate(over="ignore"):
                    matrix[:, j] *= launches  # totals over all invocations = Average x Invocations
                matrix[~counted, j] = np.nan  # no total without a count of invocations
        matrix[np.isinf(matrix)] = np.nan  # beyond float64: no total to report
        if not counted.all():
            bad = "Invocations " + text[~counted].fillna("").map(lambda t: repr(printable(t, 40))) \
                + " is not a launch count: totals unknown"
            notes[~counted] = np.where(notes[~counted] == "", bad, notes[~counted] + "; " + bad)
    identity["launches"] = launches
    identity["reader_notes"] = notes
    metrics = {name: matrix[:, j] for j, name in enumerate(metric_index)}
    return finish_launch_table(identity, metrics, n)


def _device_names(parts: _Parts, launch_keys: np.ndarray, n: int):
    """Per launch, the value of its device__attribute_display_name row (null where it has none)."""
    if not parts.device_keys:
        return None
    names = decode_values(pa.chunked_array(parts.device_names, pa.binary()), unquote=True)
    row = np.full(n, -1, dtype=np.int64)
    row[np.searchsorted(launch_keys, np.concatenate(parts.device_keys))] = np.arange(len(names))
    return names.take(row, allow_fill=True)


def _repeated_cells(rows: np.ndarray, codes: np.ndarray, values: np.ndarray, width: int
                    ) -> tuple[pd.DataFrame, pd.DataFrame | None] | None:
    """Metrics written on several rows for one launch. Returns (the value each such cell gets, the conflicts), or
    None when no cell repeats. Copies that agree (to 1e-9, as `15 usecond` and `15,000 nsecond` do, and sections
    repeat a metric) give that value, whichever row comes last; a row that is not a number never hides one that is;
    copies that disagree give null, and are listed so the launch's notes can name the metric and both values."""
    cell = rows.astype(np.int64) * max(width, 1) + codes
    cells = int(cell.max()) + 1 if cell.size else 0
    if cells <= 4 * cell.size + 1024:  # most (launch, metric) cells are filled: count them in place, no sort
        repeated = np.bincount(cell, minlength=cells)[cell] > 1
    else:
        _, inverse, counts = np.unique(cell, return_inverse=True, return_counts=True)
        repeated = counts[inverse] > 1
    if not repeated.any():
        return None
    frame = pd.DataFrame({"cell": cell[repeated], "row": rows[repeated], "code": codes[repeated],
                          "value": values[repeated]})
    grouped = frame.groupby("cell", sort=True)
    summary = grouped.agg(row=("row", "first"), code=("code", "first"), low=("value", "min"), high=("value", "max"),
                          first=("value", "first"), count=("value", "size"))
    scale = np.maximum(np.abs(summary["low"]), np.abs(summary["high"]))
    clash = (summary["high"] - summary["low"]).to_numpy() > 1e-9 * scale.to_numpy()
    summary["value"] = np.where(clash, np.nan, summary["first"])  # `first` skips NaN
    if not clash.any():
        return summary, None
    shown = grouped["value"].agg(lambda v: ", ".join(f"{x:.6g}" for x in v))
    conflicts = summary[clash].assign(values=shown[clash].to_numpy()).reset_index(drop=True)
    return summary, conflicts


def _notes(parts: _Parts, launch_keys: np.ndarray, n: int, conflicts: pd.DataFrame | None = None,
           metric_names: list[str] | None = None) -> pd.Series:
    """Per launch, what the reader could not read: non-numeric values, units it does not understand, and metrics
    given twice with different values."""
    notes = pd.Series("", index=range(n), dtype="object")
    frames = []
    if parts.problems:
        frame = pd.concat(parts.problems, ignore_index=True)
        frame["launch"] = np.searchsorted(launch_keys, frame["launch"].to_numpy())
        frame["text"] = np.where(frame["bad_unit"], frame["why"], "value of " + frame["metric"] + " is not a number")
        frames.append(frame[["launch", "text"]])
    if conflicts is not None:
        names = np.asarray(metric_names or [], dtype=object)[conflicts["code"].to_numpy()]
        frames.append(pd.DataFrame({"launch": conflicts["row"].to_numpy(),
                                    "text": names + " is on " + conflicts["count"].astype(str).to_numpy(dtype=object)
                                    + " rows with different values (" + conflicts["values"].to_numpy(dtype=object)
                                    + "): neither is used"}))
    if not frames:
        return notes
    joined = pd.concat(frames, ignore_index=True).groupby("launch", sort=True)["text"].agg("; ".join)
    notes.iloc[joined.index.to_numpy()] = joined.to_numpy()
    return notes
