"""Readers: input files in, one LaunchTable out. The format is sniffed from content, never from the file name.

Several files are one analysis, with `source_file` on every row. Metric-split captures (the NERSC habit: one ncu
run per metric, same launches in each file) are merged into one row per launch, aligned on (kernel name, grid and
block where every part has them, k-th occurrence in the part) where the launches can be told apart; kernels whose
launches moved between the runs are analysed from their sums by name. See `align.py`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import InputError
from .input_files import check_regular_file, expand_paths
from .report_container import looks_like_ncu_rep

if TYPE_CHECKING:
    import pandas as pd

    from .align import ByName

# pandas, pyarrow and the readers that need them are imported where a file is read, so that `refuse_unreadable`
# can turn a file away before they are loaded.
__all__ = ["expand_paths", "looks_like_ncu_rep", "read_file", "read_inputs", "refuse_unreadable"]
_PRECHECK_MAX_BYTES = 16 * 1024 * 1024  # a larger input is read at once: the imports are a small part of its cost


def _head(path: Path) -> bytes:
    check_regular_file(path)
    try:
        with open(path, "rb") as handle:
            return handle.read(4)
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None


def _is_report(head: bytes) -> bool:
    # zip and gzip are not ncu formats, but a file holding them is most likely a packed report: let the report
    # reader say what it is not.
    return looks_like_ncu_rep(head) or head.startswith((b"PK", b"\x1f\x8b"))


def _read_report(path: Path, head: bytes, wanted: Callable[[str], bool],
                 progress: Callable[[int], None] | None) -> pd.DataFrame:
    from .ncu_rep import read_ncu_rep
    from .report_damage import check_report_launches

    table = check_report_launches(read_ncu_rep(path, wanted=wanted), path)
    table.attrs["report"] = looks_like_ncu_rep(head)
    return table


def _read_csv(path: Path, head: bytes, wanted: Callable[[str], bool],
              progress: Callable[[int], None] | None) -> pd.DataFrame:
    from .csv_export import read_csv_export

    return read_csv_export(path, wanted, progress)


def _precheck_text(path: Path) -> None:
    """The checks the CSV reader makes first (binary, empty, no header ncu writes), without pandas."""
    try:
        if os.stat(path).st_size > _PRECHECK_MAX_BYTES:
            return
    except OSError:
        return
    from .text import locate_table

    locate_table(Path(path))


@dataclass(frozen=True)
class InputFormat:
    """One input format: how its content is told (the file's first 4 bytes, never its name), the function that
    reads it into a LaunchTable, and the check `refuse_unreadable` makes before pandas is imported (None: left to
    the reader)."""

    name: str
    sniff: Callable[[bytes], bool]
    read: Callable[[Path, bytes, Callable[[str], bool], Callable[[int], None] | None], pd.DataFrame]
    precheck: Callable[[Path], None] | None = None


# The input formats, tried in order: the first whose sniff holds reads the file. A new format is a reader module
# and one entry here, before the CSV/text exports, which take every other file (docs/architecture.md).
FORMATS: tuple[InputFormat, ...] = (
    InputFormat("ncu-rep", _is_report, _read_report),
    InputFormat("csv", lambda head: True, _read_csv, _precheck_text),
)


def input_format(head: bytes) -> InputFormat:
    return next(f for f in FORMATS if f.sniff(head))


def read_file(path: Path, wanted: Callable[[str], bool],
              progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Read one file of any supported form into a LaunchTable; `attrs["report"]` says whether it was a report."""
    head = _head(path)
    return input_format(head).read(path, head, wanted, progress)


def refuse_unreadable(paths: Iterable[str | Path]) -> None:
    """Raise the InputError that reading would raise for the first input when that file is plainly not an ncu
    table (binary, empty, no header ncu writes), before pandas and pyarrow are imported: the same line, at a
    fraction of the cost. The first input only, and only the checks its format's reader makes first, so a run that
    this lets through fails (or not) exactly as before. Reports are left to their reader."""
    files = expand_paths(paths, [])
    if not files:
        raise InputError(None, "no input files given")
    path = files[0]
    precheck = input_format(_head(path)).precheck
    if precheck is not None:
        precheck(path)


@dataclass
class Inputs:
    """Every launch of the inputs as one LaunchTable, and what the readers have to say about the run as a whole
    (how metric-split parts were aligned)."""

    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    # kernels of metric-split captures whose launches cannot be aligned: analysed from their sums (align.py);
    # `table["_by_name"]` names their launch rows (-1 on the others)
    by_name: ByName | None = None


def read_inputs(paths: Iterable[str | Path], wanted: Callable[[str], bool],
                progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Read every input and return one LaunchTable; metric-split captures are merged first.

    `attrs["report_sources"]` names the binary reports among the sources (their content, not their names, said so);
    `attrs["run_notes"]` holds the readers' notes on the run (how metric-split parts were aligned);
    `attrs["by_name"]` the kernels aligned by name only (`ByName`, or None).
    """
    inputs = read_all(paths, wanted, progress)
    inputs.table.attrs["run_notes"] = list(inputs.notes)
    inputs.table.attrs["by_name"] = inputs.by_name
    return inputs.table


def read_all(paths: Iterable[str | Path], wanted: Callable[[str], bool],
             progress: Callable[[int], None] | None = None) -> Inputs:
    """Read every input: one LaunchTable (metric-split captures aligned) and the run-level notes of the readers.

    `table.attrs["report_sources"]` names the binary reports among the sources (their content said so)."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from .align import ByName, align_parts

    files = expand_paths(paths)
    if not files:
        raise InputError(None, "no input files given")
    tables = []
    for path in files:
        tables.append(read_file(path, wanted, progress))
        # The parser's blocks are freed but kept by Arrow's allocator for reuse; hand them back before the
        # next file and the steps after the read (about 120 MB at 10^5 launches on the raw page).
        pa.default_memory_pool().release_unused()
        _trim_heap()
    reports = {str(path) for path, table in zip(files, tables) if table.attrs.get("report")}
    frames, notes, by_name = [], [], []
    for members in _group_metric_split(tables):
        if len(members) == 1:
            frames.append(tables[members[0]])
            continue
        parts = [files[i] for i in members]
        if len(parts) > 62:
            raise InputError(parts[0], f"{len(parts)} files look like one metric-split capture; at most 62 can "
                                       "be merged")
        aligned = align_parts([tables[i] for i in members], [p.name for p in parts], _capture_name(parts))
        notes.append(aligned.note)
        if aligned.by_name is not None:
            offset = sum(len(b) for b in by_name)  # one code per kernel across all captures
            aligned.table["_by_name"] = np.where(aligned.table["_by_name"] >= 0, aligned.table["_by_name"] + offset,
                                                 -1)
            by_name.append(_offset(aligned.by_name, offset))
            notes.append(aligned.by_name_note)
        frames.append(aligned.table)
    table = pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0]
    if by_name:
        table["_by_name"] = table["_by_name"].fillna(-1).astype(np.int64)
    elif "_by_name" in table:
        table = table.drop(columns="_by_name")
    table.attrs = {"report_sources": reports}
    merged = ByName(pd.concat([b.identity for b in by_name], ignore_index=True),
                    [p for b in by_name for p in b.parts]) if by_name else None
    return Inputs(table, notes, merged)


def _offset(by_name: ByName, offset: int) -> ByName:
    from .align import ByName
    identity = by_name.identity.assign(_by_name=by_name.identity["_by_name"] + offset)
    return ByName(identity, [p.assign(_by_name=p["_by_name"] + offset) for p in by_name.parts])


def _group_metric_split(tables: list[pd.DataFrame]) -> list[list[int]]:
    """Files that hold the same launches (same launch IDs, same kernel names) but disjoint metrics are parts of
    one capture: the NERSC habit of one ncu run per metric. How often each name occurs may differ between parts
    (a kernel the program chose differently in one run); `align_parts` says which launches that leaves unaligned."""
    from ..core.launch_table import metric_columns

    if len(tables) < 2:  # nothing to merge with: no signature (a sorted list of 10^6 IDs is 0.17 CPU-s)
        return [[i] for i in range(len(tables))]
    groups: list[list[int]] = []
    signatures: list[tuple[tuple, frozenset, set]] = []
    for i, table in enumerate(tables):
        ids = tuple(sorted(table["launch_id"].tolist()))
        names = frozenset(table["kernel_name"].fillna("").astype(str).unique())
        metrics = set(metric_columns(table))
        for g, (group_ids, group_names, group_metrics) in enumerate(signatures):
            if ids == group_ids and names == group_names and metrics and not (metrics & group_metrics):
                groups[g].append(i)
                group_metrics |= metrics
                break
        else:
            groups.append([i])
            signatures.append((ids, names, set(metrics)))
    return groups


def _capture_name(files: list[Path]) -> str:
    """`dir/out.*.txt` for parts that share a prefix and suffix, else the names joined with `;`."""
    names = [str(f) for f in files]
    prefix = os.path.commonprefix(names)
    suffix = os.path.commonprefix([n[::-1] for n in names])[::-1]
    if len(prefix) + len(suffix) < min(len(n) for n in names):
        return f"{prefix}*{suffix}"
    return ";".join(names)


def _trim_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's `malloc_trim`; nothing elsewhere): the read's
    temporary arrays leave them behind, and the steps after it would otherwise grow on top of them."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return
    if trim is not None:
        trim(0)
