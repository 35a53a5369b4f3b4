"""The terminal summary: the top kernels by recoverable time, as a rich table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...core.kernel_labels import display_name, distinct_labels
from ...core.vocabulary import TERMS, UNITS
from ..numbers import format_number
from ..numbers import format_si as fmt_si
from ..safe_text import for_terminal

if TYPE_CHECKING:  # pandas is imported by the kernel table only: `ncu-roofline ceilings` starts without it
    import pandas as pd


# (header, justify) of each column; the kernel name is the one that gives way to the terminal's width.
_COLUMNS = (("#", "right"), ("kernel", "left"), ("calls", "right"), ("time", "right"), ("share", "right"),
            ("FLOP/s", "right"), ("AI", "right"), ("bound", "left"), ("of roof", "right"), ("headroom", "right"))
CAPTION = "calls: launches · AI: FLOP per DRAM byte · of roof: roofline fraction · headroom: time a kernel at its roof saves"
MIN_NAME_WIDTH = 12
MAX_NAME_WIDTH = 48


def _rows(kernels: pd.DataFrame, top: int) -> list[list[str]]:
    import pandas as pd  # noqa: F811 - imported here so `ncu-roofline ceilings` starts without pandas

    return [[
        str(row.rank), str(row.kernel_name), str(row.launches), fmt_si(row.time_s, "s"),
        "—" if pd.isna(row.time_share) else f"{row.time_share:.1%}", fmt_si(row.flop_per_s, "FLOP/s"),
        format_number(row.ai_dram), "—" if pd.isna(row.bound) else str(row.bound),
        "—" if pd.isna(row.roofline_fraction) else f"{row.roofline_fraction:.1%}", fmt_si(row.headroom_s, "s"),
    ] for row in kernels.head(top).itertuples(index=False)]


def kernel_summary_table(kernels: pd.DataFrame, *, top: int = 10, title: str = "", width: int = 120) -> Table:
    """The ranked kernels in `width` columns: every number and the rank at full length, the names shortened to
    what is left (statuses go under the table, see `status_notes`)."""
    rows = _rows(kernels, top)
    widths = [max([len(header), *(len(r[i]) for r in rows)]) for i, (header, _) in enumerate(_COLUMNS)]
    fixed = sum(w for i, w in enumerate(widths) if i != 1) + 2 * (len(_COLUMNS) - 1)  # a space each side inside
    name_width = max(MIN_NAME_WIDTH, min(MAX_NAME_WIDTH, width - fixed))
    table = Table(title=title or None, caption=CAPTION, show_lines=False, header_style="bold underline", box=None,
                  pad_edge=False, caption_justify="left")
    for i, (header, justify) in enumerate(_COLUMNS):
        table.add_column(header, justify=justify, no_wrap=True,
                         **({"max_width": name_width} if i == 1 else {"min_width": widths[i]}))
    shown = kernels.head(top)
    # Two groups of one name (other launch shapes) never share a label: the distinguishing part is kept.
    names = distinct_labels([display_name(r[1]) for r in rows], shown["grid"].astype("string").tolist(),
                            shown["block"].astype("string").tolist(), name_width)
    for row, name in zip(rows, names):
        row[1] = for_terminal(name)
        table.add_row(*(Text(cell) for cell in row))
    return table


def status_notes(kernels: pd.DataFrame, *, top: int = 10) -> list[str]:
    """The listed kernels' statuses other than `ok`, in full, one line per distinct status naming its ranks:
    a note under the table, never a cut cell."""
    shown = kernels.head(top)
    flagged = shown[shown["status"].astype("string").fillna("ok") != "ok"]
    return [f"status of #{', #'.join(map(str, group['rank']))}: {status}"
            for status, group in flagged.groupby("status", sort=False)]


def print_summary(kernels: pd.DataFrame, *, top: int = 10, title: str = "", console: Console | None = None) -> None:
    console = console or Console()
    console.print(kernel_summary_table(kernels, top=top, title=title, width=console.width))
    for line in status_notes(kernels, top=top):
        console.print(for_terminal(line), markup=False, highlight=False)


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

        table.add_row(Text(for_terminal(row.get("name"))), str(row.get("compute_capability") or "—"),
                      *(roof(t.peak, UNITS[t.kind]) for t in TERMS))
    return table
