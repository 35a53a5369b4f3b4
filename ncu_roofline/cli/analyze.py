"""`ncu-roofline analyze`: parse, check every option, `analyze()`, write the bundle and summaries, print."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, Optional

import typer

from ..core.errors import InputError
from ..render.outputs import chart_file
from .common import (
    PATH,
    CEILINGS,
    CHART_URL,
    CLOCK,
    GPU,
    GROUP_BY,
    SUMMARY_MD,
    _precisions,
    chart_link,
    checked_text,
    grouping,
    imports_without_gc,
    output_options,
    path,
    say,
    say_written,
    stderr,
    stdout,
    user_errors,
    write_run,
)


def analyze(
    # str, not Path: Path("") is ".", and an empty argument (an unset variable) must not mean the current folder
    inputs: List[str] = typer.Argument(..., click_type=PATH,
                                       help="ncu --csv exports, .ncu-rep reports, folders or globs."),
    out_arg: Optional[str] = typer.Option(None, "-o", "--out", click_type=PATH,
                                          help="Write Parquet tables and the chart here."),
    gpu: Optional[str] = GPU,
    ceilings: Optional[str] = CEILINGS,
    clock: str = CLOCK,
    top: int = typer.Option(20, "--top", min=1, help="Kernels drawn and labelled in the chart."),
    rows: int = typer.Option(10, "--rows", min=0, help="Kernels listed in the terminal."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Extra chart formats: svg,png (needs -o)."),
    group_by: str = GROUP_BY,
    nvtx_include: Optional[str] = typer.Option(None, "--nvtx-include", help="Only launches whose NVTX path "
                                                                           "matches this glob."),
    summary_md_arg: Optional[str] = SUMMARY_MD,
    chart_url: Optional[str] = CHART_URL,
    json_arg: Optional[str] = typer.Option(None, "--json", click_type=PATH,
                                           help="Write the JSON summary here ('-' for stdout)."),
    open_html: bool = typer.Option(False, "--open", help=f"Open {chart_file('analysis', 'html')} in a browser "
                                                                 "(needs -o)."),
    history_arg: Optional[str] = typer.Option(None, "--history", click_type=PATH,
                                              help="Append this run to the history dataset here."),
    run_id: Optional[str] = typer.Option(None, "--run-id", help="The run's id in --history (default: from CI's "
                                                                "environment, e.g. GITHUB_RUN_ID-ATTEMPT)."),
    label: List[str] = typer.Option([], "--label", help="Label the run in --history, repeatable: key=value."),
    replace: bool = typer.Option(False, "--replace", help="Replace the run if --run-id is already in --history."),
    points_arg: Optional[str] = typer.Option(None, "--points", click_type=PATH,
                                             help="CSV/TOML of analytic points (name, flop, bytes"
                                                  "[, kernel regex]) drawn beside the kernels."),
    allow_empty: bool = typer.Option(False, "--allow-empty", help="Write the outputs even when no kernel can be "
                                                                  "placed on a roofline (otherwise exit 2)."),
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Only kernel groups whose name matches this regex."),
    exclude: Optional[str] = typer.Option(None, "--exclude", help="Leave out kernel groups matching this regex."),
    sort: str = typer.Option("headroom", "--sort", help="Rank by 'headroom', 'time' or 'fraction' (lowest first)."),
    precision: Optional[str] = typer.Option(None, "--precision", help="Also one chart per precision, e.g. "
                                                                      "fp32,fp16,tensor,fp64 (needs -o)."),
    nsys: Optional[str] = typer.Option(None, "--nsys", click_type=PATH,
                                       help="Nsight Systems timeline of the run (nsys stats "
                                            "--report cuda_gpu_kern_sum --format csv, or nsys export --type sqlite): "
                                            "weight by the whole run's time."),
    nsys_device: Optional[int] = typer.Option(None, "--nsys-device", help="Only this GPU (deviceId) of a "
                                                                          "multi-GPU --nsys SQLite timeline."),
    wide: bool = typer.Option(False, "--wide", help="Every column of the table, however wide the terminal."),
    verbose: bool = typer.Option(False, "--verbose", help="Run notes in full (with the ncu commands)."),
) -> None:
    """Analyse ncu output: rank kernels by the time a perfect kernel would save."""
    from ..render.outputs import planned_charts

    with user_errors():
        # every option is checked before anything is read or written
        options = output_options("analysis", out_arg, fmt, summary_md=summary_md_arg, json=json_arg)
        out, summary_md, json_out, formats = options.out, options.summary_md, options.json, options.formats
        history, points = path(history_arg, "--history"), path(points_arg, "--points")
        if history is not None:  # a folder, file://, s3:// or gs://; another URL is refused here, before any read
            from ..trends import history_location

            history = history_location(history_arg)
        ceilings = checked_text(ceilings, "--ceilings")
        precisions = _precisions(precision, out)
        chart_link([], None, url=chart_url)  # a malformed --chart-url fails before any input is read
        groups = grouping(group_by)
        if open_html and out is None:
            raise InputError(None, "--open needs -o DIR (the chart is written there)")
        if history is not None:  # a bad or taken run id, or a bad label, fails before any input is read
            from ..trends import prepare_run

            run_id, labels = prepare_run(history, run_id, label, replace=replace)
        nsys = checked_text(nsys, "--nsys")
        if points is None and gpu is None and clock in {"measured", "max"}:  # nothing analyze checks first
            from .. import refuse_unreadable

            refuse_unreadable(inputs)  # a file that is no ncu table: the reader's line, before pandas is loaded
        with imports_without_gc():
            from .. import analyze as run_analysis

        with _progress([Path(i) for i in inputs if i.strip()]) as progress:
            result = run_analysis(inputs, gpu=gpu, ceilings=ceilings, clock=clock, **groups, nvtx_include=nvtx_include,
                                  progress=progress, points=points, allow_empty=allow_empty, kernel=kernel,
                                  exclude=exclude, sort=sort, nsys=nsys, nsys_device=nsys_device)
        _warn_unmatched_points(result)
        planned = planned_charts("analysis", out, formats)
        written, to_stdout = write_run(result.input_paths, out, lambda: result.bundle(
            formats=formats, top=top, precisions=precisions), [
            (summary_md, lambda: result.markdown(top=rows or 10, chart=chart_link(planned, summary_md,
                                                                                 url=chart_url))),
            (json_out, lambda: result.json(top=rows or 10))], subject="analysis")
        if history is not None:
            result.append_to_history(history, run_id=run_id, labels=labels, replace=replace)
        sys.stdout.write(to_stdout)
        if rows and str(json_out) != "-":
            _print_run(result, rows=rows, sort=sort, wide=wide, verbose=verbose)
            say_written(written)
            if history is not None:
                say(f"appended run {run_id} to {history}")
        if open_html:
            import webbrowser

            webbrowser.open((out / chart_file("analysis", "html")).resolve().as_uri())


def _print_run(result, *, rows: int, sort: str, wide: bool = False, verbose: bool = False) -> None:
    """The terminal summary: the top kernels, the run's totals, its notes, and the analytic points' matches."""
    from ..core.vocabulary import counted
    from ..render.analysis.console import note_lines, print_summary
    from ..render.analysis.markdown import totals_sentence

    by = "app_headroom_s" if result.app is not None and sort == "headroom" else sort
    print_summary(result.kernels, top=rows, console=stdout, app=result.app, sort=by, wide=wide, verbose=verbose,
                  title=f"{counted(len(result.kernels), 'kernel')}, "
                        f"{counted(result.launch_count, 'launch', 'launches')} — top {min(rows, len(result.kernels))} "
                        f"by {by}")
    say(totals_sentence(result.totals()) + ".")
    for line in note_lines(result.notes, width=stdout.width, verbose=verbose):
        say(line, soft_wrap=True)
    if result.model_points is not None:
        from ..render.model.console import model_match_table

        stdout.print(model_match_table(result.kernels, top=rows))


def _warn_unmatched_points(result) -> None:
    if result.model_points is None:
        return
    unmatched = result.model_points.loc[result.model_points["matched_kernels"] == 0, "name"].tolist()
    if unmatched:
        from ..render.text.safe_text import for_terminal

        stderr.print(f"ncu-roofline: {len(unmatched)} point(s) match no kernel (drawn unjoined): "
                     + for_terminal(", ".join(unmatched)), markup=False, highlight=False, soft_wrap=True)


@contextmanager
def _progress(inputs: list[Path]) -> Iterator[object]:
    """A progress bar on stderr for inputs that take a while; none when stderr is not a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from .progress import ReadProgress

    with ReadProgress(inputs, stderr) as progress:
        yield progress
