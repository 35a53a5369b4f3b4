"""The `ncu-roofline` command: parses arguments and calls the library; it computes nothing itself.

Exit codes: 0 success, 1 a gate the user asked for failed, 2 bad input (one line on stderr, no traceback).
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, List, Optional

import typer

from ..core.errors import InputError
from ..render.bundle import OutputSet, check_distinct_outputs
from ..render.safe_text import for_terminal

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Hierarchical roofline analysis of Nsight Compute (ncu) exports and reports.")
ceilings_app = typer.Typer(no_args_is_help=False, invoke_without_command=True,
                           help="The built-in GPU ceiling table.")
app.add_typer(ceilings_app, name="ceilings")
from .model import ceilings_compare, model_app  # noqa: E402  (the analytic commands live in their own module)

app.add_typer(model_app, name="model")
ceilings_app.command("compare")(ceilings_compare)

from .common import GROUP_BY_HELP, _formats, _precisions, chart_link, grouping, on_sigterm, stderr, stdout, user_errors  # noqa: E402


@app.command()
def analyze(
    # str, not Path: Path("") is ".", and an empty argument (an unset variable) must not mean the current folder
    inputs: List[str] = typer.Argument(..., help="ncu --csv exports, .ncu-rep reports, folders or globs."),
    out_arg: Optional[str] = typer.Option(None, "-o", "--out", help="Write Parquet tables and the chart here."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="Use this GPU's row of the ceiling table."),
    ceilings: Optional[str] = typer.Option(None, "--ceilings", help="TOML file of roofs that override others."),
    clock: str = typer.Option("measured", "--clock", help="Roofs at the 'measured' clock or the device's 'max'."),
    top: int = typer.Option(20, "--top", min=1, help="Kernels drawn and labelled in the chart."),
    rows: int = typer.Option(10, "--rows", min=0, help="Kernels listed in the terminal."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Extra chart formats: svg,png."),
    group_by: str = typer.Option("kernel", "--group-by", help=GROUP_BY_HELP),
    nvtx_include: Optional[str] = typer.Option(None, "--nvtx-include", help="Only launches whose NVTX path "
                                                                           "matches this glob."),
    summary_md_arg: Optional[str] = typer.Option(None, "--summary-md", help="Write a Markdown summary here."),
    json_arg: Optional[str] = typer.Option(None, "--json", help="Write the JSON summary here ('-' for stdout)."),
    open_html: bool = typer.Option(False, "--open", help="Open roofline.html in a browser (needs -o)."),
    history: Optional[Path] = typer.Option(None, "--history", help="Append this run to the history dataset here."),
    run_id: Optional[str] = typer.Option(None, "--run-id", help="The run's id in --history (default: from CI's "
                                                                "environment, e.g. GITHUB_RUN_ID-ATTEMPT)."),
    label: List[str] = typer.Option([], "--label", help="Label the run in --history, repeatable: key=value."),
    replace: bool = typer.Option(False, "--replace", help="Replace the run if --run-id is already in --history."),
    points: Optional[Path] = typer.Option(None, "--points", help="CSV/TOML of analytic points (name, flop, bytes"
                                                                 "[, kernel regex]) drawn beside the kernels."),
    allow_empty: bool = typer.Option(False, "--allow-empty", help="Write the outputs even when no kernel can be "
                                                                  "placed on a roofline (otherwise exit 2)."),
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Only kernel groups whose name matches this regex."),
    exclude: Optional[str] = typer.Option(None, "--exclude", help="Leave out kernel groups matching this regex."),
    sort: str = typer.Option("headroom", "--sort", help="Rank by 'headroom', 'time' or 'fraction' (lowest first)."),
    precision: Optional[str] = typer.Option(None, "--precision", help="Also one chart per precision, e.g. "
                                                                      "fp32,fp16,tensor,fp64 (needs -o)."),
    nsys: Optional[str] = typer.Option(None, "--nsys", help="Nsight Systems timeline of the run (nsys stats "
                                       "--report cuda_gpu_kern_sum --format csv, or nsys export --type sqlite): "
                                       "weight by the whole run's time."),
    nsys_device: Optional[int] = typer.Option(None, "--nsys-device", help="Only this GPU (deviceId) of a "
                                                                          "multi-GPU --nsys SQLite timeline."),
    wide: bool = typer.Option(False, "--wide", help="Every column of the table, however wide the terminal."),
    verbose: bool = typer.Option(False, "--verbose", help="Run notes in full (with the ncu commands)."),
) -> None:
    """Analyse ncu output: rank kernels by the time a perfect kernel would save."""
    from .. import analyze as run_analysis
    from ..core.vocabulary import counted
    from ..render.analysis.console import print_summary

    with user_errors():
        out, summary_md, json_out = _path(out_arg, "-o"), _path(summary_md_arg, "--summary-md"), \
            _path(json_arg, "--json")
        ceilings = _checked_text(ceilings, "--ceilings")
        formats = _formats(fmt)  # every option is checked before anything is read or written
        precisions = _precisions(precision, out)
        from ..render.analysis.outputs import OUTPUT_NAMES

        check_distinct_outputs(out, OUTPUT_NAMES, {"--summary-md": summary_md, "--json": json_out})
        groups = grouping(group_by)
        if open_html and out is None:
            raise InputError(None, "--open needs -o DIR (the chart is written there)")
        if history is not None:  # a bad or taken run id, or a bad label, fails before any input is read
            from ..history.store import prepare_run

            run_id, labels = prepare_run(history, run_id, label, replace=replace)
        with _progress([Path(i) for i in inputs if i.strip()]) as progress:
            result = run_analysis(inputs, gpu=gpu, ceilings=ceilings, clock=clock, **groups,
                                  nvtx_include=nvtx_include, progress=progress, points=points,
                                  allow_empty=allow_empty, kernel=kernel, exclude=exclude, sort=sort,
                                  nsys=_checked_text(nsys, "--nsys"), nsys_device=nsys_device)
        if result.model_points is not None:
            unmatched = result.model_points.loc[result.model_points["matched_kernels"] == 0, "name"].tolist()
            if unmatched:
                stderr.print(f"ncu-roofline: {len(unmatched)} point(s) match no kernel (drawn unjoined): "
                             + for_terminal(", ".join(unmatched)), markup=False, highlight=False, soft_wrap=True)
        with OutputSet(result.input_paths) as outputs:  # every file of the run in place, or none
            if out is not None:
                from ..render.analysis.outputs import stage_outputs

                stage_outputs(out, outputs, launches=result.launches, kernels=result.kernels,
                              metadata=result.metadata(), ctx=result.chart_context(top), inputs=result.input_paths,
                              formats=formats, model_points=result.model_points, model_pairs=result.model_pairs,
                              precisions=precisions)
            planned = [] if out is None else [out / f"roofline.{f}" for f in ("html", *formats)]
            to_stdout = [_emit(outputs, summary_md,
                               lambda: result.markdown(top=rows or 10, chart=chart_link(planned, summary_md))),
                         _emit(outputs, json_out, lambda: result.json(top=rows or 10))]
            written = [p for p in outputs.commit() if out is not None and p.parent == out]
        if history is not None:
            from ..history.store import append_analysis

            append_analysis(history, result, run_id=run_id, labels=labels, replace=replace)
        sys.stdout.write("".join(text for text in to_stdout if text))
        if rows and str(json_out) != "-":
            sort_key = 'app_headroom_s' if result.app is not None and sort == 'headroom' else sort
            print_summary(result.kernels, top=rows, console=stdout, app=result.app, sort=sort_key, wide=wide,
                          verbose=verbose,
                          title=f"{counted(len(result.kernels), 'kernel')}, "
                                f"{counted(result.launch_count, 'launch', 'launches')} — "
                                f"top {min(rows, len(result.kernels))} by {sort_key}")
            from ..pipeline.totals import run_totals
            from ..render.analysis.markdown import totals_sentence

            stdout.print(totals_sentence(run_totals(result.kernels, result.launches)) + ".", highlight=False,
                         markup=False)
            from ..render.analysis.console import note_lines

            for line in note_lines(result.notes, width=stdout.width, verbose=verbose):
                stdout.print(for_terminal(line), highlight=False, markup=False, soft_wrap=True)
            if result.model_points is not None:
                from ..render.model.console import model_match_table

                stdout.print(model_match_table(result.kernels, top=rows))
            for path in written:
                stdout.print(f"wrote {for_terminal(path)}", highlight=False, markup=False)
            if history is not None:
                stdout.print(f"appended run {for_terminal(run_id)} to {for_terminal(history)}", highlight=False,
                             markup=False)
        if open_html:
            if out is None:
                raise InputError(None, "--open needs -o DIR (the chart is written there)")
            import webbrowser

            webbrowser.open((out / "roofline.html").resolve().as_uri())


@app.command()
def show(
    outdir: Path = typer.Argument(..., help="A folder `analyze -o` wrote."),
    kernel: str = typer.Argument(..., help="The kernel group: its rank, or a regex matching one name."),
) -> None:
    """One kernel group's drill-down: launches, derived numbers with their definitions, roofs and sources."""
    from ..render.analysis.drilldown import print_drilldown

    with user_errors():
        print_drilldown(outdir, kernel, stdout)


@app.command()
def compare(
    base: str = typer.Argument(..., help="The baseline run: a CSV export, a .ncu-rep report or a folder."),
    head: str = typer.Argument(..., help="The run to judge, in any of the same forms."),
    fail_on: List[str] = typer.Option([], "--fail-on", help="Gate, repeatable: 'time_s>+5%', "
                                                             "'roofline_fraction<-0.05', 'total:time_s>+2%'."),
    min_time: float = typer.Option(0.0, "--min-time", min=0.0, help="Judge and gate only kernels taking at least "
                                                                    "this many seconds in either run."),
    strict: bool = typer.Option(False, "--strict", help="Refuse runs that are not like for like (exit 2)."),
    totals: bool = typer.Option(False, "--totals", help="Judge summed time even where a kernel's launch count "
                                                        "differs (default: per launch there)."),
    out_arg: Optional[str] = typer.Option(None, "-o", "--out", help="Write compare.parquet, .json, .vl.json, .html."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="Use this GPU's row of the ceiling table."),
    ceilings: Optional[str] = typer.Option(None, "--ceilings", help="TOML file of roofs that override others."),
    clock: str = typer.Option("measured", "--clock", help="Roofs at the 'measured' clock or the device's 'max'."),
    group_by: str = typer.Option("kernel", "--group-by", help=GROUP_BY_HELP),
    top: int = typer.Option(20, "--top", min=1, help="Kernels drawn in the chart."),
    rows: int = typer.Option(10, "--rows", min=0, help="Kernels listed in the terminal and the Markdown."),
    summary_md_arg: Optional[str] = typer.Option(None, "--summary-md", help="Write a Markdown summary here."),
    json_arg: Optional[str] = typer.Option(None, "--json", help="Write the comparison JSON here ('-' for stdout)."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Extra chart formats: svg,png (needs -o)."),
    nsys: List[str] = typer.Option([], "--nsys", help="Nsight Systems timelines, twice: the base run's, then the "
                                                      "head run's (see analyze --nsys)."),
    wide: bool = typer.Option(False, "--wide", help="Every column of the table, however wide the terminal."),
) -> None:
    """Compare two runs kernel by kernel; exit 1 when a --fail-on gate fails."""
    from .. import analyze as run_analysis
    from ..comparison import compare as run_compare
    from ..pipeline.gates import parse_gates
    from ..render.compare.console import print_comparison
    from ..render.compare.json_summary import comparison_json
    from ..render.compare.markdown import comparison_markdown

    with user_errors():
        out, summary_md, json_out = _path(out_arg, "-o"), _path(summary_md_arg, "--summary-md"), \
            _path(json_arg, "--json")
        ceilings = _checked_text(ceilings, "--ceilings")
        formats = _formats(fmt)
        if formats and out is None:
            raise InputError(None, "--format needs -o DIR (the chart is written there)")
        from ..render.compare.outputs import OUTPUT_NAMES

        check_distinct_outputs(out, OUTPUT_NAMES, {"--summary-md": summary_md, "--json": json_out})
        gates = parse_gates(fail_on)  # a malformed gate fails before any input is read
        groups = grouping(group_by)
        if nsys and len(nsys) != 2:
            raise InputError(None, "--nsys is given twice to compare: the base run's timeline, then the head's")
        runs = [run_analysis([path], gpu=gpu, ceilings=ceilings, clock=clock, **groups,
                             allow_empty=True, nsys=_checked_text(timeline, "--nsys") if timeline is not None else None)
                for path, timeline in zip((base, head), nsys or (None, None))]
        result = run_compare(*runs, min_time_s=min_time, gates=gates, strict=strict, totals=totals)
        for warning in result.warnings:
            stderr.print(f"ncu-roofline: warning: {for_terminal(warning)}", markup=False, highlight=False,
                         soft_wrap=True)
        info = result.info()
        with OutputSet(result.input_paths) as outputs:  # every file of the run in place, or none
            if out is not None:
                from ..render.compare.outputs import stage_comparison

                stage_comparison(out, outputs, kernels=result.kernels, totals=result.totals, info=info,
                                 base_kernels=result.base.kernels, head_kernels=result.head.kernels,
                                 ctx=result.chart_context(top), inputs=result.input_paths, formats=formats)
            to_stdout = [_emit(outputs, summary_md,
                               lambda: comparison_markdown(result.kernels, result.totals, info, top=rows or 10)),
                         _emit(outputs, json_out, lambda: comparison_json(result.kernels, result.totals, info))]
            written = [p for p in outputs.commit() if out is not None and p.parent == out]
        sys.stdout.write("".join(text for text in to_stdout if text))
        if str(json_out) != "-":
            print_comparison(result.kernels, result.totals, info, top=rows, console=stdout, wide=wide)
            for path in written:
                stdout.print(f"wrote {for_terminal(path)}", highlight=False, markup=False)
        if result.unjudged:
            gate = result.unjudged[0]
            what = "the totals" if gate.gate.scope == "total" else "any kernel"
            raise InputError(None, f"--fail-on {gate.gate.text!r} could not judge {what} ({gate.skipped} without a "
                                   "known change): a gate that checks nothing is not a pass")
    if not result.passed:
        raise typer.Exit(1)


@ceilings_app.callback()
def ceilings_list(ctx: typer.Context,
                  as_json: bool = typer.Option(False, "--json", help="JSON instead of a table.")) -> None:
    """List the GPUs of the built-in ceiling table."""
    if ctx.invoked_subcommand is not None:
        return
    import json

    from ..render.analysis.console import gpu_table
    from ..roofs.gpu_table import list_gpus, load_gpu_table

    with user_errors():
        rows = list_gpus(load_gpu_table())
        if as_json:
            sys.stdout.write(json.dumps(rows, indent=1, sort_keys=True) + "\n")
        else:
            stdout.print(gpu_table(rows, width=stdout.width))


@ceilings_app.command("show")
def ceilings_show(name: str = typer.Argument(..., help="GPU name or alias, as in `ncu-roofline ceilings`."),
                  as_json: bool = typer.Option(False, "--json", help="JSON instead of text."),
                  sources: bool = typer.Option(False, "--sources", help="Every source URL, formula and caveat.")
                  ) -> None:
    """One GPU's roofs, how each was derived (--sources: with its source and caveats)."""
    import json

    from ..render.ceilings.console import gpu_compact_view, gpu_detail_view
    from ..roofs.gpu_table import describe_gpu, match_gpu

    with user_errors():
        described = describe_gpu(match_gpu(name))
        if as_json:
            sys.stdout.write(json.dumps(described, indent=1, sort_keys=True) + "\n")
        else:
            stdout.print(gpu_detail_view(described) if sources else gpu_compact_view(described))


@ceilings_app.command("template")
def ceilings_template(name: str = typer.Argument(..., help="The GPU's name, as its reports spell it."),
                      source: Optional[Path] = typer.Option(None, "--from", exists=True, dir_okay=False,
                                                            help="Prefill from this report's or export's own "
                                                                 "peaks (.ncu-rep or ncu CSV).")) -> None:
    """Print a --ceilings TOML file for a GPU the table lacks, to fill in (prefilled from a report with --from)."""
    from ..pipeline.evaluate import report_peaks
    from ..render.ceilings.template import ceilings_template_text

    with user_errors():
        peaks, origin = report_peaks(source) if source else ({}, None)
        sys.stdout.write(ceilings_template_text(name, peaks, origin))


@app.command()
def metrics(arch: Optional[float] = typer.Option(None, "--arch", help="Compute capability, e.g. 9.0."),
            complete: bool = typer.Option(False, "--all", help="Every metric any definition can use."),
            as_list: bool = typer.Option(False, "--list", help="Only the comma-separated metric list.")) -> None:
    """Print the ncu command lines that collect what the analysis needs."""
    from ..pipeline.catalogue import load_catalogue
    from ..pipeline.collect import (
        collection_metrics,
        limiter_metrics,
        limiter_sections_flag,
        metrics_flag,
        sections_flag,
    )

    catalogue = load_catalogue()
    if as_list:
        sys.stdout.write(",".join(collection_metrics(catalogue, arch, complete=complete)) + "\n")
        return
    stdout.print("# CSV export (raw page, base units):", highlight=False)
    stdout.print(f"ncu {metrics_flag(catalogue, arch, complete=complete)} --csv --page raw --print-units base "
                 "-o /dev/null ./app > run.csv", highlight=False, soft_wrap=True)
    stdout.print("# Binary report:", highlight=False)
    stdout.print(f"ncu --set full {sections_flag()} -o run ./app", highlight=False, soft_wrap=True)
    stdout.print("# Why it is slow (limiter) and the instruction roofline: `--set full` holds them, or these sections "
                 "(binary report), or these metrics (CSV, added to the list above):", highlight=False)
    stdout.print(f"ncu {limiter_sections_flag()} -o run ./app", highlight=False, soft_wrap=True)
    stdout.print(f"ncu --metrics {','.join(limiter_metrics(catalogue, complete=complete))} --csv --page raw "
                 "--print-units base -o /dev/null ./app > why.csv", highlight=False, soft_wrap=True)


@contextmanager
def _progress(inputs: list[Path]) -> Iterator[object]:
    """A progress bar on stderr for inputs that take a while; none when stderr is not a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from .progress import ReadProgress

    with ReadProgress(inputs, stderr) as progress:
        yield progress


def _checked_text(value: Optional[str], option: str) -> Optional[str]:
    """Paths arrive as text, not click.Path: click would stat and access-check them itself and answer in its
    multi-line box, and Path("") is "." (an unset variable would mean the current folder)."""
    if value is not None and not value.strip():
        raise InputError(None, f"{option} was given an empty path ('')")
    return value


def _path(value: Optional[str], option: str) -> Optional[Path]:
    checked = _checked_text(value, option)
    return None if checked is None else Path(checked)


def _write_summary(dest: Optional[Path], text: Callable[[], str], inputs: list[Path]) -> None:
    """A summary on its own ('-': stdout), never over an input, a link or a device (`history`'s outputs)."""
    with OutputSet(inputs) as outputs:
        printed = _emit(outputs, dest, text)
        outputs.commit()
    if printed:
        sys.stdout.write(printed)


def _emit(outputs: OutputSet, dest: Optional[Path], text: Callable[[], str]) -> Optional[str]:
    """A summary staged with the run's other files; for '-', the text to print once they are in place."""
    if dest is None:
        return None
    if str(dest) == "-":
        return text()
    outputs.stage(dest, text().encode())
    return None


from .history import register as _register_history  # noqa: E402  (history, batch: thin like the rest)

_register_history(app, user_errors=user_errors, stdout=stdout, stderr=stderr, formats=_formats,
                  emit=_write_summary)


def main() -> None:
    """Run the command, then leave without interpreter finalization (`os._exit`), output flushed first.

    Why: the CSV readers hand pyarrow a Python stream (`readers.text.Utf8Stream`); Arrow's IO threads wrap each block
    read in a PyBuffer and may drop the last one just after the command returns. A thread that wants the GIL once
    CPython has begun finalizing is ended with pthread_exit, whose forced unwind through Arrow's noexcept frames calls
    std::terminate: "terminate called without an active exception", exit -6, about 2 runs in 100 on a file that is
    refused at once (fixtures/bad/raw_header_only.csv; backtrace: PyBuffer::~PyBuffer -> PyGILState_Ensure ->
    take_gil -> PyThread_exit_thread). Nothing the process must do is left to finalization: outputs are closed and
    renamed before the command returns.
    """
    code: int = 0
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        app()
    except SystemExit as done:
        code = _exit_code(done.code)
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # a bug: show it as the interpreter would, then leave the same way
        import traceback

        traceback.print_exc()
        code = 1
    _leave(code)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _leave(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
