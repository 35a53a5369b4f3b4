"""What a measured value may physically be, checked once between reading and deriving (the normalise step).

A reader turns text into numbers; it does not know that a duration cannot be negative. A value that no GPU can
produce (a negative counter, a zero or negative time or clock, a negative launch ID, CC -7, a block of (-1, 1, 1))
is damage in the input, not data: it becomes null, the launch's `reader_notes` (and so its `status`) names the
metric and the value, and `_invalid` marks the launch so that kernel totals leave it out and say so
(`group.group_launches`). Nothing is clamped or guessed, and no row is dropped.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np
import pandas as pd

from ..core.launch_table import metric_columns
from ..core.values import STRING
from ..readers.text import printable

# Compute capabilities ncu knows run from 1.0 (Tesla) to 12.x (Blackwell); 100 leaves room without taking junk.
CC_RANGE = (1.0, 100.0)
_SHAPE_RE = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)$")


def invalid_reason(values: np.ndarray, timing: bool) -> tuple[np.ndarray, str]:
    """Rows whose value no GPU can produce, and the word for why. `timing`: a duration, elapsed cycles or a clock
    (the catalogue's [timing] metrics), where zero is as impossible as a negative; a counter or a throughput may
    be 0."""
    with np.errstate(invalid="ignore"):
        if timing:
            return values <= 0, "not positive"
        return values < 0, "negative"


def flag_invalid_values(table: pd.DataFrame, is_timing: Callable[[str], bool]) -> pd.DataFrame:
    """Null every impossible metric value and identity field, noting each in `reader_notes`; mark launches with an
    impossible metric value in `_invalid` (bool). Returns a new frame; the input is left as it was.

    `is_timing(metric)`: whether a metric measures time or a clock (`Catalogue.is_timing`)."""
    table = table.copy(deep=False)  # copy-on-write: only the columns nulled below are copied
    read_notes = table["reader_notes"] if "reader_notes" in table else None

    def first_notes() -> pd.Series:  # the reader's notes as objects, made only where a note is added to them
        return read_notes.astype("object").fillna("") if read_notes is not None \
            else pd.Series("", index=table.index, dtype="object")

    notes = None  # none added yet
    invalid = np.zeros(len(table), dtype=bool)
    metrics = metric_columns(table)
    timing = np.array([is_timing(metric) for metric in metrics], dtype=bool)
    for j in _flagged(table, metrics, timing):
        metric = metrics[j]
        values = table[metric].to_numpy(dtype="float64")
        bad, why = invalid_reason(values, bool(timing[j]))
        if bad.any():
            shown = pd.Series(values[bad]).map(lambda v: f"{v:.6g}").to_numpy(dtype=object)
            notes = _append(first_notes() if notes is None else notes, bad, f"invalid {metric} = ", shown,
                            f" ({why})")
            values = values.copy()
            values[bad] = np.nan
            table[metric] = values
            invalid |= bad
    notes = _check_identity(table, notes, first_notes)
    if notes is not None or read_notes is None or read_notes.isna().any() or read_notes.dtype != "string":
        table["reader_notes"] = (first_notes() if notes is None else notes).astype(STRING)  # else as read
    table["_invalid"] = invalid
    return table


# Cells of a frame's columns tested at once: a larger frame is tested a column at a time (each column's values as
# they are, no copy), since a copied block over 32 MB is fresh memory, faulted in page by page.
BLOCK_CELLS = 4 << 20


def _flagged(table: pd.DataFrame, metrics: list[str], timing: np.ndarray) -> list[int]:
    """The metrics (positions) holding an impossible value: one test over the metrics' block where it is small (a
    report's few launches: no walk of its columns), else column by column."""
    if not metrics:
        return []
    with np.errstate(invalid="ignore"):
        if len(table) * len(metrics) <= BLOCK_CELLS:
            block = table[metrics].to_numpy(dtype="float64")
            return np.flatnonzero((np.where(timing, block <= 0, block < 0)).any(axis=0)).tolist()
        return [j for j, metric in enumerate(metrics)
                if invalid_reason(table[metric].to_numpy(dtype="float64"), bool(timing[j]))[0].any()]


def _check_identity(table: pd.DataFrame, notes: pd.Series | None,
                    first_notes: Callable[[], pd.Series]) -> pd.Series | None:
    """Launch settings that cannot be: nulled with a note (the launch itself stays, its counters are fine).
    `notes`: None where none was added yet (`first_notes()` gives the notes to add to)."""
    for column, label in (("process_id", "PID"), ("context", "context"), ("stream", "stream")):
        if column in table:
            values = table[column]
            bad = (values.notna() & (values.astype("Float64") < 0)).to_numpy(dtype=bool)
            if bad.any():
                shown = values[bad].astype(str).to_numpy(dtype=object)
                notes = _append(first_notes() if notes is None else notes, bad, f"{label} ", shown,
                                " is not valid (negative)")
                table[column] = values.mask(bad)
    if "compute_capability" in table:
        cc = table["compute_capability"]
        numbers = cc.astype("Float64")
        bad = (cc.notna() & ((numbers < CC_RANGE[0]) | (numbers >= CC_RANGE[1]))).to_numpy(dtype=bool)
        if bad.any():
            shown = cc[bad].astype(str).to_numpy(dtype=object)
            notes = _append(first_notes() if notes is None else notes, bad, "CC ", shown,
                            " is not a compute capability")
            table["compute_capability"] = cc.mask(bad)
    for column, label in (("grid", "grid"), ("block", "block")):
        if column in table:
            shapes = table[column]
            distinct = shapes.dropna().unique()
            wrong = {s for s in distinct if not _is_shape(str(s))}
            if wrong:
                bad = shapes.isin(wrong).to_numpy(dtype=bool)
                shown = shapes[bad].astype(str).map(lambda s: repr(printable(s, 60))).to_numpy(dtype=object)
                notes = _append(first_notes() if notes is None else notes, bad, f"{label} ", shown,
                                " is not a launch shape (x, y, z) of positive sizes")
                table[column] = shapes.mask(bad)
    return notes


def _is_shape(text: str) -> bool:
    match = _SHAPE_RE.match(text.strip())
    return bool(match) and all(int(g) >= 1 for g in match.groups())


def _append(notes: pd.Series, mask: np.ndarray, prefix: str, shown: np.ndarray, suffix: str) -> pd.Series:
    """Add `prefix + shown + suffix` to the notes of the rows in `mask` (`shown` holds one text per such row)."""
    notes = notes.copy()
    current = notes.to_numpy(dtype=object)[mask]
    text = prefix + pd.Series(shown, dtype="object") + suffix
    joined = np.where(current == "", text.to_numpy(dtype=object), current + "; " + text.to_numpy(dtype=object))
    notes.iloc[np.flatnonzero(mask)] = joined
    return notes


def invalid_value_notes(table: pd.DataFrame) -> list[str]:
    """The run-level note for launches left out of the totals, if any (`table` from flag_invalid_values)."""
    if "_invalid" not in table or not table["_invalid"].any():
        return []
    count = int(table.loc[table["_invalid"], "launches"].sum())
    return [f"{count} launch(es) hold impossible values (a negative counter, a zero or negative time): those values "
            "are null, and the launches are left out of their kernels' totals (see their status in launches.parquet)"]
