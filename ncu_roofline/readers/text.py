"""Finding the ncu table inside a text file.

ncu prints its table when the profiled process ends, so the file may start with `==PROF==` lines, the program's own
output, a UTF-8 BOM, and use CRLF. The header is the first line that starts with `"ID",` (details and raw pages) or
`"Process ID",` (`--print-summary per-kernel`). Anything else is explained, not guessed at.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

_HEADER_RE = re.compile(rb'^(\xef\xbb\xbf)?"?(ID|Process ID)"?,', re.MULTILINE)
_NVPROF_RE = re.compile(rb'^(\xef\xbb\xbf)?"(Device","Kernel","Invocations|Type","Time\(%\)|Start","Duration)',
                        re.MULTILINE)
# How far into a file the header may sit (program output can be long); the table itself is streamed.
_SCAN_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class TableStart:
    """Where the table starts and what its header says."""

    path: Path
    offset: int  # byte offset of the header line
    header: list[str]
    layout: str  # "details", "raw" or "summary"
    sample_rows: list[list[str]]  # a few parsed rows after the header, to sniff widths and a units row


def locate_table(path: Path) -> TableStart:
    """Find the ncu table in `path` or raise InputError saying what the file holds instead."""
    with open(path, "rb") as handle:
        head = handle.read(_SCAN_BYTES)
    if not head.strip():
        raise InputError(path, "the file is empty")
    match = _HEADER_RE.search(head)
    if match is None:
        raise InputError(path, _explain_missing_table(head))
    offset = match.start() + (3 if match.group(1) else 0)
    sample = head[offset:offset + 256 * 1024].decode("utf-8", errors="replace")
    lines = sample.splitlines()
    if len(lines) > 1 and offset + 256 * 1024 < len(head):
        lines = lines[:-1]  # the last line may be cut
    rows = list(csv.reader(io.StringIO("\n".join(lines[:200]))))
    header = [cell.strip() for cell in rows[0]] if rows else []
    layout = _layout(header)
    if layout is None:
        raise InputError(path, f"a table starts at byte {offset}, but its header ({', '.join(header[:6])}, ...) "
                               "is not one that ncu writes")
    return TableStart(path, offset, header, layout, rows[1:])


def _layout(header: list[str]) -> str | None:
    names = set(header)
    if {"Metric Name", "Metric Value", "ID"} <= names:
        return "details"
    if {"Metric Name", "Average", "Invocations"} <= names:
        return "summary"
    if header[:1] == ["ID"] and "Kernel Name" in names and "Metric Name" not in names:
        return "raw"
    return None


def _explain_missing_table(head: bytes) -> str:
    if _NVPROF_RE.search(head):
        return "this is an nvprof export, which ncu-roofline does not support (profile with Nsight Compute: ncu --csv)"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("==ERROR==")]
    prof = [line for line in lines if line.startswith("==PROF==") or line.startswith("==WARNING==")]
    if errors:
        return f"no kernels were profiled; ncu said: {errors[0]}"
    if prof:
        return "no kernels were profiled: the file holds only ncu's ==PROF== messages and no table"
    if head.startswith(b"NVR\x00"):
        return "this is a binary Nsight Compute report that could not be read as one"
    if b"\x00" in head[:4096]:
        return "this is a binary file, not an ncu --csv export or .ncu-rep report"
    return 'no ncu table found (expected a header line starting with "ID", from ncu --csv)'
