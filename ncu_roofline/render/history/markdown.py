"""The history as Markdown for `$GITHUB_STEP_SUMMARY`: gates first (what failed the job), then the movers."""

from __future__ import annotations

import pandas as pd

from ...pipeline.gates import GateResult
from ..text.changes import change_text, gate_outcome, kernel_label, signed_points
from ..text.numbers import signed_pct
from ..text.numbers import format_si as fmt_si
from .console import SPARK_RUNS, failure_text, sparkline


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
        lines += _passed_yet_moved(summary, gates)
    spark = "runs" if runs <= SPARK_RUNS else f"the last {SPARK_RUNS} runs"
    lines += [f"| kernel | runs | time over {spark} | median before | newest | Δ time | Δ of roof | bound |",
              "|---|---:|---|---:|---:|---:|---:|---|"]
    for row in summary.head(top).itertuples(index=False):
        values = time_wide.loc[row.series_id].to_numpy(dtype="float64")[-SPARK_RUNS:] \
            if row.series_id in time_wide.index else []
        lines.append(f"| {kernel_label(row.kernel_name, row.grid, row.block)} | {row.runs} | "
                     f"`{sparkline(values) if len(values) else ''}` | {fmt_si(row.time_s_median_before, 's')} | "
                     f"{fmt_si(row.time_s_newest, 's')} | {signed_pct(row.time_s_change_pct)} | "
                     f"{signed_points(row.roofline_fraction_change)} | "
                     f"{change_text(row.bound_first, row.bound_newest)} |")
    return "\n".join(lines) + "\n"


def _passed_yet_moved(summary: pd.DataFrame, gates: list[GateResult]) -> list[str]:
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
            lines.append(f"⚠️ {kernel_label(row.kernel_name, row.grid, row.block)} is "
                         f"{signed_pct(row.time_s_change_pct)} against the median of its earlier runs, beyond "
                         f"`{gate.text}`, but inside the band: earlier runs in the window were as far off. "
                         "The default `--band mad` judges it against the median.")
    return [*lines, ""] if lines else []
