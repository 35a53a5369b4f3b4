"""The history as Markdown for `$GITHUB_STEP_SUMMARY`: gates first (what failed the job), then the movers."""

from __future__ import annotations

import json

import pandas as pd

from ...pipeline.gates import GateResult
from ..text.changes import gate_outcome, kernel_label
from ..text.numbers import format_si as fmt_si
from ..text.numbers import signed_pct
from .console import (
    SPARK_RUNS,
    failure_text,
    newest_bound_text,
    newest_points_text,
    spark_legend,
    spark_scale,
    spark_values,
    sparkline,
)


def history_markdown(summary: pd.DataFrame, time_wide: pd.DataFrame, gates: list[GateResult], *,
                     metadata: dict[str, str], runs: int, newest_run_id: str | None, top: int = 10) -> str:
    lines = ["## ncu-roofline history", "",
             f"**{len(summary)} kernels** over **{runs} runs**, newest `{newest_run_id}`.", ""]
    if gates:
        lines += ["| gate | outcome | checked | failing kernels |", "|---|---|---:|---|"]
        for result in gates:
            failing = "; ".join(
                f"{kernel_label(f['kernel_name'], f['grid'], f['block']) if result.gate.scope != 'total' else 'total'}"
                f" {failure_text(result.gate, f, '`')}" for f in result.failures[:5]) or "—"
            lines.append(f"| `{result.gate.text}` | {gate_outcome(result, must_judge=False)} | {result.checked} | {failing} |")
        lines.append("")
        band = json.loads(metadata.get("ncu_roofline.history.options", "{}") or "{}").get("band", "mad")
        lines += _passed_yet_moved(summary, gates, band)
    spark = "runs" if runs <= SPARK_RUNS else f"the last {SPARK_RUNS} runs"
    series = spark_values(summary, time_wide, top)
    scale = spark_scale(series)
    lines += [f"| kernel | runs | time over {spark} | median before | newest | Δ time | Δ of roof | bound |",
              "|---|---:|---|---:|---:|---:|---:|---|"]
    for row, values in zip(summary.head(top).itertuples(index=False), series):
        lines.append(f"| {kernel_label(row.kernel_name, row.grid, row.block)} | {row.runs} | "
                     f"`{sparkline(values, scale) if len(values) else ''}` | {fmt_si(row.time_s_median_before, 's')} | "
                     f"{fmt_si(row.time_s_newest, 's')} | {signed_pct(row.time_s_change_pct)} | "
                     f"{newest_points_text(row)} | "
                     f"{newest_bound_text(row)} |")
    if len(series):
        lines += ["", f"Time over {spark}: {spark_legend(scale)}."]
    return "\n".join(lines) + "\n"


def _passed_yet_moved(summary: pd.DataFrame, gates: list[GateResult], band: str = "mad") -> list[str]:
    """A passing relative time gate above a kernel whose newest time moved beyond its threshold from the median of
    the earlier runs: the band was widened by earlier runs as slow (a `--band minmax` window holding the runs
    before a reverted optimisation). Said, so that "pass" never stands alone above such a change."""
    lines = []
    for result in gates:
        gate = result.gate
        if not (result.passed and gate.scope == "kernel" and gate.metric == "time_s" and gate.relative) \
                or "time_s_change_pct" not in summary:
            continue
        moved = [row for row in summary.itertuples(index=False)
                 if not pd.isna(row.time_s_change_pct) and gate.fails(row.time_s_change, row.time_s_change_pct)]
        for row in moved[:5]:
            why = ("`--band minmax` spans the window's slowest and fastest runs; the default `--band mad` judges "
                   "it against the median" if band == "minmax" else
                   "the runs it was judged against spread that wide")
            lines.append(f"⚠️ {kernel_label(row.kernel_name, row.grid, row.block)} is "
                         f"{signed_pct(row.time_s_change_pct)} against the median of its earlier runs, beyond "
                         f"`{gate.text}`, but inside the band {fmt_si(row.band_low, 's')} – "
                         f"{fmt_si(row.band_high, 's')}: {why}.")
    return [*lines, ""] if lines else []
