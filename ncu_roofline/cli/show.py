"""`ncu-roofline show DIR KERNEL`: one kernel group's drill-down from the files `analyze -o` wrote."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import PATH, stdout, user_errors


def show(
    outdir: Path = typer.Argument(..., click_type=PATH, help="A folder `analyze -o` wrote."),
    kernel: str = typer.Argument(..., help="The kernel group: its rank, or a regex matching one name."),
    verbose: bool = typer.Option(False, "--verbose", help="Name the counters an unknown limiter lacks."),
) -> None:
    """One kernel group's drill-down: launches, derived numbers with their definitions, roofs and sources."""
    from ..render.analysis.drilldown import print_drilldown

    with user_errors():
        print_drilldown(outdir, kernel, stdout, verbose=verbose)
