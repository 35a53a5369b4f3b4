"""Finding the ncu table inside a text file.

ncu prints its table when the profiled process ends, so the file may start with `==PROF==` lines, the program's own
output, a UTF-8 BOM, and use CRLF. The header is the first line that starts with `"ID",` (details and raw pages) or
`"Process ID",` (`--print-summary per-kernel`). Anything else is explained, not guessed at.

The readers stream the table from here through `open_table` (bytes that are not UTF-8 become U+FFFD, so a Latin-1
kernel name cannot stop a read), and `check_last_row` tells a file cut off in the middle of a row from a whole one.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

from ..core.errors import InputError

_HEADER_RE = re.compile(rb'^(\xef\xbb\xbf)?"?(ID|Process ID)"?,', re.MULTILINE)
_NVPROF_RE = re.compile(rb'^(\xef\xbb\xbf)?"(Device","Kernel","Invocations|Type","Time\(%\)|Start","Duration)',
                        re.MULTILINE)
# How far into a file the header may sit (program output can be long); the table itself is streamed.
_SCAN_BYTES = 64 * 1024 * 1024
_FIRST_BYTES = 1024 * 1024  # looked at first: a table at the top of the file is found there
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# How much of the file's end is read to tell a complete last row from one cut off mid-way.
_TAIL_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class TableStart:
    """Where the table starts and what its header says."""

    path: Path
    offset: int  # byte offset of the header line
    header: list[str]
    layout: str  # "details", "raw" or "summary"
    sample_rows: list[list[str]]  # a few parsed rows after the header, to sniff widths and a units row


def locate_table(path: Path) -> TableStart:
    """Find the ncu table in `path` or raise InputError saying what the file holds instead.

    The file's first MiB is looked at first: where the header and its sample rows lie wholly inside it (a table
    at the top of the file, the common case), the answer is the one the whole scan would give, without reading
    (and copying) up to 64 MiB; anywhere else the whole scan decides."""
    with open(path, "rb") as handle:
        head = handle.read(_FIRST_BYTES)
        if len(head) == _FIRST_BYTES:
            found = _table_inside(path, head)
            if found is not None:
                return found
            head += handle.read(_SCAN_BYTES - len(head))
    if not head or head.isspace():  # `head.strip()` without a copy of the whole head
        raise InputError(path, "the file is empty")
    first: tuple[int, list[str]] | None = None
    # Program output may hold a line that starts like a header ("ID, name"): take the first that ncu could write.
    for match in itertools.islice(_HEADER_RE.finditer(head), 50):
        offset = match.start() + (3 if match.group(1) else 0)
        header, rows = _sample(head, offset)
        layout = _layout(header)
        if layout is not None:
            return TableStart(path, offset, header, layout, rows)
        first = first or (offset, header)
    if first is None:
        raise InputError(path, _explain_missing_table(head))
    offset, header = first
    shown = printable(", ".join(h[:40] for h in header[:6]))
    raise InputError(path, f"a table starts at byte {offset}, but its header ({shown}, ...) is not one that ncu writes")


def _table_inside(path: Path, head: bytes) -> TableStart | None:
    """The table the whole scan finds, when `head` (the file's start) settles it: its header is the first match
    that is one ncu writes, and that match and every one before it had its whole sample inside `head`."""
    for match in itertools.islice(_HEADER_RE.finditer(head), 50):
        offset = match.start() + (3 if match.group(1) else 0)
        if _sample_end(head, offset) is None:
            return None
        header, rows = _sample(head, offset)
        layout = _layout(header)
        if layout is not None:
            return TableStart(path, offset, header, layout, rows)
    return None


def _sample_end(head: bytes, offset: int) -> int | None:
    """Where `_sample` stops reading `head` for a header at `offset`, or None where it would read to the end of
    `head` (its sample could then change with more of the file)."""
    end = offset
    for _ in range(4):
        newline = head.find(b"\n", end)
        if newline < 0:
            return None
        end = newline + 1
    window = max(offset + 256 * 1024, end)
    return window if window < len(head) else None


def _sample(head: bytes, offset: int) -> tuple[list[str], list[list[str]]]:
    """The header and up to 200 rows after it, parsed; rows too odd for the csv module end the sample."""
    # At least 256 KiB, and always the whole header line and the three after it: `--page raw --metrics all` makes
    # a header of 10^5 columns (2 MB), which a fixed window would cut mid-header.
    end = offset
    for _ in range(4):
        newline = head.find(b"\n", end)
        end = len(head) if newline < 0 else newline + 1
    window = max(offset + 256 * 1024, end)
    sample = head[offset:window].decode("utf-8", errors="replace")
    lines = sample.splitlines()
    if len(lines) > 1 and window < len(head) and window != end:
        lines = lines[:-1]  # the last line may be cut
    rows: list[list[str]] = []
    try:
        for row in csv.reader(io.StringIO("\n".join(lines[:200]))):
            rows.append(row)
    except csv.Error:  # a field over the csv module's size limit: sniff from what was read before it
        pass
    header = [cell.strip() for cell in rows[0]] if rows else []
    return header, rows[1:]


def printable(text: str, limit: int = 200) -> str:
    """File text fit for a one-line message: control characters shown as `?`, long text cut."""
    text = _CONTROL_RE.sub("?", text)
    return text if len(text) <= limit else text[:limit] + "..."


def open_table(start: TableStart, progress: Callable[[int], None] | None = None) -> "Utf8Stream":
    """The file from its header on, as a stream the CSV parser can read whatever bytes the file holds; with
    `progress`, each read reports the position reached (for parsers that read the whole file in one call)."""
    handle = open(start.path, "rb")
    handle.seek(start.offset)
    return Utf8Stream(handle, progress)


class Utf8Stream:
    """A binary file read with bytes that are not UTF-8 replaced by U+FFFD.

    pyarrow decodes a row it hands to an invalid-row handler as UTF-8 and fails the whole read when it cannot, so a
    Latin-1 byte in a kernel name on a ragged details page would stop the analysis. ASCII blocks pass through as
    they are; the rest goes through an incremental decoder, so a character split between two blocks stays whole.
    """

    def __init__(self, raw: BinaryIO, progress: Callable[[int], None] | None = None) -> None:
        self.raw = raw
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._progress = progress

    def read(self, size: int = -1) -> bytes:
        chunk = self.raw.read(size)
        if self._progress is not None:
            self._progress(self.raw.tell())
        if chunk.isascii() and not self._decoder.getstate()[0]:
            return chunk
        return self._decoder.decode(chunk, final=not chunk).encode("utf-8")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def tell(self) -> int:
        """Position in the file underneath (what progress reports)."""
        return self.raw.tell()

    @property
    def closed(self) -> bool:
        return self.raw.closed

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> "Utf8Stream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_last_row(start: TableStart, fields: int) -> None:
    """Raise InputError when the file ends in the middle of a row (a cut-off copy, a killed ncu).

    A last line without a line break is cut when it leaves a quote open or has fewer than `fields` fields (what a
    row needs to be read); a complete row that merely lacks the final line break is fine.
    """
    size = start.path.stat().st_size
    with open(start.path, "rb") as handle:
        handle.seek(max(start.offset, size - _TAIL_BYTES))
        tail = handle.read()
    if not tail or tail.endswith((b"\n", b"\r")):
        return
    cut = max(tail.rfind(b"\n"), tail.rfind(b"\r"))
    if cut < 0 and size - len(tail) == start.offset:
        raise InputError(start.path, "the ncu table has a header but no rows (the file ends on the header line; "
                                     "was it cut off?)")
    line = tail[cut + 1:].decode("utf-8", errors="replace")
    if line.count('"') % 2:
        raise InputError(start.path, "the file ends in the middle of a row (an unclosed quote on the last line): "
                                     "it was cut off; export it again")
    try:
        got = len(next(csv.reader([line]), []))
    except csv.Error:
        got = 0
    if got < fields:
        raise InputError(start.path, f"the file ends in the middle of a row (the last line has {got} of the {fields} "
                                     "fields a row needs): it was cut off; export it again")


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
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b'"\x00I\x00D\x00"\x00,' in head[:1 << 20]:
        return ("this is UTF-16 text (what Windows PowerShell's > writes), not UTF-8: let ncu write the file "
                "(ncu --csv --log-file run.csv ...) or save it as UTF-8")
    if _NVPROF_RE.search(head):
        return "this is an nvprof export, which ncu-roofline does not support (profile with Nsight Compute: ncu --csv)"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("==ERROR==")]
    prof = [line for line in lines if line.startswith("==PROF==") or line.startswith("==WARNING==")]
    if errors:
        return f"no kernels were profiled; ncu said: {printable(errors[0])}"
    if prof:
        return "no kernels were profiled: the file holds only ncu's ==PROF== messages and no table"
    if head.startswith(b"NVR\x00"):
        return "this is a binary Nsight Compute report that could not be read as one"
    if b"\x00" in head[:4096]:
        return "this is a binary file, not an ncu --csv export or .ncu-rep report"
    return 'no ncu table found (expected a header line starting with "ID", from ncu --csv)'
