"""The library's front door: `analyze(paths) -> Analysis`.

read -> derive -> ceilings -> speed of light, once per launch and once per kernel group (from summed counters),
then rank. The CLI, notebooks and CI steps all go through here.
"""

from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from . import __version__
from .catalogue import Catalogue, load_catalogue
from .ceilings import PEAK_COLUMNS, CeilingOptions, attach_ceilings
from .derive import DERIVED_QUANTITIES, LEVELS, PRECISIONS, derive_quantities
from .errors import InputError
from .group import filter_nvtx, group_keys, group_launches
from .launch_table import IDENTITY_COLUMNS
from .rank import rank_kernels, speed_of_light
from .readers import expand_paths, looks_like_ncu_rep, read_inputs
from .status import StatusNotes
from .validity import flag_invalid_values

SCHEMA_VERSION = "1"
COLLECT_HINT = ("no FLOP or byte counters: profile with `ncu --set roofline` (or `ncu --set full`), or see "
                "`ncu-roofline metrics` for the --metrics list")
RESULT_COLUMNS = (
    "time_s", *[f"flop_{p}" for p in PRECISIONS], "flop_total", *[f"bytes_{lv}" for lv in LEVELS],
    *[f"ai_{lv}" for lv in LEVELS], "flop_per_s", *PEAK_COLUMNS, "ceiling_source",
    "t_sol_s", "bound", "roofline_fraction", "headroom_s", *[f"def_{q}" for q in DERIVED_QUANTITIES], "status",
)
LAUNCH_IDENTITY = ("source_file", "launch_id", "kernel_name", "kernel_demangled", "process_id", "process_name",
                   "device_name", "compute_capability", "context", "stream", "grid", "block", "nvtx_range",
                   "workload_type", "launches")


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
    notes: list[str] = field(default_factory=list)  # run-level remarks for the user (a file given twice)

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
        }

    def chart(self, top: int = 20):
        """The hierarchical roofline as an Altair chart (notebooks display it as is)."""
        from .render.chart import roofline_chart

        return roofline_chart(self.kernels, self.chart_context(top))

    def chart_context(self, top: int = 20):
        from .render.chart import ChartContext

        devices = self.kernels["device_name"].dropna().unique().tolist() if len(self.kernels) else []
        sources = self.kernels["ceiling_source"].dropna().unique().tolist() if len(self.kernels) else []
        return ChartContext(gpu=", ".join(sorted(devices)) or str(self.options.get("gpu") or "unknown GPU"),
                            ceiling_source=", ".join(sorted(sources)) or "none",
                            clock=str(self.options.get("clock", "measured")),
                            inputs=[Path(f.path).name for f in self.inputs], top=top)

    def write(self, outdir: str | Path, *, formats: Iterable[str] = (), top: int = 20) -> list[Path]:
        """Parquet tables and the chart into `outdir` (see render/)."""
        from .render.outputs import write_outputs

        return write_outputs(self, Path(outdir), formats=formats, top=top)


def analyze(paths: Iterable[str | Path] | str | Path, *, gpu: str | None = None, ceilings: str | Path | None = None,
            clock: str = "measured", group_by_nvtx: bool = False, nvtx_include: str | None = None,
            catalogue: Catalogue | None = None, progress: Callable[[int], None] | None = None) -> Analysis:
    """Analyse ncu exports or reports: one Analysis for all the inputs together."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if clock not in {"measured", "max"}:
        raise InputError(None, f"--clock must be 'measured' or 'max', not {clock!r}")
    catalogue = catalogue or load_catalogue()
    notes: list[str] = []
    files = expand_paths(paths, notes)
    digests = _start_hashing(files)  # overlaps the read: hashlib lets go of the GIL
    raw = flag_invalid_values(read_inputs(files, catalogue.wants, progress))
    if raw["_invalid"].any():
        count = int(raw.loc[raw["_invalid"], "launches"].sum())
        notes.append(f"{count} launch(es) hold impossible values (a negative counter, a zero or negative time): "
                     "those values are null, and the launches are left out of their kernels' totals (see their "
                     "status in launches.parquet)")
    if nvtx_include:
        raw = filter_nvtx(raw, nvtx_include)
        if raw.empty:
            raise InputError(None, f"no launch has an NVTX range matching --nvtx-include {nvtx_include!r}")
    options = _ceiling_options(gpu, ceilings, clock)
    launches = evaluate(raw, catalogue, options)
    _refuse_without_roofline_metrics(raw, catalogue)
    launch_table = launches[[c for c in LAUNCH_IDENTITY if c in launches] + list(RESULT_COLUMNS)]
    launch_table = launch_table.sort_values(["source_file", "launch_id"], kind="stable", ignore_index=True)
    kernel_raw = group_launches(raw, group_keys(group_by_nvtx))
    kernel_values = evaluate(kernel_raw, catalogue, options)
    identity = [c for c in ("kernel_name", "kernel_demangled", "grid", "block", "device_name", "compute_capability",
                            "nvtx_range", "launches", "source_files") if c in kernel_values]
    kernels = rank_kernels(kernel_values[identity + list(RESULT_COLUMNS)])
    return Analysis(
        launches=launch_table, kernels=kernels,
        inputs=digests(),
        options={"gpu": gpu, "ceilings": str(ceilings) if ceilings else None, "clock": clock,
                 "group_by_nvtx": group_by_nvtx, "nvtx_include": nvtx_include},
        notes=notes,
    )


def evaluate(frame: pd.DataFrame, catalogue: Catalogue, options: CeilingOptions) -> pd.DataFrame:
    """Derived quantities, roofs and speed of light for rows of raw metrics (launches or kernel groups)."""
    notes = StatusNotes(len(frame))
    if "reader_notes" in frame:
        notes.add_column(frame["reader_notes"])
    if "_excluded" in frame:  # kernel groups: launches left out of the totals for an impossible value
        excluded = frame["_excluded"].to_numpy(dtype=np.int64)
        launches = frame["launches"].to_numpy(dtype=np.int64)
        texts = pd.Series(excluded).astype(str) + " of " + pd.Series(launches).astype(str) \
            + " launches left out of the totals (invalid values, see launches.parquet)"
        notes.add_column(texts.where(excluded > 0, ""))
    derived = derive_quantities(frame, catalogue, notes)
    counted = [f"flop_{p}" for p in PRECISIONS] + [f"bytes_{lv}" for lv in LEVELS]
    notes.add(derived[counted].isna().all(axis=1).to_numpy(), COLLECT_HINT)
    peaks = attach_ceilings(frame, derived, catalogue, options, notes)
    values = pd.concat([derived, peaks], axis=1)
    sol = speed_of_light(values, notes)
    result = pd.concat([frame[[c for c in frame.columns if c in IDENTITY_COLUMNS or c == "source_files"]],
                        values, sol], axis=1)
    result["status"] = notes.render().to_numpy()
    return result


def _ceiling_options(gpu: str | None, ceilings: str | Path | None, clock: str) -> CeilingOptions:
    if gpu:
        from .gpus import match_gpu

        match_gpu(gpu)  # fail early, before reading large inputs, on an unknown --gpu
    if ceilings:
        from .user_ceilings import load_user_ceilings

        user = load_user_ceilings(Path(ceilings))
        return CeilingOptions(gpu=gpu, user_peaks=user.peaks, user_source=user.source, clock=clock)
    return CeilingOptions(gpu=gpu, clock=clock)


def _refuse_without_roofline_metrics(raw: pd.DataFrame, catalogue: Catalogue) -> None:
    """A CSV export that holds no work or traffic counter at all cannot give a roofline: say what to collect.

    One counter is enough to be analysed (a part of a metric-split capture, say): its launches then name what else
    is missing. Binary reports always load, since they hold everything else ncu showed.
    """
    quantities = [f"flop_{p}" for p in PRECISIONS] + [f"bytes_{lv}" for lv in LEVELS]
    counters = {d.expr for q in quantities for d in catalogue.definitions(q)}
    for source, rows in raw.groupby("source_file", sort=True):
        present = sorted(c for c in rows.columns if c not in IDENTITY_COLUMNS and not c.startswith("_")
                         and rows[c].notna().any())
        if _is_report(source) or any(_reads(expr, name) for expr in counters for name in present):
            continue
        from .collect import metrics_flag

        held = f"it holds only {', '.join(present)}" if present else "it holds none of the metrics used"
        ccs = rows["compute_capability"].dropna().unique()
        cc = float(ccs[0]) if len(ccs) == 1 else None
        raise InputError(source, f"no roofline metrics: the FLOP and byte counters are missing ({held}); "
                                 f"collect them with: ncu {metrics_flag(catalogue, cc)} --csv --page raw ...")


def _reads(expr, name: str) -> bool:
    """Whether `expr` counts work or traffic with metric `name` (time and clock inputs do not count)."""
    if name.startswith("gpu__time_") or name.endswith("__cycles_elapsed.avg.per_second") \
            or name.endswith("__cycles_elapsed.avg"):
        return False
    return name in expr.names or any(fnmatch.fnmatchcase(name, glob) for glob in expr.globs)


def _is_report(source: str) -> bool:
    path = Path(source)
    if not path.is_file():
        return False  # a merged capture's name: parts of a CSV capture
    with open(path, "rb") as handle:
        return looks_like_ncu_rep(handle.read(4))


def _start_hashing(files: list[Path]) -> Callable[[], list[InputFile]]:
    """SHA-256 of the inputs in a daemon thread while they are read: at 10^6 launches (12 GB) this hides ~10 s
    behind the CSV parse on two cores. A run that fails on bad input exits without waiting for it."""
    import threading

    results: list[InputFile] = []
    errors: list[BaseException] = []

    def work() -> None:
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

