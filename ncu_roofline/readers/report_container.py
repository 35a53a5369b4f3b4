"""The Nsight Compute report container: NVR blocks, protobuf records and zstd frames, walked without NVIDIA's
wheel.

What the wheel does not do, this module does itself by walking the file's block structure first:

* **Truncation and corruption.** `load_report` never raises on a bad file: a truncated report silently loads
  the launches that survived (a copy cut at 90 % still shows all 3 launches of a 3-launch report), random bytes
  load as an empty report. So before loading, the NVR container is walked: `NVR\\0`, u32 length + file header,
  then blocks of [u32 length + BlockHeader protobuf (1: sources, 2: results, 5: payload size, 6: process)
  + payload of (u32 length + entry) * (sources + results)]. Every length must fit, the payload sizes must add
  up, the file must end exactly at a block boundary. Fuzzing (480 bit-flipped, zeroed and truncated copies of the
  samples) never crashed or hung `ncu_report`; only Python-level exceptions (a garbled metric name) appeared,
  and those are turned into `InputError` too.
* **Process id and name.** The wheel does not expose them. Each result entry starts with its process id
  (field 1), mangled / function / demangled names (5 / 6 / 7); each block header carries the process
  (id, host, executable path). They are used only when the walk's results match the wheel's actions one to one
  by mangled name. `process_name` is the executable's base name, as ncu's CSV prints it.
* **`.ncu-repz`** is a zstd-compressed `.ncu-rep`; the wheel picks the decoder by the file *extension*, so a
  report whose name does not match its content is loaded through a temporary link with the right extension.
  The container walk reads the decompressed stream from the `zstandard` module or the `zstd` tool when either is
  there; otherwise only the zstd frame structure is checked (truncation is still caught) and the process
  columns stay null.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Iterator

from ..core.errors import InputError

NVR_MAGIC = b"NVR\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZSTD_SKIPPABLE = range(0x184D2A50, 0x184D2A60)
# How far a .ncu-repz may inflate: 1000 times its size (real reports compress 15-45 times at zstd -19) or 256 MiB,
# whichever is larger, never beyond 16 GiB; NCU_ROOFLINE_MAX_REPORT_BYTES=N replaces the rule with N bytes.
MAX_BYTES_VARIABLE = "NCU_ROOFLINE_MAX_REPORT_BYTES"
INFLATE_RATIO, INFLATE_FLOOR_BYTES, INFLATE_CEILING_BYTES = 1000, 256 << 20, 16 << 30

# 10 grid-ish dims, 11 block dims. Stop parsing a record at the first field above this.
_LAST_RESULT_FIELD = 11
_RESULT_HEAD_BYTES = 1 << 16
_MAX_HEADER_BYTES = 1 << 28


def looks_like_ncu_rep(head: bytes) -> bool:
    """True when the first bytes of a file are those of an Nsight Compute report.

    `.ncu-rep` and legacy `.nsight-cuprof-report` files start with `NVR\\0`; `.ncu-repz` files are zstd frames
    (magic `28 b5 2f fd`) whose content is such a report. A zstd frame cannot be checked further from a few bytes;
    `read_ncu_rep` refuses one that does not hold a report.
    """
    return head[:4] == NVR_MAGIC or head[:4] == ZSTD_MAGIC


# ---------------------------------------------------------------------------------------------------------------
# Container walk
# ---------------------------------------------------------------------------------------------------------------

class _Truncated(Exception):
    pass


class _Corrupt(Exception):
    pass


class _TooLarge(Exception):
    """The decompressed stream passed the size limit."""


class _NotReport(Exception):
    pass


@dataclass
class _Result:
    """One profiling result as the container walk read it: the process, the kernel's names, the launch dims."""

    pid: int | None = None
    mangled: str | None = None
    function: str | None = None
    demangled: str | None = None
    dims10: tuple[int, ...] | None = None
    dims11: tuple[int, ...] | None = None


@dataclass
class ReportLayout:
    """What the container walk found. `walked` is False for a `.ncu-repz` that could not be decompressed here
    (frame structure checked only): then `results` and `processes` are empty."""

    compressed: bool
    walked: bool
    results: list[_Result] = field(default_factory=list)
    processes: dict[int, tuple[str, str]] = field(default_factory=dict)  # pid -> (host, executable path)
    commands: list[str] = field(default_factory=list)  # the ncu command lines of the session details
    blocks: int = 0

    @property
    def n_results(self) -> int:
        return len(self.results)


class _Source:
    """Sequential reader over a file or a pipe that raises `_Truncated` on a short read."""

    def __init__(self, handle: IO[bytes], size: int | None) -> None:
        self.handle, self.size, self.pos, self._peek = handle, size, 0, b""

    def read(self, n: int) -> bytes:
        if n < 0 or (self.size is not None and self.pos + n > self.size):
            raise _Truncated(self.pos)
        parts, need = [self._peek[:n]], n - len(self._peek[:n])
        self._peek = self._peek[n:]
        while need:
            chunk = self.handle.read(min(need, 1 << 20))  # a garbage length must not allocate gigabytes
            if not chunk:
                raise _Truncated(self.pos)
            parts.append(chunk)
            need -= len(chunk)
        self.pos += n
        return b"".join(parts)

    def skip(self, n: int) -> None:
        if self.size is not None and not self._peek:
            if n < 0 or self.pos + n > self.size:
                raise _Truncated(self.pos)
            self.handle.seek(n, os.SEEK_CUR)
            self.pos += n
            return
        while n:
            step = min(n, 1 << 20)
            self.read(step)
            n -= step

    def at_end(self) -> bool:
        if self.size is not None and not self._peek:
            return self.pos >= self.size
        if not self._peek:
            self._peek = self.handle.read(1)
        return not self._peek

    def u32(self) -> int:
        return struct.unpack("<I", self.read(4))[0]


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise _Corrupt("bad varint")
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(buf: bytes, stop_after: int | None = None) -> Iterator[tuple[int, int, object]]:
    """Top-level protobuf fields (number, wire type, value). With `stop_after`, stops quietly at the first field
    numbered above it or where the buffer (a record's head) ends."""
    i = 0
    while i < len(buf):
        try:
            key, i = _varint(buf, i)
            number, wire = key >> 3, key & 7
            if stop_after is not None and number > stop_after:
                return
            if wire == 0:
                value, i = _varint(buf, i)
            elif wire == 1:
                value, i = buf[i:i + 8], i + 8
            elif wire == 5:
                value, i = buf[i:i + 4], i + 4
            elif wire == 2:
                length, i = _varint(buf, i)
                value, i = buf[i:i + length], i + length
            else:
                raise _Corrupt(f"bad protobuf wire type {wire}")
            if i > len(buf):
                raise _Corrupt("protobuf field runs past its record")
        except _Corrupt:
            if stop_after is not None:
                return
            raise
        yield number, wire, value


def _text(value: object) -> str:
    return bytes(value).decode("utf-8", errors="replace") if isinstance(value, (bytes, bytearray)) else ""


def _dims(value: object) -> tuple[int, ...] | None:
    if not isinstance(value, (bytes, bytearray)):
        return None
    got = {n: v for n, w, v in _fields(bytes(value), stop_after=3) if w == 0}
    return tuple(int(got.get(k, 0)) for k in (1, 2, 3))


def _parse_result(head: bytes) -> _Result:
    result = _Result()
    for number, wire, value in _fields(head, stop_after=_LAST_RESULT_FIELD):
        if number == 1 and wire == 0:
            result.pid = int(value)
        elif number in (5, 6, 7) and wire == 2:
            setattr(result, {5: "mangled", 6: "function", 7: "demangled"}[number], _text(value))
        elif number in (10, 11) and wire == 2:
            setattr(result, f"dims{number}", _dims(value))
    return result


def _walk_nvr(src: _Source, layout: ReportLayout) -> None:
    if src.read(4) != NVR_MAGIC:
        raise _NotReport("no NVR header")
    length = src.u32()
    if not 0 < length <= _MAX_HEADER_BYTES:
        raise _Corrupt(f"implausible file header length {length}")
    for _ in _fields(src.read(length)):
        pass
    while not src.at_end():
        first = b""
        start = src.pos
        try:
            length = src.u32()
            if not 0 < length <= _MAX_HEADER_BYTES:
                raise _Corrupt(f"block {layout.blocks} has an implausible header length {length}")
            first = src.read(1)
            header = first + src.read(length - 1)
        except _Truncated:
            # Every block so far is whole, and what follows is too short for its own length, or is not a block
            # header (which starts with field 1, tag 0x08): bytes appended to a report, not a block cut mid-way.
            if layout.blocks == 0 or (src.pos - start > 4 and first == b"\x08"):
                raise
            extra = f"{src.size - start} byte(s)" if src.size is not None else "bytes"
            raise _Corrupt(f"{extra} after the last complete block (block {layout.blocks - 1}) that do not start "
                           "another block: data appended to the report") from None
        info: dict[int, object] = {}
        for number, _wire, value in _fields(header):
            info.setdefault(number, value)
        n_sources, n_results, payload = (int(info.get(k, 0)) if isinstance(info.get(k, 0), int) else -1
                                         for k in (1, 2, 5))
        if min(n_sources, n_results, payload) < 0:
            raise _Corrupt(f"block {layout.blocks} has a malformed header")
        if isinstance(info.get(3), (bytes, bytearray)):  # session details: field 11 is the ncu command line
            command = next((_text(v) for n, _w, v in _fields(bytes(info[3])) if n == 11), "")
            if command and command not in layout.commands:
                layout.commands.append(command)
        if isinstance(info.get(6), (bytes, bytearray)):
            proc = {n: v for n, _w, v in _fields(bytes(info[6]))}
            if isinstance(proc.get(1), int):
                layout.processes.setdefault(int(proc[1]), (_text(proc.get(2)), _text(proc.get(3))))
        used = 0
        for index in range(n_sources + n_results):
            length = src.u32()
            used += 4 + length
            if used > payload:
                raise _Corrupt(f"block {layout.blocks}: entries overrun the payload size")
            if index < n_sources:
                src.skip(length)
            else:
                head = src.read(min(length, _RESULT_HEAD_BYTES))
                src.skip(length - len(head))
                layout.results.append(_parse_result(head))
        if used != payload:
            raise _Corrupt(f"block {layout.blocks}: payload size {payload} but entries use {used}")
        layout.blocks += 1


def decompressed_limit(compressed_bytes: int) -> int:
    """The most bytes a `.ncu-repz` of `compressed_bytes` may decompress to (see MAX_BYTES_VARIABLE)."""
    text = os.environ.get(MAX_BYTES_VARIABLE, "").strip()
    if text:
        try:
            limit = int(text)
        except ValueError:
            limit = -1
        if limit < 1:
            raise InputError(None, f"{MAX_BYTES_VARIABLE}={text!r}: expected a whole number of bytes, at least 1")
        return limit
    return min(INFLATE_CEILING_BYTES, max(INFLATE_FLOOR_BYTES, INFLATE_RATIO * compressed_bytes))


def _too_large(compressed_bytes: int, limit: int, declared: int | None = None) -> str:
    said = f"declares {declared:,} bytes decompressed" if declared is not None else \
        f"decompresses to more than {limit:,} bytes"
    rule = f"the limit is {limit:,} bytes" if os.environ.get(MAX_BYTES_VARIABLE, "").strip() else \
        f"the limit is {limit:,} bytes: {INFLATE_RATIO} times its {compressed_bytes:,} bytes, at least 256 MiB"
    return f"refusing a .ncu-repz that {said} ({rule}; set {MAX_BYTES_VARIABLE} to allow more)"


class _Capped:
    """A decompressed stream that raises `_TooLarge` once more than `limit` bytes came out of it."""

    def __init__(self, handle: IO[bytes], limit: int) -> None:
        self.handle, self.limit, self.count = handle, limit, 0

    def read(self, n: int = -1) -> bytes:
        chunk = self.handle.read(min(n, self.limit + 1 - self.count) if n >= 0 else self.limit + 1 - self.count)
        self.count += len(chunk)
        if self.count > self.limit:
            raise _TooLarge()
        return chunk


def _check_zstd_frames(handle: IO[bytes], size: int) -> int | None:
    """Walk zstd frame and block headers without decompressing: catches truncation and garbage. Returns the
    decompressed size the frames declare (None when one does not say)."""
    src = _Source(handle, size)
    frames, declared = 0, 0
    while not src.at_end():
        magic = src.u32()
        if magic in _ZSTD_SKIPPABLE:
            src.skip(src.u32())
            continue
        if magic != 0xFD2FB528:
            raise _Corrupt("not a zstd frame")
        fhd = src.read(1)[0]
        single_segment, has_checksum = bool(fhd & 0x20), bool(fhd & 0x04)
        dict_bytes = (0, 1, 2, 4)[fhd & 0x03]
        fcs_bytes = (0 if not single_segment else 1, 2, 4, 8)[fhd >> 6]
        src.skip((0 if single_segment else 1) + dict_bytes)
        if fcs_bytes:
            content = int.from_bytes(src.read(fcs_bytes), "little") + (256 if fcs_bytes == 2 else 0)
            declared = None if declared is None else declared + content
        else:
            declared = None
        while True:
            raw = src.read(3)
            block = raw[0] | raw[1] << 8 | raw[2] << 16
            last, kind, length = block & 1, (block >> 1) & 3, block >> 3
            if kind == 3:
                raise _Corrupt("reserved zstd block type")
            src.skip(1 if kind == 1 else length)
            if last:
                break
        if has_checksum:
            src.skip(4)
        frames += 1
    if not frames:
        raise _Corrupt("empty zstd stream")
    return declared


@contextlib.contextmanager
def _decompressed(path: Path) -> Iterator[tuple[IO[bytes], Callable[[], str | None]] | None]:
    """A stream of the decompressed report and a function that reports a decoder error after the walk,
    or None when neither the `zstandard` module nor the `zstd` tool is available."""
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        zstandard = None
    if zstandard is not None:
        with open(path, "rb") as raw:
            reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
            yield reader, lambda: None
        return
    tool = shutil.which("zstd")
    if tool is None:
        yield None
        return
    proc = subprocess.Popen([tool, "-dcq", "--", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        def error() -> str | None:
            proc.stdout.read()
            err = proc.stderr.read().decode(errors="replace").strip().splitlines()
            return (err[-1] if err else "zstd failed") if proc.wait() != 0 else None
        yield proc.stdout, error
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def scan_report(path: Path) -> ReportLayout:
    """Walk the report container; raise `InputError` for a file that is not a report, truncated or corrupt."""
    path = Path(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(4)
            if head == NVR_MAGIC:
                handle.seek(0)
                layout = ReportLayout(compressed=False, walked=True)
                src = _Source(handle, size)
                try:
                    _walk_nvr(src, layout)
                except _Truncated:
                    raise InputError(path, f"truncated Nsight Compute report (the data ends inside block "
                                           f"{layout.blocks}, at {size} bytes)") from None
                return layout
            if head != ZSTD_MAGIC:
                raise InputError(path, "not an Nsight Compute report (no NVR header)")
            handle.seek(0)
            try:
                declared = _check_zstd_frames(handle, size)
            except _Truncated:
                raise InputError(path, "truncated .ncu-repz report: the zstd stream ends early") from None
        limit = decompressed_limit(size)
        if declared is not None and declared > limit:  # refused before a byte is decompressed
            raise InputError(path, _too_large(size, limit, declared))
        layout = ReportLayout(compressed=True, walked=False)
        with _decompressed(path) as stream:
            if stream is None:
                return layout
            reader, error = stream
            layout.walked = True
            try:
                _walk_nvr(_Source(_Capped(reader, limit), None), layout)
            except _TooLarge:
                raise InputError(path, _too_large(size, limit)) from None
            except _Truncated:
                problem = error()
                raise InputError(path, "truncated .ncu-repz report" + (f" ({problem})" if problem else
                                 f": the report ends inside block {layout.blocks}")) from None
            problem = error()
            if problem:
                raise InputError(path, f"corrupt .ncu-repz report ({problem})")
        return layout
    except _NotReport:
        raise InputError(path, "not an Nsight Compute report (the zstd stream holds no NVR header)") from None
    except _Corrupt as exc:
        raise InputError(path, f"corrupt Nsight Compute report ({exc})") from None
    except OSError as exc:
        raise InputError(path, f"cannot read the report: {exc.strerror or exc}") from None
    except Exception as exc:  # a decoder error or anything else unforeseen in foreign bytes
        if isinstance(exc, InputError):
            raise
        raise InputError(path, f"corrupt Nsight Compute report ({_one_line(exc)})") from None


# ---------------------------------------------------------------------------------------------------------------
# Loading through ncu_report


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
