"""The roofline pipeline on raw metric tables: derive -> roofs -> speed of light, and the refusal check.

Pure functions over DataFrames: the steps of pipeline/steps.py call them one by one; `evaluate` is the three
together (ceilings templates, tests). Nothing here knows file formats or outputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.launch_table import IDENTITY_COLUMNS
from ..core.status import StatusNotes
from ..core.vocabulary import COUNTED_COLUMNS, PEAK_COLUMNS
from .catalogue import Catalogue
from .ceilings import CeilingOptions, attach_ceilings
from .codes import category_texts, one_text
from .derive import Gap, derive_quantities
from .expressions import owned
from .limiter import launch_limiters
from .rank import speed_of_light
from .validity import BLOCK_CELLS

COLLECT_HINT = ("no FLOP or byte counters: profile with `ncu --set roofline` (or `ncu --set full`), or see "
                "`ncu-roofline metrics` for the --metrics list")


def evaluate(frame: pd.DataFrame, catalogue: Catalogue, options: CeilingOptions,
             gaps: list[Gap] | None = None) -> pd.DataFrame:
    """Derived quantities, roofs and speed of light for launch rows of raw metrics (kernel groups are sums of
    these rows: group.py): the three steps below, one after the other.

    With `gaps`, what a whole source file lacks is collected there (for one run-level note) instead of being
    noted on each of its launches."""
    derived, notes = derive_launches(frame, catalogue, gaps)
    values = attach_roofs(frame, derived, catalogue, options, notes)
    return owned(place_launches(frame, values, notes, catalogue, options))


def derive_launches(frame: pd.DataFrame, catalogue: Catalogue,
                    gaps: list[Gap] | None = None) -> tuple[pd.DataFrame, StatusNotes]:
    """Time, FLOPs, bytes and intensities per launch (derive.py), and the status notes begun with them."""
    notes = StatusNotes(len(frame))
    if "reader_notes" in frame and not _no_text(frame["reader_notes"]):
        notes.add_column(frame["reader_notes"])
    first_gap = len(gaps) if gaps is not None else 0
    derived = derive_quantities(frame, catalogue, notes, gaps)
    nothing = np.ones(len(derived), dtype=bool)
    for column in COUNTED_COLUMNS:  # a running mask: no copied block of the columns
        nothing &= derived[column].isna().to_numpy(dtype=bool)
    if gaps is not None:  # a source without any counter: said once for the run
        found: dict[str, int] = {}
        for gap in gaps[first_gap:]:
            found[gap.source] = found.get(gap.source, 0) + (gap.quantity in COUNTED_COLUMNS)
        bare = [source for source, count in found.items() if count == len(COUNTED_COLUMNS)]
        if bare and nothing.any():
            nothing &= ~frame["source_file"].isin(bare).to_numpy(dtype=bool)
    if nothing.any():
        notes.add(nothing, COLLECT_HINT)
    return derived, notes


def _no_text(notes: pd.Series) -> bool:
    """Whether a text column adds no note: null or empty on every row (a reader with nothing to say)."""
    return bool(notes.isna().all()) or (one_text(notes) and notes.iloc[0] == "")


def attach_roofs(frame: pd.DataFrame, derived: pd.DataFrame, catalogue: Catalogue, options: CeilingOptions,
                 notes: StatusNotes) -> pd.DataFrame:
    """The derived quantities with each launch's roofs beside them (ceilings.py)."""
    peaks = attach_ceilings(frame, derived, catalogue, options, notes)
    return pd.concat([derived, peaks], axis=1)


def place_launches(frame: pd.DataFrame, values: pd.DataFrame, notes: StatusNotes, catalogue: Catalogue,
                   options: CeilingOptions) -> pd.DataFrame:
    """Speed of light per launch (rank.py) and its limiter (limiter.py), and the launch rows: identity, values,
    status."""
    sol = speed_of_light(values, notes)
    why = launch_limiters(frame, pd.concat([values, sol], axis=1), catalogue, options.devices, options.clock)
    result = pd.concat([frame[[c for c in frame.columns if c in IDENTITY_COLUMNS or c == "source_files"]],
                        values, sol, why], axis=1)
    result["status"] = category_texts(notes.render().array)
    return result


def refuse_without_roofline_metrics(raw: pd.DataFrame, catalogue: Catalogue, reports: set[str]) -> None:
    """A CSV export that holds no work or traffic counter at all cannot give a roofline: say what to collect.

    One counter is enough to be analysed (a part of a metric-split capture, say): its launches then name what else
    is missing. Binary reports (`reports`: their source names, as the readers said) always load, since they hold
    everything else ncu showed.
    """
    files = raw["source_file"]
    one = one_text(files)  # one capture: its rows are the frame, no copy
    for source, rows in ([(files.iloc[0], raw)] if one else raw.groupby("source_file", sort=True)):
        if source in reports:  # before any walk over its columns
            continue
        candidates = [c for c in rows.columns if c not in IDENTITY_COLUMNS and not c.startswith("_")]
        if len(rows) * len(candidates) <= BLOCK_CELLS:  # one call over the block, not a Series per column
            has_value = rows[candidates].notna().any(axis=0).to_numpy(dtype=bool)
        else:  # column by column, the first row first: no copied block of 10^6 launches, most columns not walked
            has_value = [bool(pd.notna(rows[c].iloc[0]) or rows[c].notna().any()) for c in candidates]
        present = sorted(c for c, any_value in zip(candidates, has_value) if any_value)
        if any(catalogue.counts_work(name, COUNTED_COLUMNS) for name in present):
            continue
        from .collect import metrics_flag

        held = f"it holds only {', '.join(present)}" if present else "it holds none of the metrics used"
        ccs = rows["compute_capability"].dropna().unique()
        cc = float(ccs[0]) if len(ccs) == 1 else None
        raise InputError(source, f"no roofline metrics: the FLOP and byte counters are missing ({held}); "
                                 f"collect them with: ncu {metrics_flag(catalogue, cc)} --csv --page raw ...")


def report_peaks(path: Path) -> tuple[dict[str, float], str]:
    """The roofs an input holds itself (no table, no user file): median over its launches, in base units
    (`ceilings template --from`)."""
    from ..readers import expand_paths, read_inputs
    from .catalogue import load_catalogue

    catalogue = load_catalogue()
    raw = read_inputs(expand_paths([path]), catalogue.wants, None)
    launches = evaluate(raw, catalogue, CeilingOptions(use_table=False))
    peaks = {}
    for column in PEAK_COLUMNS:
        values = launches[column].to_numpy(dtype="float64")
        if np.isfinite(values).any():
            peaks[column] = float(np.nanmedian(values))
    return peaks, f"{Path(path).name} ({len(launches)} launches)"
