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
import math
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..core.errors import InputError
from ..core.kernel_names import base_kernel_name
from ..core.vocabulary import TIMELINE_COLUMNS
from .input_files import check_regular_file
from .nsys_sqlite import MAX_NAME_CHARS, read_kernels
from .units import unit_factor

SQLITE_MAGIC = b"SQLite format 3\x00"
# An Nsight Systems report itself (`.nsys-rep`, `.qdrep` before 2021.4), not an export of it: told by its name or
# its first bytes (a .qdrep starts "NVIDIA Tegra Profiler Report").
_REPORT_SUFFIXES = (".nsys-rep", ".qdrep", ".qdstrm")
_REPORT_MAGIC = b"NVIDIA Tegra Profiler Report"
MAX_INSTANCES = 2**53  # a count beyond float's integers is no launch count
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
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else \
                "a device or socket"
            raise InputError(path, f"the nsys timeline is {kind}, not a file: give the cuda_gpu_kern_sum CSV or the "
                                   "SQLite export")
        with open(path, "rb") as handle:
            head = handle.read(len(_REPORT_MAGIC))
    except OSError as exc:
        raise InputError(path, f"cannot read the nsys timeline: {exc.strerror or exc}") from None
    if path.suffix.lower() in _REPORT_SUFFIXES or head.startswith(_REPORT_MAGIC):
        raise InputError(path, "an Nsight Systems report, not its export: run `nsys export --type sqlite --output "
                               f"{path.with_suffix('.sqlite')} {path}` (or `nsys stats --report cuda_gpu_kern_sum "
                               f"--format csv --output {path.with_suffix('')} {path}`) and give that")
    timeline = _read_sqlite(path) if head.startswith(SQLITE_MAGIC) else _read_csv(path)
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
    aligned = _aligned_table(lines)
    start, header = aligned[:2] if aligned else _find_header(path, lines)
    index = {name: i for i, name in enumerate(header)}
    time_column = next(i for i, name in enumerate(header) if _TIME_HEADER.match(name))
    factor = unit_factor(_TIME_HEADER.match(header[time_column]).group(1).lower())  # ncu's unit table: one
    grid, block = index.get("gridxyz"), index.get("blockxyz")
    rows, bad = [], {}
    body = aligned[2] if aligned else enumerate(csv.reader(lines[start + 1:]), start=start + 2)
    for number, cells in body:
        if not cells or not any(c.strip() for c in cells):
            break  # a blank line ends the table (nsys prints the next report, or nothing, after it)
        if len(cells) != len(header):
            if len(cells) == 1:
                break  # a progress or banner line after the table
            raise InputError(path, f"line {number}: {len(cells)} cells under a header of {len(header)}")
        name = cells[index["name"]].strip()[:MAX_NAME_CHARS + 1]
        seconds = _number(cells[time_column]) * factor
        count = _number(cells[index["instances"]])
        reason = _bad_row(cells[time_column].strip(), seconds, cells[index["instances"]].strip(), count)
        if reason:
            bad.setdefault(reason[0], []).append(f"line {number}: {reason[1]}")
            continue
        rows.append((name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS] + "…", seconds, int(count),
                     _dims(cells[grid]) if grid is not None else None,
                     _dims(cells[block]) if block is not None else None))
    notes = []
    if bad:
        lines_out = [line for found in bad.values() for line in found]
        notes.append(f"{len(lines_out)} row(s) of the timeline left out, in no kernel's time nor the run's ("
                     + "; ".join(f"{len(found)} with {what}" for what, found in bad.items()) + "): "
                     + "; ".join(lines_out[:3]) + ("; …" if len(lines_out) > 3 else ""))
    if not rows:
        raise InputError(path, notes[0] if notes else "the cuda_gpu_kern_sum CSV lists no kernel (an empty "
                         "timeline: was the run traced with CUDA, `nsys profile -t cuda`?)")
    frame = pd.DataFrame(rows, columns=["name", "time_s", "instances", "grid", "block"])
    forms = [_name_forms(n) for n in frame["name"]]
    for position, form in enumerate(("demangled", "base", "mangled")):
        frame[form] = pd.array([f[position] for f in forms], dtype="string")
    frame["device_id"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    frame["instances"] = frame["instances"].astype("int64")
    return Timeline(str(path), "csv", _typed(frame), notes=notes)


_ALIGNED_HEADER = re.compile(r"^\s*Time\s?\(%\)\s{2,}Total\s+Time\s*\(\w+\)\s{2,}")
_RULE = re.compile(r"-+")


def _aligned_table(lines: list[str]):
    """`nsys stats` to a terminal (no `--format csv`): a header, a rule of dashes under each column, then rows
    whose columns stand under the dashes (Name, the last, running to the line's end; numbers with thousands
    separators). (header line index, header cells, (line number, cells) rows), or None when there is none."""
    for i, line in enumerate(lines[:-1]):
        if not _ALIGNED_HEADER.match(line) or "," in line or not lines[i + 1].strip().startswith("-"):
            continue
        spans = [(m.start(), m.end()) for m in _RULE.finditer(lines[i + 1])]
        header = [line[a:b].strip().lower() for a, b in spans[:-1]] + [line[spans[-1][0]:].strip().lower()]

        def rows(start=i + 2):
            for number, text in enumerate(lines[start:], start=start + 1):
                if not text.strip():
                    return
                cells = [text[a:b] for a, b in spans[:-1]] + [text[spans[-1][0]:]]
                yield number, cells if len(text) > spans[-1][0] else [text]
        return i, header, rows()
    return None


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


def _bad_row(time_text: str, seconds: float, count_text: str, count: float) -> tuple[str, str] | None:
    """(what is wrong, the cell as written) for a row that cannot be weighted; None for a good one."""
    if math.isnan(seconds):
        return "a Total Time that is not a number", f"Total Time {time_text!r} is not a number"
    if not 0 < seconds < math.inf:
        return "a Total Time not positive and finite", f"Total Time {time_text!r}"
    if math.isnan(count):
        return "an Instances that is not a number", f"Instances {count_text!r} is not a number"
    if not (1 <= count <= MAX_INSTANCES and count == int(count)):
        return "an Instances that is no launch count", f"Instances {count_text!r}"
    return None


def _number(text: str) -> float:
    """A number as nsys prints it (`1,234`, `2500.5`); NaN where the cell holds none."""
    try:
        return float(text.strip().replace(",", ""))
    except ValueError:
        return math.nan


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
    kernels, devices, notes = read_kernels(path)
    return Timeline(str(path), "sqlite", _typed(kernels), devices, notes)


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
