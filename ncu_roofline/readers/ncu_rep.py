"""Nsight Compute report files (`.ncu-rep`, `.ncu-repz`, legacy `.nsight-cuprof-report`) into a LaunchTable.

Metric values come from NVIDIA's `ncu-report` wheel (`ncu_report.load_report`); the reader walks every range and
every action, one row per action, `launch_id` = the action's running index in the file.

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

Identity choices:

* `kernel_name` and `kernel_demangled` are both the demangled name with parameters
  (`IAction.NameBase_DEMANGLED`), which is what `ncu --csv` prints by default (`--print-kernel-base demangled`),
  so a kernel reads the same from a CSV export and from its report. Compiler-generated names without a
  demangled form (OpenACC) fall back to the function, then the mangled name. The function-base name
  (`rms_norm_matrix_kernel`) and the mangled name are passed to `finish_launch_table` as `kernel_function` and
  `kernel_mangled`; they appear as columns only if the LaunchTable contract gains those names.
* `grid` / `block` from `launch__grid_dim_{x,y,z}` / `launch__block_dim_{x,y,z}`, formatted `"(x, y, z)"`. Reports
  from ncu 2019-2020 lack those metrics: there the dims come from the result record, accepted only when their
  product equals the report's own `launch__grid_size` / `launch__block_size`.
* `nvtx_range`: for each NVTX domain with open push/pop ranges, the stack outermost first joined by `/`
  (`outer/inner`), prefixed `domain@` for a named domain; start/end ranges follow as `domain@name`; several parts
  are joined by `;`. Null when the report holds no NVTX state or no open range.
* Reports of GPUs older than Volta (CC < 7.0; Pascal 6.x in practice) are refused: their metric names
  (`tex__t_bytes_*`, `sass__inst_executed_*`) are not the ones any roofline definition uses.

Values: numeric metrics only (string metrics never become columns; `device__attribute_display_name` becomes
`device_name`), the aggregate value of instanced metrics (an instanced metric without one is left out), integer
kinds read with `as_uint64()`. Units from `IMetric.unit()` are turned into base units with `unit_factor`
(`gpu__time_duration.sum` in `ns` -> seconds; `hz`, `byte/s` stay), except for `derived__*` metrics and any
`*.peak_sustained*` metric, whose `unit()` is empty or wrong (`byte` for a per-second rate): their raw value is kept,
which is what Nsight Compute's own section expressions use (per-cycle peaks, bytes per second). A unit that
`unit_factor` does not know (`branches`, `sample`: plain counts) keeps its raw value. Nothing is derived here.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Iterator

import numpy as np
import pandas as pd

from ..errors import InputError
from ..launch_table import finish_launch_table
from ..units import unit_factor

NVR_MAGIC = b"NVR\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZSTD_SKIPPABLE = range(0x184D2A50, 0x184D2A60)

MISSING_WHEEL = ("reading .ncu-rep files needs NVIDIA's ncu-report package: "
                 "pip install 'ncu-roofline[ncu-rep]' (or put ncu on PATH)")
PASCAL_REFUSED = "Pascal (CC 6.x) reports use pre-Volta metric names that ncu-roofline does not support"
NCU_IMPORT_TIMEOUT_S = 1800

_WORKLOAD_TYPES = {  # IAction.WorkloadType_* value -> name; filled lazily from the wheel's constants
    "WorkloadType_KERNEL": "kernel",
    "WorkloadType_GRAPH": "graph",
    "WorkloadType_RANGE": "range",
    "WorkloadType_CMDLIST": "cmdlist",
    "WorkloadType_SUBGRID_SCHEDULE": "subgrid_schedule",
}
# Result-record fields read by the container walk (ProfileResult): 1 pid, 5 mangled, 6 function, 7 demangled,
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


class _NotReport(Exception):
    pass


@dataclass
class _Result:
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


def _check_zstd_frames(handle: IO[bytes], size: int) -> None:
    """Walk zstd frame and block headers without decompressing: catches truncation and garbage."""
    src = _Source(handle, size)
    frames = 0
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
        src.skip((0 if single_segment else 1) + dict_bytes + fcs_bytes)
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
                _check_zstd_frames(handle, size)
            except _Truncated:
                raise InputError(path, "truncated .ncu-repz report: the zstd stream ends early") from None
        layout = ReportLayout(compressed=True, walked=False)
        with _decompressed(path) as stream:
            if stream is None:
                return layout
            reader, error = stream
            layout.walked = True
            try:
                _walk_nvr(_Source(reader, None), layout)
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
# ---------------------------------------------------------------------------------------------------------------

def _import_ncu_report():  # a seam for tests
    import ncu_report  # type: ignore[import-not-found]

    return ncu_report


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


@contextlib.contextmanager
def _loadable(path: Path, compressed: bool) -> Iterator[str]:
    """The wheel chooses zstd or plain by the extension `.ncu-repz`: link under the right name when they differ."""
    named_z = path.name.endswith(".ncu-repz")
    if named_z == compressed:
        yield str(path)
        return
    with tempfile.TemporaryDirectory(prefix="ncu-roofline-") as tmp:
        link = Path(tmp) / ("report.ncu-repz" if compressed else "report.ncu-rep")
        try:
            link.symlink_to(path.resolve())
        except OSError:
            shutil.copyfile(path, link)
        yield str(link)


@contextlib.contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """The wheel's protobuf layer logs parse errors of damaged results straight to file descriptor 2
    ("E0000 ... Can't parse message of type NV.Profiler.Messages.ProfileResult"); bad input must come out as one
    InputError line, so the descriptor is pointed at a scratch file while the wheel runs."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def _actions(ctx) -> list:
    actions = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        if rng is None:
            continue
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            if action is not None:
                actions.append(action)
    return actions


def _load(module, path: Path, load_path: str) -> tuple[object, list]:
    try:
        ctx = module.load_report(load_path)
        if ctx is None:
            raise InputError(path, "ncu_report could not open the report")
        return ctx, _actions(ctx)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(path, f"ncu_report could not read the report: {_one_line(exc)}") from None


def _metric(action, name: str):
    try:
        return action.metric_by_name(name)
    except Exception:
        return None


def _number(action, name: str) -> int | float | None:
    metric = _metric(action, name)
    if metric is None:
        return None
    try:
        kind = metric.kind()
        if kind in (metric.ValueKind_UINT32, metric.ValueKind_UINT64):
            return int(metric.as_uint64())
        if kind in (metric.ValueKind_FLOAT, metric.ValueKind_DOUBLE):
            value = float(metric.as_double())
            return None if np.isnan(value) else value
    except Exception:
        return None
    return None


def _string(action, name: str) -> str | None:
    metric = _metric(action, name)
    if metric is None:
        return None
    try:
        value = metric.as_string()
    except Exception:
        return None
    return value or None


def _name(module, action) -> tuple[str, str, str]:
    """(display name, function-base name, mangled name)."""
    base = module.IAction
    names = {}
    for key, which in (("demangled", base.NameBase_DEMANGLED), ("function", base.NameBase_FUNCTION),
                       ("mangled", base.NameBase_MANGLED)):
        try:
            names[key] = action.name(which) or ""
        except Exception:
            names[key] = ""
    display = names["demangled"] or names["function"] or names["mangled"]
    return display, names["function"] or display, names["mangled"] or display


def _triple(values: list) -> str | None:
    if any(v is None for v in values):
        return None
    return "(" + ", ".join(str(int(v)) for v in values) + ")"


def _launch_dims(action, result: _Result | None) -> tuple[str | None, str | None, str]:
    grid = _triple([_number(action, f"launch__grid_dim_{a}") for a in "xyz"])
    block = _triple([_number(action, f"launch__block_dim_{a}") for a in "xyz"])
    if (grid and block) or result is None:
        return grid, block, ""
    # ncu 2019-2020 reports: no per-axis metrics. The result record holds the block dims (field 11) and, in those
    # versions, the global thread counts per axis (field 10); accept them only where the report's own sizes agree.
    grid_size, block_size = _number(action, "launch__grid_size"), _number(action, "launch__block_size")
    b, g = result.dims11, result.dims10
    if block is None and b and block_size is not None and int(np.prod(b)) == block_size:
        block = _triple(list(b))
    if grid is None and g and grid_size is not None:
        if int(np.prod(g)) == grid_size:
            grid = _triple(list(g))
        elif b and all(x and y and x % y == 0 for x, y in zip(g, b)) \
                and int(np.prod([x // y for x, y in zip(g, b)])) == grid_size:
            grid = _triple([x // y for x, y in zip(g, b)])
    return grid, block, "" if (grid and block) else "launch dimensions not in the report"


def _nvtx_range(action) -> str | None:
    try:
        state = action.nvtx_state()
        if state is None:
            return None
        parts = []
        for domain_id in state.domains():
            domain = state.domain_by_id(domain_id)
            if domain is None:
                continue
            name = domain.name() or ""
            prefix = "" if (not name or name == "<default domain>") else f"{name}@"
            stack = []
            for index in range(len(domain.push_pop_ranges())):
                rng = domain.push_pop_range(index)
                if rng is not None and rng.name():
                    stack.append(rng.name())
            if stack:
                parts.append(prefix + "/".join(stack))
            parts.extend(prefix + n for n in domain.start_end_ranges() if n)
        return ";".join(parts) or None
    except Exception:
        return None


def _workload_type(module, action) -> str | None:
    try:
        value = action.workload_type()
    except Exception:
        return None
    for attribute, label in _WORKLOAD_TYPES.items():
        if getattr(module.IAction, attribute, object()) == value:
            return label
    return str(value)


def _keeps_raw_value(name: str) -> bool:
    """`unit()` is empty or wrong for these; their stored value is what Nsight Compute's sections use."""
    return name.startswith("derived__") or ".peak_sustained" in name


def _scale(factor: float | None) -> tuple[float, float]:
    """(multiply, divide) for a unit factor: dividing by an exact power of ten (1e9 for `ns`) keeps values
    correctly rounded, where multiplying by the inexact 1e-9 would not. An unknown unit keeps the raw value."""
    if factor is None or factor == 1.0:
        return 1.0, 1.0
    if factor < 1.0:
        inverse = 1.0 / factor
        if abs(inverse - round(inverse)) <= 1e-9 * inverse:
            return 1.0, float(round(inverse))
    return factor, 1.0


class _MetricReader:
    """Reads the wanted numeric metrics of actions into columns, caching per-name decisions (`unit()` costs
    ~45 us a call; a value ~5 us)."""

    def __init__(self, n: int, wanted: Callable[[str], bool] | None) -> None:
        self.n, self.wanted = n, wanted
        self.columns: dict[str, np.ndarray] = {}
        self._want: dict[str, bool] = {}
        self._scale: dict[str, tuple[float, float]] = {}
        self._skip: set[str] = set()

    def read(self, row: int, action) -> list[str]:
        problems = []
        for name in action.metric_names():
            want = self._want.get(name)
            if want is None:
                want = self._want[name] = bool(self.wanted(name)) if self.wanted else True
            if not want or name in self._skip:
                continue
            try:
                value = self._value(action.metric_by_name(name), name)
            except Exception as exc:
                problems.append(f"{name}: {_one_line(exc)}")
                continue
            if value is None:
                continue
            column = self.columns.get(name)
            if column is None:
                column = self.columns[name] = np.full(self.n, np.nan)
            column[row] = value
        return problems

    def _value(self, metric, name: str) -> float | None:
        if metric is None:
            return None
        kind = metric.kind()
        if kind == metric.ValueKind_STRING:
            self._skip.add(name)  # string metrics never become columns
            return None
        if kind in (metric.ValueKind_UINT32, metric.ValueKind_UINT64):
            raw: float = float(metric.as_uint64())
        elif kind in (metric.ValueKind_FLOAT, metric.ValueKind_DOUBLE):
            raw = float(metric.as_double())
        else:  # ANY / UNKNOWN: no value (e.g. a derived metric whose inputs were not collected)
            return None
        if not metric.has_value():  # instanced metric without an aggregate value
            return None
        scale = self._scale.get(name)
        if scale is None:
            scale = self._scale[name] = _scale(1.0 if _keeps_raw_value(name) else unit_factor(metric.unit() or ""))
        multiply, divide = scale
        return raw * multiply / divide


def read_ncu_rep(path: Path, *, wanted: Callable[[str], bool] | None = None,
                 progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Read every launch (action) of an Nsight Compute report into a LaunchTable.

    `wanted(name)` selects the metric columns (default: every numeric metric). `progress`, if given, is called
    with an estimate of the bytes read so far. Raises `InputError` for a file that is not a report, is truncated
    or corrupt, or comes from a pre-Volta GPU; without the `ncu-report` wheel, falls back to `ncu --import` when
    ncu is on PATH.
    """
    path = Path(path)
    layout = scan_report(path)
    try:
        module = _import_ncu_report()
    except ImportError:
        return _read_with_ncu_cli(path, wanted)
    with _loadable(path, layout.compressed) as load_path, _quiet_native_stderr():
        ctx, actions = _load(module, path, load_path)
        n = len(actions)
        if n < layout.n_results:
            raise InputError(path, f"corrupt Nsight Compute report: ncu_report could read {n} of its "
                                   f"{layout.n_results} results")
        if n == 0:
            raise InputError(path, "the report holds no profiling results" if layout.walked else
                             "not an Nsight Compute report (the zstd stream holds no results)")
        try:
            return _build(module, path, layout, actions, wanted, progress)
        except InputError:
            raise
        except Exception as exc:
            raise InputError(path, f"corrupt Nsight Compute report: {_one_line(exc)}") from None


def _build(module, path: Path, layout: ReportLayout, actions: list, wanted, progress) -> pd.DataFrame:
    n = len(actions)
    size = path.stat().st_size
    common_note = ""
    results: list[_Result | None] = [None] * n
    if layout.walked and layout.n_results == n:
        mangled = [_name(module, a)[2] for a in actions]
        if all(r.mangled in (None, "", m) for r, m in zip(layout.results, mangled)):
            results = list(layout.results)
        else:
            common_note = "process ids not matched: result order differs from ncu_report's"
    elif layout.walked:
        common_note = f"ncu_report read {n} actions from {layout.n_results} results: process ids not matched"
    elif layout.compressed:
        common_note = "process id/name not read (no zstd decoder for the .ncu-repz)"

    identity: dict[str, list] = {k: [] for k in (
        "kernel_name", "kernel_demangled", "kernel_function", "kernel_mangled", "process_id", "process_name",
        "device_name", "compute_capability", "context", "stream", "grid", "block", "workload_type", "nvtx_range",
        "reader_notes")}
    metrics = _MetricReader(n, wanted)
    step = max(1, n // 100)
    for row, action in enumerate(actions):
        display, function, mangled = _name(module, action)
        major = _number(action, "device__attribute_compute_capability_major")
        minor = _number(action, "device__attribute_compute_capability_minor")
        if major is not None and major < 7:
            cc = f"{int(major)}.{int(minor or 0)}"
            raise InputError(path, PASCAL_REFUSED if int(major) == 6 else
                             f"CC {cc} reports use pre-Volta metric names that ncu-roofline does not support")
        result = results[row]
        grid, block, dims_note = _launch_dims(action, result)
        pid = result.pid if result is not None else None
        exe = layout.processes.get(pid) if pid is not None else None
        identity["kernel_name"].append(display)
        identity["kernel_demangled"].append(display)
        identity["kernel_function"].append(function)
        identity["kernel_mangled"].append(mangled)
        identity["process_id"].append(pid if pid is not None else pd.NA)
        identity["process_name"].append(os.path.basename(exe[1]) if exe and exe[1] else pd.NA)
        identity["device_name"].append(_string(action, "device__attribute_display_name") or pd.NA)
        identity["compute_capability"].append(
            float(f"{int(major)}.{int(minor or 0)}") if major is not None else pd.NA)
        for column, metric in (("context", "launch__context_id"), ("stream", "launch__stream_id")):
            value = _number(action, metric)
            identity[column].append(int(value) if value is not None else pd.NA)
        identity["grid"].append(grid if grid is not None else pd.NA)
        identity["block"].append(block if block is not None else pd.NA)
        identity["workload_type"].append(_workload_type(module, action) or pd.NA)
        identity["nvtx_range"].append(_nvtx_range(action) or pd.NA)
        problems = metrics.read(row, action)
        notes = [x for x in (common_note, dims_note) if x]
        if problems:
            notes.append(f"{len(problems)} metric(s) unreadable, e.g. {problems[0]}")
        identity["reader_notes"].append("; ".join(notes))
        if progress is not None and (row % step == 0 or row == n - 1):
            progress(int(size * (row + 1) / n))

    ids: dict[str, object] = dict(identity)
    ids["source_file"] = str(path)
    ids["launch_id"] = list(range(n))
    ids["launches"] = 1
    return finish_launch_table(ids, dict(sorted(metrics.columns.items())), n)


def _read_with_ncu_cli(path: Path, wanted: Callable[[str], bool] | None) -> pd.DataFrame:
    ncu = shutil.which("ncu")
    if ncu is None:
        raise InputError(path, MISSING_WHEEL)
    from .csv_export import read_csv_export

    with tempfile.TemporaryDirectory(prefix="ncu-roofline-") as tmp:
        export = Path(tmp) / "export.csv"
        try:
            with open(export, "wb") as out:
                proc = subprocess.run([ncu, "--import", str(path), "--csv", "--page", "raw",
                                       "--print-units", "base"], stdout=out, stderr=subprocess.PIPE,
                                      timeout=NCU_IMPORT_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise InputError(path, f"ncu --import took longer than {NCU_IMPORT_TIMEOUT_S} s") from None
        except OSError as exc:
            raise InputError(path, f"could not run ncu --import: {exc.strerror or exc}") from None
        if proc.returncode != 0:
            lines = proc.stderr.decode(errors="replace").strip().splitlines()
            raise InputError(path, f"ncu --import failed: {lines[-1] if lines else f'exit {proc.returncode}'}")
        try:
            params = inspect.signature(read_csv_export).parameters
            table = read_csv_export(export, wanted=wanted) if "wanted" in params else read_csv_export(export)
        except InputError as exc:
            raise InputError(path, f"ncu --import output: {exc.message}") from None
    table["source_file"] = pd.Series([str(path)] * len(table), index=table.index, dtype="string")
    return table


# ---------------------------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------------------------

def report_sections(path: Path) -> list[dict[str, list[str]]]:
    """For each launch (index = `launch_id`), the section identifiers in the report and, per section, the names
    its `body_metrics()` lists (in order, without repeats): exactly the inputs of that section's charts."""
    path = Path(path)
    layout = scan_report(path)
    try:
        module = _import_ncu_report()
    except ImportError:
        raise InputError(path, MISSING_WHEEL) from None
    with _loadable(path, layout.compressed) as load_path, _quiet_native_stderr():
        _ctx, actions = _load(module, path, load_path)
        try:
            out = []
            for action in actions:
                sections: dict[str, list[str]] = {}
                for section in action.sections():
                    names = sections.setdefault(section.identifier(), [])
                    for metric in section.body_metrics():
                        if metric is not None and metric.name() not in names:
                            names.append(metric.name())
                out.append(sections)
            return out
        except Exception as exc:
            raise InputError(path, f"corrupt Nsight Compute report: {_one_line(exc)}") from None


def section_body_metrics(path: Path, launch_id: int = 0) -> dict[str, list[str]]:
    """Section identifier -> its `body_metrics()` names, for one launch of the report (default: the first)."""
    sections = report_sections(path)
    if not 0 <= launch_id < len(sections):
        raise InputError(path, f"no launch {launch_id} in the report ({len(sections)} launches)")
    return sections[launch_id]
