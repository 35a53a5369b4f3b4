"""The parts of a metric-split capture aligned launch by launch, where the launches can be told apart.

NERSC-style captures run the program once per metric (`out.<metric>.txt`). Each run profiles the same launches,
but a multi-threaded program (TensorFlow, say) does not launch them in the same order every time: the ID that ncu
gives a launch in one part may belong to another kernel in the next part, and even the launches of one kernel
come in another order (the climate-seg capture's first half<-float cast moves 28.8 MB of DRAM in one part and
405 kB of L2 in another). So:

- launches are keyed by kernel name, and by launch shape (grid, block) where every part carries shapes: the k-th
  launch of one key in one part is matched with the k-th of that key in the others;
- a key launched once per part is one launch, whatever its ID: aligned;
- a key launched several times whose launch IDs are the same sequence in every part is aligned on them;
- a key whose launch IDs differ between parts (the order moved), or a name whose launch shapes differ between
  parts, cannot be aligned launch by launch. Its launch rows keep their identity and hold no values (status
  `alignment: by name`); the kernel is analysed from its sums over the parts (`ByName`: per part the rows of its
  launches with that part's metrics; pipeline/by_name.py adds them up). Nothing from two different launches is
  ever put into one row;
- a kernel name that occurs a different number of times in different parts has no consistent sums either: its
  launches in the first part keep that part's counters only (their status says so); its launches in the other
  parts are not used, and the run-level note counts them.

The capture keeps exactly the launch count of its parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.kernel_labels import display_name, distinct_labels
from ..core.launch_table import IDENTITY_COLUMNS, metric_columns
from ..core.status import BY_NAME

_KEY = ["_key", "_occurrence"]
BY_NAME_ORDER = f"{BY_NAME} (launched in another order in another part: values in the kernel's sums only)"
BY_NAME_SHAPE = f"{BY_NAME} (launch shapes differ between the parts: values in the kernel's sums only)"
# Identity that belongs to the device, not to one launch: taken from any part even where launches are not aligned.
_DEVICE_IDENTITY = ("device_name", "compute_capability")
_SEP = "\x1f"


@dataclass
class ByName:
    """Kernels whose launches cannot be told apart across the parts, to be analysed from their sums.

    `identity`: one row per such kernel (LaunchTable identity, `launches` = its launch count, `_by_name` its code);
    `parts`: per part, the rows of those launches with the part's metrics and `reader_notes`, `_by_name` naming
    the kernel of each row."""

    identity: pd.DataFrame
    parts: list[pd.DataFrame] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.identity)


@dataclass
class AlignedCapture:
    table: pd.DataFrame  # one row per launch of the first part; `_by_name` >= 0 on rows aligned by name
    note: str  # one line for the run: how the parts were aligned
    launches: int  # rows of the table
    ids_differ: int  # launches whose ID is not the same in every part (aligned on name and occurrence)
    unaligned: int  # launches of the first part whose name could not be aligned
    unused_rows: int  # rows of the other parts left out (unalignable names)
    by_name: ByName | None = None  # kernels analysed from their sums
    by_name_note: str | None = None  # one line for the run: which kernels


def _names(table: pd.DataFrame) -> pd.Series:
    return table["kernel_name"].astype("object").where(table["kernel_name"].notna(), "")


def _shape_key(table: pd.DataFrame) -> pd.Series:
    shape = [table[c].astype("object").where(table[c].notna(), "") for c in ("grid", "block")]
    return _names(table) + _SEP + shape[0] + _SEP + shape[1]


def _carries_shapes(tables: list[pd.DataFrame]) -> bool:
    """Whether every part's layout carries launch shapes (a part without them would match no shape key)."""
    return all(c in t and t[c].notna().any() for t in tables for c in ("grid", "block"))


def _keyed(tables: list[pd.DataFrame]) -> tuple[list[pd.DataFrame], set[str], set[str]]:
    """Each part in launch order with its `_key` and `_occurrence`; the names whose counts differ between parts
    (not alignable), and the names whose shapes differ between parts although their counts agree (by name)."""
    parts = [t.sort_values("launch_id", kind="stable", ignore_index=True) for t in tables]
    for part in parts:
        part["_name"] = _names(part)
    counts = pd.concat([p["_name"].value_counts().rename(i) for i, p in enumerate(parts)], axis=1).fillna(0)
    uneven = set(counts.index[counts.nunique(axis=1) > 1])
    shapes_differ: set[str] = set()
    if _carries_shapes(parts):
        for part in parts:
            part["_key"] = _shape_key(part)
        shape_counts = pd.concat([p["_key"].value_counts().rename(i) for i, p in enumerate(parts)],
                                 axis=1).fillna(0)
        odd = shape_counts.index[shape_counts.nunique(axis=1) > 1]
        shapes_differ = {key.split(_SEP, 1)[0] for key in odd} - uneven
        for part in parts:  # those names are keyed by name alone
            by_name = part["_name"].isin(uneven | shapes_differ).to_numpy()
            part.loc[by_name, "_key"] = part.loc[by_name, "_name"]
    else:
        for part in parts:
            part["_key"] = part["_name"]
    for part in parts:
        part["_occurrence"] = part.groupby("_key", sort=False).cumcount()
    return parts, uneven, shapes_differ


def align_parts(tables: list[pd.DataFrame], names: list[str], capture: str) -> AlignedCapture:
    """Merge the parts (same launches, disjoint metrics) into one row per launch of the first part."""
    parts, uneven, shapes_differ = _keyed(tables)
    counts = pd.concat([p["_name"].value_counts().rename(i) for i, p in enumerate(parts)], axis=1).fillna(0)
    merged = parts[0]
    first_identity = merged[[c for c in IDENTITY_COLUMNS if c in merged]].copy()
    ids_differ = np.zeros(len(merged), dtype=bool)
    identity = [c for c in IDENTITY_COLUMNS if c not in ("source_file", "launch_id", "kernel_name", "launches")]
    unused = 0
    for part in parts[1:]:
        alignable = ~part["_name"].isin(uneven).to_numpy()
        unused += int((~alignable).sum())
        right = part.loc[alignable, _KEY + ["launch_id"] + [c for c in identity if c in part]
                         + metric_columns(part)].rename(columns={"launch_id": "_id"})
        merged = merged.merge(right, on=_KEY, how="left", suffixes=("", "_r"), sort=False)
        other_id = merged.pop("_id").to_numpy(dtype="float64")
        ids_differ |= ~np.isnan(other_id) & (other_id != merged["launch_id"].to_numpy(dtype="float64"))
        for column in [c for c in merged.columns if c.endswith("_r")]:
            base = column[:-2]
            right_values = merged.pop(column)
            if base == "reader_notes":
                left, extra = merged[base].fillna(""), right_values.fillna("")
                merged[base] = left.where(extra == "", left.where(left == "", left + "; ") + extra)
            else:
                merged[base] = merged[base].combine_first(right_values)
    unaligned = merged["_name"].isin(uneven).to_numpy()
    if unaligned.any():
        per_name = {name: "/".join(str(int(v)) for v in counts.loc[name]) for name in uneven}
        text = merged.loc[unaligned, "_name"].map(
            lambda name: f"not aligned with the other parts: this kernel name occurs {per_name[name]} times in "
                         f"the {len(parts)} parts; only the counters of {names[0]} are used")
        notes = merged["reader_notes"].astype("object").fillna("")
        sub = notes[unaligned].to_numpy()
        merged.loc[unaligned, "reader_notes"] = np.where(sub == "", text.to_numpy(), sub + "; " + text.to_numpy())
    by_name, by_name_note = _by_name(merged, parts, first_identity, ids_differ, shapes_differ, capture)
    merged = merged.drop(columns=[*_KEY, "_name"])
    merged["source_file"] = capture
    for column, dtype in IDENTITY_COLUMNS.items():
        merged[column] = merged[column].astype(dtype)
    n = len(merged)
    note = (f"{capture}: {len(parts)} metric-split parts of {n} launches each, aligned on (kernel name"
            f"{', grid, block' if _carries_shapes(parts) else ''}, its k-th occurrence in the part); "
            f"{int(ids_differ.sum())} of the {n} launches had a different launch ID in some part (launch order "
            f"differed between the runs)")
    if unaligned.any():
        note += (f"; {int(unaligned.sum())} launches of {len(uneven)} kernel name(s) occurring a different number "
                 f"of times in different parts could not be aligned: they keep the counters of {names[0]} only, "
                 f"and {unused} rows of the other parts are not used")
    return AlignedCapture(merged, note, n, int(ids_differ.sum()), int(unaligned.sum()), unused, by_name,
                          by_name_note)


def _by_name(merged: pd.DataFrame, parts: list[pd.DataFrame], first_identity: pd.DataFrame, ids_differ: np.ndarray,
             shapes_differ: set[str], capture: str) -> tuple[ByName | None, str | None]:
    """Mark the launches that cannot be told apart across the parts (`_by_name` = their kernel's code, -1
    elsewhere), empty their values, and gather per part the rows their kernels' sums are taken from."""
    launches_per_key = merged.groupby("_key", sort=False)["_key"].transform("size").to_numpy()
    moved = pd.Series(ids_differ & (launches_per_key > 1)).groupby(merged["_key"].to_numpy(), sort=False).any()
    order_keys = set(moved.index[moved.to_numpy()])
    shape_keys = set(merged.loc[merged["_name"].isin(shapes_differ), "_key"])
    keys = order_keys | shape_keys
    rows = merged["_key"].isin(keys).to_numpy()
    merged["_by_name"] = np.int64(-1)
    if not rows.any():
        return None, None
    codes, uniques = pd.factorize(merged.loc[rows, "_key"], sort=True)
    code_of = {key: i for i, key in enumerate(uniques)}
    merged.loc[rows, "_by_name"] = codes
    merged.loc[rows, metric_columns(merged)] = np.nan
    for column in first_identity.columns:  # fills from the other parts came from other launches: undone
        if column not in _DEVICE_IDENTITY and column != "reader_notes":
            merged.loc[rows, column] = first_identity.loc[rows, column].to_numpy()
    note = np.where(merged.loc[rows, "_key"].isin(shape_keys).to_numpy(), BY_NAME_SHAPE, BY_NAME_ORDER)
    merged["reader_notes"] = merged["reader_notes"].astype("object")
    merged.loc[rows, "reader_notes"] = note
    first = merged[rows].drop_duplicates("_key")
    ident = first[[c for c in IDENTITY_COLUMNS if c in first]].copy()
    ident["_by_name"] = first["_key"].map(code_of).to_numpy(dtype=np.int64)
    ident["launches"] = first["_key"].map(merged[rows].groupby("_key")["launches"].sum()).to_numpy(dtype=np.int64)
    ident["source_file"] = capture
    nvtx = merged[rows].groupby("_key")["nvtx_range"].nunique(dropna=False) if "nvtx_range" in merged else None
    if nvtx is not None:  # a kernel's sum stands for one range only where all its launches ran in it
        ident["nvtx_range"] = ident["nvtx_range"].mask(first["_key"].map(nvtx).to_numpy() > 1)
    for column in ("grid", "block"):  # shapes that differ between parts belong to no launch in particular
        if column in ident:
            ident[column] = ident[column].mask(first["_key"].isin(shape_keys).to_numpy())
    ident = ident.sort_values("_by_name", ignore_index=True)
    for column, dtype in IDENTITY_COLUMNS.items():
        if column in ident:
            ident[column] = ident[column].astype(dtype)
    part_rows = []
    for part in parts:
        mine = part["_key"].isin(keys).to_numpy()
        rows_of_part = part.loc[mine, ["reader_notes", *metric_columns(part)]].copy()
        rows_of_part.insert(0, "_by_name", part.loc[mine, "_key"].map(code_of).to_numpy(dtype=np.int64))
        part_rows.append(rows_of_part.reset_index(drop=True))
    labels = distinct_labels([display_name(str(n)) for n in ident["kernel_name"]],
                             ident["grid"].tolist() if "grid" in ident else None,
                             ident["block"].tolist() if "block" in ident else None)
    order, shapes = bool(order_keys - shape_keys), bool(shape_keys)
    why = "launch order or shapes differ" if order and shapes else "launch shapes differ" if shapes \
        else "launch order differs"
    text = (f"{capture}: {len(uniques)} kernel(s) ({int(rows.sum())} launches) cannot be told apart launch by launch "
            f"across the parts (their {why} between the parts): they are analysed from their sums over each part "
            f"(status '{BY_NAME}'), and their launch rows hold no values: " + "; ".join(labels))
    return ByName(ident, part_rows), text
