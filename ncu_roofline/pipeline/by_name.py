"""Kernels of metric-split captures analysed from their sums by name (readers/align.py says which and why).

Their launch rows hold no values (status `alignment: by name`). Per part, the values of such a kernel's launches
are checked like any launch's (validity.py), then added up: amounts (`metric_names.is_extensive`) are summed,
rates and attributes averaged over the launches, as a per-kernel summary's Average is and as the NERSC scripts
average the clock (time = sum of cycles / mean clock, their reference's own formula). A sum that lacks one
launch's value is unknown, never a sum over fewer launches. The kernel's row, holding every part's sums, then goes
through derive, ceilings and speed of light like a launch row standing for `launches` launches: its `t_sol_s` is
the max over its summed terms, and its kernel group is that row.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ..core.launch_table import metric_columns
from ..core.metric_names import is_extensive
from ..readers.align import ByName
from .validity import flag_invalid_values

BY_NAME_COLUMN = "_by_name"


def by_name_rows(by_name: ByName | None, is_timing: Callable[[str], bool]) -> pd.DataFrame | None:
    """One raw row per kernel aligned by name: identity, `launches`, and each part's metrics summed (amounts) or
    averaged (rates) over its launches; `_invalid` where a launch held an impossible value (validity.py)."""
    if by_name is None or not len(by_name):
        return None
    rows = by_name.identity.sort_values(BY_NAME_COLUMN, ignore_index=True)
    codes = rows[BY_NAME_COLUMN].to_numpy(dtype=np.int64)
    invalid = np.zeros(len(rows), dtype=bool)
    notes = rows["reader_notes"].astype("object").fillna("").to_numpy(dtype=object)
    columns: dict[str, np.ndarray] = {}
    for part in by_name.parts:
        flagged = flag_invalid_values(part, is_timing)
        kernel = flagged[BY_NAME_COLUMN].to_numpy(dtype=np.int64)
        for metric in metric_columns(part):
            values = flagged[metric].astype("float64")
            grouped = values.groupby(kernel, sort=True)
            total = grouped.sum() if is_extensive(metric) else grouped.mean()
            unknown = values.isna().groupby(kernel, sort=True).any()
            total = total.where(~unknown).reindex(codes)
            columns[metric] = total.to_numpy(dtype="float64")
        invalid |= flagged["_invalid"].groupby(kernel).any().reindex(codes, fill_value=False).to_numpy(dtype=bool)
        notes = _join(notes, _part_notes(flagged, kernel, codes, rows["launches"].to_numpy()))
    out = pd.concat([rows.drop(columns=BY_NAME_COLUMN), pd.DataFrame(columns, index=rows.index)], axis=1)
    out["reader_notes"] = pd.Series(notes, dtype="object").astype("string")
    out["_invalid"] = invalid
    return out


def _part_notes(part: pd.DataFrame, kernel: np.ndarray, codes: np.ndarray, launches: np.ndarray) -> np.ndarray:
    """Per kernel, what the reader and the validity check said about its launches in this part, with
    `(k of n launches)` where a note holds for only some."""
    out = np.full(len(codes), "", dtype=object)
    notes = part["reader_notes"].astype("object").fillna("")
    if not (notes != "").any():
        return out
    frame = pd.DataFrame({"kernel": kernel, "note": notes.str.split("; ")}).explode("note")
    frame = frame[frame["note"] != ""]
    position = {int(c): i for i, c in enumerate(codes)}
    for (code, note), count in frame.groupby(["kernel", "note"], sort=True).size().items():
        i = position[int(code)]
        text = note if count >= launches[i] else f"{note} ({count} of {launches[i]} launches)"
        out[i] = text if out[i] == "" else f"{out[i]}; {text}"
    return out


def _join(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return np.where(right == "", left, np.where(left == "", right, left + "; " + right))


def by_name_placeholders(rows: pd.DataFrame, evaluated: pd.DataFrame) -> pd.DataFrame:
    """Launch rows with their identity and nothing else: every result null, status the reader's note."""
    empty = evaluated.iloc[:0].reindex(range(len(rows)))
    for column in empty.columns:
        if column in rows and column != "status":
            empty[column] = rows[column].reset_index(drop=True).astype(evaluated[column].dtype)
    empty["status"] = rows["reader_notes"].astype("object").to_numpy()
    empty["_invalid"] = False
    return empty
