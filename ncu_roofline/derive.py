"""From raw ncu metrics to roofline quantities: time, FLOPs per precision, bytes per level, intensities.

Every formula comes from the catalogue; this module only chooses, per launch, the first definition whose inputs
are present, records which one (`def_*`), and names what is missing when none applies. A missing counter gives a
null, never a zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .catalogue import Catalogue, Columns, Definition, as_columns
from .status import StatusNotes
from .vocabulary import (DERIVED_QUANTITIES, LEVELS, TENSOR_FLOP_COLUMNS, WORK_COLUMNS, ai_column, bytes_column,
                         def_column)



@dataclass
class Pick:
    """The outcome of choosing a definition per row for one quantity."""

    values: np.ndarray  # float64, NaN where no definition applied
    def_codes: np.ndarray  # index into the definitions, -1 where none applied
    missing_codes: np.ndarray  # index into missing_texts where values is NaN
    missing_texts: list[str]  # "needs a, b"
    flags: list[tuple[np.ndarray, str]]

    def def_ids(self, defs: list[Definition]) -> pd.Categorical:
        return pd.Categorical.from_codes(self.def_codes, categories=[d.id for d in defs])


def pick_definition(frame: pd.DataFrame | Columns, defs: list[Definition],
                    allowed: dict[str, np.ndarray] | None = None) -> Pick:
    """Per row, the value of the first applicable definition whose inputs are all present.

    `allowed` maps a definition id to a row mask restricting where it may be used (roofs that must match how the
    traffic was measured).
    """
    columns = as_columns(frame)
    n = columns.n
    values = np.full(n, np.nan)
    def_codes = np.full(n, -1, dtype=np.int64)
    best_missing = np.full(n, np.iinfo(np.int64).max)
    best_key = np.full(n, -1, dtype=np.int64)
    flags: list[tuple[np.ndarray, str]] = []
    for index, definition in enumerate(defs):
        usable = definition.applies(columns)
        if allowed is not None and definition.id in allowed:
            usable = usable & allowed[definition.id]
        if not usable.any():
            continue
        result = definition.expr.evaluate(columns)
        take = usable & np.isnan(values) & ~np.isnan(result)
        values[take] = result[take]
        def_codes[take] = index
        if definition.flag:
            flags.append((take, definition.flag))
            # Flagged fallbacks are not what a user should collect, so they are never the one named.
            continue
        # Remember, for rows still without a value, the definition that came closest (fewest missing inputs).
        rows = np.flatnonzero(usable & np.isnan(values))
        if rows.size == 0:
            continue
        missing = definition.expr.missing_mask(columns, rows)
        count = missing.sum(axis=1) * 2 + definition.is_rate_form  # ties go to the totals form
        bits = (missing.astype(np.int64) << np.arange(missing.shape[1], dtype=np.int64)).sum(axis=1)
        closer = count < best_missing[rows]
        best_missing[rows[closer]] = count[closer]
        best_key[rows[closer]] = index * (1 << 32) + bits[closer]
    missing_codes, missing_texts = _missing_text(defs, best_key, np.isnan(values))
    return Pick(values, def_codes, missing_codes, missing_texts, flags)


def _missing_text(defs: list[Definition], keys: np.ndarray, unresolved: np.ndarray) -> tuple[np.ndarray, list[str]]:
    codes = np.zeros(len(keys), dtype=np.int64)
    if not unresolved.any():
        return codes, [""]
    inverse, uniques = pd.factorize(keys[unresolved], sort=True)
    texts = []
    for key in uniques:
        if key < 0:
            texts.append("no definition applies to this GPU")
            continue
        definition = defs[int(key >> 32)]
        bits = int(key & 0xFFFFFFFF)
        names = [name for i, name in enumerate(definition.expr.inputs) if bits >> i & 1]
        texts.append(f"needs {', '.join(names)}" if names
                     else f"{definition.id} gave no finite value (division by zero?)")
    codes[unresolved] = inverse
    return codes, texts


def derive_quantities(frame: pd.DataFrame, catalogue: Catalogue, notes: StatusNotes) -> pd.DataFrame:
    """Time, FLOPs and bytes per row, with `def_*` columns and status notes for what could not be derived."""
    columns = as_columns(frame)
    out: dict[str, object] = {}
    for quantity in DERIVED_QUANTITIES:
        defs = catalogue.definitions(quantity)
        picked = pick_definition(columns, defs)
        out[quantity] = picked.values
        out[def_column(quantity)] = picked.def_ids(defs)
        notes.add_coded(np.isnan(picked.values), picked.missing_codes,
                        [f"missing {quantity} ({text})" for text in picked.missing_texts])
        for mask, flag in picked.flags:
            notes.add(mask, flag)
    derived = pd.DataFrame(out, index=frame.index)
    work = derived[list(WORK_COLUMNS)].to_numpy()
    known = ~np.isnan(work)
    known_sum = np.nansum(work, axis=1)
    partial = ~known.all(axis=1)
    # Work in the precisions that were counted is a lower bound on the total when others were not; a zero from
    # partial counters could hide all the work, so it stays unknown rather than becoming AI = 0.
    derived["flop_total"] = np.where(known.any(axis=1) & ~(partial & (known_sum == 0)), known_sum, np.nan)
    notes.add(partial & (known_sum > 0), "flop_total_lower_bound")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for level in LEVELS:
            ai = derived["flop_total"].to_numpy() / derived[bytes_column(level)].to_numpy()
            derived[ai_column(level)] = np.where(np.isfinite(ai), ai, np.nan)
        rate = derived["flop_total"].to_numpy() / derived["time_s"].to_numpy()
        derived["flop_per_s"] = np.where(np.isfinite(rate), rate, np.nan)
    _flag_hierarchy(derived, notes)
    return pd.concat([derived, derive_tensor_types(columns, catalogue, frame.index)], axis=1)


def derive_tensor_types(columns: Columns, catalogue: Catalogue, index: pd.Index) -> pd.DataFrame:
    """Tensor FLOPs per input type (`flop_tensor_<type>` and its `def_*`), where the capture splits them.

    Silent where it does not: most captures count the tensor pipe as a whole (`flop_tensor`), which stays the
    work of record there. These columns are part of `flop_tensor`, never added to `flop_total` again.
    """
    out: dict[str, object] = {}
    for quantity in TENSOR_FLOP_COLUMNS:
        defs = catalogue.definitions(quantity)
        picked = pick_definition(columns, defs)
        out[quantity] = picked.values
        out[def_column(quantity)] = picked.def_ids(defs)
    return pd.DataFrame(out, index=index)


def _flag_hierarchy(derived: pd.DataFrame, notes: StatusNotes) -> None:
    """More traffic nearer the cores is the norm: AI at a level <= AI one level out. Flag violations, never fix."""
    with np.errstate(invalid="ignore"):
        for near, far in zip(LEVELS[::-1], LEVELS[::-1][1:]):
            notes.add(derived[ai_column(near)].to_numpy() > derived[ai_column(far)].to_numpy() * (1 + 1e-9),
                      f"ai_order {near}>{far}")
