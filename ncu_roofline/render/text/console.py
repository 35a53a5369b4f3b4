"""What every terminal view shares: printing a fitted table (whole with --wide)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table


def print_table(console: Console, table: Table, *, wide: bool = False) -> None:
    """A fitted table; `--wide` prints it whole, however wide, rather than let the console cut it."""
    if not wide:
        console.print(table)
        return
    need = console.measure(table, options=console.options.update(width=10_000)).maximum
    if need <= console.width:
        console.print(table, crop=False)
    elif getattr(console, "record", False):  # a recording console (a notebook's, a test's): widened for this table
        saved = console._width
        console.width = need
        try:
            console.print(table, crop=False)
        finally:
            console._width = saved
    else:
        # `print(width=)` never goes past the console's own width (rich then squeezes the narrowest columns, the
        # rank first, to nothing): a console as wide as the table, on the same stream with the same colours.
        Console(file=console.file, width=need, force_terminal=console.is_terminal,
                color_system=console.color_system, no_color=console.no_color, emoji=False).print(table, crop=False)
