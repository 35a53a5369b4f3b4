"""Nsight Systems' kernel timeline of a whole run, read as nsys writes it: a plain table, one row per kernel.

Two forms, sniffed from the content:

* the CSV of `nsys stats --report cuda_gpu_kern_sum --format csv` (to stdout, with nsys's progress lines such as
  `Processing [run.sqlite] with [.../cuda_gpu_kern_sum.py]...` before the header, or to a file with `--output`).
  nsys's own report script defines the columns: `Time (%)` (`Time(%)` before 2022), `Total Time (ns)` (another
  unit with `--timeunit`), `Instances`, `Avg`, `Med`, `Min`, `Max`, `StdDev`, and `Name` last; the
  `cuda_gpu_kern_gb_sum` report (and `gpukernsum` of nsys 2022.4) adds `GridXYZ` / `BlockXYZ` (`" 896    1    1"`).
  `Name` is the demangled name by default, the base name with `:base`, the mangled one with `:mangled`; each row's
  form is read off the name itself (`_Z…` mangled, a parameter list demangled, else a base name);
* the SQLite database of `nsys export --type sqlite` (or the `.sqlite` that `nsys stats` leaves beside the
  report): `CUPTI_ACTIVITY_KIND_KERNEL` (one row per launch: `start`, `end` in ns, `deviceId`, `demangledName`,
  `shortName`, `mangledName` as ids into `StringIds(id, value)`, `gridX/Y/Z`, `blockX/Y/Z`), summed here per
  (names, launch shape, device) with Python's sqlite3: no nsys needed.

Only the timeline: nothing here knows of rooflines or of Nsight Compute (pipeline/app_weight.py joins the two).
Bad input (another report's CSV, a database without kernel data, an empty timeline) is one `InputError`.
"""

from __future__ import annotations

import csv
import io
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..core.errors import InputError
from ..core.kernel_names import base_kernel_name
from ..core.vocabulary import TIMELINE_COLUMNS
from .input_files import check_regular_file
from .units import unit_factor

SQLITE_MAGIC = b"SQLite format 3\x00"
KERNEL_TABLE, STRINGS_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL", "StringIds"
_TIME_HEADER = re.compile(r"^total\s*time\s*\((ns|nsec|us|usec|μs|µs|ms|msec|s|sec)\)$", re.IGNORECASE)
# Other `nsys stats` reports, told by the column that stands where the kernel summary has `Instances` / `Name`.
_OTHER_REPORTS = (("num calls", "an API summary (cuda_api_sum / osrt_sum), not cuda_gpu_kern_sum"),
                  ("range", "an NVTX summary (nvtx_sum), not cuda_gpu_kern_sum"),
                  ("operation", "a memory-operation summary (cuda_gpu_mem_*_sum), not cuda_gpu_kern_sum"),
                  ("count", "a memory-operation summary (cuda_gpu_mem_*_sum), not cuda_gpu_kern_sum"))
MAX_CSV_BYTES = 512 << 20  # a kernel summary is one line per distinct kernel: far below this


@dataclass
class Timeline:
    """The kernels of one nsys timeline: `kernels` has TIMELINE_COLUMNS (`time_s` summed over `instances`)."""

    path: str
    form: str  # "csv" or "sqlite"
    kernels: pd.DataFrame
    devices: tuple[int, ...] = ()  # the GPUs the timeline holds (SQLite only; a CSV does not say)
    notes: list[str] = field(default_factory=list)


def read_timeline(path: str | Path, *, device: int | None = None) -> Timeline:
    """The nsys timeline at `path`; `device`: only that GPU's kernels (`deviceId`, SQLite only)."""
    path = Path(path)
    check_regular_file(path, "nsys timeline")  # a FIFO or device would block the read below forever
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise InputError(path, f"cannot read the nsys timeline: {exc.strerror or exc}") from None
    timeline = _read_sqlite(path) if head == SQLITE_MAGIC else _read_csv(path)
    if device is not None:
        if timeline.form != "sqlite":
            raise InputError(path, "a cuda_gpu_kern_sum CSV does not say which GPU ran a kernel: give the SQLite "
                                   "export (nsys export --type sqlite) to pick one device")
        if device not in timeline.devices:
            raise InputError(path, f"the timeline holds no kernel on device {device} (devices: "
                                   f"{', '.join(map(str, timeline.devices))})")
        kept = timeline.kernels[timeline.kernels["device_id"] == device].reset_index(drop=True)
        timeline = Timeline(str(path), timeline.form, kept, (device,), timeline.notes)
    elif len(timeline.devices) > 1:
        timeline.notes.append(f"the timeline holds {len(timeline.devices)} GPUs (devices "
                              f"{', '.join(map(str, timeline.devices))}): their kernel times are summed; "
                              "pick one with --nsys-device N")
    return timeline


# ------------------------------------------------------------------------------------------------------------ CSV


def _read_csv(path: Path) -> Timeline:
    if path.stat().st_size > MAX_CSV_BYTES:
        raise InputError(path, f"too large for a cuda_gpu_kern_sum CSV ({path.stat().st_size} bytes)")
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    lines = text.splitlines()
    start, header = _find_header(path, lines)
    index = {name: i for i, name in enumerate(header)}
    time_column = next(i for i, name in enumerate(header) if _TIME_HEADER.match(name))
    factor = unit_factor(_TIME_HEADER.match(header[time_column]).group(1).lower())  # ncu's unit table: one
    grid, block = index.get("gridxyz"), index.get("blockxyz")
    rows = []
    for number, cells in enumerate(csv.reader(lines[start + 1:]), start=start + 2):
        if not cells or not any(c.strip() for c in cells):
            break  # a blank line ends the table (nsys prints the next report, or nothing, after it)
        if len(cells) != len(header):
            if len(cells) == 1:
                break  # a progress or banner line after the table
            raise InputError(path, f"line {number}: {len(cells)} cells under a header of {len(header)}")
        name = cells[index["name"]]
        rows.append((name, _number(path, number, cells[time_column], "Total Time") * factor,
                     _number(path, number, cells[index["instances"]], "Instances"),
                     _dims(cells[grid]) if grid is not None else None,
                     _dims(cells[block]) if block is not None else None))
    if not rows:
        raise InputError(path, "the cuda_gpu_kern_sum CSV lists no kernel (an empty timeline: was the run traced "
                               "with CUDA, `nsys profile -t cuda`?)")
    frame = pd.DataFrame(rows, columns=["name", "time_s", "instances", "grid", "block"])
    forms = [_name_forms(n) for n in frame["name"]]
    for position, form in enumerate(("demangled", "base", "mangled")):
        frame[form] = pd.array([f[position] for f in forms], dtype="string")
    frame["device_id"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    frame["instances"] = frame["instances"].astype("int64")
    return Timeline(str(path), "csv", _typed(frame))


def _find_header(path: Path, lines: list[str]) -> tuple[int, list[str]]:
    """The first line whose cells hold a `Total Time (unit)`, `Instances` and `Name` (a stdout of several reports
    holds several tables); a file with only other reports' tables says which report it is."""
    other = None
    for number, line in enumerate(lines):
        if "total" not in line.lower() or "time" not in line.lower():
            continue
        cells = [c.strip().lower() for c in next(csv.reader([line]), [])]
        if not any(_TIME_HEADER.match(c) for c in cells):
            continue
        if "instances" in cells and "name" in cells:
            return number, cells
        if other is None:
            what = next((w for column, w in _OTHER_REPORTS if column in cells),
                        "an nsys stats table without 'Instances' and 'Name' columns (not cuda_gpu_kern_sum)")
            other = f"line {number + 1}: this nsys stats CSV is {what}"
    raise InputError(path, other or "not an nsys timeline: neither an `nsys export --type sqlite` database nor the "
                     "CSV of `nsys stats --report cuda_gpu_kern_sum --format csv` (no 'Total Time (ns)', "
                     "'Instances', 'Name' header)")


def _number(path: Path, line: int, text: str, column: str) -> float:
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        raise InputError(path, f"line {line}: {column} {text!r} is not a number") from None


def _dims(text: str) -> str | None:
    """`" 896    1    1"` (nsys's GridXYZ / BlockXYZ) as the launch table writes a shape: `"(896, 1, 1)"`."""
    parts = text.split()
    return f"({', '.join(parts)})" if len(parts) == 3 and all(p.isdigit() for p in parts) else None


def _name_forms(name: str) -> tuple[str | None, str | None, str | None]:
    """(demangled, base, mangled) of one `Name` cell, read off its shape: a CSV has one form per name."""
    text = name.strip()
    if text.startswith("_Z") and " " not in text:
        return None, None, text
    if "(" in text:
        return text, base_kernel_name(text), None
    return None, base_kernel_name(text), None  # `:base`, or an `extern "C"` kernel (whose names are all alike)


# --------------------------------------------------------------------------------------------------------- SQLite


def _read_sqlite(path: Path) -> Timeline:
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise InputError(path, f"cannot open the SQLite timeline: {exc}") from None
    try:
        return _query(path, connection)
    except sqlite3.DatabaseError as exc:
        raise InputError(path, f"not a readable nsys SQLite export: {exc}") from None
    finally:
        connection.close()


def _query(path: Path, connection: sqlite3.Connection) -> Timeline:
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    for table in (KERNEL_TABLE, STRINGS_TABLE):
        if table not in tables:
            raise InputError(path, f"the SQLite file has no {table} table: not an `nsys export --type sqlite` of a "
                                   "run traced with CUDA (nsys profile -t cuda), or a run that launched no kernel")
    columns = {row[1] for row in connection.execute(f"PRAGMA table_info({KERNEL_TABLE})")}
    missing = [c for c in ("start", "end") if c not in columns]
    names = [c for c in ("demangledName", "shortName", "mangledName") if c in columns]
    if missing or not names:
        raise InputError(path, f"{KERNEL_TABLE} lacks {', '.join(missing) or 'any kernel name column'}")
    shape = [c for c in ("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ") if c in columns]
    device = ["deviceId"] if "deviceId" in columns else []
    keys = [*names, *(shape if len(shape) == 6 else []), *device]
    query = (f'SELECT {", ".join(f"k.{c}" for c in keys)}, count(*), sum(k."end" - k.start) '
             f"FROM {KERNEL_TABLE} AS k GROUP BY {', '.join(f'k.{c}' for c in keys)}")
    rows = connection.execute(query).fetchall()
    if not rows:
        raise InputError(path, f"{KERNEL_TABLE} holds no kernel launch: an empty timeline")
    frame = pd.DataFrame(rows, columns=[*keys, "instances", "time_ns"])
    ids = sorted({int(v) for c in names for v in frame[c].dropna()})
    strings: dict[int, str] = {}
    for chunk in range(0, len(ids), 500):  # SQLite's host-parameter limit
        part = ids[chunk:chunk + 500]
        strings.update(connection.execute(f"SELECT id, value FROM {STRINGS_TABLE} WHERE id IN "
                                          f"({', '.join('?' * len(part))})", part).fetchall())
    out = pd.DataFrame({"instances": frame["instances"].astype("int64"),
                        "time_s": frame["time_ns"].astype("float64") * 1e-9})
    for column, form in (("demangledName", "demangled"), ("shortName", "base"), ("mangledName", "mangled")):
        values = frame[column].map(lambda v: strings.get(int(v)) if pd.notna(v) else None) if column in frame \
            else pd.Series([None] * len(frame))
        out[form] = pd.array(values.tolist(), dtype="string")
    derived = [base_kernel_name(n) if pd.notna(n) else None for n in out["demangled"]]
    out["base"] = out["base"].fillna(pd.Series(pd.array(derived, dtype="string")))
    out["name"] = out["demangled"].fillna(out["base"]).fillna(out["mangled"])
    if len(shape) == 6:
        out["grid"] = [f"({x}, {y}, {z})" for x, y, z in frame[["gridX", "gridY", "gridZ"]].itertuples(index=False)]
        out["block"] = [f"({x}, {y}, {z})" for x, y, z in frame[["blockX", "blockY", "blockZ"]].itertuples(
            index=False)]
    else:
        out["grid"] = out["block"] = None
    out["device_id"] = pd.array(frame["deviceId"].tolist() if device else [pd.NA] * len(frame), dtype="Int64")
    devices = tuple(sorted(int(d) for d in out["device_id"].dropna().unique()))
    return Timeline(str(path), "sqlite", _typed(out), devices)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    for column in ("name", "demangled", "base", "mangled", "grid", "block"):
        frame[column] = frame[column].astype("string")
    frame = frame[list(TIMELINE_COLUMNS)]
    return frame.sort_values(["time_s", "name"], ascending=[False, True], kind="stable", ignore_index=True)


def timeline_csv(rows: list[tuple[str, int, int]], *, banner: bool = True) -> str:
    """A cuda_gpu_kern_sum CSV as nsys 2023+ writes it, from (name, total ns, instances) rows: for tests and docs."""
    out = io.StringIO()
    if banner:
        out.write("Processing [report.sqlite] with [/opt/nvidia/nsight-systems/reports/cuda_gpu_kern_sum.py]... \n\n")
    total = sum(r[1] for r in rows) or 1
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)",
                     "StdDev (ns)", "Name"])
    for name, ns, count in rows:
        avg = ns / count
        writer.writerow([f"{100 * ns / total:.1f}", ns, count, f"{avg:.1f}", f"{avg:.1f}", int(avg), int(avg), "0.0",
                         name])
    return out.getvalue()
