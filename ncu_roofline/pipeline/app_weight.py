"""The profile weighted by the whole run: each profiled kernel group joined to Nsight Systems' timeline of the run.

Nsight Compute profiles a few launches (`--launch-skip/--launch-count`, `--kernel-name`, NVTX filters), so its time
shares are shares of the profiled launches. The timeline (readers/nsys.py) saw every launch. Per kernel group:

    app_launches   = the timeline's launches of the group's kernel
    app_time_s     = the timeline's GPU time of those launches
    app_headroom_s = (1 - roofline_fraction) x app_time_s

i.e. the profiled launches' efficiency applied to all of that kernel's time in the run (docs/nsys.md says what
this assumes). For the run: `app_gpu_time_s` (every kernel the timeline saw), `profiled_share` (the share of it
spent in kernels the profile reached) and the kernels it never reached, largest first.

A group's name is looked up in this order, the first step that finds the name deciding (`app_match`):

1. `exact`: the same name, character for character;
2. `normalised`: the same normal form (timeline_names.py: namespaces as ncu drops them, anonymous namespaces,
   casts like `(bool)0`, `true`/`1`, `const`, a `void` return type, spaces); a name printed without a parameter
   list matches the kernel of that name whatever its parameters;
3. `truncated`: a name ncu printed cut (missing its front, or ending in `...`): the timeline's one name it ends
   (or starts) with;
4. `mangled`: the same mangled name (`:mangled`, `--print-kernel-base mangled`);
5. `base`: the function's base name, accepted only where one side knows no more than the base (`:base` CSVs,
   `ncu --print-kernel-base function`): two full names that differ are two kernels, however alike their base
   (`other_template`: never credited with the other kernel's time).

Where both carry a launch shape, only timeline rows of the group's grid and block count (`other_shape` when the
name is there with other shapes only). Where a step finds several different kernels (`gemm<32>` and `gemm<64>` for
the base `gemm`), the group is `ambiguous`: said in a note naming the candidates, never guessed; those candidates
are neither surely profiled nor surely not, so `profiled_share` is then null and the range it lies in is given.
Where timeline rows are claimed by several groups (a CSV without launch shapes, or groups split by NVTX range),
their time cannot be split between them: `shared`, no app numbers, said in a note; the rows still count as
profiled. `absent`: not in the timeline. Each group's share of the run is `app_time_share`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.vocabulary import (
    APP_COLUMNS,
    APP_GPU_TIME,
    APP_HEADROOM,
    APP_LAUNCHES,
    APP_MATCH,
    APP_TIME,
    APP_TIME_SHARE,
    PROFILED_SHARE,
    PROFILED_SHARE_HIGH,
    PROFILED_SHARE_LOW,
)
from .rank import rank_kernels
from .timeline_names import cut, has_parameters, has_template, normal_base, normal_form, without_parameters

STEPS = ("exact", "normalised", "truncated", "mangled", "base")
# Unresolved outcomes of a group, beside the steps.
AMBIGUOUS, SHARED, OTHER_SHAPE, OTHER_TEMPLATE, ABSENT = "ambiguous", "shared", "other_shape", "other_template", \
    "absent"
UNPROFILED_COLUMNS = ("name", "grid", "block", APP_LAUNCHES, APP_TIME, APP_TIME_SHARE)
_LISTED = 5  # kernels named in one note
_RANK = re.compile(r"(?:(?<=\s)|^)#(\d+)\b")  # a rank a note cites, after a space (a name's `{lambda()#1}` is not)


@dataclass
class AppWeighting:
    """The kernel table with APP_COLUMNS, the run's totals, and what the join has to say.

    `profiled_share` is null where ambiguous groups leave unknown which of their candidate kernels was profiled:
    the share then lies between `profiled_share_low` (the rows surely profiled) and `profiled_share_high` (those
    and every candidate)."""

    kernels: pd.DataFrame
    app_gpu_time_s: float
    profiled_share: float
    unprofiled: pd.DataFrame  # UNPROFILED_COLUMNS, largest first
    notes: list[str] = field(default_factory=list)
    profiled_share_low: float = float("nan")
    profiled_share_high: float = float("nan")
    ranked: bool = True  # the kernel table is ranked by app_headroom_s (not under `--sort time` / `fraction`)

    def summary(self, *, top: int | None = None) -> dict:
        """Totals and the largest unprofiled kernels, JSON-ready (metadata, JSON summary)."""
        rows = self.unprofiled if top is None else self.unprofiled.head(top)
        return {APP_GPU_TIME: self.app_gpu_time_s, PROFILED_SHARE: _or_none(self.profiled_share),
                PROFILED_SHARE_LOW: _or_none(self.profiled_share_low),
                PROFILED_SHARE_HIGH: _or_none(self.profiled_share_high),
                "unprofiled_kernels": int(len(self.unprofiled)),
                "unprofiled": [{"name": str(r.name), "grid": None if pd.isna(r.grid) else str(r.grid),
                                "block": None if pd.isna(r.block) else str(r.block),
                                APP_LAUNCHES: int(getattr(r, APP_LAUNCHES)), APP_TIME: float(getattr(r, APP_TIME)),
                                APP_TIME_SHARE: float(getattr(r, APP_TIME_SHARE))}
                               for r in rows.itertuples(index=False)]}


def _or_none(value: float) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def weight_by_timeline(kernels: pd.DataFrame, timeline: pd.DataFrame) -> AppWeighting:
    """Join ranked kernel groups to a timeline (readers/nsys.py's TIMELINE_COLUMNS); see the module docstring.
    The table comes back ranked by `app_headroom_s`, and the notes cite those ranks."""
    rows = timeline.reset_index(drop=True)
    time_s = rows["time_s"].to_numpy(dtype="float64")
    instances = rows["instances"].to_numpy(dtype="int64")
    identity = rows["name"].astype("object").to_numpy()
    index = _Index(rows)
    groups = kernels.reset_index(drop=True)
    outcome: list[str] = []
    resolved: dict[int, list[int]] = {}
    candidates: dict[int, list[int]] = {}  # ambiguous and other-template groups: the rows they might be
    for g, group in enumerate(groups.itertuples(index=False)):
        name = str(group.kernel_name)
        found, step = [], ABSENT
        for step in STEPS:
            found = index.find(step, name)
            if found:
                break
        else:
            step = ABSENT
        if step == "base":
            kept = [r for r in found if index.base_compatible(name, r)]
            if not kept:
                outcome.append(OTHER_TEMPLATE)
                candidates[g] = found
                continue
            found = kept
        if not found:
            outcome.append(ABSENT)
            continue
        shaped = [r for r in found if _same_shape(group.grid, rows.at[r, "grid"]) and
                  _same_shape(group.block, rows.at[r, "block"])]
        kinds = sorted({identity[r] for r in shaped})
        if not shaped:
            outcome.append(OTHER_SHAPE)
        elif len(kinds) > 1:
            outcome.append(AMBIGUOUS)
            candidates[g] = shaped
        else:
            outcome.append(step)
            resolved[g] = shaped
    claims: dict[int, list[int]] = {}
    for g, found in resolved.items():
        for r in found:
            claims.setdefault(r, []).append(g)
    launches = np.full(len(groups), np.nan)
    app_time = np.full(len(groups), np.nan)
    shared: dict[tuple[int, ...], list[int]] = {}
    for g, found in resolved.items():
        sharing = tuple(sorted({other for r in found for other in claims[r]}))
        if len(sharing) > 1:
            outcome[g] = SHARED
            shared.setdefault(sharing, found)
            continue
        launches[g], app_time[g] = instances[found].sum(), time_s[found].sum()
    total = float(time_s.sum())
    fraction = groups["roofline_fraction"].to_numpy(dtype="float64")
    table = groups.copy()
    table[APP_LAUNCHES] = pd.array([None if np.isnan(v) else int(v) for v in launches], dtype="Int64")
    table[APP_TIME] = app_time
    table[APP_HEADROOM] = (1.0 - fraction) * app_time
    table[APP_MATCH] = pd.array(outcome, dtype="string")
    table[APP_TIME_SHARE] = app_time / total if total > 0 else np.nan
    table["_group"] = np.arange(len(groups))
    table = rank_kernels(table[[*groups.columns, *APP_COLUMNS, "_group"]], by=APP_HEADROOM)
    ranks = dict(zip(table["_group"].tolist(), table["rank"].tolist()))  # the ranks the reader sees
    table = table.drop(columns="_group")
    profiled = np.zeros(len(rows), dtype=bool)
    profiled[list(claims)] = True
    maybe = np.zeros(len(rows), dtype=bool)
    for g, found in candidates.items():
        if outcome[g] == AMBIGUOUS:
            maybe[found] = True
    maybe &= ~profiled
    listed = ~profiled & ~maybe  # a row that may have been profiled is never listed as not profiled
    unprofiled = pd.DataFrame({"name": rows["name"].astype("object")[listed],
                               "grid": rows["grid"].astype("object").fillna("")[listed],
                               "block": rows["block"].astype("object").fillna("")[listed],
                               APP_LAUNCHES: instances[listed], APP_TIME: time_s[listed]})
    # one kernel over several devices is one line
    unprofiled = unprofiled.groupby(["name", "grid", "block"], sort=False, as_index=False).sum()
    for column in ("name", "grid", "block"):
        unprofiled[column] = unprofiled[column].replace("", pd.NA).astype("string")
    unprofiled[APP_TIME_SHARE] = unprofiled[APP_TIME] / total if total > 0 else np.nan
    unprofiled = unprofiled.sort_values([APP_TIME, "name"], ascending=[False, True], kind="stable",
                                        ignore_index=True)[list(UNPROFILED_COLUMNS)]
    low = float(time_s[profiled].sum() / total) if total > 0 else float("nan")
    high = float(time_s[profiled | maybe].sum() / total) if total > 0 else float("nan")
    notes = _notes(groups, ranks, outcome, candidates, shared, launches, identity)
    if maybe.any():
        notes.append(f"the profile covers between {100 * low:.1f}% and {100 * high:.1f}% of the run's GPU time: "
                     f"{int(maybe.sum())} timeline kernel(s) are candidates of ambiguous groups, profiled or not")
    return AppWeighting(table, total, low if not maybe.any() else float("nan"), unprofiled, notes, low, high)


class _Index:
    """The timeline's rows by each name form, for the lookups of the steps."""

    def __init__(self, rows: pd.DataFrame) -> None:
        demangled = [str(v) if pd.notna(v) else None for v in rows["demangled"]]
        self.normal = [normal_form(v) if v is not None else None for v in demangled]
        self.by: dict[str, dict[str, list[int]]] = {form: {} for form in ("exact", "normalised", "function",
                                                                          "base", "mangled")}
        for r, (name, key) in enumerate(zip(rows["name"].astype("object"), self.normal)):
            if pd.notna(name):
                self.by["exact"].setdefault(str(name).strip(), []).append(r)
            if key is not None:
                self.by["normalised"].setdefault(key, []).append(r)
                self.by["function"].setdefault(without_parameters(key), []).append(r)
        for r, value in enumerate(rows["base"]):
            if pd.notna(value):
                self.by["base"].setdefault(str(value), []).append(r)
        for r, value in enumerate(rows["mangled"]):
            if pd.notna(value):
                self.by["mangled"].setdefault(str(value), []).append(r)

    def find(self, step: str, name: str) -> list[int]:
        if step == "exact":
            return self.by["exact"].get(name.strip(), [])
        if step == "normalised":
            key = normal_form(name)
            if has_parameters(key):
                return self.by["normalised"].get(key, [])
            # a print without a parameter list (`k<4>`) is the kernel of that name with any parameters
            return self.by["function"].get(key, [])
        if step == "truncated":
            part = cut(normal_form(name))
            if part is None:
                return []
            how, text = part
            return [r for r, key in enumerate(self.normal) if key is not None and
                    (key.endswith(text) if how == "suffix" else key.startswith(text))]
        if step == "base":
            return self.by["base"].get(normal_base(name), [])
        return self.by["mangled"].get(name.strip(), []) if name.strip().startswith("_Z") else []

    def base_compatible(self, name: str, r: int) -> bool:
        """A base-name hit counts only where one side says no more than the base name: two full names whose normal
        forms differ are two kernels (other template arguments or parameters), however alike their base."""
        key = normal_form(name)
        return self.normal[r] is None or not (has_template(key) or has_parameters(key))


def _same_shape(profiled, timeline) -> bool:
    """Equal where both know the shape; a side that does not know it does not rule a row out."""
    if pd.isna(profiled) or pd.isna(timeline) or not str(profiled) or not str(timeline):
        return True
    return str(profiled).replace(" ", "") == str(timeline).replace(" ", "")


def renumbered(notes: list[str], ranks: dict[int, int]) -> list[str]:
    """The notes with each `#N` the rank of that group in a re-sorted table (`--sort`), `#—` for one filtered out
    (`--kernel`): the notes cite the ranks the reader sees."""
    def one(match: re.Match) -> str:
        rank = ranks.get(int(match.group(1)))
        return f"#{rank}" if rank is not None else "#—"
    return [_RANK.sub(one, note) for note in notes]


def _named(groups: pd.DataFrame, ranks: dict[int, int], positions: list[int]) -> str:
    positions = sorted(positions, key=ranks.__getitem__)
    listed = [f"#{ranks[g]} {groups.at[g, 'kernel_name']}" for g in positions[:_LISTED]]
    return "; ".join(listed) + (f"; and {len(positions) - _LISTED} more" if len(positions) > _LISTED else "")


def _candidates(identity: np.ndarray, found: list[int]) -> str:
    kinds = sorted({str(identity[r]) for r in found})
    return f"{len(kinds)} kernels: " + "; ".join(kinds[:3]) + ("; …" if len(kinds) > 3 else "")


def _notes(groups: pd.DataFrame, ranks: dict[int, int], outcome: list[str], candidates: dict[int, list[int]],
           shared: dict, launches: np.ndarray, identity: np.ndarray) -> list[str]:
    notes = []
    absent = [g for g, o in enumerate(outcome) if o == ABSENT]
    if absent:
        mangled = any(str(groups.at[g, "kernel_name"]).startswith("_Z") for g in absent)
        notes.append(f"{len(absent)} profiled kernel group(s) not in the timeline (a profile and a timeline of "
                     "different runs, or names in another form" + (": ncu printed mangled names, take the "
                     "timeline with cuda_gpu_kern_sum:mangled or as SQLite" if mangled else "") + "): "
                     + _named(groups, ranks, absent))
    other = [g for g, o in enumerate(outcome) if o == OTHER_SHAPE]
    if other:
        notes.append(f"{len(other)} profiled kernel group(s) in the timeline only with other launch shapes: "
                     + _named(groups, ranks, other))
    for kind, says in ((AMBIGUOUS, "match several timeline kernels, left unweighted"),
                       (OTHER_TEMPLATE, "share only their base name with timeline kernels of other template "
                                        "arguments or parameters, left unweighted (never credited with another "
                                        "kernel's time)")):
        hits = sorted((g for g, o in enumerate(outcome) if o == kind), key=ranks.__getitem__)
        if hits:
            notes.append(f"{len(hits)} kernel group(s) {says}: " + "; ".join(
                f"#{ranks[g]} {groups.at[g, 'kernel_name']} ({_candidates(identity, candidates[g])})"
                for g in hits[:_LISTED]) + (f"; and {len(hits) - _LISTED} more" if len(hits) > _LISTED else ""))
    for sharing in shared:
        listed = ", ".join(f"#{ranks[g]}" for g in sorted(sharing, key=ranks.__getitem__))
        notes.append(f"kernel groups {listed} "
                     f"({groups.at[sharing[0], 'kernel_name']}) share timeline rows that the timeline does not "
                     "split between them (by launch shape or NVTX range): no app time for them; the SQLite "
                     "export carries launch shapes")
    fewer = [g for g in range(len(groups)) if not np.isnan(launches[g]) and launches[g] < groups.at[g, "launches"]]
    if fewer:
        notes.append(f"{len(fewer)} kernel group(s) have more profiled launches than the timeline saw (a profile and "
                     "a timeline of different runs?): " + _named(groups, ranks, fewer))
    return notes
