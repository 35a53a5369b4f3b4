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

1. `demangled`: the same demangled name, what the two tools' demanglers spell differently aside (spaces,
   `(anonymous namespace)`/`<unnamed>`, `(int)4`/`4`, `(bool)1`/`true`, `const T *`/`T const*`, the old
   `<int=4>`);
2. `truncated`: a name ncu printed cut (`unnamed>::k(float)`, missing its front; or ending in `...`): the
   timeline's one name it ends (or starts) with;
3. `base`: the function's base name (`:base` CSVs, `ncu --print-kernel-base function`);
4. `mangled`: the same mangled name (`:mangled`, `--print-kernel-base mangled`).

Where both carry a launch shape, only timeline rows of the group's grid and block count (`other_shape` when the
name is there with other shapes only). Where a step finds several different kernels (`gemm<32>` and `gemm<64>` for
the base `gemm`), the group is `ambiguous`: said in a note, never guessed. Where timeline rows are claimed by
several groups (a CSV without launch shapes, or groups split by NVTX range), their time cannot be split between
them: `shared`, no app numbers, said in a note; the rows still count as profiled. `absent`: not in the timeline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.kernel_names import base_kernel_name
from ..core.vocabulary import (
    APP_COLUMNS,
    APP_GPU_TIME,
    APP_HEADROOM,
    APP_LAUNCHES,
    APP_MATCH,
    APP_TIME,
    APP_TIME_SHARE,
    PROFILED_SHARE,
)

STEPS = ("demangled", "truncated", "base", "mangled")
# Unresolved outcomes of a group, beside the steps.
AMBIGUOUS, SHARED, OTHER_SHAPE, ABSENT = "ambiguous", "shared", "other_shape", "absent"
UNPROFILED_COLUMNS = ("name", "grid", "block", APP_LAUNCHES, APP_TIME, APP_TIME_SHARE)
_ANONYMOUS = re.compile(r"\(anonymous namespace\)|<unnamed>|\{anon\}")
_OLD_TEMPLATE_ARG = re.compile(r"(?<=[<,])\s*[A-Za-z_][\w: ]*?=(?!=)")  # `kernelBLFit<int=4>` (ncu 2019/2020)
# Demanglers differ: `(int)4` / `4`, `(bool)1` / `true`, `const double *` / `double const*`.
_LITERAL_CAST = re.compile(r"\((?:unsigned |signed )?(?:int|long|long long|short|char|bool|unsigned)\)(?=-?\d)")
_BOOLEAN = {"true": "1", "false": "0"}
_BOOLEAN_WORD = re.compile(r"\b(true|false)\b")
_EAST_CONST = re.compile(r"\b([A-Za-z_][\w:]*)\s+const\b")
_SPACE = re.compile(r"\s+")
_ELLIPSIS = ("...", "…")
_LISTED = 5  # kernels named in one note


@dataclass
class AppWeighting:
    """The kernel table with APP_COLUMNS, the run's totals, and what the join has to say."""

    kernels: pd.DataFrame
    app_gpu_time_s: float
    profiled_share: float
    unprofiled: pd.DataFrame  # UNPROFILED_COLUMNS, largest first
    notes: list[str] = field(default_factory=list)

    def summary(self, *, top: int | None = None) -> dict:
        """Totals and the largest unprofiled kernels, JSON-ready (metadata, JSON summary)."""
        rows = self.unprofiled if top is None else self.unprofiled.head(top)
        return {APP_GPU_TIME: self.app_gpu_time_s, PROFILED_SHARE: self.profiled_share,
                "unprofiled_kernels": int(len(self.unprofiled)),
                "unprofiled": [{"name": str(r.name), "grid": None if pd.isna(r.grid) else str(r.grid),
                                "block": None if pd.isna(r.block) else str(r.block),
                                APP_LAUNCHES: int(getattr(r, APP_LAUNCHES)), APP_TIME: float(getattr(r, APP_TIME)),
                                APP_TIME_SHARE: float(getattr(r, APP_TIME_SHARE))}
                               for r in rows.itertuples(index=False)]}


def canonical_name(name: str) -> str:
    """A demangled name as both tools' demanglers agree on it: no spaces, one spelling of anonymous namespaces."""
    text = _ANONYMOUS.sub("{anon}", str(name))
    text = _OLD_TEMPLATE_ARG.sub("", text)
    text = _BOOLEAN_WORD.sub(lambda m: _BOOLEAN[m.group(1)], _LITERAL_CAST.sub("", text))
    return _SPACE.sub("", _EAST_CONST.sub(r"const \1", text))


def _cut(canon: str) -> tuple[str, str] | None:
    """("suffix", tail) for a name missing its front (a closing bracket before its opener), ("prefix", head) for
    one ending in an ellipsis; None for a whole name."""
    for mark in _ELLIPSIS:
        if canon.endswith(mark) and len(canon) > len(mark):
            return "prefix", canon[: -len(mark)]
    depth = 0
    for i, ch in enumerate(canon):
        depth += (ch in "<([{") - (ch in ">)]}")
        if depth < 0:
            tail = canon[i + 1:]
            return ("suffix", tail.removeprefix("::")) if tail.startswith("::") and len(tail) > 2 else None
    return None


def weight_by_timeline(kernels: pd.DataFrame, timeline: pd.DataFrame) -> AppWeighting:
    """Join ranked kernel groups to a timeline (readers/nsys.py's TIMELINE_COLUMNS); see the module docstring."""
    rows = timeline.reset_index(drop=True)
    time_s = rows["time_s"].to_numpy(dtype="float64")
    instances = rows["instances"].to_numpy(dtype="int64")
    identity = rows["name"].astype("object").to_numpy()
    index = _Index(rows)
    groups = kernels.reset_index(drop=True)
    outcome: list[str] = []
    resolved: dict[int, list[int]] = {}
    ambiguous: list[str] = []
    for g, group in enumerate(groups.itertuples(index=False)):
        name = str(group.kernel_name)
        for step in STEPS:
            found = index.find(step, name)
            if found:
                break
        else:
            outcome.append(ABSENT)
            continue
        shaped = [r for r in found if _same_shape(group.grid, rows.at[r, "grid"]) and
                  _same_shape(group.block, rows.at[r, "block"])]
        kinds = sorted({identity[r] for r in shaped})
        if not shaped:
            outcome.append(OTHER_SHAPE)
        elif len(kinds) > 1:
            outcome.append(AMBIGUOUS)
            ambiguous.append(f"#{group.rank} {name} ({step} name: {len(kinds)} kernels, "
                             + "; ".join(kinds[:3]) + ("; …" if len(kinds) > 3 else "") + ")")
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
    fraction = groups["roofline_fraction"].to_numpy(dtype="float64")
    table = groups.copy()
    table[APP_LAUNCHES] = pd.array([None if np.isnan(v) else int(v) for v in launches], dtype="Int64")
    table[APP_TIME] = app_time
    table[APP_HEADROOM] = (1.0 - fraction) * app_time
    table[APP_MATCH] = pd.array(outcome, dtype="string")
    total = float(time_s.sum())
    profiled = np.zeros(len(rows), dtype=bool)
    profiled[list(claims)] = True
    unprofiled = pd.DataFrame({"name": rows["name"].astype("object")[~profiled],
                               "grid": rows["grid"].astype("object").fillna("")[~profiled],
                               "block": rows["block"].astype("object").fillna("")[~profiled],
                               APP_LAUNCHES: instances[~profiled], APP_TIME: time_s[~profiled]})
    # one kernel over several devices is one line
    unprofiled = unprofiled.groupby(["name", "grid", "block"], sort=False, as_index=False).sum()
    for column in ("name", "grid", "block"):
        unprofiled[column] = unprofiled[column].replace("", pd.NA).astype("string")
    unprofiled[APP_TIME_SHARE] = unprofiled[APP_TIME] / total if total > 0 else np.nan
    unprofiled = unprofiled.sort_values([APP_TIME, "name"], ascending=[False, True], kind="stable",
                                        ignore_index=True)[list(UNPROFILED_COLUMNS)]
    share = float(time_s[profiled].sum() / total) if total > 0 else float("nan")
    notes = _notes(groups, outcome, ambiguous, shared, launches)
    return AppWeighting(table[[*groups.columns, *APP_COLUMNS]], total, share, unprofiled, notes)


class _Index:
    """The timeline's rows by each name form, for the lookups of the steps."""

    def __init__(self, rows: pd.DataFrame) -> None:
        self.canon = [canonical_name(v) if pd.notna(v) else None for v in rows["demangled"]]
        self.by: dict[str, dict[str, list[int]]] = {"demangled": {}, "base": {}, "mangled": {}}
        for r, key in enumerate(self.canon):
            if key is not None:
                self.by["demangled"].setdefault(key, []).append(r)
        for form in ("base", "mangled"):
            for r, value in enumerate(rows[form]):
                if pd.notna(value):
                    self.by[form].setdefault(str(value), []).append(r)

    def find(self, step: str, name: str) -> list[int]:
        if step == "demangled":
            return self.by["demangled"].get(canonical_name(name), [])
        if step == "truncated":
            cut = _cut(canonical_name(name))
            if cut is None:
                return []
            how, part = cut
            return [r for r, key in enumerate(self.canon) if key is not None and
                    (key.endswith("::" + part) if how == "suffix" else key.startswith(part))]
        if step == "base":
            return self.by["base"].get(base_kernel_name(name), [])
        return self.by["mangled"].get(name.strip(), []) if name.strip().startswith("_Z") else []


def _same_shape(profiled, timeline) -> bool:
    """Equal where both know the shape; a side that does not know it does not rule a row out."""
    if pd.isna(profiled) or pd.isna(timeline) or not str(profiled) or not str(timeline):
        return True
    return str(profiled).replace(" ", "") == str(timeline).replace(" ", "")


def _named(groups: pd.DataFrame, positions: list[int]) -> str:
    listed = [f"#{groups.at[g, 'rank']} {groups.at[g, 'kernel_name']}" for g in positions[:_LISTED]]
    return "; ".join(listed) + (f"; and {len(positions) - _LISTED} more" if len(positions) > _LISTED else "")


def _notes(groups: pd.DataFrame, outcome: list[str], ambiguous: list[str], shared: dict, launches: np.ndarray
           ) -> list[str]:
    notes = []
    absent = [g for g, o in enumerate(outcome) if o == ABSENT]
    if absent:
        mangled = any(str(groups.at[g, "kernel_name"]).startswith("_Z") for g in absent)
        notes.append(f"{len(absent)} profiled kernel group(s) not in the timeline (a profile and a timeline of "
                     "different runs, or names in another form" + (": ncu printed mangled names, take the "
                     "timeline with cuda_gpu_kern_sum:mangled or as SQLite" if mangled else "") + "): "
                     + _named(groups, absent))
    other = [g for g, o in enumerate(outcome) if o == OTHER_SHAPE]
    if other:
        notes.append(f"{len(other)} profiled kernel group(s) in the timeline only with other launch shapes: "
                     + _named(groups, other))
    if ambiguous:
        notes.append(f"{len(ambiguous)} kernel group(s) match several timeline kernels, left unweighted: "
                     + "; ".join(ambiguous[:_LISTED]))
    for sharing in shared:
        ranks = ", ".join(f"#{groups.at[g, 'rank']}" for g in sharing)
        notes.append(f"kernel groups {ranks} "
                     f"({groups.at[sharing[0], 'kernel_name']}) share timeline rows that the timeline does not "
                     "split between them (by launch shape or NVTX range): no app time for them; the SQLite "
                     "export carries launch shapes")
    fewer = [g for g in range(len(groups)) if not np.isnan(launches[g]) and launches[g] < groups.at[g, "launches"]]
    if fewer:
        notes.append(f"{len(fewer)} kernel group(s) have more profiled launches than the timeline saw (a profile and "
                     "a timeline of different runs?): " + _named(groups, fewer))
    return notes
