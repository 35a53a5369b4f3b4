"""Nsight Compute report files (`.ncu-rep`, `.ncu-repz`, legacy `.nsight-cuprof-report`) into a LaunchTable.

Metric values come from NVIDIA's `ncu-report` wheel (`ncu_report.load_report`); the reader walks every range and
every action, one row per action, `launch_id` = the action's running index in the file.

The file's container is checked first (`report_container`: truncation, corruption, process ids); without
the wheel, `ncu_import` asks `ncu --import` for a CSV export instead.

Identity choices:

* `kernel_name` and `kernel_demangled` are both the demangled name with parameters
  (`IAction.NameBase_DEMANGLED`), which is what `ncu --csv` prints by default (`--print-kernel-base demangled`),
  so a kernel reads the same from a CSV export and from its report. Compiler-generated names without a
  demangled form (OpenACC) fall back to the function, then the mangled name. The mangled name is
  used only to match the container's result records to the wheel's actions.
* `grid` / `block` from `launch__grid_dim_{x,y,z}` / `launch__block_dim_{x,y,z}`, formatted `"(x, y, z)"`. Reports
  from ncu 2019-2020 lack those metrics: there the dims come from the result record, accepted only when their
  product equals the report's own `launch__grid_size` / `launch__block_size`.
* `nvtx_range`: for each NVTX domain with open push/pop ranges, the stack outermost first joined by `/`
  (`outer/inner`), prefixed `domain@` for a named domain; start/end ranges follow as `domain@name`; several parts
  are joined by `;`. Null when the report holds no NVTX state or no open range.
* Reports of GPUs older than Volta (CC < 7.0; Pascal 6.x in practice) are refused: their metric names
  (`tex__t_bytes_*`, `sass__inst_executed_*`) are not the ones any roofline definition uses.

Values: numeric metrics only (string metrics never become columns; `device__attribute_display_name` becomes
`device_name`), NCU's own rule results in its words (`ncu_rules`, readers/ncu_rules.py), the aggregate
value of instanced metrics (an instanced metric without one is left out), integer
kinds read with `as_uint64()`. Units from `IMetric.unit()` are turned into base units with `unit_factor`
(`gpu__time_duration.sum` in `ns` -> seconds; `hz`, `byte/s` stay), except for `derived__*` metrics and any
`*.peak_sustained*` metric, whose `unit()` is empty or wrong (`byte` for a per-second rate): their raw value is kept,
which is what Nsight Compute's own section expressions use (per-cycle peaks, bytes per second). A unit that
`unit_factor` does not know (`branches`, `sample`: plain counts) keeps its raw value. Nothing is derived here.
"""


from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.launch_table import finish_launch_table
from .columns import DEVICE_NAME_METRIC
from .ncu_import import MISSING_WHEEL, read_with_ncu_import  # noqa: F401 (re-exported)
from .ncu_rules import rule_results
from .report_container import ReportLayout, _one_line, _Result, looks_like_ncu_rep, scan_report  # noqa: F401
from .units import unit_factor

PASCAL_REFUSED = "Pascal (CC 6.x) reports use pre-Volta metric names that ncu-roofline does not support"

_WORKLOAD_TYPES = {  # IAction.WorkloadType_* value -> name; filled lazily from the wheel's constants
    "WorkloadType_KERNEL": "kernel",
    "WorkloadType_GRAPH": "graph",
    "WorkloadType_RANGE": "range",
    "WorkloadType_CMDLIST": "cmdlist",
    "WorkloadType_SUBGRID_SCHEDULE": "subgrid_schedule",
}


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
        return read_with_ncu_import(path, wanted)
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



def _import_ncu_report():  # a seam for tests
    import ncu_report  # type: ignore[import-not-found]

    return ncu_report


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
        "kernel_name", "kernel_demangled", "process_id", "process_name",
        "device_name", "compute_capability", "context", "stream", "grid", "block", "workload_type", "nvtx_range",
        "reader_notes", "ncu_rules")}
    metrics = _MetricReader(n, wanted)
    step = max(1, n // 100)
    for row, action in enumerate(actions):
        display = _name(module, action)[0]
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
        identity["process_id"].append(pid if pid is not None else pd.NA)
        identity["process_name"].append(os.path.basename(exe[1]) if exe and exe[1] else pd.NA)
        identity["device_name"].append(_string(action, DEVICE_NAME_METRIC) or pd.NA)
        identity["compute_capability"].append(
            float(f"{int(major)}.{int(minor or 0)}") if major is not None else pd.NA)
        for column, metric in (("context", "launch__context_id"), ("stream", "launch__stream_id")):
            value = _number(action, metric)
            identity[column].append(int(value) if value is not None else pd.NA)
        identity["grid"].append(grid if grid is not None else pd.NA)
        identity["block"].append(block if block is not None else pd.NA)
        identity["workload_type"].append(_workload_type(module, action) or pd.NA)
        identity["nvtx_range"].append(_nvtx_range(action) or pd.NA)
        identity["ncu_rules"].append(rule_results(action) or pd.NA)
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
    if layout.commands:  # the capture settings its ncu command line set (readers/capture_settings.py)
        from .capture_settings import settings_from_command

        ids.update(settings_from_command(layout.commands[0]))
    return finish_launch_table(ids, dict(sorted(metrics.columns.items())), n)
