"""Two runs side by side: `compare(base, head) -> Comparison`, the library half of `ncu-roofline compare`.

A CI job asks "did this change make the GPU work slower, and where?". That needs three things, in this order:

1. a comparability check (same GPU, clock option, ceiling kind, metric definitions), because a change of
   definition or of GPU moves every number without any code changing; mismatches become `warnings`, or an
   InputError with `strict=True`;
2. kernel matching that never guesses (see `match_kernels`);
3. per-kernel and total changes, verdicts, and gates (`ncu_roofline.gates`).

Nothing here prints; renderers in `render/compare_*.py` turn a Comparison into a table, Markdown, JSON or a chart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from .analysis import Analysis
from .errors import InputError
from .gates import Gate, GateResult, evaluate_gates, parse_gate
from .vocabulary import AI_OFF_CHIP, def_quantity, is_def_column

METRICS = ("time_s", "flop_total", "flop_per_s", AI_OFF_CHIP, "t_sol_s", "roofline_fraction", "headroom_s")
TOTAL_METRICS = ("kernels", "launches", "time_s", "flop_total", "flop_per_s", "t_sol_s", "roofline_fraction",
                 "headroom_s")
VERDICTS = ("regression", "improvement", "neutral", "added", "removed")
MATCHES = ("exact", "launch_order", "name_only")
DEFAULT_TIME_THRESHOLD_PCT = 2.0
_SIDE_COLUMNS = ("grid", "block", "nvtx_range", "device_name", "launches", "rank", "bound")


@dataclass
class Comparison:
    """Kernels of two runs matched, with changes, verdicts and gate results.

    `kernels`: one row per matched, added or removed kernel, largest absolute time change first. Columns:
    `kernel_name`, `match` (exact / launch_order / name_only; null for added and removed), `verdict`, `gated`
    (at or above `min_time_s` in either run), `gates_failed` ("; "-joined gate texts), then per side
    `grid_base`/`grid_head`, `block_*`, `nvtx_range_*` (when grouped by NVTX), `device_name_*`, `launches_*`,
    `rank_*`, `bound_*`, and for each of METRICS `<m>_base`, `<m>_head`, `<m>_change` (head - base) and
    `<m>_change_pct` (percent of base).
    `totals`: one row per TOTAL_METRICS name (the index) with `base`, `head`, `change`, `change_pct`.
    """

    kernels: pd.DataFrame
    totals: pd.DataFrame
    warnings: list[str]
    gates: list[GateResult]
    base: Analysis
    head: Analysis
    options: dict[str, object] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when every gate passed (trivially, when there are none); a gate that judged nothing did not."""
        return all(result.passed and result.judged for result in self.gates)

    @property
    def unjudged(self) -> list[GateResult]:
        """Gates that could judge no kernel (or no total): the CLI makes these an error, exit 2."""
        return [result for result in self.gates if not result.judged]

    @property
    def labels(self) -> tuple[str, str]:
        return run_label(self.base), run_label(self.head)

    def counts(self) -> dict[str, int]:
        """Kernels per verdict, every verdict present (zero when none)."""
        found = self.kernels["verdict"].value_counts()
        return {verdict: int(found.get(verdict, 0)) for verdict in VERDICTS}

    def metadata(self) -> dict[str, str]:
        """File metadata for every artifact: both runs' metadata and the comparison options, no timestamps."""
        import json

        meta = {f"ncu_roofline.base.{k.split('.', 1)[1]}": v for k, v in self.base.metadata().items()}
        meta.update({f"ncu_roofline.head.{k.split('.', 1)[1]}": v for k, v in self.head.metadata().items()})
        meta["ncu_roofline.compare.options"] = json.dumps(self.options, sort_keys=True, default=str)
        meta["ncu_roofline.compare.warnings"] = json.dumps(self.warnings)
        meta["ncu_roofline.compare.gates"] = json.dumps([r.gate.text for r in self.gates])
        return meta

    def info(self) -> dict[str, object]:
        """What renderers need besides the tables, as plain data: labels, both runs' metadata, options, warnings,
        gate results, the verdict counts and the ceiling sources of both runs."""
        sources: set[str] = set()
        for run in (self.base, self.head):
            if "ceiling_source" in run.kernels:
                sources |= set(run.kernels["ceiling_source"].dropna().astype(str))
        return {"labels": self.labels, "base_metadata": self.base.metadata(), "head_metadata": self.head.metadata(),
                "metadata": self.metadata(), "options": self.options, "warnings": self.warnings,
                "gates": self.gates, "passed": self.passed, "counts": self.counts(),
                "ceiling_sources": sorted(sources)}

    @property
    def input_paths(self) -> list[Path]:
        """Input files of both runs: outputs must never be written over them."""
        return [*self.base.input_paths, *self.head.input_paths]

    def chart_context(self, top: int = 20):
        """The head run's chart context, with the two runs' names as inputs."""
        from dataclasses import replace

        return replace(self.head.chart_context(top), inputs=[Path(label).name or label for label in self.labels])


def compare(base: Analysis, head: Analysis, *, min_time_s: float = 0.0, gates: Iterable[Gate | str] = (),
            strict: bool = False, time_threshold_pct: float = DEFAULT_TIME_THRESHOLD_PCT) -> Comparison:
    """Match the kernels of `base` and `head`, compute their changes, give each a verdict and check `gates`.

    Verdicts, for matched kernels: `regression` when time grew by more than `time_threshold_pct` percent (default
    2 %: a margin for run-to-run noise, so a reviewer's eye goes to real moves), `improvement` when it fell by
    more, `neutral` otherwise or when the kernel is under `min_time_s` in both runs (too short for its change to
    matter; such kernels are not gated either). Kernels in one run only are `added` or `removed`. Verdicts do not depend on the gates: a gate is what
    fails the CI job, a verdict is what a reviewer reads first; the rows also list the gates each kernel failed.

    Totals are over every kernel of each run; ratios are recomputed from the sums (FLOP/s = ΣFLOP / Σtime over
    kernels with a known FLOP count; roofline fraction = Σt_sol / Σtime over kernels with a known t_sol), never
    means of ratios.
    """
    warnings = comparability_warnings(base, head)
    if strict and warnings:
        base_label, head_label = run_label(base), run_label(head)
        raise InputError(None, f"{base_label} and {head_label} are not comparable: " + "; ".join(warnings))
    parsed = [gate if isinstance(gate, Gate) else parse_gate(gate) for gate in gates]
    kernels = kernel_changes(base, head, min_time_s=min_time_s, time_threshold_pct=time_threshold_pct)
    totals = total_changes(base.kernels, head.kernels)
    results = evaluate_gates(parsed, kernels, totals)
    failed: dict[int, list[str]] = {}
    for result in results:
        if result.gate.scope != "kernel":
            continue
        for position in _failing_positions(kernels, result):
            failed.setdefault(position, []).append(result.gate.text)
    kernels["gates_failed"] = pd.array(["; ".join(failed.get(i, [])) for i in range(len(kernels))], dtype="string")
    options = {"min_time_s": float(min_time_s), "time_threshold_pct": float(time_threshold_pct), "strict": strict,
               "gates": [g.text for g in parsed]}
    return Comparison(kernels=kernels, totals=totals, warnings=warnings, gates=results, base=base, head=head,
                      options=options)


# --------------------------------------------------------------------------------------------- comparability


def comparability_warnings(base: Analysis, head: Analysis) -> list[str]:
    """One line per way the two runs' numbers are not like for like; empty when they are."""
    lines: list[str] = []

    def differ(what: str, base_values: set[str], head_values: set[str]) -> None:
        if base_values != head_values:
            lines.append(f"{what} differs: base {_listing(base_values)}, head {_listing(head_values)}")

    differ("GPU", _values(base.kernels, "device_name"), _values(head.kernels, "device_name"))
    for option in ("clock", "gpu", "ceilings"):
        b, h = base.options.get(option), head.options.get(option)
        if b != h:
            lines.append(f"--{option} option differs: base {b!r}, head {h!r}")
    differ("ceiling source kind", _ceiling_kinds(base.kernels), _ceiling_kinds(head.kernels))
    def_columns = sorted({c for c in (*base.launches.columns, *head.launches.columns) if is_def_column(c)})
    for column in def_columns:
        differ(f"metric definition of {def_quantity(column)}", _values(base.launches, column),
               _values(head.launches, column))
    # Cache and clock control change every time; readers that record them (a report's session settings) add
    # these columns, and a run compared against one without them is checked as far as it says.
    for column in ("cache_control", "clock_control"):
        if column in base.launches or column in head.launches:
            differ(column.replace("_", " "), _values(base.launches, column), _values(head.launches, column))
    return lines


def _values(frame: pd.DataFrame, column: str) -> set[str]:
    if column not in frame:
        return set()
    return set(frame[column].dropna().astype(str))


def _ceiling_kinds(kernels: pd.DataFrame) -> set[str]:
    """'report', 'table', 'user' from sources such as 'report+table:Tesla V100-SXM2-16GB'."""
    return {part.split(":", 1)[0] for source in _values(kernels, "ceiling_source") for part in source.split("+")}


def _listing(values: set[str]) -> str:
    return ", ".join(repr(v) for v in sorted(values)) if values else "none"


def run_label(analysis: Analysis) -> str:
    """How a run is named in messages: its one input file, or the folder that holds its inputs."""
    paths = [f.path for f in analysis.inputs]
    if len(paths) == 1:
        return paths[0]
    if not paths:
        return "(no inputs)"
    try:
        return os.path.commonpath(paths) + os.sep
    except ValueError:
        return f"{paths[0]} and {len(paths) - 1} more"


# ------------------------------------------------------------------------------------------------- matching


def match_kernels(base: pd.DataFrame, head: pd.DataFrame) -> pd.DataFrame:
    """Pairs of row positions (`base`, `head`, `match`) of two kernel tables; -1 on the side a kernel is missing.

    Each table needs `kernel_name`, `grid`, `block` and `launch_order` (the position of the group's first launch
    in its run), and `nvtx_range` when kernels were grouped by NVTX range. Three passes, each over what the
    previous ones left:

    1. `exact`: same name, grid, block and NVTX path; where several groups still share all four (the same kernel
       on two devices), they pair in launch order.
    2. `launch_order`: same name, grid and block but another NVTX path (ranges renamed or renumbered between
       runs), paired in launch order.
    3. `name_only`: a name held by exactly one group in each run whose launch shape changed (a retuned block
       size, say). Flagged, because the work per launch may have changed too; it is never used where a name
       repeats in either run, since a pairing there would be a guess.

    What is left is `removed` (base only) or `added` (head only).
    """
    has_nvtx = "nvtx_range" in base or "nvtx_range" in head
    b, h = _match_keys(base, has_nvtx), _match_keys(head, has_nvtx)
    free_b, free_h = np.ones(len(b), bool), np.ones(len(h), bool)
    pairs: list[tuple[int, int, str]] = []

    def pair_by(keys: list[str], kind: str, only: set[str] | None = None) -> None:
        by = keys[0] if len(keys) == 1 else keys  # one column: scalar group keys, as `only` holds
        left = b[free_b].groupby(by, sort=False).groups
        right = h[free_h].groupby(by, sort=False).groups
        for key, rows in left.items():
            if key not in right or (only is not None and key not in only):
                continue
            ordered_b = b.loc[rows].sort_values(["launch_order", "position"]).position.tolist()
            ordered_h = h.loc[right[key]].sort_values(["launch_order", "position"]).position.tolist()
            for i, j in zip(ordered_b, ordered_h):
                pairs.append((i, j, kind))
                free_b[i] = free_h[j] = False

    pair_by(["name", "grid", "block", "nvtx"], "exact")
    pair_by(["name", "grid", "block"], "launch_order")
    unique_b = set(b["name"][~b["name"].duplicated(keep=False)])
    unique_h = set(h["name"][~h["name"].duplicated(keep=False)])
    pair_by(["name"], "name_only", only=unique_b & unique_h)

    pairs += [(int(i), -1, "") for i in np.flatnonzero(free_b)]
    pairs += [(-1, int(j), "") for j in np.flatnonzero(free_h)]
    return pd.DataFrame(pairs, columns=["base", "head", "match"]).astype({"base": "int64", "head": "int64"})


def _match_keys(kernels: pd.DataFrame, has_nvtx: bool) -> pd.DataFrame:
    def text(column: str) -> pd.Series:
        if column not in kernels:
            return pd.Series([""] * len(kernels), dtype=object)
        return kernels[column].astype("object").where(kernels[column].notna(), "").astype(str).reset_index(drop=True)

    return pd.DataFrame({
        "name": text("kernel_name"), "grid": text("grid"), "block": text("block"),
        "nvtx": text("nvtx_range") if has_nvtx else "",
        "launch_order": pd.to_numeric(kernels["launch_order"], errors="coerce").fillna(np.inf).to_numpy()
        if "launch_order" in kernels else np.zeros(len(kernels)),
        "position": np.arange(len(kernels)),
    })


def launch_order(analysis: Analysis) -> pd.Series:
    """For each kernel group, the position of its first launch in the run (inputs in order, then launch ID)."""
    kernels, launches = analysis.kernels, analysis.launches
    keys = [k for k in ("kernel_name", "grid", "block", "device_name", "nvtx_range") if k in kernels]
    if not len(kernels):
        return pd.Series([], dtype="float64")

    def text(frame: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({k: frame[k].astype("object").where(frame[k].notna(), "").astype(str) for k in keys})

    first = text(launches).assign(order=np.arange(len(launches), dtype="float64")).groupby(keys, sort=False)[
        "order"].min()
    merged = text(kernels).merge(first.reset_index(), on=keys, how="left")
    return pd.Series(merged["order"].to_numpy(), index=kernels.index, dtype="float64")


# -------------------------------------------------------------------------------------------------- changes


def kernel_changes(base: Analysis, head: Analysis, *, min_time_s: float = 0.0,
                   time_threshold_pct: float = DEFAULT_TIME_THRESHOLD_PCT) -> pd.DataFrame:
    """The comparison table (see `Comparison`), without `gates_failed`."""
    base_kernels = base.kernels.assign(launch_order=launch_order(base)).reset_index(drop=True)
    head_kernels = head.kernels.assign(launch_order=launch_order(head)).reset_index(drop=True)
    pairs = match_kernels(base_kernels, head_kernels)
    b = _side(base_kernels, pairs["base"].to_numpy())
    h = _side(head_kernels, pairs["head"].to_numpy())

    names = b["kernel_name"].where(b["kernel_name"].notna(), h["kernel_name"])
    table = pd.DataFrame({"kernel_name": names.astype("string"),
                          "match": pd.array([m or pd.NA for m in pairs["match"]], dtype="string")})
    for column in _SIDE_COLUMNS:
        if column == "nvtx_range" and column not in base_kernels and column not in head_kernels:
            continue
        table[f"{column}_base"], table[f"{column}_head"] = b[column], h[column]
    for metric in METRICS:
        before, after = b[metric].astype("float64"), h[metric].astype("float64")
        change = after - before
        with np.errstate(divide="ignore", invalid="ignore"):
            pct = np.where(before != 0, 100.0 * change / before.abs(), np.nan)
        table[f"{metric}_base"], table[f"{metric}_head"] = before, after
        table[f"{metric}_change"], table[f"{metric}_change_pct"] = change, pd.Series(pct, dtype="float64")

    biggest = table[["time_s_base", "time_s_head"]].max(axis=1, skipna=True)
    table.insert(2, "gated", (biggest >= min_time_s).to_numpy(dtype=bool) & (pairs["match"] != "").to_numpy())
    table.insert(2, "verdict", _verdicts(table, pairs, time_threshold_pct))
    return _sort_by_change(table)


def _side(kernels: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """`kernels` rows at `rows` (-1: a missing kernel, all null), with every column the comparison reads."""
    wanted = ["kernel_name", *_SIDE_COLUMNS, *METRICS]
    frame = kernels.reindex(columns=wanted)
    picked = frame.reindex(rows).reset_index(drop=True)  # -1 is no label: an all-null row
    for column in ("launches", "rank"):
        picked[column] = picked[column].astype("Int64")
    for column in ("kernel_name", "grid", "block", "nvtx_range", "device_name", "bound"):
        picked[column] = picked[column].astype("string")
    return picked


def _verdicts(table: pd.DataFrame, pairs: pd.DataFrame, threshold_pct: float) -> pd.Series:
    pct = table["time_s_change_pct"].to_numpy(dtype="float64")
    verdict = np.full(len(table), "neutral", dtype=object)
    judged = table["gated"].to_numpy(dtype=bool)
    verdict[judged & (pct > threshold_pct)] = "regression"
    verdict[judged & (pct < -threshold_pct)] = "improvement"
    verdict[(pairs["head"] < 0).to_numpy()] = "removed"
    verdict[(pairs["base"] < 0).to_numpy()] = "added"
    return pd.Series(verdict, dtype="string")


def _sort_by_change(table: pd.DataFrame) -> pd.DataFrame:
    """Largest absolute time change first (a missing side counts as zero), then by name and shape: stable."""
    impact = (table["time_s_head"].fillna(0.0) - table["time_s_base"].fillna(0.0)).abs()
    keys = pd.DataFrame({"impact": -impact})
    for column in ("kernel_name", "grid_base", "block_base", "grid_head", "block_head", "nvtx_range_base",
                   "nvtx_range_head"):
        if column in table:
            keys[column] = table[column].fillna("").astype(str)
    order = keys.sort_values(list(keys.columns), kind="stable").index
    return table.loc[order].reset_index(drop=True)


def _failing_positions(kernels: pd.DataFrame, result: GateResult) -> list[int]:
    gate = result.gate
    outcome = [bool(gated) and bool(gate.fails(c, p)) for gated, c, p in
               zip(kernels["gated"], kernels[f"{gate.metric}_change"], kernels[f"{gate.metric}_change_pct"])]
    return [i for i, failed in enumerate(outcome) if failed]


def run_totals(kernels: pd.DataFrame) -> dict[str, float]:
    """Sums over a run's kernels, with ratios recomputed from the sums (see `compare`)."""
    def column(name: str) -> pd.Series:
        return pd.to_numeric(kernels[name], errors="coerce").astype("float64") if name in kernels else \
            pd.Series(np.nan, index=kernels.index)

    time_s, flop, t_sol = column("time_s"), column("flop_total"), column("t_sol_s")
    with_flop, with_sol = flop.notna() & time_s.notna(), t_sol.notna() & time_s.notna()
    flop_time, sol_time = time_s[with_flop].sum(), time_s[with_sol].sum()
    return {
        "kernels": float(len(kernels)),
        "launches": float(column("launches").sum()),
        "time_s": float(time_s.sum()),
        "flop_total": float(flop.sum()),
        "flop_per_s": float(flop[with_flop].sum() / flop_time) if flop_time > 0 else np.nan,
        "t_sol_s": float(t_sol.sum()),
        "roofline_fraction": float(t_sol[with_sol].sum() / sol_time) if sol_time > 0 else np.nan,
        "headroom_s": float(column("headroom_s").sum()),
    }


def total_changes(base_kernels: pd.DataFrame, head_kernels: pd.DataFrame) -> pd.DataFrame:
    before, after = run_totals(base_kernels), run_totals(head_kernels)
    rows = []
    for metric in TOTAL_METRICS:
        b, h = before[metric], after[metric]
        change = h - b
        pct = 100.0 * change / abs(b) if b and np.isfinite(b) else np.nan
        rows.append({"base": b, "head": h, "change": change, "change_pct": pct})
    return pd.DataFrame(rows, index=pd.Index(TOTAL_METRICS, name="metric"), dtype="float64")
