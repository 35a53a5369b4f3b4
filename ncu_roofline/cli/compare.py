"""`ncu-roofline compare BASE HEAD`: parse, analyse both runs, `compare()`, write the bundle and summaries, print."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from ..core.errors import InputError
from ..render.outputs import always_written
from .common import (
    PATH,
    CEILINGS,
    CHART_URL,
    CLOCK,
    GPU,
    GROUP_BY,
    SUMMARY_MD,
    chart_link,
    checked_text,
    grouping,
    output_options,
    say_written,
    stderr,
    stdout,
    user_errors,
    write_run,
)


def compare(
    base: str = typer.Argument(..., click_type=PATH,
                               help="The baseline run: a CSV export, a .ncu-rep report or a folder."),
    head: str = typer.Argument(..., click_type=PATH, help="The run to judge, in any of the same forms."),
    fail_on: List[str] = typer.Option([], "--fail-on", help="Gate, repeatable, with a unit: "
                                                             "'time_s>+5%', 'time_s>+50us', "
                                                             "'roofline_fraction<-0.05pt', 'total:time_s>+2%'."),
    min_time: float = typer.Option(0.0, "--min-time", min=0.0, help="Judge and gate only kernels taking at least "
                                                                    "this many seconds in either run."),
    strict: bool = typer.Option(False, "--strict", help="Refuse runs that are not like for like (exit 2)."),
    out_arg: Optional[str] = typer.Option(None, "-o", "--out", click_type=PATH,
                                          help=f"Write {always_written('compare')}."),
    gpu: Optional[str] = GPU,
    ceilings: Optional[str] = CEILINGS,
    clock: str = CLOCK,
    group_by: str = GROUP_BY,
    top: int = typer.Option(20, "--top", min=1, help="Kernels drawn in the chart."),
    rows: int = typer.Option(10, "--rows", min=0, help="Kernels listed in the terminal and the Markdown."),
    summary_md_arg: Optional[str] = SUMMARY_MD,
    chart_url: Optional[str] = CHART_URL,
    json_arg: Optional[str] = typer.Option(None, "--json", click_type=PATH,
                                           help="Write the comparison JSON here ('-' for stdout)."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Extra chart formats: svg,png (needs -o)."),
    totals: bool = typer.Option(False, "--totals", help="Judge summed time even where a kernel's launch count "
                                                        "differs (default: per launch there)."),
    nsys: List[str] = typer.Option([], "--nsys", click_type=PATH,
                                   help="Nsight Systems timelines, twice: the base run's, then the "
                                        "head run's (see analyze --nsys)."),
    wide: bool = typer.Option(False, "--wide", help="Every column of the table, however wide the terminal."),
    allow_empty: bool = typer.Option(False, "--allow-empty", help="Compare even a run where no kernel can be "
                                                                  "placed on a roofline (otherwise exit 2)."),
) -> None:
    """Compare two runs kernel by kernel; exit 1 when a --fail-on gate fails."""
    from .. import analyze as run_analysis
    from .. import parse_gates
    from ..comparison import compare as run_compare
    from ..render.compare.console import print_comparison
    from ..render.compare.json_summary import comparison_json
    from ..render.compare.markdown import comparison_markdown
    from ..render.outputs import planned_charts
    from ..render.text.safe_text import for_terminal

    with user_errors():
        options = output_options("compare", out_arg, fmt, summary_md=summary_md_arg, json=json_arg)
        out, summary_md, json_out, formats = options.out, options.summary_md, options.json, options.formats
        ceilings = checked_text(ceilings, "--ceilings")
        gates = parse_gates(fail_on)  # a malformed gate fails before any input is read
        chart_link([], None, url=chart_url)  # so does a malformed --chart-url
        groups = grouping(group_by)
        if nsys and len(nsys) != 2:
            raise InputError(None, "--nsys is given twice to compare: the base run's timeline, then the head's")
        timelines = [checked_text(t, "--nsys") for t in nsys] or [None, None]
        runs = [run_analysis([p], gpu=gpu, ceilings=ceilings, clock=clock, **groups, allow_empty=allow_empty,
                             nsys=timeline)
                for p, timeline in zip((base, head), timelines)]
        result = run_compare(*runs, min_time_s=min_time, gates=gates, strict=strict, totals=totals)
        for warning in result.warnings:
            stderr.print(f"ncu-roofline: warning: {for_terminal(warning)}", markup=False, highlight=False,
                         soft_wrap=True)
        info = result.info()
        planned = planned_charts("compare", out, formats)
        written, to_stdout = write_run(result.input_paths, out, lambda: result.bundle(formats=formats, top=top), [
            (summary_md, lambda: comparison_markdown(result.kernels, result.totals, info, top=rows or 10,
                                                     chart=chart_link(planned, summary_md, "compare", chart_url))),
            (json_out, lambda: comparison_json(result.kernels, result.totals, info))], subject="compare")
        sys.stdout.write(to_stdout)
        if str(json_out) != "-":
            print_comparison(result.kernels, result.totals, info, top=rows, console=stdout, wide=wide)
            say_written(written)
        if result.unjudged:
            gate = result.unjudged[0]
            what = "the totals" if gate.gate.scope == "total" else "any kernel"
            raise InputError(None, f"--fail-on {gate.gate.text!r} could not judge {what} ({gate.skipped} without a "
                                   "known change): a gate that checks nothing is not a pass")
    if not result.passed:
        raise typer.Exit(1)
