"""The terminal summary: the top kernels by recoverable time, as a rich table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..vocabulary import TERMS, UNITS
from .names import short_kernel_name
from .numbers import format_si as fmt_si
from .safe_text import for_terminal

if TYPE_CHECKING:  # pandas is imported by the kernel table only: `ncu-roofline ceilings` starts without it
    import pandas as pd


def kernel_summary_table(kernels: pd.DataFrame, *, top: int = 10, title: str = "") -> Table:
    import pandas as pd

    table = Table(title=title or None, show_lines=False, header_style="bold")
    for name, justify in (("#", "right"), ("kernel", "left"), ("launches", "right"), ("time", "right"),
                          ("share", "right"), ("FLOP/s", "right"), ("AI dram", "right"), ("bound", "left"),
                          ("of roof", "right"), ("headroom", "right"), ("status", "left")):
        table.add_column(name, justify=justify, no_wrap=True,
                         max_width=40 if name == "kernel" else (28 if name == "status" else None))
    for row in kernels.head(top).itertuples(index=False):
        table.add_row(
            str(row.rank), Text(for_terminal(short_kernel_name(str(row.kernel_name)))), str(row.launches),
            fmt_si(row.time_s, "s"),
            "—" if pd.isna(row.time_share) else f"{row.time_share:.1%}", fmt_si(row.flop_per_s, "FLOP/s"),
            "—" if pd.isna(row.ai_dram) else f"{row.ai_dram:.3g}", "—" if pd.isna(row.bound) else str(row.bound),
            "—" if pd.isna(row.roofline_fraction) else f"{row.roofline_fraction:.1%}", fmt_si(row.headroom_s, "s"),
            Text(for_terminal(_short_status(str(row.status)))))
    return table


def _short_status(status: str) -> str:
    """The first note only; the whole status is in the Parquet tables and the JSON."""
    first, _, rest = status.partition("; ")
    first = first.split(" (", 1)[0]
    return first + (" …" if rest else "")


def print_summary(kernels: pd.DataFrame, *, top: int = 10, title: str = "", console: Console | None = None) -> None:
    (console or Console()).print(kernel_summary_table(kernels, top=top, title=title))


def gpu_table(rows: list[dict]) -> Table:
    """`ncu-roofline ceilings`: one line per GPU of the built-in table."""
    table = Table(header_style="bold")
    for name in ("GPU", "CC", "FP64", "FP32", "FP16", "Tensor", "DRAM", "L2", "L1"):
        table.add_column(name, justify="left" if name == "GPU" else "right")
    for row in rows:
        peaks = row.get("peaks", {})

        def roof(key: str, unit: str) -> str:
            value = peaks.get(key)
            value = value.get("value") if isinstance(value, dict) else value
            return fmt_si(float(value), unit) if value is not None else "—"

        table.add_row(str(row.get("name")), str(row.get("compute_capability") or "—"),
                      *(roof(t.peak, UNITS[t.kind]) for t in TERMS))
    return table
