"""Two runs side by side: `compare(base, head) -> Comparison`, the library half of `ncu-roofline compare`.

A CI job asks "did this change make the GPU work slower, and where?". That needs three things, in this order:

1. a comparability check (same GPU, clock option, ceiling kind, metric definitions), because a change of
   definition or of GPU moves every number without any code changing; mismatches become `warnings`, or an
   InputError with `strict=True`;
2. kernel matching that never guesses (see `match_kernels`);
3. per-kernel and total changes, verdicts, and gates (`ncu_roofline.gates`).

The work is in `compare/` over plain tables; nothing here prints: renderers in `render/compare/` turn a Comparison into a table, Markdown, JSON or a chart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from .analysis import Analysis
from .compare.changes import DEFAULT_TIME_THRESHOLD_PCT, VERDICTS, kernel_changes, total_changes
from .core.errors import InputError
from .core.vocabulary import APP_GPU_TIME, PROFILED_SHARE, def_quantity, is_def_column
from .pipeline.gates import Gate, GateResult, evaluate_gates, parse_gate


@dataclass
class Comparison:
    """Kernels of two runs matched, with changes, verdicts and gate results.

    `kernels`: one row per matched, added or removed kernel, largest absolute time change first. Columns:
    `kernel_name`, `match` (exact / launch_order / name_only; null for added and removed), `compared`
    (`per_launch` where the launch counts differ, else `total`; null for added and removed), `verdict`, `gated`
    (at or above `min_time_s` in either run), `gates_failed` ("; "-joined gate texts), then per side
    `grid_base`/`grid_head`, `block_*`, `nvtx_range_*` (when grouped by NVTX), `device_name_*`, `launches_*`,
    `rank_*`, `bound_*`, and for each of METRICS `<m>_base`, `<m>_head`, `<m>_change` (head - base) and
    `<m>_change_pct` (percent of base); per launch for PER_LAUNCH metrics where `compared` is `per_launch`.
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
                "ceiling_sources": sorted(sources), "capture_settings": capture_settings(self.base, self.head),
                **({"timelines": [_coverage(run.app) for run in (self.base, self.head)]}
                   if self.base.app is not None or self.head.app is not None else {})}

    @property
    def input_paths(self) -> list[Path]:
        """Input files of both runs: outputs must never be written over them."""
        return [*self.base.input_paths, *self.head.input_paths]

    def bundle(self, *, formats: Iterable[str] = (), top: int = 20):
        """The files `compare -o DIR` holds (render/compare/outputs.py), rendered, not yet written: a `Bundle`."""
        from .render.compare.outputs import comparison_bundle

        return comparison_bundle(kernels=self.kernels, totals=self.totals, info=self.info(),
                                 base_kernels=self.base.kernels, head_kernels=self.head.kernels,
                                 ctx=self.chart_context(top), formats=tuple(formats))

    def chart_context(self, top: int = 20):
        """The head run's chart context, with the two runs' names as inputs."""
        from dataclasses import replace

        return replace(self.head.chart_context(top), inputs=[Path(label).name or label for label in self.labels])


def compare(base: Analysis, head: Analysis, *, min_time_s: float = 0.0, gates: Iterable[Gate | str] = (),
            strict: bool = False, time_threshold_pct: float = DEFAULT_TIME_THRESHOLD_PCT,
            totals: bool = False) -> Comparison:
    """Match the kernels of `base` and `head`, compute their changes, give each a verdict and check `gates`.

    Verdicts, for matched kernels: `regression` when time grew by more than `time_threshold_pct` percent (default
    2 %: a margin for run-to-run noise, so a reviewer's eye goes to real moves), `improvement` when it fell by
    more, `neutral` otherwise or when the kernel is under `min_time_s` in both runs (too short for its change to
    matter; such kernels are not gated either). Kernels in one run only are `added` or `removed`. Verdicts do not depend on the gates: a gate is what
    fails the CI job, a verdict is what a reviewer reads first; the rows also list the gates each kernel failed.

    A matched kernel whose launch count differs between the runs is compared (and gated) per launch: its time,
    FLOPs, speed of light and headroom divided by its launches in each run, and `compared` = `per_launch`;
    `totals=True` (`compare --totals`) compares the summed amounts instead (`compared` = `total`).

    Totals are over every kernel of each run (per launch for the kernels compared per launch, so the heading follows
    the rows); ratios are recomputed from the sums (FLOP/s = ΣFLOP / Σtime over
    kernels with a known FLOP count; roofline fraction = Σt_sol / Σtime over kernels with a known t_sol), never
    means of ratios.
    """
    warnings = comparability_warnings(base, head)
    if strict and warnings:
        base_label, head_label = run_label(base), run_label(head)
        raise InputError(None, f"{base_label} and {head_label} are not comparable: " + "; ".join(warnings))
    parsed = [gate if isinstance(gate, Gate) else parse_gate(gate) for gate in gates]
    kernels = kernel_changes(base.kernels, base.launches, head.kernels, head.launches, min_time_s=min_time_s,
                             time_threshold_pct=time_threshold_pct, per_launch=not totals)
    run_totals = total_changes(base.kernels, head.kernels, kernels)
    if base.app is not None or head.app is not None:  # --nsys: the run's GPU time and the share profiled
        for metric in (APP_GPU_TIME, PROFILED_SHARE):
            b, h = (getattr(run.app, metric) if run.app is not None else float("nan") for run in (base, head))
            run_totals.loc[metric] = [b, h, h - b, 100.0 * (h - b) / abs(b) if b else float("nan")]
    results = evaluate_gates(parsed, kernels, run_totals)
    failed: dict[int, list[str]] = {}
    for result in results:
        if result.gate.scope != "kernel":
            continue
        for position in _failing_positions(kernels, result):
            failed.setdefault(position, []).append(result.gate.text)
    kernels["gates_failed"] = pd.array(["; ".join(failed.get(i, [])) for i in range(len(kernels))], dtype="string")
    options = {"min_time_s": float(min_time_s), "time_threshold_pct": float(time_threshold_pct), "strict": strict,
               "gates": [g.text for g in parsed],
               **({"totals": True} if totals else {})}
    return Comparison(kernels=kernels, totals=run_totals, warnings=warnings, gates=results, base=base, head=head,
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
        b, h = getattr(base.options, option), getattr(head.options, option)
        if b != h:
            lines.append(f"--{option} option differs: base {b!r}, head {h!r}")
    differ("ceiling source kind", _ceiling_kinds(base.kernels), _ceiling_kinds(head.kernels))
    def_columns = sorted({c for c in (*base.launches.columns, *head.launches.columns) if is_def_column(c)})
    for column in def_columns:
        differ(f"metric definition of {def_quantity(column)}", _values(base.launches, column),
               _values(head.launches, column))
    # Cache and clock control change every time; a .ncu-rep records them (readers/capture_settings.py), a CSV
    # export does not: they are compared where both runs record them (`capture_settings` says the rest).
    for column in CAPTURE_SETTINGS:
        b, h = _values(base.launches, column), _values(head.launches, column)
        if b and h:
            differ(column.replace("_", " "), b, h)
    return lines


CAPTURE_SETTINGS = ("clock_control", "cache_control")


def capture_settings(base: Analysis, head: Analysis) -> dict[str, dict[str, str]]:
    """{'clock_control': {'base': 'base', 'head': 'none'}, ...}: each run's setting, 'unknown' where its inputs
    do not record it (a CSV export), several joined with ', '."""
    return {column: {side: ", ".join(sorted(_values(run.launches, column))) or "unknown"
                     for side, run in (("base", base), ("head", head))} for column in CAPTURE_SETTINGS}


def _values(frame: pd.DataFrame, column: str) -> set[str]:
    if column not in frame:
        return set()
    return set(frame[column].dropna().astype(str))


def _ceiling_kinds(kernels: pd.DataFrame) -> set[str]:
    """'report', 'table', 'user' from sources such as 'report+table:Tesla V100-SXM2-16GB'."""
    return {part.split(":", 1)[0] for source in _values(kernels, "ceiling_source") for part in source.split("+")}


def _listing(values: set[str]) -> str:
    return ", ".join(repr(v) for v in sorted(values)) if values else "none"


def _coverage(app) -> str | None:
    from .render.analysis.timeline import coverage_sentence

    return coverage_sentence(app) if app is not None else None


def run_label(analysis: Analysis) -> str:
    """How a run is named in messages: its one input file, or the folder that holds its inputs (relative to the
    working folder, else by name: core/paths.py)."""
    from .core.paths import shown_path

    paths = [f.path for f in analysis.inputs]
    if len(paths) == 1:
        return shown_path(paths[0])
    if not paths:
        return "(no inputs)"
    try:
        return shown_path(os.path.commonpath(paths)) + os.sep
    except ValueError:
        return f"{shown_path(paths[0])} and {len(paths) - 1} more"


def _failing_positions(kernels: pd.DataFrame, result: GateResult) -> list[int]:
    gate = result.gate
    failed = gate.verdicts(kernels[f"{gate.metric}_change"], kernels[f"{gate.metric}_change_pct"]) == 1.0
    return [int(i) for i in np.flatnonzero(kernels["gated"].to_numpy(dtype=bool) & failed)]
