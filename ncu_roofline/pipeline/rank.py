"""Speed of light and ranking: how far each launch or kernel is from its roof, and which to look at first.

t_sol = max(flop_p / peak_p over precisions, bytes_L / peak_L over levels), over the terms whose roof is known.
Where the capture splits tensor work by input type, each type is a term of its own against its own roof
(`bound` = "tensor_fp16", ...) and the whole-pipe `tensor` term steps aside: FP8 work over the FP16 roof would
count it twice too slow. `bound` is the term that gives the max, `roofline_fraction = t_sol / time_s`,
`headroom_s = time_s - t_sol`.
`sol_complete` says whether every term the GPU has was counted (`completeness`): where not, t_sol is a lower bound,
headroom an upper bound and `bound` unproven, and the status names the missing class.
Kernels are ranked by headroom: the most recoverable time first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.status import StatusNotes
from ..core.vocabulary import (
    ALL_TERMS,
    ROOF_COLUMNS,
    SOL_COMPLETE,
    TENSOR_FLOP_COLUMNS,
    TERM_BY_KEY,
    display,
)
from .ceilings import OWN_ROOFS
from .expressions import uniform_mask

TERMS = tuple((t.key, t.amount, t.peak) for t in ALL_TERMS)
# The whole tensor pipe: steps aside where a capture counts tensor work per input type.
_TENSOR_PIPE = TERM_BY_KEY["tensor"].key
# A point this far above its roof is flagged; below it, float rounding.
ABOVE_ROOF_TOLERANCE = 1e-6


def speed_of_light(frame: pd.DataFrame, notes: StatusNotes) -> pd.DataFrame:
    """t_sol_s, bound, roofline_fraction, headroom_s for rows holding derived quantities and peaks.

    One term at a time, a running maximum: no launches x terms matrix (13 terms: 100 MB and most of this step's
    time at 10^6 launches). The bound is the first term that gives the maximum, as an argmax over the terms."""
    n = len(frame)
    names = [t[0] for t in TERMS]
    split = split_by_tensor_type(frame)
    time_s = frame["time_s"].to_numpy(dtype="float64")
    over = time_s * (1 + ABOVE_ROOF_TOLERANCE)
    t_sol = np.full(n, -np.inf)  # the largest term time so far (-inf: no term yet)
    bound_index = np.zeros(n, dtype=np.int64)
    above: list[np.ndarray] = []  # noted after every `no roof`, in term order, as the status has always read
    for j, (term, amount, peak) in enumerate(TERMS):
        work = frame[amount].to_numpy(dtype="float64")
        roof = frame[peak].to_numpy(dtype="float64")
        if np.isnan(work).all():  # nothing counted in this term: no time, no note (a tensor type uncounted)
            above.append(None)
            continue
        unroofed = np.isnan(roof)
        if unroofed.any():
            _note(notes, (work > 0) & unroofed, f"no roof {term}")
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            demand = work / roof
        np.copyto(demand, np.nan, where=~np.isfinite(demand))  # in place: no gather and scatter of the rows
        if term == _TENSOR_PIPE:
            demand[split] = np.nan
        with np.errstate(invalid="ignore"):
            larger = demand > t_sol  # strictly: the first of equal terms stays the bound
            above.append(demand > over)
        np.copyto(t_sol, demand, where=larger)
        np.copyto(bound_index, j, where=larger)
    for term, mask in zip(names, above):
        if mask is not None:
            _note(notes, mask, f"above_roof {term}")
    any_term = t_sol > -np.inf
    t_sol[~any_term] = np.nan
    bound_codes = np.where(any_term & (t_sol > 0), bound_index, -1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a denormal time_s overflows: unknown
        fraction = t_sol / time_s
    fraction[~np.isfinite(fraction)] = np.nan
    complete = completeness(frame, np.isfinite(t_sol), notes, split)
    return pd.DataFrame({
        "t_sol_s": t_sol,
        "bound": pd.Categorical.from_codes(bound_codes, categories=names),
        "roofline_fraction": fraction,
        "headroom_s": time_s - t_sol,
        SOL_COMPLETE: complete,
    }, index=frame.index, copy=False)  # fresh arrays: not copied into one block


LOWER_BOUND = "speed of light is a lower bound"
_COMPUTE = np.array([TERM_BY_KEY.get(key) is None or TERM_BY_KEY[key].kind == "compute" for key, _, _ in TERMS])


def completeness(frame: pd.DataFrame, placed: np.ndarray, notes: StatusNotes,
                 split: np.ndarray | None = None) -> np.ndarray:
    """Per row: whether the speed of light counted every term the GPU has; notes the missing class where not.

    The terms the capture could run:
    - every memory level with a known roof (report, table or user file);
    - at least one FLOP precision: a GPU with compute roofs whose capture counted no precision at all is
      `no FLOP counters`, whatever its roofs came from;
    - each precision with a known roof, where the capture holds no roof of its own (a CSV export without
      `*.peak_sustained`: the table's row says what the GPU runs); where it does (a report, an export with
      peaks), the precisions whose roofs it holds: a report is read as its ncu version charts it (a Turing
      `--set full` report charts FP32 and FP64, not FP16).
    A term is counted when its amount is known, zero included. Work in a term without a roof is missing too
    (`no roof <term>` says so). Where tensor work is split by input type the types are the terms, else the whole
    pipe (`split`: the rows whose tensor work is split, split_by_tensor_type, when the caller has it). Rows
    without a speed of light (`placed` false) are not complete and need no note: they have no bound."""
    n = len(frame)
    width = len(TERMS)
    split = _flat(split_by_tensor_type(frame) if split is None else split)
    own = _flat_int(frame[OWN_ROOFS].to_numpy(dtype=np.int64)) if OWN_ROOFS in frame else np.int64(0)
    own_none = own == 0  # no roof of the capture's own: every precision with a roof is one it runs
    # per row, one bit per term: bit j the term's counter is missing, bit width + j the GPU has the term (a roof).
    # A mask every row agrees on is one bool (`_flat`): a capture's launches mostly share their roofs and counters.
    key = np.zeros(n, dtype=np.int64)
    every = [0]  # the bits set on every row, set on `key` once at the end
    roofless = np.zeros(n, dtype=bool)  # work in a term without a roof
    counted_compute = np.zeros(n, dtype=bool)
    roofed_compute: list[tuple[int, np.ndarray | np.bool_]] = []
    for j, (term_key, amount, peak) in enumerate(TERMS):
        values = frame[amount].to_numpy(dtype="float64")
        roof = frame[peak].to_numpy(dtype="float64")
        if term_key == _TENSOR_PIPE:
            applies = ~split
        elif term_key in TERM_BY_KEY:
            applies = np.True_
        else:  # a tensor input type: a term of its own only where the capture splits tensor work by type
            applies = split
        with np.errstate(invalid="ignore"):
            roofed = applies & _flat(np.isfinite(roof) & (roof > 0))
            unroofed = applies & ~roofed
            if unroofed is not np.False_:
                roofless |= unroofed & (values > 0)
        unknown = _flat(np.isnan(values))
        missing = roofed & unknown
        if _COMPUTE[j]:  # a precision the capture's own roofs leave out is not one it charts
            missing = missing & (own_none | (own >> ROOF_COLUMNS.index(peak) & 1).astype(bool))
            counted_compute |= roofed & ~unknown
            roofed_compute.append((j, roofed))
        _set_bit(key, j, missing, every)
        _set_bit(key, width + j, roofed, every)
    # no precision counted at all: every compute term the GPU has is missing, whatever the roofs came from
    for j, roofed in roofed_compute:
        _set_bit(key, j, roofed & ~counted_compute, every)
    if every[0]:
        key |= np.int64(every[0])
    missing_any = (key & ((1 << width) - 1)) != 0
    lacking = placed & missing_any
    if lacking.any():  # the text is built once per distinct pattern, never per row
        codes, uniques = pd.factorize(key[lacking], sort=True)
        weights = np.left_shift(np.int64(1), np.arange(2 * width, dtype=np.int64))
        bits = (np.asarray(uniques, dtype=np.int64)[:, None] & weights) != 0
        texts = [_missing_class(row[:width], row[width:]) for row in bits]
        full = np.zeros(n, dtype=np.int64)
        full[lacking] = codes
        notes.add_coded(lacking, full, texts)
    return placed & ~missing_any & ~roofless


def _note(notes: StatusNotes, mask: np.ndarray, text: str) -> None:
    if mask.any():  # an empty note adds nothing: no per-row arrays made for it
        notes.add(mask, text)


def _flat(mask: np.ndarray) -> np.ndarray | np.bool_:
    """`uniform_mask` as `np.True_` or `np.False_`, which combine with arrays and take `~` as masks do."""
    flat = uniform_mask(mask)
    return np.bool_(flat) if isinstance(flat, bool) else flat


def _flat_int(values: np.ndarray) -> np.ndarray | np.int64:
    return np.int64(values[0]) if len(values) and values.min() == values.max() else values


def _set_bit(key: np.ndarray, bit: int, where: np.ndarray | np.bool_, every: list[int]) -> None:
    """Bit `bit` of `key` set in place where `where` holds (no int64 array per term and bit); where it holds on
    every row, in `every[0]` instead, for one pass over `key` at the end."""
    if where is np.True_:
        every[0] |= 1 << bit
    elif where is not np.False_:
        np.bitwise_or(key, np.int64(1) << bit, out=key, where=where)


def _missing_class(missing: np.ndarray, roofed: np.ndarray) -> str:
    """'no FLOP counters: speed of light is a lower bound' (no compute term the GPU has was counted), 'no FP64,
    FP16 FLOP counters: ...' (some were not), 'no L1 byte counters: ...', or both joined."""
    parts = []
    compute = missing & _COMPUTE
    if compute.any():
        everything = not (roofed & _COMPUTE & ~missing).any()
        parts.append("no FLOP counters" if everything
                     else f"no {', '.join(display(TERMS[j][0]) for j in np.flatnonzero(compute))} FLOP counters")
    memory = missing & ~_COMPUTE
    if memory.any():
        parts.append(f"no {', '.join(display(TERMS[j][0]) for j in np.flatnonzero(memory))} byte counters")
    return f"{', '.join(parts)}: {LOWER_BOUND}"


def split_by_tensor_type(frame: pd.DataFrame) -> np.ndarray:
    """Rows whose tensor work is counted per input type (any `flop_tensor_<type>` known)."""
    split = np.zeros(len(frame), dtype=bool)
    for column in TENSOR_FLOP_COLUMNS:  # column by column: no frame of them to copy
        if column in frame:
            split |= ~np.isnan(frame[column].to_numpy(dtype="float64", na_value=np.nan))
    return split


def rank_kernels(kernels: pd.DataFrame, *, by: str = "headroom_s") -> pd.DataFrame:
    """Most recoverable time first; ties broken by time, then name, so the order is deterministic.

    `by`: the recoverable time ranked on: `headroom_s` (of the profiled launches), or `app_headroom_s` (over the
    whole run, pipeline/app_weight.py), then the profiled headroom; a `rank` already there is renumbered."""
    total_time = np.nansum(kernels["time_s"].to_numpy(dtype="float64"))
    kernels = kernels.drop(columns=["rank"], errors="ignore")
    kernels = kernels.assign(time_share=kernels["time_s"] / total_time if total_time > 0 else np.nan)
    keys = ["headroom_s", "time_s", "kernel_name", "grid", "block"]
    keys = keys if by == "headroom_s" else [by, *keys]
    order = kernels.sort_values(keys, ascending=[k not in (by, "headroom_s", "time_s") for k in keys],
                                na_position="last", kind="stable")
    order = order.reset_index(drop=True)
    order.insert(0, "rank", np.arange(1, len(order) + 1, dtype=np.int64))
    return order
