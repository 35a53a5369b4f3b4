"""Launches rolled up into kernel groups: a group is the sum of its own launch rows.

A kernel group is (kernel name, grid, block, device), optionally split by NVTX range. Every launch is derived and
placed on its roofs first (at its own clock, from the rates its report's section reads); the group then adds up
the launches' amounts and recomputes its ratios from those sums:

- extensive columns (`time_s`, every `flop_*` and `bytes_*`, `t_sol_s`, `headroom_s`) are sums of the launch
  rows, null when any launch of the group has that value unknown (unknown is never zero);
- `ai_*`, `flop_per_s`, `roofline_fraction` are recomputed from the sums, never averaged;
- a roof of the group is the roof that, applied to the group's summed amount, gives the summed time of its
  launches at their own roofs: peak = sum(amount) / sum(amount / launch peak) (the time-weighted mean roof where
  the group did none of that work). So a group's term time equals the sum of its launches' term times, and
  `bound` is the term with the largest summed time;
- `t_sol_s` is the sum of the launches' `t_sol_s`: the time the group would take with every launch at its own
  roof, so `headroom_s` (= sum of launch headrooms) is the time reaching the roofs would save, and ranking by it
  ranks recoverable time. docs/status.md explains this choice.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.patterns import compile_glob
from ..core.values import STRING
from ..core.vocabulary import (
    ALL_TERMS,
    DERIVED_QUANTITIES,
    LEVELS,
    LIMITER_NCU,
    LIMITER_SUMMED,
    LIMITER_TIME_WEIGHTED,
    SOL_COMPLETE,
    TENSOR_FLOP_COLUMNS,
    TERM_BY_KEY,
    WORK_COLUMNS,
    ai_column,
    bytes_column,
    def_column,
)
from .codes import one_text, sorted_codes
from .rank import split_by_tensor_type

GROUP_KEYS = ("kernel_name", "grid", "block", "device_name")
# Amounts that add up over launches; a group's value is the sum of its launches' values.
SUMMED = ("time_s", *WORK_COLUMNS, "flop_total", *(bytes_column(lv) for lv in LEVELS), "t_sol_s", "headroom_s",
          *TENSOR_FLOP_COLUMNS)
# The whole tensor pipe: not a term of launches whose tensor work is split by input type (see rank.py).
_TENSOR_PIPE = TERM_BY_KEY["tensor"].key


def group_keys(by_nvtx: bool) -> list[str]:
    return [*GROUP_KEYS, "nvtx_range"] if by_nvtx else list(GROUP_KEYS)


def group_launches(launches: pd.DataFrame, keys: list[str],
                   groups: tuple[np.ndarray, list[np.ndarray]] | None = None) -> pd.DataFrame:
    """One row per kernel group from evaluated launch rows: sums, ratios of sums, group roofs and status.
    `groups`: the launches' groups as `launch_groups(launches, keys)` gives them, where the caller has them."""
    frame = launches.copy(deep=False)  # copy-on-write: only the columns changed below are copied
    invalid = frame["_invalid"].to_numpy(dtype=bool) if "_invalid" in frame else np.zeros(len(frame), dtype=bool)
    if invalid.any():  # a launch with an impossible value adds nothing to any total (validity.py)
        frame.loc[invalid, [c for c in SUMMED if c in frame]] = 0.0
    codes, index = groups if groups is not None else launch_groups(frame, keys)
    frame["_group"] = codes
    grouped = frame.groupby("_group", sort=True)
    # Columns are gathered and the frame built at once: inserting ~100 columns one by one was most of the
    # grouping time on a small run (pandas copies its block layout on each insert).
    columns: dict[str, object] = {}
    for key, values in zip(keys, index):
        columns[key] = pd.array([None if v == "" else v for v in values], dtype=STRING)  # '' (a null key): null
    columns["kernel_demangled"] = grouped["kernel_demangled"].first().to_numpy()
    columns["compute_capability"] = grouped["compute_capability"].first().to_numpy()
    columns["launches"] = grouped["launches"].sum().to_numpy(dtype=np.int64)
    columns["source_files"] = np.ones(len(index[0]), dtype=np.int64) if one_text(frame["source_file"]) \
        else grouped["source_file"].nunique().to_numpy()  # one file: one in every group
    columns.update(_sums_or_null(frame, list(SUMMED)))
    columns.update(_limiter_inputs(frame))
    out = pd.DataFrame(columns, index=pd.RangeIndex(len(index[0]) if index else 0))
    _recompute_ratios(out)
    more = _group_roofs(frame, out)
    more.update({def_column(q): _distinct(frame, def_column(q), codes)
                 for q in (*DERIVED_QUANTITIES, *TENSOR_FLOP_COLUMNS)})
    more["ceiling_source"] = _distinct(frame, "ceiling_source", codes)
    more[LIMITER_NCU] = _distinct(frame, LIMITER_NCU, codes)  # NCU's SpeedOfLight verdict ('+'-joined: launches differ)
    out = pd.concat([out.drop(columns=[c for c in more if c in out]), pd.DataFrame(more, index=out.index)], axis=1)
    out["status"] = _group_status(frame, out["launches"].to_numpy(), grouped)
    if invalid.any():
        _left_out(frame, out, invalid)
    # complete when every launch is (a launch left out of the totals adds no term); never without a t_sol
    complete = frame[SOL_COMPLETE].astype(bool).to_numpy() | invalid if SOL_COMPLETE in frame \
        else np.zeros(len(frame), dtype=bool)
    every = np.bincount(codes, weights=(~complete).astype("float64"), minlength=len(out)) == 0 if len(frame) \
        else np.zeros(0, dtype=bool)
    out[SOL_COMPLETE] = every & out["t_sol_s"].notna().to_numpy()
    return out


def group_codes(launches: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Each launch's group: its row in `group_launches(launches, keys)` (limiter.group_gain sums over them)."""
    return launch_groups(launches, keys)[0]


def launch_groups(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Group codes (in the sorted order of the key tuples) and, per key, its value in each group (object); a null
    key part groups as ''. Each key is factorized on its own (Arrow strings: no Python object per launch) and the
    sorted per-key ranks are combined, which orders the groups as the tuples of their values would sort."""
    n = len(frame)
    codes = np.zeros(n, dtype=np.int64)
    groups = 1 if n else 0  # codes are 0 .. groups - 1, each one used
    ranks, labels = [], []
    for key in keys:
        rank, uniques = sorted_codes(frame[key])
        ranks.append(rank)
        labels.append(uniques)
        if len(uniques) > 1:  # one value: every launch keeps its group
            codes, groups = _dense_ranks(codes * len(uniques) + rank, groups * len(uniques))
    groups = int(codes.max()) + 1 if n else 0
    first = np.empty(groups, dtype=np.int64)  # one launch of each group, for its key values
    first[codes[::-1]] = np.arange(n - 1, -1, -1)
    return codes, [uniques[rank[first]] for rank, uniques in zip(ranks, labels)]


def _dense_ranks(values: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """Each value's rank among the distinct values (`np.unique`'s inverse) and their count, for values in
    0 .. bound - 1 (at most groups x distinct key values): by a table of the values present where that is no
    larger than the launches, which costs no sort."""
    present = _presence(values, bound)
    if present is None:
        distinct, inverse = np.unique(values, return_inverse=True)  # at most n distinct: no overflow
        return inverse.reshape(-1), len(distinct)
    rank = np.cumsum(present) - 1
    return rank[values], int(present.sum())


def _presence(values: np.ndarray, bound: int) -> np.ndarray | None:
    """Which of 0 .. bound - 1 occur in `values`, as a table; None where the table would be larger than the
    values (then a sort is cheaper)."""
    if bound > max(len(values), 1 << 16):
        return None
    present = np.zeros(bound, dtype=bool)
    present[values] = True
    return present


def _left_out(frame: pd.DataFrame, out: pd.DataFrame, invalid: np.ndarray) -> None:
    """Say, per group, how many launches were left out of its totals; a group of nothing but such launches has
    no totals at all (not zeros)."""
    excluded = pd.Series(invalid * frame["launches"].to_numpy(dtype=np.int64)).groupby(
        frame["_group"].to_numpy(), sort=True).sum().reindex(range(len(out)), fill_value=0).to_numpy()
    launches = out["launches"].to_numpy(dtype=np.int64)
    empty = excluded >= launches
    out.loc[empty, [c for c in SUMMED if c in out]] = np.nan
    _recompute_ratios(out)
    note = pd.Series(excluded).astype(str) + " of " + pd.Series(launches).astype(str) \
        + " launches left out of the totals (impossible values, see launches.parquet)"
    status = out["status"].astype("object").to_numpy()
    has = excluded > 0
    out["status"] = np.where(has, np.where(status == "ok", note, note + "; " + status.astype(str)), status)


def _limiter_inputs(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The limiter's inputs (limiter.py): counts summed, rates and launch settings weighted by time (null where any
    launch of the group has it unknown)."""
    columns = _sums_or_null(frame, [c for c in LIMITER_SUMMED if c in frame])
    weighted = [c for c in LIMITER_TIME_WEIGHTED if c in frame]
    if not weighted:
        return columns
    time_s = frame["time_s"].to_numpy(dtype="float64")
    products = {c: _floats(frame, c) * time_s for c in weighted}
    sums = _group_sums_or_null({**products, "_time": time_s}, frame["_group"].to_numpy())
    with np.errstate(divide="ignore", invalid="ignore"):
        for column in weighted:
            columns[column] = _finite(sums[column] / sums["_time"])
    return columns


def _sums_or_null(frame: pd.DataFrame, columns: list[str]) -> dict[str, np.ndarray]:
    """Per group, the sum of each column over its launches; null when any launch of the group has it unknown."""
    return _group_sums_or_null({c: _floats(frame, c) for c in columns}, frame["_group"].to_numpy())


def _floats(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A column as float64, null as NaN: a float64 column's own values (read-only, not copied)."""
    values = frame[column]
    return values.to_numpy() if values.dtype == np.float64 else values.to_numpy(dtype="float64", na_value=np.nan)


def _group_sums_or_null(columns: dict[str, np.ndarray], group: np.ndarray) -> dict[str, np.ndarray]:
    """Per group (codes 0..groups-1, every group present), the sum of each array over its launches; null when any
    launch of the group has it unknown. pandas' groupby sum (compensated, so that totals do not depend on launch
    order), as one float block of the columns would give it; a column unknown on every launch (a counter the
    capture lacks) is null without being summed.

    pandas picks its summation per block: `ufunc.reduceat` where the group codes are sorted and the block holds no
    NaN, else its compensated loop. So each column is a block of its own (no stacked copy of 10^6 x columns),
    which sums every column as the one block would, unless the codes are sorted and some columns hold a NaN and
    others not: those are stacked, as one block, as before."""
    n_groups = int(group.max()) + 1 if len(group) else 0
    unknown = {c: np.isnan(v) for c, v in columns.items()}
    out = {c: np.full(n_groups, np.nan) for c in columns if unknown[c].all()}
    summed = [c for c in columns if c not in out]
    if summed:
        holes = [unknown[c].any() for c in summed]
        if any(holes) and not all(holes) and bool((group[1:] >= group[:-1]).all()):
            block = pd.DataFrame(np.vstack([columns[c] for c in summed]).T, copy=False)  # a row per column
        else:
            block = pd.DataFrame({j: columns[c] for j, c in enumerate(summed)}, copy=False)  # a block per column
        totals = block.groupby(group, sort=True).sum(min_count=1).to_numpy(dtype="float64")
        for j, column in enumerate(summed):
            out[column] = np.where(np.bincount(group, weights=unknown[column], minlength=n_groups) > 0, np.nan,
                                   totals[:, j]) if unknown[column].any() else totals[:, j]
    return {c: out[c] for c in columns}


def _recompute_ratios(out: pd.DataFrame) -> None:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for level in LEVELS:
            out[ai_column(level)] = _finite(out["flop_total"] / out[bytes_column(level)])
        out["flop_per_s"] = _finite(out["flop_total"] / out["time_s"])
        out["roofline_fraction"] = _finite(out["t_sol_s"] / out["time_s"])


def _finite(series: pd.Series | np.ndarray) -> np.ndarray:
    values = np.asarray(series, dtype="float64")
    return np.where(np.isfinite(values), values, np.nan)


def _group_roofs(frame: pd.DataFrame, out: pd.DataFrame) -> dict[str, object]:
    """Group roofs (sum(amount) / sum(amount / peak), else time-weighted) and `bound` from summed term times, as
    columns to add to `out` (which gives the groups' `t_sol_s`). A term whose roof is unknown on every launch, or
    whose amount is, needs none of its sums: they are all null or all zero; nor does a term whose amount is zero on
    every launch (its sums are zeros). Launches that share one roof give the group exactly that roof, so where
    they do in every group (one GPU's table, as usual) the group's roof needs no sums at all."""
    columns: dict[str, object] = {}
    group = frame["_group"].to_numpy()
    n_groups = len(out)
    time_s = frame["time_s"].to_numpy(dtype="float64")
    split = split_by_tensor_type(frame)
    term_times = np.full((n_groups, len(ALL_TERMS)), np.nan)
    summed_time_s = None  # the weights of every term's time-weighted roof, summed where one is needed
    peaks = {term.peak: frame[term.peak].to_numpy(dtype="float64") for term in ALL_TERMS}
    unknown_peaks = {column: _any(np.isnan(peak), group, n_groups) for column, peak in peaks.items()}
    ranges = _group_ranges({c: p for c, p in peaks.items() if not unknown_peaks[c].all()}, group, n_groups)
    for j, term in enumerate(ALL_TERMS):
        peak, unknown_peak = peaks[term.peak], unknown_peaks[term.peak]
        if unknown_peak.all():  # null roofs and term times, whatever the sums
            columns[term.peak] = np.full(n_groups, np.nan)
            continue
        low, high = ranges[term.peak]
        shared = (low == high) | unknown_peak  # the group's roof needs no sums (unknown: null whatever they are)
        amount = frame[term.amount].to_numpy(dtype="float64")
        summed_amount = None
        if np.isnan(amount).all() and not (term.key == _TENSOR_PIPE and split.any()):
            # no work counted: the sums are zeros and the term time unknown
            usable, summed_time = np.zeros(n_groups, dtype=bool), None
        elif not amount.any():  # zero work on every launch (a null is truthy): every sum is zero
            usable, summed_time = np.ones(n_groups, dtype=bool), np.zeros(n_groups)
            summed_amount = summed_time
        else:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                launch_time = np.where(amount == 0, 0.0, amount / peak)
            if term.key == _TENSOR_PIPE:  # steps aside where the launch's tensor work is split by type
                launch_time[split] = 0.0
            usable = ~_any(np.isnan(launch_time), group, n_groups)
            summed_time = _sum(np.nan_to_num(launch_time, copy=False), group, n_groups)
            if not shared.all():
                summed_amount = _sum(np.nan_to_num(amount), group, n_groups)
        if shared.all():
            peak_group = low
        else:
            if summed_time_s is None:
                summed_time_s = _sum(np.nan_to_num(time_s), group, n_groups)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                weighted = _sum(np.nan_to_num(peak * time_s, copy=False), group, n_groups) / summed_time_s
                peak_group = weighted if summed_amount is None else \
                    np.where(summed_amount > 0, summed_amount / summed_time, weighted)
            # launches that share one roof give the group exactly that roof (no rounding through the sums)
            peak_group = np.where(low == high, low, peak_group)
        columns[term.peak] = np.where(unknown_peak | ~np.isfinite(peak_group), np.nan, peak_group)
        if summed_time is not None:
            term_times[:, j] = np.where(usable & ~unknown_peak, summed_time, np.nan)
    known = ~np.isnan(term_times).all(axis=1)
    best = np.argmax(np.where(np.isnan(term_times), -np.inf, term_times), axis=1) if n_groups else \
        np.zeros(0, dtype=np.int64)
    codes = np.where(known & out["t_sol_s"].notna().to_numpy() & (out["t_sol_s"].to_numpy() > 0), best, -1)
    columns["bound"] = pd.Categorical.from_codes(codes, categories=[t.key for t in ALL_TERMS])
    return columns


def _group_ranges(columns: dict[str, np.ndarray], group: np.ndarray,
                  n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per group, the least and the greatest of its launches' known values of each column (null where it has none
    known): one value for every group, without a groupby, where every launch that has one has the same (not zero:
    0.0 and -0.0 compare equal); the other columns in one groupby (a frame of their own arrays, not copied)."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for column, values in columns.items():
        low, high = (np.fmin.reduce(values), np.fmax.reduce(values)) if len(values) else (np.nan, np.nan)
        if low == high and low != 0:  # NaN skipped; a group with none known: an unknown roof, whatever its range
            same = np.full(n, low)
            out[column] = (same, same)
    varying = [column for column in columns if column not in out]
    if varying:
        grouped = pd.DataFrame({column: columns[column] for column in varying}, copy=False).groupby(group)
        lows, highs = (result.reindex(range(n)) for result in (grouped.min(), grouped.max()))
        out.update({column: (lows[column].to_numpy(), highs[column].to_numpy()) for column in varying})
    return out


def _sum(values: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(group, weights=values, minlength=n) if len(group) else np.zeros(n)


def _any(mask: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    """Per group, whether `mask` holds on any of its launches: a count of the few rows that hold, not a sum over
    every row."""
    return np.bincount(group[mask], minlength=n) > 0


def _distinct(frame: pd.DataFrame, column: str,
              group_of: np.ndarray | None = None) -> pd.api.extensions.ExtensionArray:
    """The value the group's launches share, or their distinct values sorted and joined with '+' (null where none).
    `group_of`: each launch's group (0 .. groups - 1, each used), the frame's `_group` where not given.

    Vectorised over (group, value) codes: this runs for every definition column of every group, and a pandas
    groupby per column was most of the grouping time on a small run. A category column (the `def_*` ones) gives its
    codes as they are, without a factorize."""
    if group_of is None:
        group_of = frame["_group"].to_numpy(dtype=np.int64)
    n_groups = int(group_of.max()) + 1 if len(frame) else 0
    result = np.full(n_groups, None, dtype=object)
    if column in frame and n_groups:
        values = frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype):
            codes, uniques = _used_codes(values)
            if codes is None:  # every launch has the one value used (or none has a value)
                if uniques:
                    result[:] = str(uniques[0])
                return pd.array(result, dtype=STRING)
        else:
            codes, uniques = pd.factorize(values)
        known = codes >= 0
        every = bool(known.all())
        group = group_of if every else group_of[known]
        if len(uniques) == 1:  # the common case: every launch that has a value has this one
            result[np.bincount(group, minlength=n_groups) > 0] = str(uniques[0])
            return pd.array(result, dtype=STRING)
        names = np.asarray([str(u) for u in uniques], dtype=object)
        order = np.argsort(names, kind="stable")  # codes renumbered so that values join in sorted order
        renumbered = np.empty_like(order)
        renumbered[order] = np.arange(len(order))
        width = len(uniques) + 1
        keys = group * width + renumbered[codes if every else codes[known]]
        present = _presence(keys, n_groups * width)
        pairs = np.unique(keys) if present is None else np.flatnonzero(present)
        groups, values = np.divmod(pairs, width)
        texts = names[order][values]
        single = np.bincount(groups, minlength=n_groups)[groups] == 1
        result[groups[single]] = texts[single]
        for group in np.unique(groups[~single]):  # launches that disagree: every value, in sorted order
            result[group] = "+".join(texts[groups == group])
    return pd.array(result, dtype=STRING)


def _used_codes(values: pd.Series) -> tuple[np.ndarray | None, list]:
    """A category column's codes renumbered over the categories its rows use (in code order; a null stays -1),
    and those categories: a count of each code, not a sort. The codes are None where no row is null and one
    category is used (or every row is null): each group then has that one value, or none."""
    raw = values.array.codes
    categories = values.dtype.categories
    if len(raw) and raw.min() == raw.max():  # one code on every row (the usual definition), or null on every row
        return None, [categories[int(raw[0])]] if raw[0] >= 0 else []
    counts = np.bincount(raw.astype(np.intp) + 1, minlength=len(categories) + 1)  # [0]: the nulls
    used = np.flatnonzero(counts[1:])
    uniques = [categories[u] for u in used.tolist()]
    if len(used) == 0 or (len(used) == 1 and counts[0] == 0):
        return None, uniques
    renumber = np.full(len(categories) + 1, -1, dtype=np.int64)
    renumber[used + 1] = np.arange(len(used))
    return renumber[raw.astype(np.intp) + 1], uniques


def _group_status(frame: pd.DataFrame, launches: np.ndarray, grouped) -> np.ndarray:
    """The notes of the group's launches; a note that holds for only some launches says for how many."""
    # (group, status) pairs in the order of the groups, then of the status texts, with their launches: from codes,
    # never a text per launch
    status = frame["status"]
    if isinstance(status.dtype, pd.CategoricalDtype):  # sorted as texts, not in the order of its categories
        status = status.astype("object")
    if one_text(status):  # one status on every launch (no factorize of 10^6 texts)
        status_codes, texts = np.zeros(len(status), dtype=np.int64), np.asarray([status.iloc[0]], dtype=object)
    else:
        status_codes, texts = pd.factorize(status, sort=True)
    known = status_codes >= 0
    width = max(len(texts), 1)
    every = bool(known.all())
    pairs = frame["_group"].to_numpy(dtype=np.int64) * width + status_codes
    pairs = pairs if every else pairs[known]
    weights = frame["launches"].to_numpy(dtype=np.int64)
    weights = weights if every else weights[known]
    present = _presence(pairs, len(launches) * width)
    if present is None:
        keys, inverse = np.unique(pairs, return_inverse=True)
        counts = np.bincount(inverse.reshape(-1), weights=weights, minlength=len(keys))
    else:  # the (group, status) pairs present from a table of them: no sort of the launches
        keys = np.flatnonzero(present)
        counts = np.bincount(pairs, weights=weights, minlength=len(present))[keys]
    pairs = ((int(key) // width, str(texts[int(key) % width]), int(count)) for key, count in zip(keys, counts))
    notes: dict[int, dict[str, int]] = {}
    for group, status, count in pairs:  # one row per distinct (group, status), never per launch
        for note in str(status).split("; "):
            if note != "ok":
                notes.setdefault(int(group), {})
                notes[int(group)][note] = notes[int(group)].get(note, 0) + int(count)
    out = np.full(len(launches), "ok", dtype=object)
    for group, found in notes.items():
        out[group] = "; ".join(note if count >= launches[group] else f"{note} ({count} of {launches[group]} launches)"
                               for note, count in found.items())
    return out


def filter_nvtx(raw: pd.DataFrame, pattern: str) -> pd.DataFrame:
    """Launches whose NVTX path (`outer/inner`) matches the glob; launches outside any range have path ""."""
    paths = raw["nvtx_range"].astype("object").where(raw["nvtx_range"].notna(), "")
    glob = compile_glob(pattern, f"--nvtx-include {pattern!r}")  # fnmatch's rules, matched in linear time
    keep = np.fromiter((glob.search(p) for p in paths.unique()), dtype=bool)
    allowed = set(np.asarray(paths.unique(), dtype=object)[keep])
    return raw[paths.isin(allowed).to_numpy()].reset_index(drop=True)
