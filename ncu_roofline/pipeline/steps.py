"""The analysis as its steps: read -> validate -> roofs -> derive -> speed of light -> group -> rank -> notes.

Every step follows one rule: `run = step(run)`. A `Run` holds the one launch table as it moves through the steps
and what the steps before have found; a step returns a new `Run` with its part added (`dataclasses.replace`), so
a step can be read, tested and reordered on its own. The order is written once, in `default_steps()`;
analysis.py adds the steps that need the layers above this one (analytic points) and runs the list.

A step that finds the run cannot go on raises `InputError`, which the CLI turns into one line and exit 2.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Literal

import pandas as pd

from ..core.errors import InputError
from ..core.status import StatusNotes
from ..core.vocabulary import KERNEL_IDENTITY, LAUNCH_IDENTITY, RESULT_COLUMNS
from ..readers import read_inputs
from .catalogue import Catalogue
from .ceilings import CeilingOptions, resolve_devices
from .derive import Gap
from .evaluate import attach_roofs, derive_launches, place_launches, refuse_without_roofline_metrics
from .group import filter_nvtx, group_keys, group_launches
from .rank import rank_kernels
from .run_notes import gap_notes, nothing_placed_message, unplaced_note
from .validity import flag_invalid_values, invalid_value_notes

GroupBy = Literal["kernel", "nvtx", "op"]
GROUP_BY: tuple[str, ...] = ("kernel", "nvtx", "op")


@dataclass(frozen=True)
class AnalysisOptions:
    """What an analysis was asked for: recorded in every output's metadata (`ncu_roofline.options`) and compared
    between the two runs of `compare`. Checked when made, before any input is read."""

    gpu: str | None = None
    ceilings: str | None = None
    clock: str = "measured"
    group_by: GroupBy = "kernel"
    nvtx_include: str | None = None
    points: str | None = None
    kernel: str | None = None
    exclude: str | None = None
    sort: str = "headroom"

    def __post_init__(self) -> None:
        if self.clock not in {"measured", "max"}:
            raise InputError(None, f"--clock must be 'measured' or 'max', not {self.clock!r}")
        if self.group_by not in GROUP_BY:
            raise InputError(None, f"--group-by must be 'kernel', 'nvtx' or 'op', not {self.group_by!r}")

    def metadata(self) -> dict[str, object]:
        """As the files record it (the keys older files carry: `group_by_nvtx` always, the others when set)."""
        return {"gpu": self.gpu, "ceilings": self.ceilings, "clock": self.clock,
                "group_by_nvtx": self.group_by == "nvtx", "nvtx_include": self.nvtx_include,
                **({"group_by_op": True} if self.group_by == "op" else {}),
                **({"points": self.points} if self.points is not None else {}),
                **{k: v for k, v in (("kernel", self.kernel), ("exclude", self.exclude)) if v is not None},
                **({"sort": self.sort} if self.sort != "headroom" else {})}


@dataclass(frozen=True)
class Run:
    """One analysis between two steps: its inputs and options, the launch table at this point, and findings."""

    options: AnalysisOptions
    catalogue: Catalogue
    files: tuple[Path, ...]
    allow_empty: bool = False
    progress: Callable[[int], None] | None = None
    forced: dict | None = None  # --gpu's table row for every device, resolved before the read
    read: pd.DataFrame | None = None  # the launches as read (metric columns in base units)
    raw: pd.DataFrame | None = None  # the same, impossible values null and flagged (`_invalid`)
    reports: frozenset[str] = frozenset()  # sources that are binary reports (never refused for lacking counters)
    roofs: CeilingOptions | None = None
    derived: pd.DataFrame | None = None  # derived quantities, then with the roofs beside them
    status: StatusNotes | None = None  # per-launch status, added to by derive, roofs and speed of light
    launches: pd.DataFrame | None = None  # the launch table
    evaluated: pd.DataFrame | None = None  # every launch row with every column the groups are made from
    kernels: pd.DataFrame | None = None
    gaps: tuple[Gap, ...] = ()
    notes: tuple[str, ...] = ()  # what the run as a whole has to say


Step = Callable[[Run], Run]


def start(options: AnalysisOptions, catalogue: Catalogue, *, allow_empty: bool = False,
          progress: Callable[[int], None] | None = None) -> Run:
    """A run before its first step (its `files` set by the caller); an unknown --gpu fails here, before any input
    is looked at."""
    forced = resolve_devices([], options.gpu) if options.gpu else None
    return Run(options=options, catalogue=catalogue, files=(), allow_empty=allow_empty, progress=progress,
               forced=forced)


def read(run: Run) -> Run:
    """Every input file into one launch table (readers/), and what the readers had to say."""
    table = read_inputs(list(run.files), run.catalogue.wants, run.progress)
    return replace(run, read=table, reports=frozenset(table.attrs.get("report_sources", ())),
                   notes=(*run.notes, *table.attrs.get("run_notes", ())))


def keep_nvtx_range(run: Run) -> Run:
    """`--nvtx-include GLOB`: only the launches inside a matching NVTX range."""
    if not run.options.nvtx_include:
        return run
    kept = filter_nvtx(run.read, run.options.nvtx_include)
    if kept.empty:
        raise InputError(None, f"no launch has an NVTX range matching --nvtx-include {run.options.nvtx_include!r}")
    return replace(run, read=kept)


def validate(run: Run) -> Run:
    """Impossible values (negative, infinite) become null, named, and left out of the totals (validity.py)."""
    raw = flag_invalid_values(run.read, run.catalogue.is_timing)
    return replace(run, raw=raw, notes=(*run.notes, *invalid_value_notes(raw)))


def choose_roofs(run: Run) -> Run:
    """Where each device's roofs come from: --gpu's row or each device's own, and a --ceilings file over both."""
    devices = run.forced or resolve_devices(run.raw["device_name"])
    options = run.options
    if options.ceilings:
        from ..roofs.user_file import load_user_ceilings

        user = load_user_ceilings(Path(options.ceilings))
        roofs = CeilingOptions(gpu=options.gpu, user_peaks=user.peaks, user_source=user.source, clock=options.clock,
                               devices=devices)
    else:
        roofs = CeilingOptions(gpu=options.gpu, clock=options.clock, devices=devices)
    return replace(run, roofs=roofs)


def derive(run: Run) -> Run:
    """Time, FLOPs, bytes and intensities per launch from the catalogue's definitions (derive.py)."""
    gaps: list[Gap] = list(run.gaps)
    derived, status = derive_launches(run.raw, run.catalogue, gaps)
    return replace(run, derived=derived, status=status, gaps=tuple(gaps))


def attach_launch_roofs(run: Run) -> Run:
    """Each launch's roofs, on one clock basis, with their source (ceilings.py)."""
    return replace(run, derived=attach_roofs(run.raw, run.derived, run.catalogue, run.roofs, run.status))


def speed_of_light(run: Run) -> Run:
    """t_sol, bound, roofline fraction and headroom per launch (rank.py); a CSV export without any FLOP or byte
    counter is refused here, unless an empty analysis is allowed."""
    evaluated = place_launches(run.raw, run.derived, run.status)
    evaluated["_invalid"] = run.raw["_invalid"].to_numpy()
    if not run.allow_empty:
        # on the values as read: a file whose only counters are impossible values is analysed and flagged
        refuse_without_roofline_metrics(run.read, run.catalogue, set(run.reports))
    table = evaluated[[c for c in LAUNCH_IDENTITY if c in evaluated] + list(RESULT_COLUMNS)]
    table = table.sort_values(["source_file", "launch_id"], kind="stable", ignore_index=True)
    return replace(run, evaluated=evaluated, launches=table)


def group(run: Run) -> Run:
    """Kernel groups (name and launch shape; or per NVTX range; or per PyTorch operator): sums of their launch
    rows, ratios of those sums (group.py)."""
    if run.options.group_by == "op":
        from .torch_ranges import group_by_op

        kernels = group_launches(group_by_op(run.evaluated), group_keys(False))
    else:
        kernels = group_launches(run.evaluated, group_keys(run.options.group_by == "nvtx"))
    return replace(run, kernels=kernels)


def rank(run: Run) -> Run:
    """Kernel groups by summed headroom, the most recoverable time first; a run where no kernel can be placed on
    a roofline is refused, unless an empty analysis is allowed."""
    identity = [c for c in KERNEL_IDENTITY if c in run.kernels]
    kernels = rank_kernels(run.kernels[identity + list(RESULT_COLUMNS)])
    if not run.allow_empty and len(kernels) and kernels["t_sol_s"].isna().all():
        raise InputError(run.files[0] if len(run.files) == 1 else None, nothing_placed_message(kernels, run.launches))
    return replace(run, kernels=kernels)


def notes(run: Run) -> Run:
    """What the run as a whole lacks (one note per capture) and why kernels have no speed of light."""
    unplaced = unplaced_note(run.kernels, run.launches)
    return replace(run, notes=(*run.notes, *gap_notes(list(run.gaps), set(run.reports)),
                               *([unplaced] if unplaced else [])))


def select(run: Run) -> Run:
    """`--kernel`, `--exclude`, `--sort` (select.py): which groups are kept and in what order."""
    options = run.options
    if options.kernel is None and options.exclude is None and options.sort == "headroom":
        return run
    from .select import select_kernels, select_launches

    kernels = select_kernels(run.kernels, kernel=options.kernel, exclude=options.exclude, sort=options.sort)
    return replace(run, kernels=kernels, launches=select_launches(run.launches, kernels))


def default_steps() -> list[Step]:
    """The pipeline, in order."""
    return [read, keep_nvtx_range, validate, choose_roofs, derive, attach_launch_roofs, speed_of_light, group, rank,
            notes, select]
