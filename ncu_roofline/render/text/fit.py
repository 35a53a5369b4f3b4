"""Terminal tables that give way by design: which columns a narrow terminal keeps, which it drops, and a footer
saying so.

Every table of the terminal is plain rows of strings plus a `Col` per column. Three kinds of column are never cut:
the rank, the sort key (with its unit) and the name, which shortens from the middle of templates to what is left
but keeps at least `MIN_NAME` characters (names stay distinct: `core.kernel_labels.distinct_labels`). The other
columns drop whole, lowest `drop` first, until the rest fits; the footer names them and how to see them. A cut
number ("-27…") is never printed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

MIN_NAME = 24   # the name keeps this much even at 80 columns
MAX_NAME = 48
WIDE_HINT = "`--wide` prints every column"


@dataclass(frozen=True)
class Col:
    """A terminal table's column: its header, and how it is dropped when the terminal is too narrow."""

    header: str
    justify: str = "right"
    drop: float | None = None   # None: never dropped; otherwise the lowest drops first
    legend: str = ""          # its line in the caption, said only while the column is shown
    style: str = ""


@dataclass(frozen=True)
class Fitted:
    """A table fitted to the terminal, and the headers of the columns it left out."""

    table: Table
    dropped: list[str]


def natural_widths(columns: Sequence[Col], rows: Sequence[Sequence[str]]) -> list[int]:
    return [max([cell_len(c.header), *(cell_len(Text.from_markup(r[i]).plain if c.style == "markup" else r[i])
                                       for r in rows)]) for i, c in enumerate(columns)]


def choose_columns(columns: Sequence[Col], widths: Sequence[int], width: int, *, name_index: int | None,
                   min_name: int = MIN_NAME) -> list[int]:
    """The indices of the columns kept in `width` cells: droppable ones go lowest `drop` first until the kept
    columns, the name at `min_name` (or its own width when shorter), fit with one space between columns."""
    kept = list(range(len(columns)))
    order = sorted((i for i, c in enumerate(columns) if c.drop is not None), key=lambda i: columns[i].drop)

    def total() -> int:
        return sum(min(widths[i], min_name) if i == name_index else widths[i] for i in kept) + 2 * (len(kept) - 1)

    for i in order:
        if total() <= width:
            break
        kept.remove(i)
    return kept


def fit_table(columns: Sequence[Col], rows: Sequence[list[str]], width: int, *, title: str | None = None,
              name_index: int | None = None, names: Callable[[int], list[str]] | None = None,
              legend_prefix: str = "", footer: str = "", wide: bool = False, hint: str = WIDE_HINT) -> Fitted:
    """A borderless rich table of `rows` in at most `width` cells (`wide`: every column, whatever the width).

    `names(max_len)` gives the name column's cells at most about `max_len` long (distinct within the table); the
    name gets what the kept columns leave, between MIN_NAME and MAX_NAME.
    """
    rows = [list(r) for r in rows]
    if names is not None and name_index is not None:
        for row, name in zip(rows, names(MAX_NAME)):
            row[name_index] = name
    widths = natural_widths(columns, rows)
    kept = list(range(len(columns))) if wide else choose_columns(columns, widths, width, name_index=name_index)
    dropped = [columns[i].header for i in range(len(columns)) if i not in kept]
    if names is not None and name_index is not None and not wide:
        min_name = MIN_NAME
        for _ in range(len(columns)):  # a label that cannot shorten to the room drops another column
            fixed = sum(widths[i] for i in kept if i != name_index) + 2 * (len(kept) - 1)
            room = max(16, min(MAX_NAME, width - fixed))
            labels = _labels_within(names, room)
            need = max([cell_len(columns[name_index].header), *map(cell_len, labels)])
            if fixed + need <= width or need <= min_name:
                break
            min_name = need
            fewer = choose_columns(columns, widths, width, name_index=name_index, min_name=need)
            if fewer == kept:
                break
            kept = fewer
        dropped = [columns[i].header for i in range(len(columns)) if i not in kept]
        for row, name in zip(rows, labels):
            row[name_index] = name
        widths[name_index] = need
    legends = [columns[i].legend for i in kept if columns[i].legend]
    caption_bits = [legend_prefix] if legend_prefix else []
    caption_bits += legends
    caption = " · ".join(caption_bits)
    if footer:
        caption = f"{caption}\n{footer}" if caption else footer
    if dropped:
        caption = (caption + "\n" if caption else "") + f"not shown at {width} columns: {', '.join(dropped)} ({hint})"
    table = Table(title=title or None, caption=caption or None, box=None, pad_edge=False, header_style="bold",
                  caption_justify="left", show_edge=False)
    for i in kept:
        column = columns[i]
        table.add_column(column.header, justify=column.justify, no_wrap=True, min_width=widths[i],
                         max_width=widths[i] if i == name_index else None,
                         overflow="ellipsis" if i == name_index else "fold")
    for row in rows:
        table.add_row(*(row[i] if columns[i].style == "markup" else Text(row[i]) for i in kept))
    return Fitted(table, dropped)


def _labels_within(names: Callable[[int], list[str]], room: int) -> list[str]:
    """Labels no wider than `room` where they can be: a distinguishing part is added whole, so the base shortens
    until every label fits (or cannot shorten further)."""
    limit = room
    labels = names(limit)
    while max(map(cell_len, labels), default=0) > room and limit > 12:
        limit -= 2
        labels = names(limit)
    return labels

