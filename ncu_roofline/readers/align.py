"""The parts of a metric-split capture aligned launch by launch.

NERSC-style captures run the program once per metric (`out.<metric>.txt`). Each run profiles the same launches,
but a multi-threaded program (TensorFlow, say) does not launch them in the same order every time, so the ID that
ncu gives a launch in one part may belong to another kernel in the next part. What does not change between runs
is the order in which one kernel is launched: the k-th launch of `kernel X` in one part is the k-th launch of
`kernel X` in every part. Parts are therefore aligned on (kernel name, k), and the capture keeps exactly the launch
count of its parts.

A kernel name that occurs a different number of times in different parts cannot be aligned that way. Its launches
in the first part keep that part's counters only (their status says so); its launches in the other parts are not
used, and the run-level note counts them. Nothing from two different launches is ever put into one row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.launch_table import IDENTITY_COLUMNS, metric_columns

_KEY = ["_name", "_occurrence"]


@dataclass
class AlignedCapture:
    table: pd.DataFrame  # one row per launch of the first part
    note: str  # one line for the run: how the parts were aligned
    launches: int  # rows of the table
    ids_differ: int  # launches whose ID is not the same in every part (aligned on name and occurrence)
    unaligned: int  # launches of the first part whose name could not be aligned
    unused_rows: int  # rows of the other parts left out (unalignable names)


def _with_key(table: pd.DataFrame) -> pd.DataFrame:
    part = table.sort_values("launch_id", kind="stable", ignore_index=True)
    part["_name"] = part["kernel_name"].astype("object").where(part["kernel_name"].notna(), "")
    part["_occurrence"] = part.groupby("_name", sort=False).cumcount()
    return part


def align_parts(tables: list[pd.DataFrame], names: list[str], capture: str) -> AlignedCapture:
    """Merge the parts (same launches, disjoint metrics) into one row per launch of the first part."""
    parts = [_with_key(t) for t in tables]
    counts = pd.concat([p["_name"].value_counts().rename(i) for i, p in enumerate(parts)], axis=1).fillna(0)
    uneven = set(counts.index[counts.nunique(axis=1) > 1])
    merged = parts[0]
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
    merged = merged.drop(columns=_KEY)
    merged["source_file"] = capture
    for column, dtype in IDENTITY_COLUMNS.items():
        merged[column] = merged[column].astype(dtype)
    n = len(merged)
    note = (f"{capture}: {len(parts)} metric-split parts of {n} launches each, aligned on (kernel name, its k-th "
            f"occurrence in the part); {int(ids_differ.sum())} of the {n} launches had a different launch ID in "
            f"some part (launch order differed between the runs)")
    if unaligned.any():
        note += (f"; {int(unaligned.sum())} launches of {len(uneven)} kernel name(s) occurring a different number "
                 f"of times in different parts could not be aligned: they keep the counters of {names[0]} only, "
                 f"and {unused} rows of the other parts are not used")
    return AlignedCapture(merged, note, n, int(ids_differ.sum()), int(unaligned.sum()), unused)
