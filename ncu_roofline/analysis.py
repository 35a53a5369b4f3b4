"""The library's front door: `analyze(paths) -> Analysis`.

The steps of pipeline/steps.py in order (read -> validate -> roofs -> derive -> speed of light -> group -> rank ->
notes), then the analytic points of `--points`. The CLI, notebooks and CI steps all go through here. Beside it the
façades of the commands built on an analysis: `project(analysis, targets) -> Projected` (`ncu-roofline project`)
and `collection(arch) -> Collection` (`ncu-roofline metrics`: what to ask ncu for).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

import pandas as pd

from .core.errors import InputError
from .core.paths import shown_path, without_absolute_paths
from .core.version import __version__
from .core.vocabulary import APP_HEADROOM
from .pipeline.catalogue import Catalogue, load_catalogue
from .pipeline.steps import AnalysisOptions, GroupBy, default_steps, start
from .readers import expand_paths

if TYPE_CHECKING:
    from .pipeline.app_weight import AppWeighting
    from .projection.project import Projection
    from .render.bundle import Bundle

SCHEMA_VERSION = "1"


@dataclass
class InputFile:
    """An input as the run's metadata names it: its path and the SHA-256 of its bytes."""

    path: str
    sha256: str


@dataclass
class Analysis:
    """Per-launch and per-kernel roofline tables, and what produced them."""

    launches: pd.DataFrame
    kernels: pd.DataFrame
    inputs: list[InputFile]
    options: AnalysisOptions = field(default_factory=AnalysisOptions)
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
            # paths as outputs show them (core/paths.py): never the absolute layout of the machine that ran it
            "ncu_roofline.inputs": json.dumps([{"path": shown_path(f.path), "sha256": f.sha256} for f in self.inputs]),
            "ncu_roofline.ceilings": json.dumps(sources),
            "ncu_roofline.options": json.dumps(self.options.metadata(), sort_keys=True, default=str),
            "ncu_roofline.notes": json.dumps(self.notes),
            **({"ncu_roofline.nsys": json.dumps({"path": shown_path(self.timeline.path), "sha256": self.timeline.sha256,
                                                 **self.app.summary(top=20)})} if self.app is not None else {}),
        }

    def chart(self, top: int = 20):
        """The hierarchical roofline as an Altair chart (notebooks display it as is)."""
        from .render.analysis.chart import roofline_chart

        return roofline_chart(self.kernels, self.chart_context(top), model_points=self.model_points,
                              model_pairs=self.model_pairs)

    def chart_context(self, top: int = 20):
        from .render.chart.context import ChartContext

        devices = self.kernels["device_name"].dropna().unique().tolist() if len(self.kernels) else []
        sources = self.kernels["ceiling_source"].dropna().unique().tolist() if len(self.kernels) else []
        return ChartContext(gpu=", ".join(sorted(devices)) or str(self.options.gpu or _user_gpu_name(
                                self.options.ceilings) or "unknown GPU"),
                            ceiling_source=", ".join(sorted(sources)) or "none",
                            clock=str(self.options.clock),
                            inputs=[str(f.path) for f in self.inputs], top=top,
                            timeline=_coverage(self.app),
                            bars=APP_HEADROOM if self.app is not None and self.app.ranked else "headroom_s")

    @property
    def input_paths(self) -> list[Path]:
        """The files read: outputs are never written over them."""
        return [Path(f.path) for f in self.inputs]

    @property
    def launch_count(self) -> int:
        """Launches in the run (a launch row of a merged capture may stand for several)."""
        return int(self.launches["launches"].sum()) if len(self.launches) else 0

    def totals(self) -> dict:
        """The run's totals (pipeline/totals.py): what the terminal and Markdown summaries state."""
        from .pipeline.totals import run_totals

        return run_totals(self.kernels, self.launches)

    def launches_of(self, kernel: pd.Series) -> pd.DataFrame:
        """The launch rows of one kernel group (a row of `kernels`): its name and, where it has them, grid and block."""
        from .pipeline.select import kernel_launches

        return kernel_launches(self.launches, kernel)

    def append_to_history(self, directory: str | Path | object, *, run_id: str, labels: dict[str, str] | None = None,
                          replace: bool = False) -> list[Path]:
        """This run appended to the history dataset in `directory` (history/store.py) as run `run_id`: a folder, or
        a bucket's location (history/location.py)."""
        from .history.store import append_analysis

        where = Path(directory) if isinstance(directory, str) else directory
        return append_analysis(where, self, run_id=run_id, labels=labels, replace=replace)

    def bundle(self, *, formats: Iterable[str] = (), top: int = 20, precisions: Iterable[str] = ()):
        """The files `-o DIR` holds (render/analysis/outputs.py), rendered, not yet written: a `Bundle`."""
        from .render.analysis.outputs import AnalysisTables, analysis_bundle

        tables = AnalysisTables(self.launches, self.kernels, self.metadata(), self.chart_context(top),
                                self.model_points, self.model_pairs)
        return analysis_bundle(tables, formats=tuple(formats), precisions=tuple(precisions))

    def write(self, outdir: str | Path, *, formats: Iterable[str] = (), top: int = 20,
              precisions: Iterable[str] = ()) -> list[Path]:
        """Parquet tables and the chart into `outdir`, all in place or none; one more chart per precision."""
        return self.bundle(formats=formats, top=top, precisions=precisions).write(Path(outdir), self.input_paths)

    def json(self, *, top: int | None = None) -> str:
        """The JSON summary (docs/json-schema.md)."""
        from .render.analysis.json_summary import analysis_json

        return analysis_json(self.kernels, self.launches, self.metadata(), top=top, model_points=self.model_points,
                             app=self.app.summary(top=top) if self.app is not None else None)

    def project(self, targets: Iterable[str | Path], *, seconds_per_launch: float | None = None):
        """This run's kernel groups placed on other GPUs' roofs: a `projection.project.Projection` whose `kernels`
        table holds, per group and target, t_sol there, its bound, and the two models' times (docs/projection.md).
        `targets`: table GPU names or `.toml` ceilings files, one target each."""
        from .core.vocabulary import APP_TIME
        from .projection.project import (Projection, launch_floor, measured_roofs, project_kernels, project_runs,
                                          projection_metadata, target_roofs)

        roofs = target_roofs([str(t) for t in ([targets] if isinstance(targets, (str, Path)) else targets)])
        floor_s, floor_source = launch_floor()
        floor_s = floor_s if seconds_per_launch is None else float(seconds_per_launch)
        kernels = project_kernels(self.kernels, roofs, seconds_per_launch=floor_s)
        unprofiled = float(self.app.unprofiled[APP_TIME].sum()) if self.app is not None else 0.0
        runs = project_runs(kernels, roofs, unprofiled_s=unprofiled)
        return Projection(kernels, runs, roofs, self.chart_context().gpu,
                          projection_metadata(self.metadata(), roofs, floor_s, floor_source),
                          measured_roofs(self.kernels))

    def markdown(self, *, top: int = 10, chart: str | None = None) -> str:
        """The Markdown summary for CI step summaries and pull-request comments (`chart`: a link to put in it)."""
        from .render.analysis.markdown import analysis_markdown

        return analysis_markdown(self.kernels, self.launches, [f.path for f in self.inputs], top=top,
                                 gpu=self.chart_context().gpu, chart=chart, notes=self.notes,
                                 app=self.app)


def analyze(paths: Iterable[str | Path] | str | Path, *, gpu: str | None = None, ceilings: str | Path | None = None,
            clock: str = "measured", group_by: GroupBy = "kernel", nvtx_include: str | None = None,
            catalogue: Catalogue | None = None, progress: Callable[[int], None] | None = None,
            points: str | Path | None = None, allow_empty: bool = False, kernel: str | None = None,
            exclude: str | None = None, sort: str = "headroom", nsys: str | Path | None = None,
            nsys_device: int | None = None) -> Analysis:
    """Analyse ncu exports or reports: one Analysis for all the inputs together (the steps: `default_steps`).

    A run in which no kernel can be placed on a roofline (no counters, or no roofs) raises `InputError` saying
    why, unless `allow_empty`: then the tables are returned with every unknown left null.

    `group_by`: "kernel" (name and launch shape), "nvtx" (and NVTX range) or "op" (PyTorch operators read from
    `emit_nvtx()` ranges, torch_ranges.py, forward and backward apart). `points`: a points file (model/points.py)
    drawn beside the measured kernels; the kernel table gains the model columns (model/match.py). `nsys`: Nsight
    Systems' timeline of the run (readers/nsys.py: a cuda_gpu_kern_sum CSV or the SQLite export; `nsys_device`:
    one GPU of it) weights each kernel group by its time over the whole run and ranks by `app_headroom_s`
    (pipeline/app_weight.py)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    options = AnalysisOptions(gpu=gpu, ceilings=str(ceilings) if ceilings else None, clock=clock, group_by=group_by,
                              nvtx_include=nvtx_include, points=str(points) if points is not None else None,
                              kernel=kernel, exclude=exclude, sort=sort, nsys=str(nsys) if nsys is not None else None,
                              nsys_device=nsys_device)
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
    run = start(options, catalogue or load_catalogue(), allow_empty=allow_empty, progress=progress)
    path_notes: list[str] = []
    files = expand_paths(paths, path_notes)
    run = replace(run, files=tuple(files), notes=tuple(path_notes), timeline=timeline)
    digests = _start_hashing(files)  # a low-priority thread: the cores the read and the steps after it leave idle
    for step in default_steps():
        run = step(run)
    model_points = model_pairs = kernels = None
    if model_input is not None:
        from .model.match import match_pairs, model_columns, place_on_run

        model_pairs = match_pairs(model_input, run.kernels)
        kernels = model_columns(run.kernels, model_input, model_pairs)
        model_points = place_on_run(model_input, kernels, model_pairs)
    return Analysis(launches=run.launches, kernels=run.kernels if kernels is None else kernels, inputs=digests(),
                    notes=[without_absolute_paths(n) for n in run.notes], options=options,
                    model_points=model_points, model_pairs=model_pairs,
                    app=run.app, timeline=InputFile(str(nsys), _sha256(Path(nsys))) if nsys is not None else None)


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
    if app is None:  # no --nsys: the timeline's modules stay unloaded
        return None
    from .render.analysis.timeline import coverage_sentence

    return coverage_sentence(app)


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


# ---- `ncu-roofline project`: the analysed run on other GPUs' roofs


def check_targets(names: Iterable[str]) -> list:
    """Every target checked before a profile is read: table rows by name, `.toml` files as ceilings files."""
    from .projection.project import target_roofs

    return target_roofs(list(names))


@dataclass(frozen=True)
class Projected:
    """`ncu-roofline project`'s façade: an analysis (the measured run) and its projection onto each target
    (`Analysis.project`, projection/project.py), with its outputs (docs/projection.md)."""

    analysis: Analysis
    projection: Projection

    @property
    def input_paths(self) -> list[Path]:
        return self.analysis.input_paths

    def json(self) -> str:
        from .render.projection.json_summary import projection_json

        p = self.projection
        return projection_json(p.kernels, p.runs, p.metadata)

    def markdown(self, *, top: int = 10) -> str:
        from .projection.project import ASSUMPTIONS
        from .render.projection.console import projection_markdown

        p = self.projection
        return projection_markdown(p.kernels, p.runs, source_gpu=p.source_gpu,
                                   inputs=[f.path for f in self.analysis.inputs], assumptions=ASSUMPTIONS, top=top)

    def bundle(self, *, formats: Iterable[str] = (), top: int = 20) -> Bundle:
        """The files `-o DIR` holds (render/projection/outputs.py), rendered, not yet written."""
        from .render.projection.outputs import projection_bundle

        p = self.projection
        return projection_bundle(p.kernels, self.analysis.kernels, p.source_gpu, p.source_peaks, p.peaks_by_gpu,
                                 metadata=p.metadata, formats=tuple(formats), top=top)

    def refuse_unplaceable(self, source: str | None) -> None:
        """Bad input where a target can take nothing (InputError naming `source`, the one profile or None)."""
        from .projection.project import refuse_unplaceable

        refuse_unplaceable(self.projection.kernels, self.projection.runs, source)


def project(analysis: Analysis, targets: Iterable[str | Path]) -> Projected:
    """The analysed run placed on each target's roofs (`check_targets` first, to refuse a bad one before reading)."""
    return Projected(analysis, analysis.project(targets))


# ---- `ncu-roofline metrics`: what an analysis needs ncu to collect


@dataclass(frozen=True)
class Collection:
    """`ncu-roofline metrics`'s façade: what to ask ncu for (pipeline/collect.py). The metrics and sections an
    analysis of compute capability `arch` (None: any) needs; `complete`: every
    metric any definition can use."""

    arch: float | None = None
    complete: bool = False

    @property
    def _catalogue(self):
        from .pipeline.catalogue import load_catalogue

        return load_catalogue()

    def metric_list(self) -> list[str]:
        """The comma-separated `--metrics` list's names."""
        from .pipeline.collect import collection_metrics

        return list(collection_metrics(self._catalogue, self.arch, complete=self.complete))

    def metrics_flag(self) -> str:
        """`--metrics a,b,...` for a CSV export of the raw page."""
        from .pipeline.collect import metrics_flag

        return metrics_flag(self._catalogue, self.arch, complete=self.complete)

    def sections_flag(self) -> str:
        """`--section ...` for a binary report."""
        from .pipeline.collect import sections_flag

        return sections_flag()

    def limiter_sections_flag(self) -> str:
        """The sections the limiter and the instruction roofline read (binary report)."""
        from .pipeline.collect import limiter_sections_flag

        return limiter_sections_flag()

    def limiter_metrics(self) -> list[str]:
        """The metrics the limiter and the instruction roofline read (CSV, beside the list above)."""
        from .pipeline.collect import limiter_metrics

        return list(limiter_metrics(self._catalogue, complete=self.complete))


def collection(arch: float | None = None, *, complete: bool = False) -> Collection:
    return Collection(arch, complete)
