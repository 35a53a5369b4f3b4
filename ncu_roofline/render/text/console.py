"""What every terminal view shares: printing a fitted table (whole with --wide)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table


def print_table(console: Console, table: Table, *, wide: bool = False) -> None:
    """A fitted table; `--wide` prints it whole, however wide, rather than let the console cut it."""
    if wide:
        console.print(table, width=max(console.width, console.measure(table, options=console.options.update(
            width=10_000)).maximum), crop=False)
    else:
        console.print(table)
