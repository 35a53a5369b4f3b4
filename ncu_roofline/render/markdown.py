"""Markdown summaries for `$GITHUB_STEP_SUMMARY` and pull-request comments."""

from __future__ import annotations

import pandas as pd

from .names import short_kernel_name
from .numbers import format_si as fmt_si
from .numbers import pct as _pct
from .safe_text import for_markdown_code, for_terminal


def analysis_markdown(kernels: pd.DataFrame, launches: pd.DataFrame, inputs: list[str], *, top: int = 10) -> str:
    """The summary: totals, inputs, ceilings, then the first `top` ranked kernels."""
    total_time = float(kernels["time_s"].sum()) if len(kernels) else 0.0
    total_headroom = float(kernels["headroom_s"].sum()) if len(kernels) else 0.0
    not_ok = int((launches["status"] != "ok").sum())
    n_launches = int(launches["launches"].sum()) if len(launches) else 0
    lines = [
        "## ncu-roofline",
        "",
        f"**{len(kernels)} kernels**, {n_launches} launches, GPU time {fmt_si(total_time, 's')}, "
        f"recoverable at the roofs {fmt_si(total_headroom, 's')}"
        + (f" ({total_headroom / total_time:.1%})" if total_time > 0 else "") + ".",
        "",
        f"Inputs: {', '.join(for_markdown_code(path) for path in inputs)}. Ceilings: "
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
    invalid = int(launches["status"].astype(str).str.contains("invalid ", regex=False).sum())
    if invalid:
        lines += ["", f"{invalid} launch rows hold impossible values (a negative counter, a zero or negative time): "
                      "they are left out of the totals above."]
    return "\n".join(lines) + "\n"
