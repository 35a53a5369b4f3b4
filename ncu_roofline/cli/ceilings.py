"""`ncu-roofline ceilings [show|template|compare]`: the built-in GPU ceiling table, one GPU's roofs, a --ceilings
file to fill in, several GPUs side by side; each parses, calls the `modeling` façade, prints."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from .common import stdout, user_errors

ceilings_app = typer.Typer(no_args_is_help=False, invoke_without_command=True,
                           help="The built-in GPU ceiling table.")
_AS_JSON = typer.Option(False, "--json", help="JSON instead of a table.")


@ceilings_app.callback()
def ceilings_list(ctx: typer.Context, as_json: bool = _AS_JSON) -> None:
    """List the GPUs of the built-in ceiling table."""
    if ctx.invoked_subcommand is not None:
        return
    from ..modeling import gpu_rows
    from ..render.ceilings.console import gpu_table

    with user_errors():
        rows = gpu_rows()
        if as_json:
            sys.stdout.write(json.dumps(rows, indent=1, sort_keys=True) + "\n")
        else:
            stdout.print(gpu_table(rows, width=stdout.width))


@ceilings_app.command("compare")
def ceilings_compare(names: List[str] = typer.Argument(..., help="GPU names or aliases, as in `ceilings`."),
                     as_json: bool = _AS_JSON) -> None:
    """Several GPUs' roofs and ridge points (compute roof / DRAM, FLOP/byte) side by side."""
    from ..modeling import compare_gpus
    from ..render.model.console import roofs_table

    with user_errors():
        result = compare_gpus(names)
        if as_json:
            sys.stdout.write(result.json())
        else:
            stdout.print(roofs_table(result.frame))


@ceilings_app.command("show")
def ceilings_show(name: str = typer.Argument(..., help="GPU name or alias, as in `ncu-roofline ceilings`."),
                  as_json: bool = typer.Option(False, "--json", help="JSON instead of text."),
                  sources: bool = typer.Option(False, "--sources", help="Every source URL, formula and caveat.")
                  ) -> None:
    """One GPU's roofs, how each was derived (--sources: with its source and caveats)."""
    from ..modeling import describe
    from ..render.ceilings.console import gpu_compact_view, gpu_detail_view

    with user_errors():
        described = describe(name)
        if as_json:
            sys.stdout.write(json.dumps(described, indent=1, sort_keys=True) + "\n")
        else:
            stdout.print(gpu_detail_view(described) if sources else gpu_compact_view(described), crop=False)


@ceilings_app.command("template")
def ceilings_template(name: str = typer.Argument(..., help="The GPU's name, as its reports spell it."),
                      source: Optional[Path] = typer.Option(None, "--from", exists=True, dir_okay=False,
                                                            help="Prefill from this report's or export's own "
                                                                 "peaks (.ncu-rep or ncu CSV).")) -> None:
    """Print a --ceilings TOML file for a GPU the table lacks, to fill in (prefilled from a report with --from)."""
    from ..modeling import template

    with user_errors():
        sys.stdout.write(template(name, source))
