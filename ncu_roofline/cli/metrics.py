"""`ncu-roofline metrics`: the ncu command lines that collect what the analysis needs (`analysis.collection`)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from .common import stdout


def metrics(arch: Optional[float] = typer.Option(None, "--arch", help="Compute capability, e.g. 9.0."),
            complete: bool = typer.Option(False, "--all", help="Every metric any definition can use."),
            as_list: bool = typer.Option(False, "--list", help="Only the comma-separated metric list.")) -> None:
    """Print the ncu command lines that collect what the analysis needs."""
    from ..analysis import collection

    needed = collection(arch, complete=complete)
    if as_list:
        sys.stdout.write(",".join(needed.metric_list()) + "\n")
        return
    stdout.print("# CSV export (raw page, base units):", highlight=False)
    stdout.print(f"ncu {needed.metrics_flag()} --csv --page raw --print-units base "
                 "-o /dev/null ./app > run.csv", highlight=False, soft_wrap=True)
    stdout.print("# Binary report:", highlight=False)
    stdout.print(f"ncu --set full {needed.sections_flag()} -o run ./app", highlight=False, soft_wrap=True)
    stdout.print("# Why it is slow (limiter) and the instruction roofline: `--set full` holds them, or these sections "
                 "(binary report), or these metrics (CSV, added to the list above):", highlight=False)
    stdout.print(f"ncu {needed.limiter_sections_flag()} -o run ./app", highlight=False, soft_wrap=True)
    stdout.print(f"ncu --metrics {','.join(needed.limiter_metrics())} --csv --page raw "
                 "--print-units base -o /dev/null ./app > why.csv", highlight=False, soft_wrap=True)
