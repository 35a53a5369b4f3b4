"""Readers: input files in, one LaunchTable out. The format is sniffed from content, never from the file name.

Several files are one analysis, with `source_file` on every row. Metric-split captures (the NERSC habit: one ncu
run per metric, same launches in each file) are merged into one row per launch, joined on (ID, kernel name).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from ..errors import InputError
from ..launch_table import IDENTITY_COLUMNS, metric_columns
from .csv_export import read_csv_export
from .input_files import check_regular_file, expand_paths
from .report_damage import check_report_launches
from .ncu_rep import looks_like_ncu_rep, read_ncu_rep

__all__ = ["expand_paths", "looks_like_ncu_rep", "read_file", "read_inputs"]


def read_file(path: Path, wanted: Callable[[str], bool],
              progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Read one file of any supported form into a LaunchTable; `attrs["report"]` says whether it was a report."""
    check_regular_file(path)
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None
    # zip and gzip are not ncu formats, but a file holding them is most likely a packed report: let the report
    # reader say what it is not.
    if looks_like_ncu_rep(head) or head.startswith((b"PK", b"\x1f\x8b")):
        table = check_report_launches(read_ncu_rep(path, wanted=wanted), path)
        table.attrs["report"] = looks_like_ncu_rep(head)
        return table
    return read_csv_export(path, wanted, progress)


def read_inputs(paths: Iterable[str | Path], wanted: Callable[[str], bool],
                progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Read every input and return one LaunchTable; metric-split captures are merged first.

    `attrs["report_sources"]` names the binary reports among the sources (their content, not their names, said so).
    """
    files = expand_paths(paths)
    if not files:
        raise InputError(None, "no input files given")
    tables = [read_file(path, wanted, progress) for path in files]
    reports = {str(path) for path, table in zip(files, tables) if table.attrs.get("report")}
    captures = _group_metric_split(tables)
    frames = []
    for index, members in enumerate(captures):
        frame = _merge_capture([tables[i] for i in members], [files[i] for i in members])
        frame["_capture"] = index
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0]
    table.attrs = {"report_sources": reports}
    return table


def _group_metric_split(tables: list[pd.DataFrame]) -> list[list[int]]:
    """Files that hold the same launches (same IDs, same kernels, order aside) but disjoint metrics are parts of one
    capture: the NERSC habit of one ncu run per metric."""
    groups: list[list[int]] = []
    signatures: list[tuple[tuple, set]] = []
    for i, table in enumerate(tables):
        launches = (tuple(sorted(table["launch_id"].tolist())),
                    tuple(sorted(table["kernel_name"].fillna("").astype(str).value_counts().items())))
        metrics = set(metric_columns(table))
        for g, (group_launches, group_metrics) in enumerate(signatures):
            if launches == group_launches and metrics and not (metrics & group_metrics):
                groups[g].append(i)
                group_metrics |= metrics
                break
        else:
            groups.append([i])
            signatures.append((launches, set(metrics)))
    return groups


def _merge_capture(tables: list[pd.DataFrame], files: list[Path]) -> pd.DataFrame:
    """Join the parts of a metric-split capture on (ID, kernel name); `_file_mask` records which parts each row
    has, so that launch counts and partial rows stay honest when launch order differed between the runs."""
    if len(tables) == 1:
        table = tables[0]  # the reader's own frame: no copy, which at 10^6 launches is the largest one
        table["_file_mask"] = np.int64(1)
        return table
    if len(tables) > 62:
        raise InputError(files[0], f"{len(tables)} files look like one metric-split capture; at most 62 can be merged")
    key = ["launch_id", "kernel_name"]
    merged: pd.DataFrame | None = None
    for bit, table in enumerate(tables):
        part = table.copy()
        part["_file_mask"] = np.int64(1 << bit)
        if merged is None:
            merged = part
            continue
        merged = merged.merge(part, on=key, how="outer", suffixes=("", "_r"), sort=False)
        for column in [c for c in merged.columns if c.endswith("_r")]:
            base = column[:-2]
            if base == "_file_mask":
                merged[base] = merged[base].fillna(0).astype(np.int64) | merged[column].fillna(0).astype(np.int64)
            elif base == "reader_notes":
                left, right = merged[base].fillna(""), merged[column].fillna("")
                merged[base] = left.where(right == "", left.where(left == "", left + "; ") + right)
            else:
                merged[base] = merged[base].combine_first(merged[column])
            merged = merged.drop(columns=column)
    assert merged is not None
    merged = merged.sort_values(["launch_id", "kernel_name"], kind="stable", ignore_index=True)
    merged["source_file"] = _capture_name(files)
    merged["launches"] = merged["launches"].fillna(1).astype("int64")
    full = (1 << len(tables)) - 1
    partial = merged["_file_mask"].to_numpy() != full
    if partial.any():
        counts = np.array([bin(m).count("1") for m in merged.loc[partial, "_file_mask"]])
        note = pd.Series(counts).astype(str) + f" of {len(tables)} files hold this (ID, kernel name): launch order " \
                                                "differed between the runs"
        notes = merged["reader_notes"].astype("object").fillna("")
        sub = notes[partial].to_numpy()
        merged.loc[partial, "reader_notes"] = np.where(sub == "", note.to_numpy(), sub + "; " + note.to_numpy())
    for column, dtype in IDENTITY_COLUMNS.items():
        merged[column] = merged[column].astype(dtype)
    return merged


def _capture_name(files: list[Path]) -> str:
    """`dir/out.*.txt` for parts that share a prefix and suffix, else the names joined with `;`."""
    names = [str(f) for f in files]
    prefix = os.path.commonprefix(names)
    suffix = os.path.commonprefix([n[::-1] for n in names])[::-1]
    if len(prefix) + len(suffix) < min(len(n) for n in names):
        return f"{prefix}*{suffix}"
    return ";".join(names)
