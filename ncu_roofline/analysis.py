"""The library's front door: `analyze(paths) -> Analysis`.

read -> derive -> ceilings -> speed of light per launch; kernel groups are sums of their launch rows (group.py),
then ranked. The CLI, notebooks and CI steps all go through here.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

from .core.errors import InputError
from .core.version import __version__
from .core.vocabulary import APP_HEADROOM, KERNEL_IDENTITY, LAUNCH_IDENTITY, LIMITER_COLUMNS, RESULT_COLUMNS
from .pipeline.app_weight import AppWeighting
from .pipeline.by_name import by_name_rows, evaluate_launches
from .pipeline.catalogue import Catalogue, load_catalogue
from .pipeline.ceilings import CeilingOptions, resolve_devices
from .pipeline.derive import Gap
from .pipeline.evaluate import refuse_without_roofline_metrics
from .pipeline.group import filter_nvtx, group_keys, group_launches
from .pipeline.limiter import group_limiters, limiter_settings
from .pipeline.rank import rank_kernels
from .pipeline.run_notes import gap_notes, limiter_notes, nothing_placed_message, unplaced_note
from .pipeline.validity import flag_invalid_values, invalid_value_notes
from .readers import expand_paths, read_inputs

SCHEMA_VERSION = "1"


@dataclass
class InputFile:
    path: str
    sha256: str


@dataclass
class Analysis:
    """Per-launch and per-kernel roofline tables, and what produced them."""

    launches: pd.DataFrame
    kernels: pd.DataFrame
    inputs: list[InputFile]
    options: dict[str, object] = field(default_factory=dict)
    # What the run as a whole has to say (how metric-split parts were aligned, what the capture lacks, why kernels
    # have no speed of light); per-launch problems stay in each row's `status`.
    notes: list[str] = field(default_factory=list)
    # `analyze --points`: the points on this run's roofs, and which kernel group (rank) each one names.
    model_points: pd.DataFrame | None = None
    model_pairs: pd.DataFrame | None = None
    # `analyze --nsys`: the run's totals over Nsight Systems' timeline (pipeline/app_weight.py); the kernel table
    # then carries the app_* columns and is ranked by app_headroom_s.
    app: AppWeighting | None = None
    timeline: InputFile | None = None

    def metadata(self) -> dict[str, str]:
        """File metadata for every artifact: deterministic (no timestamps)."""
        import json

        sources = sorted(set(self.kernels["ceiling_source"].dropna().astype(str))) if len(self.kernels) else []
        return {
            "ncu_roofline.schema_version": SCHEMA_VERSION,
            "ncu_roofline.tool_version": __version__,
            "ncu_roofline.inputs": json.dumps([{"path": f.path, "sha256": f.sha256} for f in self.inputs]),
            "ncu_roofline.ceilings": json.dumps(sources),
            "ncu_roofline.options": json.dumps(self.options, sort_keys=True, default=str),
            "ncu_roofline.notes": json.dumps(self.notes),
            **({"ncu_roofline.nsys": json.dumps({"path": self.timeline.path, "sha256": self.timeline.sha256,
                                                 **self.app.summary(top=20)})} if self.app is not None else {}),
        }

    def chart(self, top: int = 20):
        """The hierarchical roofline as an Altair chart (notebooks display it as is)."""
        from .render.analysis.chart import roofline_chart

        return roofline_chart(self.kernels, self.chart_context(top), model_points=self.model_points,
                              model_pairs=self.model_pairs)

    def chart_context(self, top: int = 20):
        from .render.analysis.chart import ChartContext

        devices = self.kernels["device_name"].dropna().unique().tolist() if len(self.kernels) else []
        sources = self.kernels["ceiling_source"].dropna().unique().tolist() if len(self.kernels) else []
        return ChartContext(gpu=", ".join(sorted(devices)) or str(self.options.get("gpu") or _user_gpu_name(
                                self.options.get("ceilings")) or "unknown GPU"),
                            ceiling_source=", ".join(sorted(sources)) or "none",
                            clock=str(self.options.get("clock", "measured")),
                            inputs=[str(f.path) for f in self.inputs], top=top,
                            timeline=_coverage(self.app))

    @property
    def input_paths(self) -> list[Path]:
        """The files read: outputs are never written over them."""
        return [Path(f.path) for f in self.inputs]

    @property
    def launch_count(self) -> int:
        """Launches in the run (a launch row of a merged capture may stand for several)."""
        return int(self.launches["launches"].sum()) if len(self.launches) else 0

    def write(self, outdir: str | Path, *, formats: Iterable[str] = (), top: int = 20,
              precisions: Iterable[str] = ()) -> list[Path]:
        """Parquet tables and the chart into `outdir` (see render/); one more chart per precision asked for."""
        from .render.analysis.outputs import write_outputs

        return write_outputs(Path(outdir), launches=self.launches, kernels=self.kernels, metadata=self.metadata(),
                             ctx=self.chart_context(top), inputs=self.input_paths, formats=formats,
                             model_points=self.model_points, model_pairs=self.model_pairs,
                             precisions=precisions)

    def json(self, *, top: int | None = None) -> str:
        """The JSON summary (docs/json-schema.md)."""
        from .render.jsonout import analysis_json

        return analysis_json(self.kernels, self.launches, self.metadata(), top=top, model_points=self.model_points,
                             app=self.app.summary(top=top) if self.app is not None else None)

    def markdown(self, *, top: int = 10, chart: str | None = None) -> str:
        """The Markdown summary for CI step summaries and pull-request comments (`chart`: a link to put in it)."""
        from .render.analysis.markdown import analysis_markdown

        return analysis_markdown(self.kernels, self.launches, [f.path for f in self.inputs], top=top,
                                 gpu=self.chart_context().gpu, chart=chart, notes=self.notes,
                                 app=self.app)


def analyze(paths: Iterable[str | Path] | str | Path, *, gpu: str | None = None, ceilings: str | Path | None = None,
            clock: str = "measured", group_by_nvtx: bool = False, group_by_op: bool = False,
            nvtx_include: str | None = None,
            catalogue: Catalogue | None = None, progress: Callable[[int], None] | None = None,
            points: str | Path | None = None, allow_empty: bool = False, kernel: str | None = None,
            exclude: str | None = None, sort: str = "headroom", nsys: str | Path | None = None,
            nsys_device: int | None = None) -> Analysis:
    """Analyse ncu exports or reports: one Analysis for all the inputs together.

    A run in which no kernel can be placed on a roofline (no counters, or no roofs) raises `InputError` saying
    why, unless `allow_empty`: then the tables are returned with every unknown left null.

    `points`: a points file (model/points.py) drawn beside the measured kernels; the kernel table gains the
    model columns (model/match.py). `group_by_op`: kernel groups are PyTorch operators read from
    `emit_nvtx()` ranges (torch_ranges.py), forward and backward apart. `nsys`: Nsight Systems' timeline of the run
    (readers/nsys.py: a cuda_gpu_kern_sum CSV or the SQLite export; `nsys_device`: one GPU of it) weights each
    kernel group by its time over the whole run and ranks by `app_headroom_s` (pipeline/app_weight.py)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    model_input = None
    if points is not None:
        from .model.points import read_points

        model_input = read_points(points)  # a malformed points file fails before large inputs are read
    timeline = None
    if nsys is not None:
        from .readers.nsys import read_timeline

        timeline = read_timeline(nsys, device=nsys_device)  # a bad timeline fails before large inputs are read
    elif nsys_device is not None or sort == "app_headroom":
        raise InputError(None, "--nsys-device and --sort app_headroom need --nsys FILE (the run's timeline)")
    if clock not in {"measured", "max"}:
        raise InputError(None, f"--clock must be 'measured' or 'max', not {clock!r}")
    catalogue = catalogue or load_catalogue()
    # An unknown --gpu fails early, before reading large inputs; its row then stands for every device.
    forced = resolve_devices([], gpu) if gpu else None
    path_notes: list[str] = []
    files = expand_paths(paths, path_notes)
    digests = _start_hashing(files)  # a low-priority thread: the cores the read and the steps after it leave idle
    read = read_inputs(files, catalogue.wants, progress)
    reports = set(read.attrs.get("report_sources", ()))
    reader_notes = [*path_notes, *read.attrs.get("run_notes", ())]
    # metric-split kernels whose launches cannot be aligned: one row of sums each (by_name.py)
    sums = by_name_rows(read.attrs.get("by_name"), catalogue.is_timing)
    if nvtx_include:
        read = filter_nvtx(read, nvtx_include)
        sums = filter_nvtx(sums, nvtx_include) if sums is not None else None
        if read.empty:
            raise InputError(None, f"no launch has an NVTX range matching --nvtx-include {nvtx_include!r}")
    raw = flag_invalid_values(read, catalogue.is_timing)  # impossible values: null, named, out of the totals
    reader_notes += invalid_value_notes(raw if sums is None else pd.concat([raw, sums], ignore_index=True))
    options = _ceiling_options(forced or resolve_devices(raw["device_name"]), gpu, ceilings, clock)
    gaps: list[Gap] = []
    launches, group_rows = evaluate_launches(raw, sums, catalogue, options, gaps)
    if not allow_empty:
        # on the values as read: a file whose only counters are impossible values is analysed and flagged
        refuse_without_roofline_metrics(read if sums is None else pd.concat([read, sums], ignore_index=True),
                                        catalogue, reports)
    launch_table = launches[[c for c in LAUNCH_IDENTITY if c in launches] + list(RESULT_COLUMNS)
                            + list(LIMITER_COLUMNS)]
    launch_table = launch_table.sort_values(["source_file", "launch_id"], kind="stable", ignore_index=True)
    if group_by_op:
        from .pipeline.torch_ranges import group_by_op as relabel_by_op

        kernel_values = group_launches(relabel_by_op(group_rows), group_keys(False))
    else:
        kernel_values = group_launches(group_rows, group_keys(group_by_nvtx))
    kernel_values = group_limiters(kernel_values, catalogue)
    identity = [c for c in KERNEL_IDENTITY if c in kernel_values]
    kernels = rank_kernels(kernel_values[identity + list(RESULT_COLUMNS) + list(LIMITER_COLUMNS)])
    if not allow_empty and len(kernels) and kernels["t_sol_s"].isna().all():
        raise InputError(files[0] if len(files) == 1 else None,
                         nothing_placed_message(kernels, group_rows, _max_clock_hz(raw, catalogue)))
    notes = [*reader_notes, *gap_notes(gaps, reports),
             *limiter_notes(launch_table, reports, limiter_settings().sections)]
    unplaced = unplaced_note(kernels, group_rows, _max_clock_hz(raw, catalogue))
    if unplaced:
        notes.append(unplaced)
    app = None
    if timeline is not None:
        from .pipeline.app_weight import weight_by_timeline

        app = weight_by_timeline(kernels, timeline.kernels)
        kernels = rank_kernels(app.kernels, by=APP_HEADROOM)
        notes += [*timeline.notes, *app.notes]
        sort = "app_headroom" if sort == "headroom" else sort
    if kernel is not None or exclude is not None or sort not in ("headroom", "app_headroom"):
        from .pipeline.select import select_kernels, select_launches  # --kernel/--exclude/--sort

        kernels = select_kernels(kernels, kernel=kernel, exclude=exclude, sort=sort)
        launch_table = select_launches(launch_table, kernels)
    model_points = model_pairs = None
    if model_input is not None:
        from .model.match import match_pairs, model_columns, place_on_run

        model_pairs = match_pairs(model_input, kernels)
        kernels = model_columns(kernels, model_input, model_pairs)
        model_points = place_on_run(model_input, kernels, model_pairs)
    return Analysis(
        launches=launch_table, kernels=kernels,
        inputs=digests(), notes=notes,
        options={"gpu": gpu, "ceilings": str(ceilings) if ceilings else None, "clock": clock,
                 "group_by_nvtx": group_by_nvtx, "nvtx_include": nvtx_include,
                 **({"group_by_op": True} if group_by_op else {}),
                 **({"points": str(points)} if points is not None else {}),
                 **{k: v for k, v in (("kernel", kernel), ("exclude", exclude)) if v is not None},
                 **({"sort": sort} if sort not in ("headroom", "app_headroom") else {}),
                 **({"nsys": str(nsys)} if nsys is not None else {}),
                 **({"nsys_device": nsys_device} if nsys_device is not None else {})},
        model_points=model_points, model_pairs=model_pairs, app=app,
        timeline=InputFile(str(nsys), _sha256(Path(nsys))) if nsys is not None else None,
    )


def _max_clock_hz(raw: pd.DataFrame, catalogue: Catalogue) -> float | None:
    """The export's maximum SM clock (median over launches): it can tell apart GPUs of one compute capability."""
    import numpy as np

    from .pipeline.derive import pick_definition

    values = pick_definition(raw, catalogue.definitions("max_sm_clock_hz")).values
    return float(np.nanmedian(values)) if np.isfinite(values).any() else None


def _user_gpu_name(ceilings: object) -> str | None:
    """The `name` a --ceilings file gives its GPU (titles say it rather than "unknown GPU")."""
    if not ceilings:
        return None
    from .roofs.user_file import load_user_ceilings

    try:
        return load_user_ceilings(Path(str(ceilings))).name
    except InputError:  # read once already; gone since: the title falls back
        return None


def _coverage(app: AppWeighting | None) -> str | None:
    from .render.analysis.timeline import coverage_sentence

    return coverage_sentence(app) if app is not None else None


def _ceiling_options(devices: dict, gpu: str | None, ceilings: str | Path | None, clock: str) -> CeilingOptions:
    """Roof options for this analysis, the table rows of its devices resolved once for launches and groups."""
    if ceilings:
        from .roofs.user_file import load_user_ceilings

        user = load_user_ceilings(Path(ceilings))
        return CeilingOptions(gpu=gpu, user_peaks=user.peaks, user_source=user.source, clock=clock,
                              devices=devices)
    return CeilingOptions(gpu=gpu, clock=clock, devices=devices)


def _start_hashing(files: list[Path]) -> Callable[[], list[InputFile]]:
    """SHA-256 of the inputs in a daemon thread (hashlib lets go of the GIL), at the lowest CPU priority where the
    system allows it: it takes what the parallel CSV parse and the single-threaded steps after it leave idle, not a
    core from the parse (SHA-256 runs at about 1 GB/s here, 12 s at 10^6 launches). A run that fails on bad input
    exits without waiting for it."""
    import threading

    results: list[InputFile] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # Linux: this thread only
        except (AttributeError, OSError):
            pass  # elsewhere, or not allowed: the hash runs at normal priority
        try:
            results.extend(InputFile(str(f), _sha256(f)) for f in files)
        except BaseException as exc:  # raised again in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=work, name="ncu-roofline-sha256", daemon=True)
    thread.start()

    def result() -> list[InputFile]:
        thread.join()
        if errors:
            raise errors[0]
        return results

    return result


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()

