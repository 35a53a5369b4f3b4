"""Markdown summaries for `$GITHUB_STEP_SUMMARY` and pull-request comments."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from .console import fmt_si
from .names import short_kernel_name
from .safe_text import for_markdown_code, for_terminal

if TYPE_CHECKING:
    from ..analysis import Analysis


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _pct(value: float) -> str:
    return "—" if pd.isna(value) else f"{value:.1%}"


def analysis_markdown(analysis: "Analysis", *, top: int = 10) -> str:
    kernels = analysis.kernels
    total_time = float(kernels["time_s"].sum()) if len(kernels) else 0.0
    total_headroom = float(kernels["headroom_s"].sum()) if len(kernels) else 0.0
    launches = int(analysis.launches["launches"].sum()) if len(analysis.launches) else 0
    not_ok = int((analysis.launches["status"] != "ok").sum())
    lines = [
        "## ncu-roofline",
        "",
        f"**{len(kernels)} kernels**, {launches} launches, GPU time {fmt_si(total_time, 's')}, "
        f"recoverable at the roofs {fmt_si(total_headroom, 's')}"
        + (f" ({total_headroom / total_time:.1%})" if total_time > 0 else "") + ".",
        "",
        f"Inputs: {', '.join(for_markdown_code(f.path) for f in analysis.inputs)}. Ceilings: "
        f"{for_terminal(', '.join(sorted(set(kernels['ceiling_source'].dropna().astype(str)))) or 'none')}.",
        "",
        "| # | kernel | launches | time | share | FLOP/s | bound | of roof | headroom |",
        "|---:|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for row in kernels.head(top).itertuples(index=False):
        lines.append(
            f"| {row.rank} | {for_markdown_code(short_kernel_name(str(row.kernel_name)), table_cell=True)} | "
            f"{row.launches} | "
            f"{fmt_si(row.time_s, 's')} | {_pct(row.time_share)} | {fmt_si(row.flop_per_s, 'FLOP/s')} | "
            f"{'—' if pd.isna(row.bound) else row.bound} | {_pct(row.roofline_fraction)} | "
            f"{fmt_si(row.headroom_s, 's')} |")
    if not_ok:
        lines += ["", f"{not_ok} launch rows carry a status other than `ok` (see `launches.parquet`)."]
    return "\n".join(lines) + "\n"
