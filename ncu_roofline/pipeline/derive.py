"""From raw ncu metrics to roofline quantities: time, FLOPs per precision, bytes per level, intensities.

Every formula comes from the catalogue; this module only chooses, per launch, the first definition whose inputs
are present, records which one (`def_*`), and names what is missing when none applies. A missing counter gives a
null, never a zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.status import StatusNotes
from ..core.vocabulary import (
    COUNTED_COLUMNS,
    DERIVED_QUANTITIES,
    LEVEL_PARENTS,
    LEVELS,
    TENSOR_FLOP_COLUMNS,
    WORK_COLUMNS,
    ai_column,
    bytes_column,
    def_column,
)
from .catalogue import Catalogue, pick_definition
from .codes import sorted_codes
from .expressions import Columns, as_columns


@dataclass(frozen=True)
class Gap:
    """A quantity that no launch of a capture (source file) could derive: the capture lacks its counters, which is
    a note for the run, not a problem of each launch."""

    source: str
    quantity: str
    needs: tuple[str, ...]  # the inputs of the closest definition: what to collect
    launches: int


def derive_quantities(frame: pd.DataFrame, catalogue: Catalogue, notes: StatusNotes,
                      gaps: list[Gap] | None = None) -> pd.DataFrame:
    """Time, FLOPs and bytes per row, with `def_*` columns and status notes for what could not be derived.

    A FLOP or byte quantity that no row of a source file has is not noted per row: it goes to `gaps` (when
    given), for one run-level note. A quantity only some rows lack is noted on those rows."""
    columns = as_columns(frame)
    sources, source_names = _source_codes(frame)
    out: dict[str, object] = {}
    local_missing = np.zeros(len(frame), dtype=bool)  # a precision missing where the capture has it elsewhere
    weight = frame["launches"].to_numpy(dtype=np.int64) if "launches" in frame else np.ones(len(frame), np.int64)
    for quantity in DERIVED_QUANTITIES:
        defs = catalogue.definitions(quantity)
        picked = pick_definition(columns, defs)
        out[quantity] = picked.values
        out[def_column(quantity)] = picked.def_ids(defs)
        missing = np.isnan(picked.values)
        if missing.any():  # most quantities: every launch has them, nothing to note
            # a counted quantity that a whole capture lacks is a run note (`Gap`), not a note on every launch
            wide = _everywhere(missing, sources) if quantity in COUNTED_COLUMNS and gaps is not None \
                else np.zeros(len(frame), dtype=bool)
            notes.add_coded(missing & ~wide, picked.missing_codes,
                            [f"missing {quantity} ({text})" for text in picked.missing_texts])
            if quantity in WORK_COLUMNS:
                local_missing |= missing & ~wide
            for code in np.unique(sources[wide]):
                rows = wide & (sources == code)
                common = np.bincount(picked.missing_codes[rows]).argmax()
                text = picked.missing_texts[common]
                needs = tuple(text.removeprefix("needs ").split(", ")) if text.startswith("needs ") else ()
                launches = int(weight[rows].sum())  # a row may stand for several launches (summary, by-name sums)
                gaps.append(Gap(str(source_names[code]), quantity, needs, launches))  # type: ignore[union-attr]
        for mask, flag in picked.flags:
            notes.add(mask, flag)
    # running sums over the precisions, in their order (what nansum over a launches x precisions stack adds, without
    # the stack): any known, any unknown, the sum of the known
    known_any, partial = np.zeros(len(frame), dtype=bool), np.zeros(len(frame), dtype=bool)
    known_sum = np.zeros(len(frame))  # from +0.0, as nansum adds (-0.0 + -0.0 sums to 0.0 there)
    for column in WORK_COLUMNS:
        null = np.isnan(out[column])
        known_any |= ~null
        partial |= null
        np.add(known_sum, out[column], out=known_sum, where=~null)  # in place: +0.0 added nowhere changes nothing
    # Work in the precisions that were counted is a lower bound on the total when others were not; a zero from
    # partial counters could hide all the work, so it stays unknown rather than becoming AI = 0. Precisions the
    # whole capture lacks are said once for the run, not on every launch.
    notes.add(local_missing & (known_sum > 0), "flop_total_lower_bound")
    flop_total = known_sum  # the sums become the total in place (each quotient below too): no second array
    np.copyto(flop_total, np.nan, where=~(known_any & ~(partial & (known_sum == 0))))
    out["flop_total"] = flop_total
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for level in LEVELS:
            out[ai_column(level)] = _finite_or_null(flop_total / out[bytes_column(level)])
        out["flop_per_s"] = _finite_or_null(flop_total / out["time_s"])
    _flag_byte_order(out, notes)
    out.update(derive_tensor_types(columns, catalogue))
    return pd.DataFrame(out, index=frame.index, copy=False)  # fresh arrays: not copied into one block


def derive_tensor_types(columns: Columns, catalogue: Catalogue) -> dict[str, object]:
    """Tensor FLOPs per input type (`flop_tensor_<type>` and its `def_*`), where the capture splits them.

    Silent where it does not: most captures count the tensor pipe as a whole (`flop_tensor`), which stays the
    work of record there. These columns are part of `flop_tensor`, never added to `flop_total` again.
    """
    out: dict[str, object] = {}
    for quantity in TENSOR_FLOP_COLUMNS:
        defs = catalogue.definitions(quantity)
        # a type no launch counted is the frame's one read-only array of nulls (most captures: all six)
        picked = pick_definition(columns, defs, shared_nulls=True)
        out[quantity] = picked.values
        out[def_column(quantity)] = picked.def_ids(defs)
    return out


def _finite_or_null(values: np.ndarray) -> np.ndarray:
    """A fresh quotient with its infinities and NaN as null, in place."""
    np.copyto(values, np.nan, where=~np.isfinite(values))
    return values


def _source_codes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    if "source_file" not in frame:
        return np.zeros(len(frame), dtype=np.int64), np.array([""], dtype=object)
    return sorted_codes(frame["source_file"])


def _everywhere(mask: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per row: whether `mask` holds on every row of the row's group."""
    if not len(mask):
        return mask
    size = int(groups.max()) + 1
    if size == 1:  # one capture: one answer for all its rows
        return np.full(len(mask), bool(mask.all()))
    hits = np.bincount(groups, weights=mask.astype("float64"), minlength=size)
    return (hits == np.bincount(groups, minlength=size))[groups]


def _flag_byte_order(derived: dict[str, object], notes: StatusNotes) -> None:
    """More traffic nearer the cores is the norm: bytes at a level >= bytes one level out (L1 >= L2 >= DRAM).
    Compared on bytes, so the check runs whether or not FLOPs were counted. Flag violations, never fix them
    (docs/status.md says what they usually mean)."""
    with np.errstate(invalid="ignore"):
        for near, far in reversed(LEVEL_PARENTS):
            notes.add(derived[bytes_column(near)] < derived[bytes_column(far)] * (1 - 1e-9),  # type: ignore[operator]
                      f"bytes_order {near}<{far}")
