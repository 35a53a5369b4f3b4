"""Roofs per launch: the report's own peaks, the user's file, the built-in table, in that order of trust.

- report: `*.peak_sustained` x the clock measured during the launch (what Nsight Compute draws), from the
  catalogue. A roof is taken from the report only when it matches how the work/traffic was measured.
- user (`--ceilings FILE.toml`): overrides any roof it names, report roofs included.
- table (`metrics/gpus.toml`): fills what is still unknown, matched on the device name or `--gpu NAME`.
A roof that stays unknown is null and named in the status; it is never guessed. `--clock max` rescales the
report's SM-clocked roofs from the measured clock to the device's maximum clock.

One clock basis per launch: where table roofs sit beside report roofs in one launch, the table's SM-clocked roofs
(given at the table's boost clock) are rescaled to the clock the report roofs use (the measured SM clock, or the
maximum clock under `--clock max`), so that one speed of light never mixes roofs at two clocks. The launch's
`ceiling_source` then reads `report+table:NAME@measured_clock` (or `@max_clock`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.errors import InputError
from ..core.status import StatusNotes
from ..core.vocabulary import (
    ROOF_COLUMNS,
    TENSOR_PEAK_COLUMNS,
    TENSOR_TERMS,
    TERM_BY_KEY,
    TERMS,
    def_column,
    display,
    tensor_peak_column,
)
from .catalogue import SM_CLOCKS, Catalogue, pick_definition, sm_clock_hz
from .expressions import Columns, as_columns, one_value, uniform_mask

INTEGRATED_MEMORY_CC = (8.7, 11.0, 12.1)
# The level that has no roof on integrated-memory GPUs: the memory shared with the CPU.
_OFF_CHIP = next(t for t in TERMS if t.kind == "memory" and not t.sm_clocked)
_TERM_OF_ROOF = {t.peak: t for t in (*TERMS, *TENSOR_TERMS)}
_TENSOR_PIPE = TERM_BY_KEY["tensor"]
# Roofs that run on the SM clock: scaled by --clock max, and rescaled from a table's boost clock.
_SM_CLOCKED = tuple(column for column, term in _TERM_OF_ROOF.items() if term.sm_clocked)


@dataclass(frozen=True)
class CeilingOptions:
    gpu: str | None = None  # force this table row
    user_peaks: dict[str, float] | None = None
    user_source: str | None = None
    clock: str = "measured"  # or "max"
    # Device name -> its table row, or why there is none: resolved once per analysis (see `resolve_devices`).
    devices: dict[object, object] | None = None
    use_table: bool = True  # False: report and user roofs only (a ceilings template prefilled from a report)


def attach_ceilings(raw: pd.DataFrame, derived: pd.DataFrame, catalogue: Catalogue, options: CeilingOptions,
                    notes: StatusNotes) -> pd.DataFrame:
    """Seven peak columns and one per tensor input type, `ceiling_source`, and status notes for unknown roofs.

    A roof usually comes from the same place for every launch of a capture: where it does, its origin is one code,
    not one per launch (`uniform_mask`), and the per-launch work is left to the roofs whose source varies."""
    n = len(raw)
    columns = as_columns(raw)
    out: dict[str, np.ndarray] = {}
    source_parts: list[int | np.ndarray] = []
    scale = _clock_scale(columns, catalogue, options.clock, notes)
    table_peaks, table_label, table_clock = _table_peaks(raw, options, notes)
    user_peaks = _user_roofs(options.user_peaks)
    reports: dict[str, np.ndarray] = {}
    uses = _Uses(derived)
    for column in ROOF_COLUMNS:
        term = _TERM_OF_ROOF[column]
        allowed = {d.id: uses(term.amount, d.for_defs) for d in catalogue.definitions(column) if d.for_defs}
        # a roof the capture lacks is the shared nulls until it is kept as the column (most come from the table)
        report = pick_definition(columns, catalogue.definitions(column), allowed, shared_nulls=True).values
        reports[column] = report * scale if term.sm_clocked and scale is not None else report
    # per roof, where the capture lacks it (null) and where it holds it (known, for rank.py): one bool where every
    # launch agrees
    nulls = {column: uniform_mask(np.isnan(report)) if n else False for column, report in reports.items()}
    known = {column: uniform_mask(np.isfinite(report)) if n else True for column, report in reports.items()}
    table_peaks, table_label = _on_report_clock(columns, catalogue, options.clock, user_peaks, nulls, table_peaks,
                                                table_label, table_clock, notes)
    # where each roof came from, as codes into `origins` (one text per source, not one per launch and roof)
    origins: dict[str, int] = {"": 0, "report": 1}
    label_codes, label_texts = table_label
    table_origin = _one_if_same(np.asarray([origins.setdefault(t, len(origins)) for t in label_texts],
                                           dtype=np.int64)[label_codes])
    for column in ROOF_COLUMNS:
        quantity = _TERM_OF_ROOF[column].amount
        values: np.ndarray = reports[column]  # a fresh array of its own (or the shared nulls: copied if kept)
        null = nulls[column]
        origin: int | np.ndarray = 0 if null is True else 1 if null is False else np.where(null, 0, 1)
        if column in user_peaks:
            values, null = np.full(n, user_peaks[column]), False
            origin = origins.setdefault(options.user_source or "user", len(origins))
        table = table_peaks[column]
        from_table = uniform_mask(null & ~np.isnan(table)) if null is not False and n else False
        if from_table is True:  # each table array stands for one roof: the column as it is
            values, origin = table, table_origin
        elif from_table is not False:
            values = np.where(from_table, table, values)
            origin = np.where(from_table, table_origin, origin)
        out[column] = values.copy() if values is columns.absent() else values  # a table's roof: kept as it is
        if column in TENSOR_PEAK_COLUMNS and n:  # a type's roof is cited only where the launch did work of that type
            worked = uniform_mask(derived[quantity].to_numpy(dtype="float64") > 0)
            origin = origin if worked is True else 0 if worked is False else np.where(worked, origin, 0)
        source_parts.append(origin)
    integrated = np.isin(columns.column("compute_capability"), INTEGRATED_MEMORY_CC)
    if integrated.any():
        # Orin, Thor and GB10 share memory with the CPU: Nsight Compute draws no DRAM roof there, nor do we.
        out[_OFF_CHIP.peak] = np.where(integrated, np.nan, out[_OFF_CHIP.peak])
        notes.add(integrated, f"no {display(_OFF_CHIP.key)} roof: integrated memory (CC 8.7, 11.0, 12.1)")
    frame = pd.DataFrame(out, index=raw.index, copy=False)  # fresh arrays: not copied into one block
    frame["ceiling_source"] = _join_sources(source_parts, n, list(origins))
    # which roofs the capture holds itself (bit i: ROOF_COLUMNS[i]): the terms its own roofline charts (rank.py)
    own = sum((np.asarray(known[column], dtype=np.int64) << i) for i, column in enumerate(ROOF_COLUMNS))
    frame[OWN_ROOFS] = np.broadcast_to(own, (n,)).astype(np.int64)
    return frame


def _uses(used: pd.Series, defs: tuple[str, ...]) -> np.ndarray:
    """Rows whose amount was derived by one of `defs` (`used`: the `def_*` column, a Categorical of definition ids:
    tested once per id, not once per launch)."""
    if not isinstance(used.dtype, pd.CategoricalDtype):
        return np.asarray(used.isin(defs), dtype=bool)
    hits = np.append(np.asarray(used.cat.categories.isin(defs), dtype=bool), False)  # code -1: no definition
    return hits[used.cat.codes.to_numpy()]


def _one_if_same(codes: np.ndarray) -> int | np.ndarray:
    """One code where every launch has the same (or there are none), else the codes."""
    if not len(codes):
        return 0
    return int(codes[0]) if codes.min() == codes.max() else codes


class _Uses:
    """Rows whose amount was derived by one of some definitions, for the roofs that must match how the traffic
    was measured: tested once per definition id, not once per launch; one bool where every launch agrees."""

    def __init__(self, derived: pd.DataFrame) -> None:
        self._derived = derived
        self._seen: dict[str, tuple[np.ndarray, list[str], np.ndarray]] = {}

    def __call__(self, quantity: str, defs: tuple[str, ...]) -> bool | np.ndarray:
        if quantity not in self._seen:  # which codes occur (-1: no definition), found once per quantity
            used = self._derived[def_column(quantity)]
            if not isinstance(used.dtype, pd.CategoricalDtype) or not len(used):
                return _uses(used, defs)
            codes = used.array.codes
            ids = [str(c) for c in used.cat.categories]
            self._seen[quantity] = codes, ids, np.asarray([code for code in range(-1, len(ids))
                                                           if (codes == code).any()], dtype=np.int64)
        codes, ids, present = self._seen[quantity]
        hits = np.asarray([i in defs for i in ids] + [False], dtype=bool)  # the last for code -1
        seen = hits[present]
        return bool(seen[0]) if seen.min() == seen.max() else hits[codes]


def _negate(mask: bool | np.ndarray) -> bool | np.ndarray:
    return (not mask) if isinstance(mask, bool) else ~mask


def _both(a: bool | np.ndarray, b: bool | np.ndarray) -> bool | np.ndarray:
    """Per launch, a and b (each one bool for every launch, or one per launch)."""
    if a is False or b is False:
        return False
    return b if a is True else a if b is True else a & b


def _any_of(masks) -> bool | np.ndarray:
    """Per launch, whether any of the masks holds (each one bool for every launch, or one per launch)."""
    out: bool | np.ndarray = False
    for mask in masks:
        if mask is True:
            return True
        if mask is not False:
            out = mask if out is False else out | mask
    return out


# A private column (never written): per launch, a bit mask of the roofs that came from the capture itself.
OWN_ROOFS = "_own_roofs"


def _user_roofs(user_peaks: dict[str, float] | None) -> dict[str, float]:
    """The user's roofs; their `tensor` roof is by definition dense FP16 input, so it is the FP16 type's too."""
    roofs = dict(user_peaks or {})
    tensor_fp16 = tensor_peak_column("fp16")
    if _TENSOR_PIPE.peak in roofs and tensor_fp16 not in roofs:
        roofs[tensor_fp16] = roofs[_TENSOR_PIPE.peak]
    return roofs


def _clock_scale(raw: Columns, catalogue: Catalogue, clock: str, notes: StatusNotes) -> np.ndarray | None:
    """Per launch, the factor from the measured SM clock to the one `clock` names; None for the measured one."""
    if clock == "measured":
        return None
    measured, maximum = sm_clock_hz(raw, catalogue), sm_clock_hz(raw, catalogue, "max")
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = maximum / measured
    unknown = ~np.isfinite(scale)
    needs = [" or ".join(i for d in catalogue.definitions(q) for i in d.expr.inputs)
             for q in (SM_CLOCKS["max"], SM_CLOCKS["measured"])]
    notes.add(unknown, f"clock max unknown (needs {' and '.join(needs)}); report roofs at the measured clock")
    return np.where(unknown, 1.0, scale)


def resolve_devices(names, gpu: str | None = None) -> dict[object, object]:
    """Each device name's table row (a `GpuSpec`), or the status note saying why it has none.

    Done once per analysis: launches and kernel groups share their devices. With `--gpu`, the one row it names
    (an unknown --gpu is the user's error: InputError) stands for every device.
    """
    from ..roofs.gpu_table import UnknownGpuError, is_mig, match_gpu  # the table is data; loaded on first use

    if gpu:
        return {None: match_gpu(gpu)}
    out: dict[object, object] = {}
    values = names if isinstance(names, pd.Series) else pd.Series(names, dtype="object")
    for name in np.asarray(values.dropna().unique(), dtype=object).tolist():  # no Python text per launch
        if is_mig(name):
            out[name] = (f"no table roofs: '{name}' is a MIG slice; profiling roofs do not apply to a slice, "
                         "pass --ceilings FILE.toml")
            continue
        try:
            out[name] = match_gpu(name)
        except (UnknownGpuError, InputError) as exc:
            out[name] = f"no table roofs: {exc.message}"
    return out


def _on_report_clock(columns: Columns, catalogue: Catalogue, clock: str, user_peaks: dict[str, float],
                     nulls: dict[str, bool | np.ndarray], table_peaks: dict[str, np.ndarray],
                     labels: tuple[np.ndarray, list[str]], table_clock: np.ndarray,
                     notes: StatusNotes) -> tuple[dict[str, np.ndarray], tuple[np.ndarray, list[str]]]:
    """Table roofs used beside report roofs, rescaled from the table's boost clock to the report roofs' clock
    (`nulls`: per roof, where the report lacks it; `labels`: per launch, a code into the table labels)."""
    n = columns.n
    has_report = _any_of(_negate(null) for null in nulls.values())
    # a table roof will stand beside a report roof (a user file overrides both)
    fills = _any_of(_both(nulls[column], uniform_mask(~np.isnan(table_peaks[column])))
                    for column in _SM_CLOCKED if column not in user_peaks)
    mixed = _both(has_report, fills)
    mixed = np.full(n, mixed) if isinstance(mixed, bool) else mixed
    if not mixed.any():
        return table_peaks, labels
    target = sm_clock_hz(columns, catalogue, clock)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = target / table_clock
    known = mixed & np.isfinite(factor) & (factor > 0)
    peaks = dict(table_peaks)
    for column in _SM_CLOCKED:
        peaks[column] = np.where(known, table_peaks[column] * factor, table_peaks[column])
    codes, texts = labels
    suffix = "@max_clock" if clock == "max" else "@measured_clock"
    labels = np.where(known, codes + len(texts), codes), texts + [text + suffix for text in texts]
    clock_name = "maximum" if clock == "max" else "measured"
    notes.add(mixed & ~known, f"table roofs at the table's clock beside report roofs: the {clock_name} SM clock or "
                              "the table's boost clock is unknown")
    return peaks, labels


def _table_peaks(raw: pd.DataFrame, options: CeilingOptions,
                 notes: StatusNotes) -> tuple[dict[str, np.ndarray], tuple[np.ndarray, list[str]], np.ndarray]:
    """Per launch, the built-in table's roofs for its device (or for --gpu), a label (a code into a few texts,
    "" for none) and the table's boost clock (Hz; NaN where unknown)."""
    from ..roofs.gpu_table import tensor_type_peaks  # the table is data; loaded on first use

    n = len(raw)
    texts = [""]
    if not options.use_table:
        return {c: one_value(n, np.nan) for c in ROOF_COLUMNS}, (one_value(n, 0, np.int64), texts), \
            one_value(n, np.nan)
    peaks = {c: np.full(n, np.nan) for c in ROOF_COLUMNS}
    labels, clocks = np.zeros(n, dtype=np.int64), np.full(n, np.nan)
    devices = options.devices
    if devices is None:
        devices = resolve_devices(raw["device_name"], options.gpu)
    if options.gpu:  # one row for every launch: each roof one value, no array of 10^6 copies of it
        spec = devices[None]
        roofs = {**spec.peaks, **tensor_type_peaks(spec)}
        peaks = {column: one_value(n, roofs.get(column, np.nan)) for column in ROOF_COLUMNS}
        texts = [*texts, f"table:{spec.name}"]
        return peaks, (one_value(n, 1, np.int64), texts), \
            one_value(n, spec.boost_clock_hz if spec.boost_clock_hz else np.nan)
    codes, uniques = pd.factorize(raw["device_name"], use_na_sentinel=True)  # the column's own strings: no
    for code, name in enumerate(np.asarray(uniques, dtype=object).tolist()):  # Python text per launch
        rows = codes == code
        found = devices.get(name)
        if found is None:
            found = resolve_devices([name])[name]
        if isinstance(found, str):
            notes.add(rows, found)
            continue
        roofs = {**found.peaks, **tensor_type_peaks(found)}
        for column in ROOF_COLUMNS:
            peaks[column][rows] = roofs.get(column, np.nan)
        labels[rows], texts = len(texts), [*texts, f"table:{found.name}"]
        clocks[rows] = found.boost_clock_hz if found.boost_clock_hz else np.nan
    return peaks, (labels, texts), clocks


def _join_sources(parts: list[int | np.ndarray], n: int, origins: list[str]) -> pd.Series:
    """'report', 'table:NVIDIA H100 PCIe', or 'report+table:...' where roofs came from several places (`parts`:
    per roof, a code into `origins`, one for every launch or one per launch). Launches are told apart only by the
    roofs whose origin varies; dropping the others keeps the order of the combinations, so the categories too."""
    varying = [part for part in parts if isinstance(part, np.ndarray) and n and part.min() != part.max()]
    inverse = None  # per launch, its combination: all the same where no roof's origin varies
    first = np.zeros(1 if n else 0, dtype=np.int64)
    if varying:
        combined = np.zeros(n, dtype=np.int64)
        for part in varying:
            codes, uniques = pd.factorize(part)
            combined = combined * (len(uniques) + 1) + codes
        _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    texts = []
    for row in first:
        seen = sorted((s for s in dict.fromkeys(origins[part[row] if isinstance(part, np.ndarray) else part]
                                                for part in parts) if s),
                      key=lambda s: s != "report")
        texts.append("+".join(seen) if seen else "none")
    text_codes, categories = pd.factorize(np.asarray(texts, dtype=object))
    codes = np.zeros(n, dtype=np.int8) if inverse is None else text_codes[inverse.reshape(-1)]
    return pd.Series(pd.Categorical.from_codes(codes, categories=categories), index=range(n))
