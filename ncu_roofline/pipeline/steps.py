"""The analysis as its steps: read -> validate -> roofs -> derive -> speed of light -> group -> rank -> notes
(-> the timeline's weights with --nsys -> select).

Every step follows one rule: `run = step(run)`. A `Run` holds the one launch table as it moves through the steps
and what the steps before have found; a step returns a new `Run` with its part added (`dataclasses.replace`), so
a step can be read and tested on its own. Steps are not free to reorder: each needs what the steps before it
added (derive needs the roofs, rank needs the groups), and the order is written once, in `default_steps()`;
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
from ..core.vocabulary import KERNEL_IDENTITY, LAUNCH_IDENTITY, LIMITER_COLUMNS, RESULT_COLUMNS
from ..readers import read_inputs
from .by_name import BY_NAME_COLUMN, by_name_placeholders, by_name_rows
from .catalogue import SM_CLOCKS, Catalogue
from .codes import one_text
from .ceilings import CeilingOptions, resolve_devices
from .derive import Gap
from .expressions import owned
from .evaluate import attach_roofs, derive_launches, place_launches, refuse_without_roofline_metrics
from .group import filter_nvtx, group_keys, group_launches, launch_groups
from .limiter import group_limiters, limiter_settings
from .rank import rank_kernels
from .run_notes import gap_notes, limiter_notes, ncu_agreement_note, nothing_placed_message, unplaced, unplaced_note
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
    nsys: str | None = None  # Nsight Systems' timeline of the run (readers/nsys.py), weighting every kernel group
    nsys_device: int | None = None

    def __post_init__(self) -> None:
        if self.clock not in SM_CLOCKS:
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
                **({"sort": self.sort} if self.sort not in ("headroom", "app_headroom") else {}),
                **({"nsys": self.nsys} if self.nsys is not None else {}),
                **({"nsys_device": self.nsys_device} if self.nsys_device is not None else {})}


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
    # metric-split kernels whose launches cannot be paired across parts: one row of sums each (by_name.py)
    sums: pd.DataFrame | None = None
    frame: pd.DataFrame | None = None  # the rows derived and placed: launches that can be told apart, then sums
    reports: frozenset[str] = frozenset()  # sources that are binary reports (never refused for lacking counters)
    roofs: CeilingOptions | None = None
    derived: pd.DataFrame | None = None  # derived quantities, then with the roofs beside them
    status: StatusNotes | None = None  # per-launch status, added to by derive, roofs and speed of light
    launches: pd.DataFrame | None = None  # the launch table
    evaluated: pd.DataFrame | None = None  # every launch row with every column the groups are made from
    kernels: pd.DataFrame | None = None
    gaps: tuple[Gap, ...] = ()
    notes: tuple[str, ...] = ()  # what the run as a whole has to say
    timeline: object | None = None  # --nsys: the run's kernels as Nsight Systems saw them (readers/nsys.py)
    app: object | None = None  # --nsys: the kernel groups weighted by that timeline (app_weight.py)


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
                   sums=by_name_rows(table.attrs.get("by_name"), run.catalogue.is_timing),
                   notes=(*run.notes, *table.attrs.get("run_notes", ())))


def keep_nvtx_range(run: Run) -> Run:
    """`--nvtx-include GLOB`: only the launches inside a matching NVTX range."""
    if not run.options.nvtx_include:
        return run
    kept = filter_nvtx(run.read, run.options.nvtx_include)
    if kept.empty:
        raise InputError(None, f"no launch has an NVTX range matching --nvtx-include {run.options.nvtx_include!r}")
    sums = filter_nvtx(run.sums, run.options.nvtx_include) if run.sums is not None else None
    return replace(run, read=kept, sums=sums)


def validate(run: Run) -> Run:
    """Impossible values (negative, infinite) become null, named, and left out of the totals (validity.py); the
    rows to derive are the launches that can be told apart, then one row of sums per kernel that cannot."""
    raw = flag_invalid_values(run.read, run.catalogue.is_timing)
    checked = raw if run.sums is None else pd.concat([raw, run.sums], ignore_index=True)
    return replace(run, raw=raw, frame=_rows_to_derive(raw, run.sums), notes=(*run.notes, *invalid_value_notes(checked)))


def _rows_to_derive(raw: pd.DataFrame, sums: pd.DataFrame | None) -> pd.DataFrame:
    if sums is None and BY_NAME_COLUMN not in raw:
        return raw
    aligned = raw[~_by_name(raw)]
    frame = pd.concat([aligned, sums], ignore_index=True, sort=False) if sums is not None \
        else aligned.reset_index(drop=True)
    frame = frame.drop(columns=[BY_NAME_COLUMN], errors="ignore")
    frame["_invalid"] = frame["_invalid"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    return frame


def _by_name(raw: pd.DataFrame):
    import numpy as np

    return raw[BY_NAME_COLUMN].to_numpy() >= 0 if BY_NAME_COLUMN in raw else np.zeros(len(raw), dtype=bool)


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
    derived, status = derive_launches(run.frame, run.catalogue, gaps)
    return replace(run, derived=derived, status=status, gaps=tuple(gaps))


def attach_launch_roofs(run: Run) -> Run:
    """Each launch's roofs, on one clock basis, with their source (ceilings.py)."""
    return replace(run, derived=attach_roofs(run.frame, run.derived, run.catalogue, run.roofs, run.status))


def speed_of_light(run: Run) -> Run:
    """t_sol, bound, roofline fraction, headroom and limiter per launch (rank.py, limiter.py); a CSV export without
    any FLOP or byte counter is refused here, unless an empty analysis is allowed. Launches of kernels analysed by
    name keep their identity in the launch table, with no values and a status saying so (by_name.py)."""
    evaluated = place_launches(run.frame, run.derived, run.status, run.catalogue, run.roofs)
    evaluated["_invalid"] = run.frame["_invalid"].to_numpy()
    if not run.allow_empty:
        # on the values as read: a file whose only counters are impossible values is analysed and flagged
        read = run.read if run.sums is None else pd.concat([run.read, run.sums], ignore_index=True)
        refuse_without_roofline_metrics(read, run.catalogue, set(run.reports))
    launches = evaluated
    by_name = _by_name(run.raw)
    if by_name.any() or run.sums is not None:
        aligned = int((~by_name).sum())
        launches = pd.concat([evaluated.iloc[:aligned], by_name_placeholders(run.raw[by_name], evaluated)],
                             ignore_index=True, sort=False)
        launches["status"] = launches["status"].astype("object").astype("category")
    table = launches[[c for c in LAUNCH_IDENTITY if c in launches] + list(RESULT_COLUMNS) + list(LIMITER_COLUMNS)]
    table = table.reset_index(drop=True) if _in_launch_order(table) else \
        table.sort_values(["source_file", "launch_id"], kind="stable", ignore_index=True)
    return replace(run, evaluated=evaluated, launches=table)


def _in_launch_order(table: pd.DataFrame) -> bool:
    """Whether the rows already are in (source_file, launch_id) order, as a stable sort would leave them: then
    the sort's copy of every column is not made (a file's launches come in ID order)."""
    import numpy as np

    if table["source_file"].isna().any() or table["launch_id"].isna().any():
        return False
    ids = table["launch_id"].to_numpy()
    if one_text(table["source_file"]):  # one file: its IDs alone say the order
        return bool((ids[1:] >= ids[:-1]).all())
    sources, _ = pd.factorize(table["source_file"], sort=True)
    same = sources[1:] == sources[:-1]
    return bool(((sources[1:] > sources[:-1]) | (same & (ids[1:] >= ids[:-1]))).all())


def group(run: Run) -> Run:
    """Kernel groups (name and launch shape; or per NVTX range; or per PyTorch operator): sums of their launch
    rows, ratios of those sums (group.py). Grouping by ranges that the capture does not record is refused: it would
    silently be the kernel grouping under another name."""
    if run.options.group_by != "kernel":
        _refuse_without_ranges(run)
    if run.options.group_by == "op":
        from .torch_ranges import group_by_op

        launches, keys = group_by_op(run.evaluated), group_keys(False)
    else:
        launches, keys = run.evaluated, group_keys(run.options.group_by == "nvtx")
    groups = launch_groups(launches, keys)  # factorized once, for the sums and the limiter's gains
    kernels = group_launches(launches, keys, groups)
    return replace(run, kernels=group_limiters(kernels, run.catalogue, launches, groups[0]))


def _refuse_without_ranges(run: Run) -> None:
    from .torch_ranges import op_label

    paths = run.evaluated["nvtx_range"].dropna().astype(str) if "nvtx_range" in run.evaluated else pd.Series([])
    where = run.files[0] if len(run.files) == 1 else None
    if not (paths != "").any():
        raise InputError(where, f"--group-by {run.options.group_by}: the capture records no NVTX ranges (profile "
                                "with `ncu --nvtx`, and the ranges pushed by the application or emit_nvtx())")
    if run.options.group_by == "op" and not any(op_label(p) for p in paths.unique()):
        raise InputError(where, "--group-by op: the capture's NVTX ranges name no PyTorch operator (profile under "
                                "torch.autograd.profiler.emit_nvtx(), docs/pytorch-ops.md)")


def rank(run: Run) -> Run:
    """Kernel groups by summed headroom, the most recoverable time first; a run where no kernel can be placed on
    a roofline is refused, unless an empty analysis is allowed."""
    identity = [c for c in KERNEL_IDENTITY if c in run.kernels]
    kernels = rank_kernels(run.kernels[identity + list(RESULT_COLUMNS) + list(LIMITER_COLUMNS)])
    if not run.allow_empty and len(kernels) and unplaced(kernels).all():
        raise InputError(run.files[0] if len(run.files) == 1 else None,
                         nothing_placed_message(kernels, run.evaluated, _max_clock_hz(run.raw, run.catalogue)))
    return replace(run, kernels=kernels)


def notes(run: Run) -> Run:
    """What the run as a whole lacks (one note per capture: counters, the limiter's counters) and why kernels have
    no speed of light."""
    unplaced = unplaced_note(run.kernels, run.evaluated, _max_clock_hz(run.raw, run.catalogue))
    return replace(run, notes=(*run.notes, *gap_notes(list(run.gaps), set(run.reports)),
                               *limiter_notes(run.launches, set(run.reports), limiter_settings().sections),
                               *ncu_agreement_note(run.kernels),
                               *([unplaced] if unplaced else [])))


def _max_clock_hz(raw: pd.DataFrame, catalogue: Catalogue) -> float | None:
    """The export's maximum SM clock (median over launches): it can tell apart GPUs of one compute capability."""
    import numpy as np

    from .catalogue import sm_clock_hz

    values = sm_clock_hz(raw, catalogue, "max")
    return float(np.nanmedian(values)) if np.isfinite(values).any() else None


def weigh_by_timeline(run: Run) -> Run:
    """`--nsys`: each kernel group weighted by its time over the whole run, ranked by `app_headroom_s`
    (app_weight.py)."""
    if run.timeline is None:
        return run
    from .app_weight import weight_by_timeline

    app = weight_by_timeline(run.kernels, run.timeline.kernels)
    return replace(run, app=app, kernels=app.kernels,  # ranked by APP_HEADROOM there, as its notes cite
                   notes=(*run.notes, *run.timeline.notes, *app.notes))


def select(run: Run) -> Run:
    """`--kernel`, `--exclude`, `--sort` (select.py): which groups are kept and in what order."""
    options = run.options
    sort = "app_headroom" if run.app is not None and options.sort == "headroom" else options.sort
    if options.kernel is None and options.exclude is None and sort in ("headroom", "app_headroom"):
        return run
    from .select import select_kernels, select_launches

    kernels = select_kernels(run.kernels.assign(_was=run.kernels["rank"]), kernel=options.kernel,
                             exclude=options.exclude, sort=sort)
    ranks, kernels = dict(zip(kernels["_was"].tolist(), kernels["rank"].tolist())), kernels.drop(columns="_was")
    notes, app = run.notes, run.app
    if app is not None:  # the app's table and notes are the ones shown, with the ranks the table gives
        from .app_weight import renumbered

        app = replace(app, ranked=sort == "app_headroom", kernels=kernels, notes=renumbered(app.notes, ranks))
        notes = tuple(dict(zip(run.app.notes, app.notes)).get(n, n) for n in run.notes)
    return replace(run, kernels=kernels, launches=select_launches(run.launches, kernels), app=app, notes=notes)


def default_steps() -> list[Step]:
    """The pipeline, in order."""
    return [read, keep_nvtx_range, validate, choose_roofs, derive, attach_launch_roofs, speed_of_light, group, rank,
            notes, weigh_by_timeline, select, hand_over]


def hand_over(run: Run) -> Run:
    """The launch table as the user gets it: a run-level value the steps read as one element (`one_value`) becomes
    an array of its own, once, after the steps before have freed their memory (expressions.owned)."""
    return replace(run, launches=owned(run.launches.copy(deep=False)))
