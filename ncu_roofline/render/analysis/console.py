"""The terminal summary: the top kernels by recoverable time, as a rich table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...core.kernel_labels import display_name, distinct_labels
from ...core.vocabulary import APP_HEADROOM, APP_TIME, SOL_COMPLETE, TERMS, UNITS
from ..numbers import (
    INCOMPLETE_LEGEND,
    format_number,
    incomplete,
    lower_bound,
    unproven,
    upper_bound,
)
from ..numbers import format_si as fmt_si
from ..safe_text import for_terminal

if TYPE_CHECKING:  # pandas is imported by the kernel table only: `ncu-roofline ceilings` starts without it
    import pandas as pd

    from ...pipeline.app_weight import AppWeighting


# (header, justify) of each column; the kernel name is the one that gives way to the terminal's width.
_COLUMNS = (("#", "right"), ("kernel", "left"), ("calls", "right"), ("time", "right"), ("share", "right"),
            ("FLOP/s", "right"), ("AI", "right"), ("bound", "left"), ("of roof", "right"), ("headroom", "right"))
_WHY_COLUMN = (("why", "left"),)
CAPTION = ("calls: launches · AI: FLOP per DRAM byte · of roof: roofline fraction · headroom: time a kernel at its roof "
           "saves · why: the limiter, the first thing to fix (`show RANK` gives its evidence)")
# With --nsys: the kernel's time over the whole run, and the part of it reaching the roof would save.
_APP_COLUMNS = (("app time", "right"), ("app headroom", "right"))
APP_CAPTION = " · app: over the whole run (Nsight Systems timeline)"
MIN_NAME_WIDTH = 12
MAX_NAME_WIDTH = 48


def _rows(kernels: pd.DataFrame, top: int) -> list[list[str]]:
    import pandas as pd  # noqa: F811 - imported here so `ncu-roofline ceilings` starts without pandas

    complete = _complete(kernels.head(top))
    return [[
        str(row.rank), str(row.kernel_name), str(row.launches), fmt_si(row.time_s, "s"),
        "—" if pd.isna(row.time_share) else f"{row.time_share:.1%}", fmt_si(row.flop_per_s, "FLOP/s"),
        format_number(row.ai_dram), "—" if pd.isna(row.bound) else unproven(str(row.bound), done),
        "—" if pd.isna(row.roofline_fraction) else lower_bound(f"{row.roofline_fraction:.1%}", done),
        upper_bound(fmt_si(row.headroom_s, "s"), done),
        *((fmt_si(getattr(row, APP_TIME), "s"), fmt_si(getattr(row, APP_HEADROOM), "s")) if APP_HEADROOM in kernels
          else ()),
        limiter_word(getattr(row, "limiter", None)),
    ] for row, done in zip(kernels.head(top).itertuples(index=False), complete)]


def _complete(kernels: pd.DataFrame) -> list[object]:
    """Each row's `sol_complete` (True where the table predates the column)."""
    return kernels[SOL_COMPLETE].tolist() if SOL_COMPLETE in kernels else [True] * len(kernels)


def limiter_word(value: object) -> str:
    """The limiter as the tables print it ('bank conflicts'), '—' where the tables have none."""
    import pandas as pd  # noqa: F811

    return "—" if value is None or pd.isna(value) else str(value).replace("_", " ")


def limiter_text(limiter: object, evidence: object) -> str:
    """'latency: issue slots 26 % busy; ...' in words; an unknown limiter points at the run notes for what to
    collect (its evidence names every missing metric: too long for a table cell)."""
    import pandas as pd  # noqa: F811

    word = limiter_word(limiter)
    if word == "unknown":
        return "unknown (counters not collected: see the notes)"
    return word if evidence is None or pd.isna(evidence) else f"{word}: {evidence}"


def kernel_summary_table(kernels: pd.DataFrame, *, top: int = 10, title: str = "", width: int = 120) -> Table:
    """The ranked kernels in `width` columns: every number and the rank at full length, the names shortened to
    what is left (statuses go under the table, see `status_notes`)."""
    rows = _rows(kernels, top)
    columns = (*_COLUMNS, *(_APP_COLUMNS if APP_HEADROOM in kernels else ()), *_WHY_COLUMN)
    widths = [max([len(header), *(len(r[i]) for r in rows)]) for i, (header, _) in enumerate(columns)]
    fixed = sum(w for i, w in enumerate(widths) if i != 1) + 2 * (len(columns) - 1)  # a space each side inside
    name_width = max(MIN_NAME_WIDTH, min(MAX_NAME_WIDTH, width - fixed))
    caption = CAPTION + (APP_CAPTION if APP_HEADROOM in kernels else "") + (
        " · " + INCOMPLETE_LEGEND if any(map(incomplete, _complete(kernels.head(top)))) else "")
    table = Table(title=title or None, caption=caption, show_lines=False, header_style="bold underline", box=None,
                  pad_edge=False, caption_justify="left")
    for i, (header, justify) in enumerate(columns):
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


def print_summary(kernels: pd.DataFrame, *, top: int = 10, title: str = "", console: Console | None = None,
                  app: AppWeighting | None = None) -> None:
    """The table and its status notes; with `app` (--nsys) how much of the run the profile covers first, and the
    largest kernels it never reached after."""
    console = console or Console()
    if app is not None:
        from .timeline import coverage_sentence

        console.print(for_terminal(coverage_sentence(app) + "."), markup=False, highlight=False, soft_wrap=True)
    console.print(kernel_summary_table(kernels, top=top, title=title, width=console.width))
    for line in status_notes(kernels, top=top):
        console.print(for_terminal(line), markup=False, highlight=False)
    if app is not None:
        from .timeline import unprofiled_lines

        for line in unprofiled_lines(app):
            console.print(for_terminal(line), markup=False, highlight=False, soft_wrap=True)


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
